#!/usr/bin/env python3
"""Does what the legs returned call for another semantic share? A study on fitting splits only.

Issue 46: the default fell below its own semantic leg on a held-out help center's questions, and
a larger share for question-shaped queries (the eleventh round, `fit_query_shape.py`) lost 0.030
on Cranfield's technical questions. Here the share moves with what the legs returned, not with
the query's text alone, from features blend itself can compute from its lists:

  agree    |top 10 of the lexical evidence ∩ top 10 of the semantic leg| / 10
  sem1_lex rank of the semantic leg's first record in the lexical evidence (0 = first, 10 = not
           in its top 10)
  cos1     the semantic leg's top cosine; cos_m its margin over the second
  lex_m    BM25's relative margin (top 1 − top 2) / top 1; lex_gap (top 1 − top 10) / top 1

Reads the samples of `braid-report fit --samples` (every leg's list with raw scores; sections
collapsed to their article), precomputes each sample's nDCG@10 under blend at every share of the
grid, with the lexical leg with and without feedback, and fits small rules (2-4 parameters) to
the macro mean over the (set, clean | misspelt) groups, each also fitted with one dataset left
out and scored on it. Prints per group, per labelled type, and every leg beside.

  python3 research/scripts/fit_agreement.py S.jsonl [RULE]
"""
import itertools
import json
import sys
from collections import defaultdict

from fit_query_shape import ALPHAS, SHIPPED, blend, leg_alone, shape  # beside this file
from fit_samples import firsts, minmax, ndcg10, paired_p

SHIPPED_I = ALPHAS.index(SHIPPED)


def evidence_order(s, lexical="lexical"):
    """Records by lexical evidence (max of the min-max normalised lexical and fuzzy scores)."""
    e = {}
    for leg in (lexical, "fuzzy"):
        ranked = firsts(s[leg])
        for (o, _), n in zip(ranked, minmax([r for _, r in ranked])):
            e[o] = max(e.get(o, 0.0), n)
    return sorted(e, key=lambda o: -e[o])


def features(s):
    sem = firsts(s["semantic"])
    lex = firsts(s["lexical"])
    ev = evidence_order(s)
    sem10 = [o for o, _ in sem[:10]]
    ev10 = ev[:10]
    f = {}
    f["agree"] = len(set(sem10) & set(ev10)) / 10 if sem10 and ev10 else 0.0
    f["sem1_lex"] = ev10.index(sem10[0]) if sem10 and sem10[0] in ev10 else 10
    f["lex1_sem"] = sem10.index(ev10[0]) if ev10 and ev10[0] in sem10 else 10
    raws = [r for _, r in sem]
    f["cos1"] = raws[0] if raws else 0.0
    f["cos_m"] = raws[0] - raws[1] if len(raws) > 1 else 0.0
    lr = [r for _, r in lex]
    f["lex_m"] = (lr[0] - lr[1]) / lr[0] if len(lr) > 1 and lr[0] > 0 else 0.0
    f["lex_gap"] = (lr[0] - lr[min(9, len(lr) - 1)]) / lr[0] if lr and lr[0] > 0 else 0.0
    f["lex1"] = lr[0] if lr else 0.0
    f["words"] = len(s["text"].split())
    return f


def load(path, types):
    rows = []
    for line in open(path):
        d = json.loads(line)
        s = d["sample"]
        row = {"group": d["group_name"], "text": s["text"], "shape": shape(s["text"]), "query": s["query"]}
        row["type"] = types.get((d["group_name"].split("/")[0], s["query"]), row["shape"])
        row["grid"] = [ndcg10(blend(s, a), s["judged"]) for a in ALPHAS]
        row["plain"] = [ndcg10(blend(s, a, "lexical_plain"), s["judged"]) for a in ALPHAS]
        for leg in ("lexical", "fuzzy", "semantic"):
            row[leg] = ndcg10(leg_alone(s, leg), s["judged"])
        row.update(features(s))
        rows.append(row)
    return rows


def help_center_types():
    """The help-center sets' own labels (`metadata.type`), by (dataset name, query id)."""
    out = {}
    for name, path in (("cargo-book", "datasets/cargo-book/queries.jsonl"),
                       ("helpcenter", "datasets/helpcenter/queries.jsonl")):
        try:
            for line in open(path):
                q = json.loads(line)
                t = (q.get("metadata") or {}).get("type")
                if t:
                    out[(name, q["_id"])] = t
        except FileNotFoundError:
            pass
    return out


