#!/usr/bin/env python3
"""Prints research/ranking-log.md's tables from research/results/fit.json and research/results/ranking/*.json
(written by research/scripts/fit.sh and research/scripts/ranking.sh).
    python3 research/scripts/ranking_tables.py [RESULTS_DIR=research/results]
"""
import glob
import json
import os
import sys

res = sys.argv[1] if len(sys.argv) > 1 else "research/results"


def fit_tables():
    path = os.path.join(res, "fit.json")
    if not os.path.exists(path):
        return
    f = json.load(open(path))
    groups = [f"{g} ({n})" for g, n in zip(f["groups"], f["queries"])]
    print("| fusion (fitted on training splits) | macro nDCG@10 | " + " | ".join(groups) + " |")
    print("|---|---:|" + "---:|" * len(groups))

    def row(name, s):
        print(f"| {name} | {s['objective']:.4f} | " + " | ".join(f"{x:.4f}" for x in s["groups"]) + " |")

    def desc(c):
        return ", ".join(f"{k}={v}" for k, v in c.items())

    row(f"**best blend** ({desc(f['best_blend']['candidate'])})", f["best_blend"])
    row(f"best weighted RRF ({desc(f['best_rrf']['candidate'])})", f["best_rrf"])
    row(f"best score average ({desc(f['best_average']['candidate'])})", f["best_average"])
    for name, s in f["reference"]:
        row(name, s)
    print()
    print(f"Queries the index flags as misspelled (a \"did you mean\" suggestion): {f['flagged_queries']} samples.")
    print()
    print("| on flagged queries only | macro nDCG@10 | " + " | ".join(f["groups"]) + " |")
    print("|---|---:|" + "---:|" * len(groups))
    row(f"typo blend ({desc(f['typo_blend']['candidate'])})", f["typo_blend"])
    row("default blend", f["default_on_flagged"])
    print()


def cell(r):
    ci = r.get("ndcg@10_ci95")
    s = f"{r['ndcg@10']:.4f}"
    if ci:
        s += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
    return s


def vs(r):
    v = r.get("vs")
    if not v:
        return "baseline"
    star = "**" if v["p_value"] < 0.05 else ""
    return f"{star}{v['delta']:+.4f}{star} [{v['ci95']['low']:+.3f}, {v['ci95']['high']:+.3f}], p {v['p_value']:.3f}"


def test_tables():
    for d in ["scifact", "nfcorpus", "cranfield", "cacm", "npl"]:
        for variant in ["clean", "misspelt"]:
            runs = []
            for suffix in ["rrf", "legs", "", "blend"]:
                p = os.path.join(res, "ranking", f"{d}-{variant}{'-' + suffix if suffix else ''}.json")
                if os.path.exists(p):
                    runs += json.load(open(p))
            if not runs:
                continue
            print(f"**{d} test, {variant}** ({runs[0]['queries']} queries)")
            print()
            print("| mode | nDCG@10 [95 % CI] | Δ vs old default fusion (hybrid/rrf) [95 % CI], paired p | Recall@100 | p50 ms |")
            print("|---|---:|---:|---:|---:|")
            for r in runs:
                print(f"| {r['mode']} | {cell(r)} | {vs(r)} | {r['recall@100']:.4f} | {r['p50_ms']:.1f} |")
            print()


fit_tables()
test_tables()
