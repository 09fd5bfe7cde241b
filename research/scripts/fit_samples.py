"""What the studies of `braid-report fit --samples` share: a leg's ranked list read as `braid_fusion`
reads it (each record once, at its best rank), min-max normalisation as blend does it,
nDCG@10, and the paired sign-flip randomization test."""
import math
import random


def firsts(ranked):
    """Each record once, at its first (best) place, with its raw score."""
    seen, out = set(), []
    for ord_, raw in ranked:
        if ord_ not in seen:
            seen.add(ord_)
            out.append((ord_, raw))
    return out


def minmax(xs):
    """`(x - min) / (max - min)`, all 1 when they tie (`Normalisation::MinMax`)."""
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 0.0)
    return [(x - lo) / (hi - lo) if hi > lo else 1.0 for x in xs]


def ndcg10(ranking, judged):
    """nDCG@10 of `ranking` (doc ids, best first) against graded judgements `judged`."""
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:10]) if judged.get(d, 0) > 0)
    return dcg / idcg if idcg > 0 else 0.0


def paired_p(a, b, rounds=10_000, seed=7):
    """The mean of `a - b` (paired per sample) and its two-sided sign-flip randomization p."""
    diffs = [x - y for x, y in zip(a, b)]
    observed = abs(sum(diffs))
    rng = random.Random(seed)
    hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed - 1e-12 for _ in range(rounds))
    return sum(diffs) / len(diffs), hits / rounds
