#!/usr/bin/env python3
"""Whether two `braid eval --out` files hold the same per-query results.

Used to show that a change which should not alter ranking did not: every row (mode, fusion)
of OLD is looked up in NEW and its per-query nDCG@10 compared query by query.

    python3 research/scripts/same_per_query.py OLD.json NEW.json [--tolerance 1e-9]

Prints one line per row (queries compared, how many differ, the largest difference) and exits
1 when any query differs by more than the tolerance or a row or query is missing.
"""
import argparse
import json
import sys


def rows(path):
    with open(path) as f:
        data = json.load(f)
    return {row["mode"]: row for row in data}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args()
    old, new = rows(args.old), rows(args.new)
    ok = True
    for name, row in old.items():
        if name not in new:
            print(f"{name}: missing from {args.new}")
            ok = False
            continue
        before, after = row["per_query"], new[name]["per_query"]
        missing = sorted(set(before) ^ set(after))
        diffs = [abs(before[q] - after[q]) for q in before if q in after]
        differ = sum(d > args.tolerance for d in diffs)
        largest = max(diffs, default=0.0)
        print(f"{name}: {len(diffs)} queries, {differ} differ, largest difference {largest:.2e}"
              + (f", {len(missing)} queries in one file only" if missing else ""))
        ok &= differ == 0 and not missing
    print("same" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
