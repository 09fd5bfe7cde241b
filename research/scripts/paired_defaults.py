#!/usr/bin/env python3
"""The default's test runs (results/defaults/) against those of an earlier commit, query by
query: mean nDCG@10 difference, a two-sided sign-flip randomization p (10,000 flips, seeded)
and how many queries changed.
    python3 research/scripts/paired_defaults.py REV     (e.g. 9692588)"""
import json
import random
import subprocess
import sys

rev = sys.argv[1]
random.seed(7)


def runs(text):
    return {r['mode']: r for r in json.loads(text)}


for d in ['scifact', 'nfcorpus', 'cranfield', 'cacm', 'npl']:
    for suffix, mode in [('', 'hybrid'), ('-misspelt', 'hybrid+misspelt')]:
        name = f'results/defaults/{d}{suffix}.json'
        old = runs(subprocess.run(['git', 'show', f'{rev}:{name}'], capture_output=True, text=True, check=True).stdout)[mode]
        new = runs(open(name).read())[mode]
        diffs = [new['per_query'][q] - old['per_query'][q] for q in new['per_query']]
        mean = sum(diffs) / len(diffs)
        flips = sum(abs(sum(x if random.random() < 0.5 else -x for x in diffs) / len(diffs)) >= abs(mean) - 1e-12
                    for _ in range(10_000))
        changed = sum(abs(x) > 1e-9 for x in diffs)
        print(f'{d}{suffix}: {old["ndcg@10"]:.4f} -> {new["ndcg@10"]:.4f}, {mean:+.4f} (p {flips / 10_000:.2f}), '
              f'{changed} of {len(diffs)} queries changed')
