#!/usr/bin/env python3
"""A record's semantic score softer than its best passage, replayed in the fused ranking, on the
fitting splits only (issue 20: "aggregated per record (max, or a soft top-m)").

The eighth round (research/ranking-log.md) scored the semantic leg alone under other record scores; its
best mixes gained +0.001 to +0.005 there. This replays the two mixes in the shipped blend, on
the samples of research/scripts/dense_feedback_study.sh (same loading, same query vectors): the semantic
list is every record ranked by `(1 - w) * best + w * other`, where `best` is the record's best
vector's cosine (the shipped score) and `other` its whole text's (its first vector) or the mean
over its vectors, w in {0.1, 0.2, 0.3}; last, the 0.1 whole-text mix as the engine would run
it (the leg's own 100 records rescored). Each is compared with the shipped score query by
query in the four groups (SciFact `train`, NFCorpus `train`+`dev`, clean and misspelt), by the
rule of research/scripts/dense_feedback_study.py.

  bash research/scripts/dense_feedback_study.sh     # writes the samples, ~/.cache/braid/eval/dense-feedback-samples.jsonl
  cd research/scripts && python3 record_score_study.py ~/.cache/braid/eval/dense-feedback-samples.jsonl \
    ../../../shared/datasets ~/.cache/braid/eval > ../results/record-score-study.txt

Results: research/results/record-score-study.txt; research/ranking-log.md ("Tenth round").
"""
import sys
from pathlib import Path

import numpy as np

from dense_feedback_study import load  # scripts/, beside this file
from fit_samples import paired_p


def ndcg_mixed(sample, w, other):
    corpus = sample.corpus
    cos = corpus.rows @ sample.q
    best = np.maximum.reduceat(cos, corpus.heads)
    if other == "whole text":
        second = cos[corpus.heads]
    else:
        counts = np.diff(np.append(corpus.heads, len(cos)))
        second = np.add.reduceat(cos, corpus.heads) / counts
    score = (1 - w) * best + w * second
    top = np.argsort(-score, kind="stable")[: sample.depth]
    return sample.ndcg([(int(o), float(score[o])) for o in top])


def ndcg_within(sample, w):
    """The mix as the engine would run it: the semantic leg's own list (found by the best
    vector) rescored, no record from outside it."""
    rescored = [(o, (1 - w) * raw + w * float(sample.corpus.vectors(o)[0] @ sample.q)) for o, raw in sample.lists[2]]
    rescored.sort(key=lambda t: (-t[1], t[0]))
    return sample.ndcg(rescored)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    groups = load(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
    base = {g: np.array([s.ndcg(s.lists[2]) for s in v]) for g, v in groups.items()}
    for other in ("whole text", "mean"):
        for w in (0.1, 0.2, 0.3):
            row, gains = [], []
            for g, v in groups.items():
                x = np.array([ndcg_mixed(s, w, other) for s in v])
                d, p = paired_p(x, base[g], rounds=2000)
                gains.append(d)
                row.append(f"{g} {d:+.4f} (p {p:.3f})")
            print(f"{1 - w:.1f} * best + {w:.1f} * {other}: macro {np.mean(gains):+.4f}; " + ", ".join(row), flush=True)
    row, gains = [], []
    for g, v in groups.items():
        x = np.array([ndcg_within(s, 0.1) for s in v])
        d, p = paired_p(x, base[g], rounds=2000)
        gains.append(d)
        row.append(f"{g} {d:+.4f} (p {p:.3f})")
    print(f"\n0.9 * best + 0.1 * whole text, the leg's own 100 rescored: macro {np.mean(gains):+.4f}; " + ", ".join(row))


if __name__ == "__main__":
    main()
