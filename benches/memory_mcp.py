#!/usr/bin/env python3
"""What the MCP memory tools cost end to end: `braid serve` over an index of N synthetic
records, one writer token, M memories written through the MCP `remember` tool (HTTP JSON-RPC
`tools/call`, revision 2025-06-18), then R timed `remember` calls (new memories, each its own
commit) and R timed `recall` calls (a three-word cue) at that size, timed by the client.

    python3 benches/memory_mcp.py [--records 1000] [--memories 1000] [--calls 200] [--model default]
        [--braid target/release/braid] [--out results/memory-mcp.json]

Each remember also checks that a recall finds it (read your writes; not timed). Standard
library only.
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def words(rng, vocabulary, n):
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Mcp:
    def __init__(self, url, token):
        self.url, self.token, self.id = url + "/mcp", token, 0

    def call(self, name, arguments):
        self.id += 1
        body = {"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST", headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
        with urllib.request.urlopen(request, timeout=60) as response:
            result = json.loads(response.read())["result"]
        if result["isError"]:
            sys.exit(f"{name}: {result['content'][0]['text']}")
        return result["structuredContent"]


def summary(latencies):
    return {"p50_ms": round(percentile(latencies, 0.5), 2), "p99_ms": round(percentile(latencies, 0.99), 2),
            "mean_ms": round(statistics.mean(latencies), 2), "max_ms": round(max(latencies), 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--model", default=None)
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    parser.add_argument("--braid", default=os.path.join(target, "release", "braid"))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = random.Random(42)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                  for _ in range(5000)]
    with tempfile.TemporaryDirectory() as work:
        source, index = os.path.join(work, "corpus.jsonl"), os.path.join(work, "index")
        with open(source, "w") as f:
            for i in range(args.records):
                f.write(json.dumps({"_id": f"r{i}", "title": words(rng, vocabulary, 4),
                                    "text": words(rng, vocabulary, 60), "tenant": "t0"}) + "\n")
        build = [args.braid, "index", source, "--index", index] + (["--model", args.model] if args.model else [])
        subprocess.run(build, check=True, stdout=subprocess.DEVNULL)
        entry = subprocess.run([args.braid, "token", "new", "--name", "agent", "--tenant", "t0", "--write"],
                               check=True, capture_output=True, text=True)
        token = re.search(r"^token: (\S+)", entry.stderr, re.M).group(1)
        config = os.path.join(work, "braid.toml")
        with open(config, "w") as f:
            # A generous time budget: the bench measures latency, not the 503 past the budget.
            f.write("reload_seconds = 0\n\n[limits]\nrate_per_second = 100000.0\nburst = 100000\n"
                    "timeout_ms = 30000\n\n" + entry.stdout)
        serve = [args.braid, "serve", "--index", index, "--config", config, "--bind", "127.0.0.1:0"]
        server = subprocess.Popen(serve + (["--model", args.model] if args.model else []),
                                  stderr=subprocess.PIPE, text=True)
        try:
            url = None
            for line in server.stderr:
                found = re.search(r"listening on (http://\S+)", line)
                if found:
                    url = found.group(1)
                    break
            if url is None:
                sys.exit("the server did not start")
            # Keep reading the server's log, so that a full pipe never blocks it.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            mcp = Mcp(url, token)
            started = time.perf_counter()
            for i in range(args.memories):
                mcp.call("remember", {"text": words(rng, vocabulary, 12), "kind": rng.choice(["fact", "task"]),
                                      "importance": rng.randint(1, 10)})
            fill_s = time.perf_counter() - started
            remember, recall, found = [], [], 0
            for i in range(args.calls):
                marker = f"zq{i}marker"
                text = words(rng, vocabulary, 11) + f" {marker}"
                started = time.perf_counter()
                written = mcp.call("remember", {"text": text, "importance": rng.randint(1, 10)})
                remember.append((time.perf_counter() - started) * 1000)
                assert not written["reinforced"], written
                got = mcp.call("recall", {"query": marker, "k": 1})["memories"]
                found += bool(got) and got[0]["id"] == written["memory"]["id"]
                cue = words(rng, vocabulary, 3)
                started = time.perf_counter()
                mcp.call("recall", {"query": cue, "k": 5})
                recall.append((time.perf_counter() - started) * 1000)
        finally:
            server.terminate()
            server.wait()
    result = {"records": args.records, "memories": args.memories, "calls": args.calls, "model": args.model,
              "fill_s": round(fill_s, 1), "remember": summary(remember), "recall": summary(recall),
              "read_your_writes": f"{found}/{args.calls}"}
    print(json.dumps(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
