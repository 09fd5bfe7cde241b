#!/usr/bin/env python3
"""Does a query made of the collection's common words call for another semantic share?

Issue 46 supposed that the default loses to its semantic leg on help-center questions because
words most records hold (`how`, `do`, `my`: Braid has no stop words) match lexically and push
down the article the embedding put first. This measures that from inside the lexical evidence:
per query, `common` — the share of its words in at least 5 % of the collection's documents —
and `idf_common` — the share of its summed BM25 idf those words carry; then fits rules on them
as `fit_agreement.py` fits its own (same samples, same groups, leave one dataset out).

  python3 research/scripts/fit_common_words.py S.jsonl SHARED_DATASETS

(The feature and the families were written before the fit:
research/results/technical-questions/prereg-common.md.)
"""
import itertools
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

from fit_agreement import CONSTANT, dataset_of, fit, help_center_types, load, macro  # beside this file
from fit_query_shape import ALPHAS, SHIPPED

COMMON = 0.05
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text):
    return WORD.findall(text.lower())


def documents(name, shared):
    """Each document's text of the collection a samples group names."""
    if name in ("cargo-book", "helpcenter"):
        for path in sorted(Path("datasets", name, "articles").rglob("*.md")):
            yield path.read_text(encoding="utf-8")
        return
    for line in open(Path(shared) / name / "corpus.jsonl", encoding="utf-8"):
        d = json.loads(line)
        yield f"{d.get('title', '')} {d.get('text', '')}"


def document_frequencies(name, shared):
    df, n = Counter(), 0
    for text in documents(name, shared):
        n += 1
        df.update(set(words(text)))
    return df, n


def add_features(rows, shared):
    tables = {}
    for r in rows:
        name = dataset_of(r["group"])
        if name not in tables:
            tables[name] = document_frequencies(name, shared)
        df, n = tables[name]
        ws = words(r["text"]) or [""]
        common = [df[w] >= COMMON * n for w in ws]
        idf = [math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in ws]
        r["common"] = sum(common) / len(ws)
        r["idf_common"] = sum(i for i, c in zip(idf, common) if c) / sum(idf) if sum(idf) else 0.0


def families():
    yield ("common >= t: share a", lambda p: (lambda r: (p[1] if r["common"] >= p[0] else SHIPPED, False)),
           list(itertools.product([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], ALPHAS)))
    yield ("linear in common", lambda p: (lambda r: (p[0] + p[1] * (r["common"] - 0.3), False)),
           list(itertools.product([0.4, 0.45, 0.5], [-1, -0.5, -0.25, 0.25, 0.5, 0.75, 1, 1.5])))
    yield ("idf_common >= t: share a", lambda p: (lambda r: (p[1] if r["idf_common"] >= p[0] else SHIPPED, False)),
           list(itertools.product([0.05, 0.1, 0.15, 0.2, 0.3, 0.4], ALPHAS)))


def main(path, shared):
    rows = load(path, help_center_types())
    add_features(rows, shared)
    groups = sorted({r["group"] for r in rows})
    sets = sorted({dataset_of(g) for g in groups})
    base_rule = CONSTANT[1](())
    print(f"{len(rows)} samples; feature means per group, and where the semantic leg beats blend at 0.45:")
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        lose = [r for r in rs if r["semantic"] > r["grid"][ALPHAS.index(SHIPPED)] + 1e-9]
        m = lambda k, xs: sum(r[k] for r in xs) / len(xs) if xs else float("nan")  # noqa: E731
        print(f"  {g:28} n={len(rs):4} common {m('common', rs):.3f} idf_common {m('idf_common', rs):.3f}"
              f" | sem>blend n={len(lose):3} common {m('common', lose):.3f} idf_common {m('idf_common', lose):.3f}")
    base = macro(rows, groups, base_rule)
    print(f"\nconstant 0.45: macro {base:.4f}\n\nrule families: fitted on every group; then leave one dataset out")
    for name, make, grid in families():
        p, v = fit(rows, groups, make, grid)
        held = []
        for h in sets:
            train = [g for g in groups if dataset_of(g) != h]
            test = [g for g in groups if dataset_of(g) == h]
            ph, _ = fit(rows, train, make, grid)
            held.append((h, ph, macro(rows, test, make(ph)) - macro(rows, test, base_rule)))
        loso = "  ".join(f"{h} {d:+.4f} {tuple(round(x, 2) for x in ph)}" for h, ph, d in held)
        print(f"  {name:26} {tuple(round(x, 2) for x in p)}: {v:.4f} ({v - base:+.4f})  held out: {loso}"
              f"  [min {min(d for _, _, d in held):+.4f}]")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