def dataset_of(g):
    return g.split("/")[0]


def value(row, alpha, plain=False):
    i = min(len(ALPHAS) - 1, max(0, round(alpha * 20)))
    return row["plain" if plain else "grid"][i]


def macro(rows, groups, rule):
    means = []
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        if rs:
            means.append(sum(value(r, *rule(r)) for r in rs) / len(rs))
    return sum(means) / len(means)


CONSTANT = ("constant 0.45", lambda p: (lambda r: (SHIPPED, False)), [()])


def families():
    """Each: (name, params -> rule, parameter grid). A rule maps a row to (share, feedback off)."""
    a0s = [0.4, 0.45, 0.5]
    yield CONSTANT
    yield ("constant", lambda p: (lambda r: (p[0], False)), [(a,) for a in ALPHAS])
    # Disagreement between the legs: a larger (or smaller) share when their top 10s share few records.
    yield ("agree<t: share a", lambda p: (lambda r: (p[1] if r["agree"] < p[0] else SHIPPED, False)),
           list(itertools.product([0.1, 0.2, 0.3, 0.4, 0.5], ALPHAS)))
    yield ("linear in agree", lambda p: (lambda r: (p[0] + p[1] * (0.5 - r["agree"]), False)),
           list(itertools.product(a0s, [-0.6, -0.4, -0.2, 0.2, 0.4, 0.6, 0.8])))
    # The semantic leg's first record far down the lexical evidence, and a decisive cosine.
    yield ("sem1 not in lexical top t: share a",
           lambda p: (lambda r: (p[1] if r["sem1_lex"] >= p[0] else SHIPPED, False)),
           list(itertools.product([1, 3, 5, 10], ALPHAS)))
    yield ("cos1 > c: share a", lambda p: (lambda r: (p[1] if r["cos1"] > p[0] else SHIPPED, False)),
           list(itertools.product([0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75], ALPHAS)))
    yield ("cos1 > c and agree < t: share a",
           lambda p: (lambda r: (p[2] if r["cos1"] > p[0] and r["agree"] < p[1] else SHIPPED, False)),
           list(itertools.product([0.4, 0.5, 0.55, 0.6, 0.65, 0.7], [0.2, 0.3, 0.4, 0.5], ALPHAS)))
    yield ("linear in cos1", lambda p: (lambda r: (p[0] + p[1] * (r["cos1"] - 0.55), False)),
           list(itertools.product(a0s, [-1.5, -1, -0.5, 0.5, 1, 1.5, 2, 3])))
    yield ("cos_m > m: share a", lambda p: (lambda r: (p[1] if r["cos_m"] > p[0] else SHIPPED, False)),
           list(itertools.product([0.02, 0.04, 0.06, 0.08, 0.1], ALPHAS)))
    yield ("lex_m < m: share a", lambda p: (lambda r: (p[1] if r["lex_m"] < p[0] else SHIPPED, False)),
           list(itertools.product([0.02, 0.05, 0.1, 0.2], ALPHAS)))
    # Feedback off when the legs disagree.
    yield ("agree<t: feedback off", lambda p: (lambda r: (SHIPPED, r["agree"] < p[0])),
           [(t,) for t in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.01]])
    yield ("agree<t: share a, feedback off",
           lambda p: (lambda r: (p[1] if r["agree"] < p[0] else SHIPPED, r["agree"] < p[0])),
           list(itertools.product([0.1, 0.2, 0.3, 0.4, 0.5], ALPHAS)))
    # Shape and agreement together: a question whose legs disagree.
    yield ("question and agree<t: share a",
           lambda p: (lambda r: (p[1] if r["shape"] == "question" and r["agree"] < p[0] else SHIPPED, False)),
           list(itertools.product([0.2, 0.3, 0.4, 0.5, 1.01], ALPHAS)))
    yield ("question and cos1>c: share a",
           lambda p: (lambda r: (p[1] if r["shape"] == "question" and r["cos1"] > p[0] else SHIPPED, False)),
           list(itertools.product([0.0, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7], ALPHAS)))


def fit(rows, groups, make, grid):
    best = None
    for p in grid:
        v = macro(rows, groups, make(p))
        if best is None or v > best[1] + 1e-12:
            best = (p, v)
    return best


