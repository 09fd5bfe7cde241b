"""What the studies of `braid fit --samples` share: a leg's ranked list read as `braid_fusion`
reads it (each record once, at its best rank) and min-max normalisation as blend does it."""


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
