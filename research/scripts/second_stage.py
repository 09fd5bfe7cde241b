#!/usr/bin/env python3
"""Would a small learned second stage beat the blend on data it was not fitted on? A study on
training splits only (issue 20: "welcome if it beats fusion on sets it was not fitted on").

Reads the samples `braid-report fit --samples FILE` writes (every SciFact `train` and NFCorpus `dev`
query, clean and with one real misspelling, each leg's ranked list with raw scores) and gives
every candidate of a query (the union of the three legs' top 100) these features:

  legs      E (the blend's lexical evidence, max of min-max lexical and fuzzy), min-max
            semantic, the raw cosine, whether the semantic leg found it (the blend's inputs,
            plus the cosine on its own scale)
  + words   the share of the query's terms the record holds, the share its title holds,
            whether it holds them all, and their proximity (terms matched / the shortest
            window holding them), from the corpus text analysed like Braid's English analyzer
            (Snowball stemming, the same 33 stop words)

A linear score over them is fitted by coordinate ascent on mean nDCG@10 (RankLib's method),
starting from the shipped blend (E · 0.55 + semantic · 0.45), on one dataset's two groups,
and scored on the other dataset's two groups beside the blend — the transfer the issue asks
for. Needs numpy and PyStemmer (benches/peers/requirements.txt has both).

  braid-report fit --misspellings L --set ...scifact,train --set ...nfcorpus,dev --samples S.jsonl
  python3 research/scripts/second_stage.py S.jsonl SHARED_DATASETS_DIR
"""
import json
import math
import re
import sys

import numpy as np
import Stemmer

from fit_samples import firsts, minmax  # research/scripts/fit_samples.py, beside this file

STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then "
           "there these they this to was will with".split())
LEGS = ["E", "semantic", "cosine", "in_semantic"]
WORDS = ["coverage", "title_coverage", "all_terms", "proximity"]
SHIPPED_ALPHA = 0.45
STEPS = [0.5, 0.2, 0.1, 0.05, 0.02]
ROUNDS = 3
STEMMER = Stemmer.Stemmer("english")


def terms(text):
    return [STEMMER.stemWord(w) for w in re.findall(r"\w+", text.lower()) if w not in STOP]


def proximity(query, text):
    """Matched query terms over the shortest window of `text` holding all of them (0 below two)."""
    wanted = {t for t in query if t in text}
    if len(wanted) < 2:
        return 0.0
    events = [(p, t) for p, t in enumerate(text) if t in wanted]
    counts, have, low, best = {}, 0, 0, len(text)
    for p, t in events:
        counts[t] = counts.get(t, 0) + 1
        have += counts[t] == 1
        while have == len(wanted):
            best = min(best, p - events[low][0] + 1)
            first = events[low][1]
            counts[first] -= 1
            have -= counts[first] == 0
            low += 1
    return len(wanted) / best


def features(sample, corpus):
    legs = {leg: firsts(sample[leg]) for leg in ("lexical", "fuzzy", "semantic")}
    candidates = sorted({o for ranked in legs.values() for o, _ in ranked})
    row = {o: i for i, o in enumerate(candidates)}
    names = LEGS + WORDS
    f = np.zeros((len(candidates), len(names)))
    cosines = [raw for _, raw in legs["semantic"]]
    floor = (min(cosines) - 0.02) if cosines else 0.0
    f[:, names.index("cosine")] = floor
    for leg, ranked in legs.items():
        if not ranked:
            continue
        for (o, raw), n in zip(ranked, minmax([raw for _, raw in ranked])):
            i = row[o]
            if leg == "semantic":
                f[i, names.index("semantic")] = n
                f[i, names.index("cosine")] = raw
                f[i, names.index("in_semantic")] = 1.0
            else:
                f[i, names.index("E")] = max(f[i, names.index("E")], n)
    query = list(dict.fromkeys(terms(sample["text"])))
    for o, i in row.items():
        title, body = corpus[sample["ids"][o]]
        text = title + body
        held = set(text)
        if query:
            f[i, names.index("coverage")] = sum(t in held for t in query) / len(query)
            f[i, names.index("title_coverage")] = sum(t in set(title) for t in query) / len(query)
            f[i, names.index("all_terms")] = float(all(t in held for t in query))
            f[i, names.index("proximity")] = proximity(query, text)
    gains = np.array([sample["judged"].get(sample["ids"][o], 0) for o in candidates], dtype=float)
    ideal = sorted((g for g in sample["judged"].values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return f, gains, idcg


DISCOUNT = 1 / np.log2(np.arange(2, 12))


def macro(samples, weights, groups):
    """Mean nDCG@10 per group (ties by candidate order, as stable as the engine's), and their mean."""
    per = {g: [] for g in groups}
    for group, f, gains, idcg in samples:
        if group in per:
            top = np.argsort(-(f @ weights), kind="stable")[:10]
            per[group].append((gains[top] * DISCOUNT[: len(top)]).sum() / idcg if idcg > 0 else 0.0)
    means = [float(np.mean(per[g])) for g in groups]
    return float(np.mean(means)), means


def fit(samples, groups, start, columns):
    weights, best = start.copy(), macro(samples, start, groups)[0]
    for _ in range(ROUNDS):
        for j in columns:
            for step in STEPS:
                for sign in (1, -1):
                    trial = weights.copy()
                    trial[j] += sign * step
                    got = macro(samples, trial, groups)[0]
                    if got > best + 1e-6:
                        best, weights = got, trial
    return weights, best


def main(path, shared):
    corpus = {}
    samples_raw = [json.loads(line) for line in open(path)]
    for name in sorted({d["group_name"].split("/")[0] for d in samples_raw}):
        for line in open(f"{shared}/{name}/corpus.jsonl"):
            d = json.loads(line)
            corpus[(name, d["_id"])] = (terms(d.get("title", "")), terms(d.get("text", "")))
    samples = []
    for d in samples_raw:
        name = d["group_name"].split("/")[0]
        f, gains, idcg = features(d["sample"], {k[1]: v for k, v in corpus.items() if k[0] == name})
        samples.append((d["group_name"], f, gains, idcg))
    groups = sorted({g for g, *_ in samples})
    names = LEGS + WORDS
    blend = np.zeros(len(names))
    blend[names.index("E")], blend[names.index("semantic")] = 1 - SHIPPED_ALPHA, SHIPPED_ALPHA
    print("groups:", ", ".join(groups))
    print(f"the shipped blend: macro nDCG@10 {macro(samples, blend, groups)[0]:.4f}")
    datasets = sorted({g.split("/")[0] for g in groups})
    for label, columns in [("legs only", range(len(LEGS))), ("legs + words", range(len(names)))]:
        weights, best = fit(samples, groups, blend, list(columns))
        shown = ", ".join(f"{n} {w:+.2f}" for n, w in zip(names, weights) if w)
        print(f"\n{label}, fitted on all four groups: {best:.4f} ({shown})")
        for train in datasets:
            fitted = [g for g in groups if g.startswith(train + "/")]
            held = [g for g in groups if g not in fitted]
            weights, best = fit(samples, fitted, blend, list(columns))
            got, base = macro(samples, weights, held)[1], macro(samples, blend, held)[1]
            cells = "; ".join(f"{g} {x:.4f} (blend {b:.4f}, {x - b:+.4f})" for g, x, b in zip(held, got, base))
            print(f"  fitted on {train} ({best:.4f} there), held out: {cells}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