def main(path, chosen=None):
    rows = load(path, help_center_types())
    groups = sorted({r["group"] for r in rows})
    sets = sorted({dataset_of(g) for g in groups})
    base_rule = CONSTANT[1](())
    print(f"{len(rows)} samples; groups: {', '.join(groups)}")

    print("\nfeature means per group (agree, sem1_lex, cos1, cos_m, lex_m) and where blend loses to semantic:")
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        m = lambda k: sum(r[k] for r in rs) / len(rs)  # noqa: E731
        lose = [r for r in rs if r["semantic"] > r["grid"][SHIPPED_I] + 1e-9]
        win = [r for r in rs if r["semantic"] < r["grid"][SHIPPED_I] - 1e-9]
        ml = lambda k, xs: sum(r[k] for r in xs) / len(xs) if xs else float("nan")  # noqa: E731
        print(f"  {g:28} n={len(rs):4} agree {m('agree'):.3f} sem1_lex {m('sem1_lex'):.2f} cos1 {m('cos1'):.3f}"
              f" cos_m {m('cos_m'):.3f} lex_m {m('lex_m'):.3f} | sem>blend n={len(lose):3} agree {ml('agree', lose):.3f}"
              f" cos1 {ml('cos1', lose):.3f} | sem<blend n={len(win):3} agree {ml('agree', win):.3f} cos1 {ml('cos1', win):.3f}")

    base = macro(rows, groups, base_rule)
    print(f"\nconstant 0.45 (the shipped blend): macro {base:.4f}")
    print("\nrule families: fitted on every group; then leave one dataset out (fit on the others, score on it)")
    results = {}
    for name, make, grid in families():
        if name == CONSTANT[0]:
            continue
        p, v = fit(rows, groups, make, grid)
        held = []
        for h in sets if len(sets) > 1 else []:
            train = [g for g in groups if dataset_of(g) != h]
            test = [g for g in groups if dataset_of(g) == h]
            ph, _ = fit(rows, train, make, grid)
            got = macro(rows, test, make(ph))
            b = macro(rows, test, base_rule)
            held.append((h, ph, got - b))
        results[name] = (p, v)
        loso = "  ".join(f"{h} {d:+.4f} {tuple(round(x, 2) for x in ph)}" for h, ph, d in held)
        summary = f"  [mean {sum(d for _, _, d in held) / len(held):+.4f}, min {min(d for _, _, d in held):+.4f}]" if held else ""
        print(f"  {name:38} {tuple(round(x, 2) for x in p)}: {v:.4f} ({v - base:+.4f})  held out: {loso or '-'}{summary}")

    if chosen:
        name, params = chosen.split("=")
        params = tuple(float(x) for x in params.split(","))
        make = {n: m for n, m, _ in families()}[name]
        rule = make(params)
        print(f"\n{name} {params} against the constant, and the legs, per group (paired sign-flip p):")
        for g in groups:
            rs = [r for r in rows if r["group"] == g]
            new = [value(r, *rule(r)) for r in rs]
            old = [value(r, *base_rule(r)) for r in rs]
            d, p = paired_p(new, old)
            moved = sum(1 for r in rs if rule(r) != base_rule(r))
            legs = "  ".join(f"{leg} {sum(r[leg] for r in rs) / len(rs):.4f}" for leg in ("lexical", "fuzzy", "semantic"))
            print(f"  {g:28} n={len(rs):4} moved {moved:4}  rule {sum(new) / len(rs):.4f} constant {sum(old) / len(rs):.4f}"
                  f" ({d:+.4f}, p={p:.3f})  {legs}")
        print("\nper type (help-center labels; shape() elsewhere), clean and misspelt pooled:")
        cells = defaultdict(list)
        for r in rows:
            cells[(dataset_of(r["group"]), r["type"])].append(r)
        for (ds, t), rs in sorted(cells.items()):
            new = [value(r, *rule(r)) for r in rs]
            old = [value(r, *base_rule(r)) for r in rs]
            d, p = paired_p(new, old)
            legs = "  ".join(f"{leg} {sum(r[leg] for r in rs) / len(rs):.4f}" for leg in ("lexical", "fuzzy", "semantic"))
            print(f"  {ds:12} {t:9} n={len(rs):4} rule {sum(new) / len(rs):.4f} constant {sum(old) / len(rs):.4f}"
                  f" ({d:+.4f}, p={p:.3f})  {legs}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
