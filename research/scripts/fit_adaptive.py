#!/usr/bin/env python3
"""Does a per-query semantic share beat blend's one constant? A study on training splits only.

Reads the samples `braid-report fit --samples FILE` writes (every SciFact `train` and NFCorpus `dev`
query, clean and misspelt, with the three legs' ranked lists and raw scores), fuses them with
blend exactly as `braid_fusion::blend` does (min-max, lexical evidence counted once; checked
against the shipped blend's score from the fit), and tries a semantic share that moves with
how sure each leg is of its own top 10 — the query-performance-prediction features that
adaptive hybrid search uses:

  lex_gap  (BM25 top-1 − top-10) / top-1        cos_gap  cosine top-1 − top-10
  cos_rel  cos_gap / cosine top-1

as alpha = clip(a0 + a * (feature - centre), 0, 1), fitted by grid search on one dataset's
two groups and scored on the other's (and on all four). It prints, per feature, the fit and
the held-out macro nDCG@10 beside the constant blend's.

  braid-report fit --misspellings L --set ...scifact,train --set ...nfcorpus,dev --samples S.jsonl
  python3 research/scripts/fit_adaptive.py S.jsonl
"""
import json
import sys

from fit_samples import firsts, minmax, ndcg10  # research/scripts/fit_samples.py, beside this file

ALPHAS = [i / 20 for i in range(21)]
SHIPPED = 0.45


def blend(s, alpha):
    score, best = {}, {}
    for leg in ("lexical", "fuzzy", "semantic"):
        ranked = firsts(s[leg])
        for rank, ((o, _), n) in enumerate(zip(ranked, minmax([r for _, r in ranked]))):
            e = score.setdefault(o, [0.0, 0.0])
            best[o] = min(best.get(o, rank), rank)
            if leg == "semantic":
                e[1] += alpha * n
            else:
                e[0] = max(e[0], (1 - alpha) * n)
    order = sorted(score, key=lambda o: (-(score[o][0] + score[o][1]), best[o], o))
    return [s["ids"][o] for o in order]


def gap(ranked, relative):
    raws = [r for _, r in firsts(ranked)]
    if not raws or raws[0] <= 0:
        return 0.0
    g = raws[0] - raws[min(9, len(raws) - 1)]
    return g / raws[0] if relative else g


def main(path):
    samples = []
    for line in open(path):
        d = json.loads(line)
        samples.append((d["group_name"], d["sample"]))
    groups = sorted({g for g, _ in samples})
    # Each sample's nDCG@10 at every alpha of the grid, once.
    table = [[ndcg10(blend(s, a), s["judged"]) for a in ALPHAS] for _, s in samples]
    features = {
        "lex_gap": [gap(s["lexical"], True) for _, s in samples],
        "cos_gap": [gap(s["semantic"], False) for _, s in samples],
        "cos_rel": [gap(s["semantic"], True) for _, s in samples],
    }

    def macro(alphas, keep):
        means = []
        for g in keep:
            vals = [table[i][min(20, max(0, round(a * 20)))] for i, ((gn, _), a) in enumerate(zip(samples, alphas)) if gn == g]
            means.append(sum(vals) / len(vals))
        return sum(means) / len(means), means

    constant = [SHIPPED] * len(samples)
    print("groups:", ", ".join(groups))
    print(f"constant alpha {SHIPPED} (the shipped blend): macro {macro(constant, groups)[0]:.4f}")
    by_set = {}
    for g in groups:
        by_set.setdefault(g.split("/")[0], []).append(g)
    for name, x in features.items():
        centre = sorted(x)[len(x) // 2]
        rule = lambda a0, a: [a0 + a * (v - centre) for v in x]  # noqa: E731
        grid = [(a0 / 20, a / 4) for a0 in range(6, 15) for a in range(-8, 13)]
        def fit(keep):
            return max(grid, key=lambda p: macro(rule(*p), keep)[0])
        a0, a = fit(groups)
        print(f"\n{name} (centre {centre:.3f}): fitted on all four groups a0={a0:.2f} a={a:+.2f}: "
              f"macro {macro(rule(a0, a), groups)[0]:.4f}")
        for train, held in [(s, [g for g in groups if g not in by_set[s]]) for s in by_set]:
            a0, a = fit(by_set[train])
            got = macro(rule(a0, a), held)[1]
            base = macro(constant, held)[1]
            cells = ", ".join(f"{g} {v:.4f} (constant {b:.4f})" for g, v, b in zip(held, got, base))
            print(f"  fitted on {train} (a0={a0:.2f} a={a:+.2f}), held out: {cells}")


if __name__ == "__main__":
    main(sys.argv[1])
