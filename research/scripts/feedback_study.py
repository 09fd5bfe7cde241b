#!/usr/bin/env python3
"""Two cheap changes to the blend, tried on training splits only (issue 20): pseudo-relevance
feedback on the semantic leg, and the depth min-max normalises over.

Reads the samples `braid-report fit --samples FILE` writes (every SciFact `train` and NFCorpus `dev`
query, clean and with one real misspelling, each leg's top 100 with raw scores) and, for the
feedback, each corpus's MiniLM vectors as `benches/peers/peers.sh` caches them (one vector a
record, its first 256 tokens: `VECTORS_DIR/docs.f32`, ids in `docs.json`).

  feedback  Rocchio on the query vector, the classic dense PRF: the blend's top `k` records are
            taken as relevant, and each semantic candidate's cosine gains `beta` times its
            cosine with their mean vector (the ranking of `q + beta * mean` up to a per-query
            constant); then the legs are blended again. `sem` rescores the semantic leg's own
            candidates; `all` gives every candidate a cosine (the semantic floor where the leg
            did not find it) and the feedback term.
  depth     min-max over the leg's top `D` instead of its whole list (scores below the D-th
            clipped at 0), for the lexical evidence and the semantic leg separately.

Prints macro mean nDCG@10 over the four groups beside the shipped blend (min-max, alpha 0.45,
phi 1). Needs numpy.

  braid-report fit --misspellings L --set ...scifact,train --set ...nfcorpus,dev --samples S.jsonl
  python3 research/scripts/feedback_study.py S.jsonl ~/.cache/braid/peers/scifact/vectors ~/.cache/braid/peers/nfcorpus/vectors
"""
import json
import sys

import numpy as np

from fit_samples import firsts, ndcg10  # research/scripts/fit_samples.py, beside this file

ALPHA = 0.45


def normalise(ranked, depth=None):
    """Min-max, as blend does; with a depth D, the D-th score is the floor (clipped at 0)."""
    xs = [raw for _, raw in ranked]
    if not xs:
        return []
    hi, lo = max(xs), (min(xs) if depth is None else xs[min(depth, len(xs)) - 1])
    return [max(0.0, (x - lo) / (hi - lo)) if hi > lo else 1.0 for x in xs]


def blend(lexical, fuzzy, semantic, depth_lexical=None, depth_semantic=None):
    evidence, meaning = {}, {}
    for ranked in (lexical, fuzzy):
        for (o, _), n in zip(ranked, normalise(ranked, depth_lexical)):
            evidence[o] = max(evidence.get(o, 0.0), (1 - ALPHA) * n)
    for (o, _), n in zip(semantic, normalise(semantic, depth_semantic)):
        meaning[o] = ALPHA * n
    candidates = list(dict.fromkeys(o for ranked in (lexical, fuzzy, semantic) for o, _ in ranked))
    return sorted(candidates, key=lambda o: -(evidence.get(o, 0.0) + meaning.get(o, 0.0)))


def load_vectors(dirs):
    out = {}
    for d in dirs:
        ids = json.load(open(f"{d}/docs.json"))["ids"]
        rows = np.fromfile(f"{d}/docs.f32", dtype=np.float32).reshape(len(ids), -1)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True) + 1e-12
        for i, doc in enumerate(ids):
            out.setdefault(d, {})[doc] = rows[i]
    return out


def main():
    samples_path, vector_dirs = sys.argv[1], sys.argv[2:]
    by_dir = load_vectors(vector_dirs)
    samples = []
    for line in open(samples_path):
        record = json.loads(line)
        s = record["sample"]
        # The corpus whose vectors hold this sample's records.
        vectors = max(by_dir.values(), key=lambda v: sum(i in v for i in s["ids"][:20]))
        rows = {o: vectors[doc] for o, doc in enumerate(s["ids"]) if doc in vectors}
        legs = [firsts(s[leg]) for leg in ("lexical", "fuzzy", "semantic")]
        samples.append((record["group_name"], s, legs, rows))
    groups = sorted({g for g, *_ in samples})

    def score(rank):
        per = {g: [] for g in groups}
        for g, s, legs, rows in samples:
            per[g].append(ndcg10([s["ids"][o] for o in rank(legs, rows)], s["judged"]))
        means = [float(np.mean(per[g])) for g in groups]
        return float(np.mean(means)), means

    def show(label, result):
        print(f"{label:<34} {result[0]:.4f}  {result[0] - shipped[0]:+.4f}  " + "  ".join(f"{m:.4f}" for m in result[1]))

    shipped = score(lambda legs, rows: blend(*legs))
    print(f"{'':<34} macro   vs shipped  " + "  ".join(groups))
    show("shipped blend", shipped)
    for how in ("sem", "all"):
        for k in (3, 5, 10):
            for beta in (0.25, 0.5, 1.0):

                def rank(legs, rows, k=k, beta=beta, how=how):
                    lexical, fuzzy, semantic = legs
                    first = blend(*legs)
                    mean = np.mean([rows[o] for o in first[:k] if o in rows], axis=0)
                    known = dict(semantic)
                    if how == "sem":
                        rescored = [(o, raw + beta * float(rows[o] @ mean)) if o in rows else (o, raw) for o, raw in semantic]
                    else:
                        floor = min(known.values()) - 0.02 if known else 0.0
                        rescored = [(o, known.get(o, floor) + beta * float(rows[o] @ mean)) for o in rows]
                    rescored.sort(key=lambda x: -x[1])
                    return blend(lexical, fuzzy, rescored)

                show(f"feedback {how} k {k} beta {beta}", score(rank))
    for depth_lexical in (100, 50, 20):
        for depth_semantic in (100, 50, 20):
            if (depth_lexical, depth_semantic) != (100, 100):  # 100: the lists' own depth
                show(f"depth lexical {depth_lexical} semantic {depth_semantic}",
                     score(lambda legs, rows, a=depth_lexical, b=depth_semantic: blend(*legs, a, b)))


if __name__ == "__main__":
    main()
