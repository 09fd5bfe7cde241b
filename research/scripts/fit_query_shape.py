#!/usr/bin/env python3
"""Does the query's shape call for another semantic share? A study on fitting splits only.

Reads the samples `braid-report fit --samples FILE` writes (every judged query of each fitting
split, clean and with one real misspelling, with the legs' ranked lists and raw scores; a
section's article as the id judged), fuses them with blend exactly as `braid_fusion::blend`
does (min-max, lexical evidence counted once) and asks, per shape of query as `shape()` below
reads it from the text alone (question, code, words):

  - each leg's nDCG@10 and blend's at every semantic share of the grid;
  - the share that maximises the macro mean over the groups (each (set, clean | misspelt)
    group counts alike), per shape — the shapes are disjoint, so the fit is separable;
  - the same fitted with each dataset left out and scored on it (does it carry over?);
  - blend with the lexical leg's feedback off for a shape.

  python3 research/scripts/fit_query_shape.py S.jsonl [SHARES]   # SHARES: "question=0.7,code=0.3/nofb"
  python3 research/scripts/fit_query_shape.py --personal S.jsonl [SHARES]   # SHARES may name "personal"

(`--personal`: the thirteenth round's split of questions, written before its fit: a question that
holds a first- or second-person word (`PERSONAL`) is `personal` — "how do I…", "can my…" —, the
rest stay `question`.)

(`/nofb`: that shape's lexical leg without feedback.)

With SHARES it prints, per group and per shape, the shipped constant, the shares given, and the
legs, with the paired randomization test of shares against the constant.
"""
import json
import re
import sys
from collections import defaultdict

from fit_samples import firsts, minmax, ndcg10, paired_p  # beside this file

ALPHAS = [i / 20 for i in range(21)]
SHIPPED = 0.45

# The shape rules, written before any share was fitted: a question ends with `?`, holds one among
# three or more words, opens three or more words with a question word or auxiliary, or has a
# clause after a comma that asks (", what do"); a code holds a character prose does not, a
# camelCase or dotted name, or an option; everything else is words.
QUESTION_OPENERS = {
    "how", "what", "why", "when", "where", "which", "who", "whom", "whose",
    "can", "could", "should", "would", "will", "shall", "may", "might", "must",
    "do", "does", "did", "is", "are", "was", "were", "am", "has", "have", "had",
    "isn't", "aren't", "doesn't", "don't", "didn't", "can't", "won't", "shouldn't",
}
AUXILIARIES = {"do", "does", "did", "can", "could", "should", "would", "is", "are", "will"}
CODE_CHARS = set("_=:/[]{}<>()$@#`\\|")
PERSONAL = {"i", "i'm", "i've", "i'd", "my", "me", "mine", "myself", "we", "our", "us", "you", "your"}


def personal_shape(text):
    """`shape`, with questions holding a first- or second-person word as `personal`."""
    sh = shape(text)
    if sh == "question" and any(w.strip(".,;:!?\"'()").lower() in PERSONAL for w in text.split()):
        return "personal"
    return sh


def shape(text):
    """`question`, `code` or `words` (the rules above)."""
    t = text.strip()
    words = t.split()
    if not words:
        return "words"
    if t.endswith("?") or ("?" in t and len(words) >= 3):
        return "question"
    first = words[0].lstrip("\"'(").lower()
    if len(words) >= 3 and first in QUESTION_OPENERS:
        return "question"
    for a, b, c in zip(words, words[1:], words[2:]):
        if a.endswith((",", ";")) and b.lower() in ("how", "what", "why") and c.lower() in AUXILIARIES:
            return "question"
    for w in words:
        core = w.strip(".,;!?\"'")
        if any(c in CODE_CHARS for c in core):
            return "code"
        if re.search(r"[a-z][A-Z]", core):
            return "code"
        if re.search(r"\w\.\w", core) and not re.fullmatch(r"[\d.]+", core):
            return "code"
        if core.startswith("--") or (core.startswith("-") and len(core) == 2 and core[1].isalpha()):
            return "code"
    return "words"


def blend(s, alpha, lexical="lexical"):
    """The fused ranking as judged ids (sections collapsed to their article), best first."""
    score, best = {}, {}
    for leg in (lexical, "fuzzy", "semantic"):
        ranked = firsts(s[leg])
        for rank, ((o, _), n) in enumerate(zip(ranked, minmax([r for _, r in ranked]))):
            e = score.setdefault(o, [0.0, 0.0])
            best[o] = min(best.get(o, rank), rank)
            if leg == "semantic":
                e[1] += alpha * n
            else:
                e[0] = max(e[0], (1 - alpha) * n)
    order = sorted(score, key=lambda o: (-(score[o][0] + score[o][1]), best[o], o))
    return collapse(s, order)


def collapse(s, order):
    parents = s.get("parents") or s["ids"]
    seen, out = set(), []
    for o in order:
        p = parents[o]
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def leg_alone(s, leg):
    return collapse(s, [o for o, _ in firsts(s[leg])])


def dataset_of(group):
    return group.split("/")[0]


def macro(rows, groups, value):
    """Macro mean over `groups` of each group's mean of `value(row)` over all its rows
    (rows outside the shape being fitted contribute their fixed value through `value`)."""
    means = []
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        if rs:
            means.append(sum(value(r) for r in rs) / len(rs))
    return sum(means) / len(means) if means else 0.0


