#!/usr/bin/env python3
"""Recall of the semantic leg against a ground truth, from two `semantic_hits` outputs.

    python3 scripts/semantic_recall.py TRUTH.json RUN.json [RUN2.json ...]

Prints, per run and principal, the mean recall@10 (the run's first 10 hits against the
truth's first 10) and recall@100, and the paths the run took, as one JSON object.
"""
import json
import sys


def recall(truth, run, n):
    total = 0.0
    for t, r in zip(truth, run):
        want = set(t[:n])
        total += len(want & set(r[:n])) / len(want) if want else 1.0
    return round(total / len(truth), 4)


truth = json.load(open(sys.argv[1]))
out = {}
for path in sys.argv[2:]:
    run = json.load(open(path))
    out[path] = {
        who: {
            "recall@10": recall(truth[who]["hits"], run[who]["hits"], 10),
            "recall@100": recall(truth[who]["hits"], run[who]["hits"], 100),
            "paths": run[who]["paths"],
        }
        for who in truth
    }
print(json.dumps(out, indent=1))
