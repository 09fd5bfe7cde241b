"""Recall of IVF-like cells (k-means, searched nearest cell first) on the 1M scale corpus's
partitions: a simulation for issue 42.

For the shared partition (records with a group ACL, ~500k) and one tenant (~50k): spherical
k-means cells trained on a sample, every row assigned to its nearest centroid; per query the
cells ranked by centroid similarity and visited until a share of the rows is covered; recall of
the exact (f32) top 10 and top 100 among the rows visited, and the share visited.

    python3 research/scripts/ivf_cells_sim.py [CELLS_FOR_THE_SHARED_PARTITION]

Reads `/tmp/braid-scale/corpus-1000000` (`scripts/scale_corpus.py ../shared/datasets
/tmp/braid-scale/corpus-1000000 1000000`, as `scripts/scale.sh` writes it); needs numpy.
Results: research/results/ivf-cells.txt; research/scale-log.md, 2026-12-07 (tenth session).
"""
import json, re, sys, time
import numpy as np

root = "/tmp/braid-scale/corpus-1000000"
rng = np.random.default_rng(7)
t = time.time()
vec = np.load(f"{root}/vectors.npy", mmap_mode="r")
acl_re = re.compile(rb'"acl": \["([^"]*)"')
tenant = np.full(vec.shape[0], -1, dtype=np.int16)
with open(f"{root}/corpus.jsonl", "rb") as f:
    for i, line in enumerate(f):
        m = acl_re.search(line)
        if m and m.group(1).startswith(b"tenant:t"):
            tenant[i] = int(m.group(1)[8:])
print("acl parsed", time.time() - t, file=sys.stderr)
queries = np.array([json.loads(l)["vector"] for l in open(f"{root}/queries.jsonl")], dtype=np.float32)
queries /= np.linalg.norm(queries, axis=1, keepdims=True)

def kmeans(x, c, iters=12):
    cent = x[rng.choice(len(x), c, replace=False)].copy()
    for _ in range(iters):
        a = np.empty(len(x), dtype=np.int32)
        for s in range(0, len(x), 50000):
            a[s:s+50000] = np.argmax(x[s:s+50000] @ cent.T, axis=1)
        for j in range(c):
            m = x[a == j]
            if len(m):
                v = m.sum(0); cent[j] = v / np.linalg.norm(v)
    return cent

def study(name, rows, cells, sample):
    x = np.ascontiguousarray(vec[rows]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    t = time.time()
    cent = kmeans(x[rng.choice(len(x), min(sample, len(x)), replace=False)], cells)
    assign = np.empty(len(x), dtype=np.int32)
    for s in range(0, len(x), 50000):
        assign[s:s+50000] = np.argmax(x[s:s+50000] @ cent.T, axis=1)
    sizes = np.bincount(assign, minlength=cells)
    print(f"{name}: {len(x)} rows, {cells} cells (train {time.time()-t:.0f} s), cell sizes p50 {int(np.median(sizes))} max {sizes.max()}", flush=True)
    shares = [0.02, 0.05, 0.1, 0.2, 0.3]
    out = {s: [[], [], []] for s in shares}
    for q in queries:
        scores = x @ q
        top100 = np.argpartition(-scores, 100)[:100]
        top100 = top100[np.argsort(-scores[top100])]
        top10 = set(top100[:10]); top100 = set(top100)
        order = np.argsort(-(cent @ q))
        covered = np.cumsum(sizes[order])
        for s in shares:
            n = int(np.searchsorted(covered, s * len(x))) + 1
            visit = np.isin(assign, order[:n])
            seen = set(np.nonzero(visit)[0])
            out[s][0].append(len(top10 & seen) / 10)
            out[s][1].append(len(top100 & seen) / 100)
            out[s][2].append(covered[n - 1] / len(x))
    for s in shares:
        r10, r100, vis = (np.mean(v) for v in out[s])
        print(f"  share {s:.2f}: visited {vis:.3f}, recall@10 {r10:.4f}, recall@100 {r100:.4f}", flush=True)

study("shared", np.nonzero(tenant < 0)[0], int(sys.argv[1]) if len(sys.argv) > 1 else 1024, 100000)
study("tenant t3", np.nonzero(tenant == 3)[0], 224, 50000)
