#!/usr/bin/env python3
"""Rank-based and score-based fusion side by side, and auto's two leans, on training splits
only (issue 20).

Reads the samples `braid-report fit --samples FILE` writes (each judged query of the fitting splits,
clean and with one real misspelling, with the three legs' top 100 and raw scores) and scores,
by nDCG@10:

  blend     the shipped fusion: E = max(n(lexical), n(fuzzy)), (1 - a) E + a n(semantic), n
            min-max over the leg's list (crates/braid-fusion/src/blend.rs)
  rrf       reciprocal rank fusion, the three legs summed (the old default)
  once      RRF with lexical evidence counted once: (1 - a) max(1/(k + r_lex), 1/(k + r_fuzzy))
            + a / (k + r_sem): what blend does with scores, done with ranks
  mix       lam * blend + (1 - lam) * once, each scaled to its own ceiling (1 for the top of
            every leg): score and rank evidence together
  lean      auto's question lean: the semantic weight times f for a question of six words or
            more (src/routing.rs), f = 1 is hybrid
  code      auto's code lean: on a short query with an identifier, the lexical weight times c,
            fuzzy and semantic divided by it (c = 1 is hybrid); `TITLE_CASE_FIX` chooses
            between the rule before 2026-12-03 (`Plant-Based` was a code) and today's

The four groups are (dataset, clean | misspelt); a dataset's splits are pooled. Every family
is fitted three ways: on both datasets (macro nDCG@10 of the four groups), on SciFact alone and
scored on NFCorpus, and the other way round. A change is worth shipping only if it gains on
the dataset it was not fitted on. The paired test is a two-sided sign-flip randomization test
on the per-sample differences with the shipped blend (10,000 flips, seed 7).

  braid-report fit --misspellings L --set ...scifact,train --set ...nfcorpus,train --set ...nfcorpus,dev --samples S.jsonl
  python3 research/scripts/fusion_study.py S.jsonl [--old-codes]     # needs numpy
"""
import json
import re
import sys

import numpy as np

ALPHAS = [round(0.05 * i, 2) for i in range(4, 15)]  # 0.20 .. 0.70
KS = [5, 10, 20, 40, 60, 100]
LAMBDAS = [0.25, 0.5, 0.75]
LEANS = [1.0, 1.25, 1.5, 2.0]
CODES = [1.0, 1.25, 1.5, 2.0]
TITLE_CASE_FIX = True  # `Plant-Based` is no code: a joined word counts only in capitals (`FBX-KEY`)
SHIPPED_ALPHA = 0.45

OPENERS = {"how", "what", "why", "when", "where", "which", "who", "can", "could", "do", "does", "did", "is",
           "are", "should", "will", "would", "i", "my", "has"}


def tokens(text):
    return [t for t in (re.sub(r"^\W+|\W+$", "", w) for w in text.split()) if t]


def code_like(token, acronyms):
    letters = sum(c.isalpha() for c in token)
    capitals = acronyms and any(c.isupper() for c in token)
    if any(c.isdigit() for c in token) or "_" in token:
        return True
    upper = capitals and all(not c.isalpha() or (c.isascii() and c.isupper()) for c in token)
    if "-" in token or "." in token:
        return upper if TITLE_CASE_FIX else capitals
    return upper and letters >= 2


def is_code(text):
    """src/routing.rs's `Shape::Code`: at most four words, one of them an identifier."""
    t = tokens(text)
    acronyms = len(t) == 1 or any(c.islower() for c in text)
    return 0 < len(t) <= 4 and any(code_like(x, acronyms) for x in t)


def is_question(text):
    """src/routing.rs's `Shape::Question`, less its code-lookup test (at most four words)."""
    t = tokens(text)
    return not is_code(text) and len(t) >= 6 and (text.rstrip().endswith("?") or t[0].lower() in OPENERS)


class Sample:
    """One query's candidates as arrays: min-max scores and ranks per leg, gains."""

    def __init__(self, group, s):
        self.group = group
        self.question = is_question(s["text"])
        self.code = is_code(s["text"])
        legs = []
        for leg in ("lexical", "fuzzy", "semantic"):
            seen, ranked = set(), []
            for o, raw in s[leg]:
                if o not in seen:
                    seen.add(o)
                    ranked.append((o, raw))
            legs.append(ranked)
        ords = sorted({o for ranked in legs for o, _ in ranked})
        at = {o: i for i, o in enumerate(ords)}
        n = len(ords)
        self.norm = np.zeros((3, n))
        self.rank = np.full((3, n), np.inf)
        for leg, ranked in enumerate(legs):
            raws = np.array([r for _, r in ranked], dtype=np.float64)
            if len(raws):
                lo, hi = raws.min(), raws.max()
                norms = (raws - lo) / (hi - lo) if hi > lo else np.ones_like(raws)
                for r, ((o, _), x) in enumerate(zip(ranked, norms)):
                    self.norm[leg, at[o]] = x
                    self.rank[leg, at[o]] = r + 1
        self.best = self.rank.min(axis=0)
        self.ords = np.array(ords)
        judged = s["judged"]
        self.gain = np.array([max(judged.get(s["ids"][o], 0), 0) for o in ords], dtype=np.float64)
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
        self.idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))

    def ndcg(self, score):
        order = np.lexsort((self.ords, self.best, -score))[:10]
        dcg = float(np.sum(self.gain[order] / np.log2(np.arange(len(order)) + 2)))
        return dcg / self.idcg if self.idcg > 0 else 0.0

    def blend(self, alpha, lean=1.0, code=1.0):
        """Blend with auto's leans: semantic x `lean` on a question; on a code lookup lexical
        x `code`, fuzzy and semantic / `code`."""
        a = alpha * (lean if self.question else 1.0)
        c = code if self.code else 1.0
        return (1 - alpha) * np.maximum(c * self.norm[0], self.norm[1] / c) + a / c * self.norm[2]

    def once(self, alpha, k):
        r = 1.0 / (k + self.rank)  # 0 where the leg did not find the candidate
        return ((1 - alpha) * np.maximum(r[0], r[1]) + alpha * r[2]) * (k + 1)

    def rrf(self, k=60):
        return (1.0 / (k + self.rank)).sum(axis=0)


