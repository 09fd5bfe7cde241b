"""Scores the title boost's candidate values on the fitting splits (research/scripts/title_study.sh).

Reads `<dataset>-<split>-<value>[-misspelt].json` (`braid eval --out`, one hybrid run each),
pools NFCorpus `train` and `dev`, and prints for every value the macro nDCG@10 of the four
groups (dataset × clean | misspelt), each group's mean, and the paired difference with the
value shipped before the fit (0.5; its output calls it "shipped") over every sample (sign-flip randomization test, 10,000 rounds). Then the value
fitted on each dataset alone, scored on the other: a value worth shipping must gain there too.
Standard library only (and research/scripts/fit_samples.py).
"""

import glob
import json
import os
import re
import sys

from fit_samples import paired_p  # research/scripts/fit_samples.py, beside this file

# The title boost shipped before this fit (since 2026-12-04 the default is 0.1).
SHIPPED = "0.5"
NAME = re.compile(r"^(?P<d>[a-z]+)-(?P<split>[a-z]+)-(?P<v>[0-9.]+)(?P<m>-misspelt)?\.json$")


def load(folder):
    """{value: {(group, split, query): nDCG@10}}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        group = m["d"] + ("+misspelt" if m["m"] else "")
        (report,) = json.load(open(path))
        for q, v in report["per_query"].items():
            runs.setdefault(m["v"], {})[(group, m["split"], q)] = v
    return runs


def macro(run, groups):
    means = []
    for g in groups:
        vals = [v for k, v in run.items() if k[0] == g]
        means.append(sum(vals) / len(vals))
    return sum(means) / len(means)


def main(folder):
    runs = load(folder)
    values = sorted(runs, key=float)
    shipped = runs[SHIPPED]
    groups = sorted({k[0] for k in shipped})
    print("samples per group: " + ", ".join(f"{g} {sum(k[0] == g for k in shipped)}" for g in groups))
    print(f"{'title':>6} {'macro':>7} {'vs ' + SHIPPED:>8} {'mean Δ':>8} {'p':>6}  " + "  ".join(f"{g:>17}" for g in groups))
    keys = sorted(shipped)
    for v in values:
        run = runs[v]
        d, p = paired_p([run[k] for k in keys], [shipped[k] for k in keys]) if v != SHIPPED else (0.0, 1.0)
        per = "  ".join(f"{macro(run, [g]):>17.4f}" for g in groups)
        print(f"{v:>6} {macro(run, groups):>7.4f} {macro(run, groups) - macro(shipped, groups):>+8.4f} {d:>+8.4f} {p:>6.3f}  {per}")
    best = max(values, key=lambda v: macro(runs[v], groups))
    print(f"best on all four groups: {best}")
    for dataset in sorted({g.split("+")[0] for g in groups}):
        fitted = [g for g in groups if g.split("+")[0] == dataset]
        held = [g for g in groups if g not in fitted]
        v = max(values, key=lambda x: macro(runs[x], fitted))
        held_keys = [k for k in keys if k[0] in held]
        d, p = paired_p([runs[v][k] for k in held_keys], [shipped[k] for k in held_keys]) if v != SHIPPED else (0.0, 1.0)
        print(f"fitted on {dataset}: {v}; held-out {'/'.join(held)} {macro(runs[v], held):.4f} "
              f"vs shipped {macro(shipped, held):.4f} ({macro(runs[v], held) - macro(shipped, held):+.4f}, p {p:.3f})")


if __name__ == "__main__":
    main(sys.argv[1])
