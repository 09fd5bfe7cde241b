#!/usr/bin/env python3
"""numpy's exact top-10 on the vectors `benches/speed.rs --dump DIR` wrote (research/ranking-log.md, "Speed").

Usage (one pinned core, one BLAS thread, as the Braid harness runs):

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python research/scripts/speed_numpy.py DIR [--passes N]

For each query, one at a time: `scores = matrix @ query` (float32 mat-vec), then
`argpartition` for the 10 best and a sort of those 10. Prints queries per second (median over
the timed passes, after one warm-up pass; wall clock, then per second of CPU time) and the
median latency, as `benches/speed.rs` prints them, and how many queries' top 10 equal the
store's in `DIR/braid_top10.txt`.
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

DIM = 384
K = 10


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", type=Path)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    matrix = np.fromfile(args.dir / "records.f32", dtype="<f4").reshape(-1, DIM)
    queries = np.fromfile(args.dir / "queries.f32", dtype="<f4").reshape(-1, DIM)
    matrix = np.ascontiguousarray(matrix)

    def top(q: np.ndarray) -> np.ndarray:
        scores = matrix @ q
        best = np.argpartition(-scores, K)[:K]
        return best[np.argsort(-scores[best], kind="stable")]

    rates, cpu_rates, took = [], [], []
    for p in range(args.passes + 1):
        started = time.perf_counter()
        cpu = time.process_time()
        for q in queries:
            t = time.perf_counter()
            top(q)
            if p > 0:
                took.append((time.perf_counter() - t) * 1e3)
        if p > 0:
            rates.append(len(queries) / (time.perf_counter() - started))
            cpu_rates.append(len(queries) / (time.process_time() - cpu))
    print(f"numpy {np.__version__}: {matrix.shape[0]}x{DIM} f32, {len(queries)} queries, {args.passes} timed passes")
    rate, cpu_rate, p50 = statistics.median(rates), statistics.median(cpu_rates), statistics.median(took)
    print(f"{'numpy':<9} {rate:>9.0f} {cpu_rate:>9.0f} {p50:>9.3f}")
    braid = args.dir / "braid_top10.txt"
    if braid.exists():
        theirs = [line.split() for line in braid.read_text().splitlines()]
        same = sum(1 for q, t in zip(queries, theirs) if [str(i) for i in top(q)] == t)
        print(f"top 10 equal to Braid's store: {same}/{len(theirs)} queries")


if __name__ == "__main__":
    main()