def load(path):
    samples = []
    for line in open(path):
        d = json.loads(line)
        name = d["group_name"]
        group = name.split("/")[0] + ("+misspelt" if name.endswith("+misspelt") else "")
        samples.append(Sample(group, d["sample"]))
    return samples


def evaluate(samples, fuse):
    return np.array([s.ndcg(fuse(s)) for s in samples])


def macro(values, samples, groups):
    return float(np.mean([values[[s.group in (g,) for s in samples]].mean() for g in groups]))


def randomization(diff, flips=10_000, seed=7):
    rng = np.random.default_rng(seed)
    observed = abs(diff.mean())
    signs = rng.choice([-1.0, 1.0], size=(flips, len(diff)))
    return float((np.abs((signs * diff).mean(axis=1)) >= observed - 1e-12).mean())


def main(path):
    samples = load(path)
    groups = sorted({s.group for s in samples})
    datasets = sorted({g.split("+")[0] for g in groups})
    print("samples:", len(samples), "; per group:", {g: sum(s.group == g for s in samples) for g in groups})
    families = {
        "blend": [(f"blend a={a}", (lambda a: lambda s: s.blend(a))(a)) for a in ALPHAS],
        "once": [(f"once a={a} k={k}", (lambda a, k: lambda s: s.once(a, k))(a, k)) for a in ALPHAS for k in KS],
        "mix": [(f"mix lam={lam} a={a} k={k}", (lambda lam, a, k: lambda s: lam * s.blend(a) + (1 - lam) * s.once(a, k))(lam, a, k))
                for lam in LAMBDAS for a in ALPHAS for k in KS],
        "lean": [(f"lean f={f}", (lambda f: lambda s: s.blend(SHIPPED_ALPHA, f))(f)) for f in LEANS],
        "code": [(f"code c={c}", (lambda c: lambda s: s.blend(SHIPPED_ALPHA, 1.0, c))(c)) for c in CODES],
    }
    shipped = evaluate(samples, lambda s: s.blend(SHIPPED_ALPHA))
    rrf = evaluate(samples, lambda s: s.rrf())
    cache = {}

    def values(name, fuse):
        if name not in cache:
            cache[name] = evaluate(samples, fuse)
        return cache[name]

    def row(label, v):
        per = "  ".join(f"{v[[s.group == g for s in samples]].mean():.4f}" for g in groups)
        diff = v - shipped
        print(f"{label:<30} {macro(v, samples, groups):.4f}  {macro(v, samples, groups) - macro(shipped, samples, groups):+.4f}"
              f"  p {randomization(diff):.3f}  {per}")

    print(f"{'':<30} macro   vs blend  paired   " + "  ".join(groups))
    row("shipped blend a=0.45", shipped)
    row("rrf k=60 (old default)", rrf)
    for family, candidates in families.items():
        print(f"-- {family}")
        scored = [(name, values(name, fuse)) for name, fuse in candidates]
        best = max(scored, key=lambda x: macro(x[1], samples, groups))
        row(f"best on all: {best[0]}", best[1])
        for fit_on in datasets:
            held = [g for g in groups if not g.startswith(fit_on)]
            fitted = [g for g in groups if g.startswith(fit_on)]
            name, v = max(scored, key=lambda x: macro(x[1], samples, fitted))
            print(f"   fitted on {fit_on}: {name}: held-out {'/'.join(held)} {macro(v, samples, held):.4f}"
                  f" vs shipped {macro(shipped, samples, held):.4f} ({macro(v, samples, held) - macro(shipped, samples, held):+.4f})")
        if family in ("lean", "code"):
            q = np.array([s.question if family == "lean" else s.code for s in samples])
            print(f"   {'questions' if family == 'lean' else 'code lookups'}: {q.sum()} samples; on them:")
            in_group = {g: q & np.array([s.group == g for s in samples]) for g in groups}
            for name, v in scored:
                per = "  ".join(f"{g}: {v[m].mean():.4f} ({m.sum()})" for g, m in in_group.items() if m.any())
                print(f"   {name:<12} {v[q].mean():.4f} (vs f=1 {v[q].mean() - scored[0][1][q].mean():+.4f},"
                      f" p {randomization(v[q] - scored[0][1][q]):.3f})  {per}")


if __name__ == "__main__":
    TITLE_CASE_FIX = "--old-codes" not in sys.argv
    main(sys.argv[1])
