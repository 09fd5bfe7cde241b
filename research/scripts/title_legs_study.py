"""Which leg the title boost's gain comes from, on the fitting splits.

Reads two `braid-report fit --samples` files of the same fitting sets, one from indexes built with
each title boost (research/scripts/fusion_study.sh's command, pointed at each set of indexes), and
fuses every mix of their lists — the lexical leg (BM25 and its feedback) from one, the fuzzy
leg from the other, the semantic leg (the same in both) — with the shipped blend (min-max,
α 0.45, lexical evidence the better of the two lexical legs). Prints the macro nDCG@10 of the
four groups (dataset × clean | misspelt) per mix, and each mix paired with the first file's
(sign-flip randomization test over every sample).
    python3 research/scripts/title_legs_study.py NEW.jsonl OLD.jsonl [NEW_NAME OLD_NAME]
Standard library only (and research/scripts/fit_samples.py).
"""

import json
import sys

from fit_samples import firsts, minmax, ndcg10, paired_p  # research/scripts/fit_samples.py, beside this file

ALPHA = 0.45


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def normalised(ranked, ids):
    """{doc id: min-max score} of a leg's list (each record once, at its best place)."""
    ranked = firsts(ranked)
    return {ids[o]: x for (o, _), x in zip(ranked, minmax([raw for _, raw in ranked]))}


def fused(lexical, fuzzy, semantic):
    docs = set(lexical) | set(fuzzy) | set(semantic)
    return {
        d: (1 - ALPHA) * max(lexical.get(d, 0.0), fuzzy.get(d, 0.0)) + ALPHA * semantic.get(d, 0.0)
        for d in docs
    }


def main(new_path, old_path, new_name="new", old_name="old"):
    new, old = load(new_path), load(old_path)
    assert len(new) == len(old), "the two files must hold the same samples"
    groups, runs = [], {}
    mixes = [(new_name, new_name), (new_name, old_name), (old_name, new_name), (old_name, old_name)]
    for a, b in zip(new, old):
        sa, sb = a["sample"], b["sample"]
        assert sa["text"] == sb["text"], "samples out of order"
        name = a["group_name"]
        groups.append(name.split("/")[0] + ("+misspelt" if name.endswith("+misspelt") else ""))
        legs = {
            new_name: {leg: normalised(sa[leg], sa["ids"]) for leg in ("lexical", "fuzzy", "semantic")},
            old_name: {leg: normalised(sb[leg], sb["ids"]) for leg in ("lexical", "fuzzy", "semantic")},
        }
        judged = sa["judged"]
        for lex, fuz in mixes:
            scores = fused(legs[lex]["lexical"], legs[fuz]["fuzzy"], legs[new_name]["semantic"])
            ranking = sorted(scores, key=lambda d: (-scores[d], d))
            runs.setdefault((lex, fuz), []).append(ndcg10(ranking, judged))
    names = sorted(set(groups))

    def macro(values):
        return sum(sum(v for v, g in zip(values, groups) if g == n) / groups.count(n) for n in names) / len(names)

    base = runs[(new_name, new_name)]
    print(f"samples: {len(groups)}; groups: " + ", ".join(f"{n} {groups.count(n)}" for n in names))
    print(f"{'lexical':>8} {'fuzzy':>8} {'macro':>7} {'vs first':>9} {'p':>6}  " + "  ".join(f"{n:>17}" for n in names))
    for (lex, fuz), values in runs.items():
        d, p = paired_p(values, base) if (lex, fuz) != (new_name, new_name) else (0.0, 1.0)
        per = "  ".join(f"{sum(v for v, g in zip(values, groups) if g == n) / groups.count(n):>17.4f}" for n in names)
        print(f"{lex:>8} {fuz:>8} {macro(values):>7.4f} {macro(values) - macro(base):>+9.4f} {p:>6.3f}  {per}")


if __name__ == "__main__":
    main(*sys.argv[1:])