def main(path, shares_arg=None, personal=False):
    classify = personal_shape if personal else shape
    rows = []
    for line in open(path):
        d = json.loads(line)
        s = d["sample"]
        row = {"group": d["group_name"], "text": s["text"], "shape": classify(s["text"])}
        row["grid"] = [ndcg10(blend(s, a), s["judged"]) for a in ALPHAS]
        row["grid_plain"] = [ndcg10(blend(s, a, "lexical_plain"), s["judged"]) for a in ALPHAS]
        for leg in ("lexical", "lexical_plain", "fuzzy", "semantic"):
            row[leg] = ndcg10(leg_alone(s, leg), s["judged"])
        rows.append(row)
    groups = sorted({r["group"] for r in rows})
    shapes = (["personal"] if personal else []) + ["question", "code", "words"]
    shipped = ALPHAS.index(SHIPPED)

    print(f"{len(rows)} samples; groups: {', '.join(groups)}")
    print("\nqueries per group and shape:")
    for g in groups:
        counts = {sh: sum(1 for r in rows if r['group'] == g and r['shape'] == sh) for sh in shapes}
        print(f"  {g:32} " + "  ".join(f"{sh} {counts[sh]:4}" for sh in shapes))

    print("\nnDCG@10 per group and shape: legs, and blend at the shipped share (0.45)")
    for g in groups:
        for sh in shapes:
            rs = [r for r in rows if r["group"] == g and r["shape"] == sh]
            if not rs:
                continue
            m = lambda f: sum(f(r) for r in rs) / len(rs)  # noqa: E731
            best_a = max(range(len(ALPHAS)), key=lambda i: m(lambda r: r["grid"][i]))
            print(f"  {g:32} {sh:9} n={len(rs):4}  lex {m(lambda r: r['lexical']):.4f}"
                  f"  lex-nofb {m(lambda r: r['lexical_plain']):.4f}  fuzzy {m(lambda r: r['fuzzy']):.4f}"
                  f"  sem {m(lambda r: r['semantic']):.4f}  blend {m(lambda r: r['grid'][shipped]):.4f}"
                  f"  blend-nofb {m(lambda r: r['grid_plain'][shipped]):.4f}"
                  f"  best a={ALPHAS[best_a]:.2f} {m(lambda r: r['grid'][best_a]):.4f}")

    def fit(groups_used, sh, key="grid"):
        """The share for shape `sh` maximising the macro objective over `groups_used`, the
        other shapes at the shipped share."""
        used = [r for r in rows if r["group"] in groups_used]

        def value_at(i):
            return macro(used, groups_used, lambda r: r[key][i] if r["shape"] == sh else r["grid"][shipped])

        scores = [value_at(i) for i in range(len(ALPHAS))]
        best = max(range(len(ALPHAS)), key=lambda i: (scores[i], -abs(ALPHAS[i] - SHIPPED)))
        return ALPHAS[best], scores[best], scores[shipped]

    print("\nper shape, fitted on every group (macro nDCG@10 over the groups):")
    for sh in shapes:
        for key, label in (("grid", "feedback on"), ("grid_plain", "feedback off")):
            a, v, base = fit(groups, sh, key)
            print(f"  {sh:9} {label:12} share {a:.2f}: {v:.4f} (shipped constant {base:.4f}, {v - base:+.4f})")

    print("\nleave one dataset out (fit on the others, score on it):")
    for held in sorted({dataset_of(g) for g in groups}):
        train = [g for g in groups if dataset_of(g) != held]
        test = [g for g in groups if dataset_of(g) == held]
        for sh in shapes:
            for key, label in (("grid", "feedback on"), ("grid_plain", "feedback off")):
                a, _, _ = fit(train, sh, key)
                i = ALPHAS.index(a)
                used = [r for r in rows if r["group"] in test]
                v = macro(used, test, lambda r: r[key][i] if r["shape"] == sh else r["grid"][shipped])
                base = macro(used, test, lambda r: r["grid"][shipped])
                print(f"  held out {held:10} {sh:9} {label:12} share {a:.2f}: {v:.4f} against {base:.4f}"
                      f" ({v - base:+.4f})")

    if shares_arg:
        spec = dict(p.split("=") for p in shares_arg.split(","))
        shares = {k: float(v.split("/")[0]) for k, v in spec.items()}
        plain = {k for k, v in spec.items() if v.endswith("/nofb")}
        idx = {sh: ALPHAS.index(shares.get(sh, SHIPPED)) for sh in shapes}
        print(f"\nshares {shares} against the constant {SHIPPED}, and the legs, per group:")
        for g in groups:
            rs = [r for r in rows if r["group"] == g]
            new = [r["grid_plain" if r["shape"] in plain else "grid"][idx[r["shape"]]] for r in rs]
            old = [r["grid"][shipped] for r in rs]
            diff, p = paired_p(new, old)
            legs = "  ".join(f"{leg} {sum(r[leg] for r in rs) / len(rs):.4f}" for leg in ("lexical", "fuzzy", "semantic"))
            print(f"  {g:32} n={len(rs):4} shaped {sum(new) / len(rs):.4f} constant {sum(old) / len(rs):.4f}"
                  f" ({diff:+.4f}, p={p:.3f})  {legs}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--personal"]
    main(args[0], args[1] if len(args) > 1 else None, personal="--personal" in sys.argv[1:])
