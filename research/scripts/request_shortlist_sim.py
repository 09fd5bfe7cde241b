"""Recall of the screen's shortlists: one per partition (today) against one across the
partitions a request visits, on the 1M scale corpus (the estimator of braid-vector's signs.rs:
int8 codes, sign bits, four-bit query codes).

    python3 research/scripts/request_shortlist_sim.py

Reads `/tmp/braid-scale/corpus-1000000` (as `scripts/scale.sh` writes it); needs numpy and
about 6 GB of memory. Results: research/results/request-shortlist.txt; research/scale-log.md,
2026-12-07 (tenth session).
"""
import json, re, sys, numpy as np
root = "/tmp/braid-scale/corpus-1000000"
V = np.load(f"{root}/vectors.npy", mmap_mode="r")
N = V.shape[0]
acl_re = re.compile(rb'"acl": \["([^"]*)"')
part = np.full(N, -1, dtype=np.int16)
with open(f"{root}/corpus.jsonl", "rb") as f:
    for i, line in enumerate(f):
        m = acl_re.search(line)
        if m and m.group(1).startswith(b"tenant:t"):
            part[i] = int(m.group(1)[8:])
Q = np.array([json.loads(l)["vector"] for l in open(f"{root}/queries.jsonl")], dtype=np.float32)
Q /= np.linalg.norm(Q, axis=1, keepdims=True)
NQ = len(Q)
exact = np.empty((N, NQ), dtype=np.float32)
est = np.empty((N, NQ), dtype=np.float32)
step = 2 * np.abs(Q).max(axis=1) / 15
U = np.clip(np.round(Q / step[:, None] + 7.5), 0, 15)
W = (2 * U - 15).astype(np.float32)
const = (7.5 - U).sum(axis=1)
for s0 in range(0, N, 100_000):
    v = np.array(V[s0:s0 + 100_000], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    sc = np.abs(v).max(axis=1) / 127.0
    c = np.round(v / sc[:, None]).astype(np.int8)
    exact[s0:s0 + 100_000] = (c.astype(np.float32) @ Q.T) * sc[:, None]
    factor = 1.0 / (sc * np.abs(c).astype(np.float32).sum(axis=1))
    est[s0:s0 + 100_000] = ((c > 0).astype(np.float32) @ W.T + const[None, :]) * factor[:, None]
print("scored", file=sys.stderr)
def shortlist(k):
    return max(10 * k, 400)
def run(name, rows_mask, k=100):
    idx = np.nonzero(rows_mask)[0]
    parts = sorted(set(part[idx].tolist()))
    res = {}
    for j in range(NQ):
        ex = exact[idx, j]; es = est[idx, j]
        t100 = idx[np.argpartition(-ex, 100)[:100]]
        t100 = t100[np.argsort(-exact[t100, j])]
        t10 = set(t100[:10]); t100 = set(t100)
        # today: a shortlist per partition
        short = []
        for p in parts:
            pi = idx[part[idx] == p]
            S = shortlist(k)
            short.extend(pi[np.argpartition(-est[pi, j], min(S, len(pi) - 1))[:S]] if len(pi) > S else pi)
        short = set(short)
        res.setdefault("per partition", []).append((len(t10 & short) / 10, len(t100 & short) / 100, len(short)))
        for S in (1000, 2000, 3000, 5000):
            g = set(idx[np.argpartition(-es, S)[:S]])
            res.setdefault(f"global {S}", []).append((len(t10 & g) / 10, len(t100 & g) / 100, S))
    print(name)
    for key, v in res.items():
        a = np.array(v)
        print(f"  {key:14s} recall@10 {a[:,0].mean():.4f} (min {a[:,0].min():.1f})  recall@100 {a[:,1].mean():.4f}  rows rescored {a[:,2].mean():.0f}")
run("100 % (every partition)", np.ones(N, bool))
run("50 % (the ten tenants)", part >= 0)
