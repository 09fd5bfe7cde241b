#!/usr/bin/env python3
"""The default against each of its legs, query by query, from `braid eval --out` files.

  python3 research/scripts/legs_vs_default.py RESULTS.json [RESULTS.json ...] [--only IDS_QRELS.tsv]

For each file: every run's nDCG@10, and the default run (`hybrid`, `hybrid+misspelt`) minus
each leg's run on the same queries (mean difference and the paired sign-flip randomization p,
10,000 flips), plus the file's own `vs` record against its baseline when `braid eval
--baseline` wrote one. With `--only QRELS.tsv`, only the queries judged there.
"""
import json
import sys

from fit_samples import paired_p  # beside this file


def main(args):
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = {line.split("\t")[0] for line in open(args[i + 1]).read().splitlines()[1:] if line.strip()}
        args = args[:i] + args[i + 2:]
    for path in args:
        runs = json.load(open(path))
        by = {r["mode"]: r for r in runs}
        default = next(m for m in by if m.split("+")[0] == "hybrid")
        d = by[default]["per_query"]
        qs = sorted(q for q in d if only is None or q in only)
        print(f"{path}: {len(qs)} queries")
        for mode, r in by.items():
            pq = r["per_query"]
            mean = sum(pq.get(q, 0.0) for q in qs) / len(qs)
            line = f"  {mode:18} nDCG@10 {mean:.4f}"
            if mode != default:
                diff, p = paired_p([d[q] for q in qs], [pq.get(q, 0.0) for q in qs])
                line += f"   default − this {diff:+.4f} (p {p:.3f}){' *' if p < 0.05 else ''}"
            vs = r.get("vs")
            if vs and only is None:
                line += f"   vs baseline {json.dumps(vs)[:160]}"
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
