#!/usr/bin/env python3
"""What the MCP layer costs: `tools/list` (protocol only) and `tools/call search` (revisions
2025-06-18 and 2026-07-28) against `braid serve`, one call at a time over one keep-alive HTTP
connection, timed by the client; for each binary given, interleaved in rounds so that machine
load hits every binary alike. Standard library only.

    python3 benches/mcp_protocol.py INDEX ROUNDS N BRAID_BINARY...
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


index, rounds, n, binaries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}}


def start(binary, work):
    out = subprocess.run([binary, "token", "new", "--name", "bench"], capture_output=True, text=True, check=True)
    token = re.search(r"token: (\S+)", out.stderr).group(1)
    cfg = os.path.join(work, "braid.toml")
    with open(cfg, "w") as f:
        f.write(out.stdout + "\n[limits]\nrate_per_second = 100000.0\nburst = 100000\n")
    log = open(os.path.join(work, "serve.log"), "w+")
    p = subprocess.Popen([binary, "serve", "--index", index, "--config", cfg, "--bind", "127.0.0.1:0"], stderr=log)
    for _ in range(200):
        log.seek(0)
        m = re.search(r"listening on http://127.0.0.1:(\d+)", log.read())
        if m:
            return p, int(m.group(1)), token
        time.sleep(0.05)
    sys.exit(open(log.name).read())


def timed(conn, token, body, extra):
    h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream", **extra}
    t = time.perf_counter()
    conn.request("POST", "/mcp", body=json.dumps(body), headers=h)
    r = conn.getresponse()
    data = r.read()
    ms = (time.perf_counter() - t) * 1000
    assert r.status == 200, (r.status, data[:300])
    assert "error" not in json.loads(data), data[:300]
    return ms


cases = {
    "tools/list 2025-06-18": ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"MCP-Protocol-Version": "2025-06-18"}),
    "search 2025-06-18": ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "refund annual plan", "k": 5}}},
                          {"MCP-Protocol-Version": "2025-06-18"}),
    "search 2026-07-28": ({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "refund annual plan", "k": 5}, "_meta": META}},
                          {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "search"}),
}
results = {b: {c: [] for c in cases} for b in binaries}
for rnd in range(rounds):
    for b in binaries:
        with tempfile.TemporaryDirectory() as work:
            p, port, token = start(b, work)
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                for case, (body, extra) in cases.items():
                    for _ in range(20):
                        timed(conn, token, body, extra)
                    results[b][case] += [timed(conn, token, body, extra) for _ in range(n)]
            finally:
                p.terminate()
                p.wait()
for b in binaries:
    for case, v in results[b].items():
        v.sort()
        print(f"{os.path.basename(b):24} {case:22} n={len(v):4} p50={statistics.median(v):7.3f} ms  p99={v[int(0.99*(len(v)-1))]:7.3f} ms")
