#!/usr/bin/env python3
"""Dense pseudo-relevance feedback (Rocchio on the query vector), tried on the fitting splits only.

The lexical leg already reads its top documents back into its query (RM3). This study asks
whether the semantic leg should too: move the query vector toward the mean of some first
records' vectors, `q' = unit(q + beta * mean(v))`, search again, and fuse as hybrid does
(blend, alpha 0.45, over min-max normalised leg scores; lexical evidence counted once as the
best of the lexical and fuzzy legs).

It reads `braid-report fit --samples` (every leg's list of the shipped hybrid, per query, with the
text the semantic leg embedded), the very vectors the MiniLM index holds (its vector file,
format 4, f32; ordinal i is the corpus's i-th record) and the queries embedded again with the
same model (Python onnxruntime, as research/scripts/dense_views_study.py does; a sample whose first
semantic scores the vectors do not reproduce within 0.002 is reported and left out). Per
sample it scores:

  source   fused: the first records are the fused ranking's top m; own: the semantic
           leg's own top m (no wait on the other legs)
  view     first: each record's first vector (its whole text); best: its passage closest
           to the query
  search   rescan: every vector scored against q'; rescan-K: only the first search's top K
           records rescored (K = 100, the leg's depth: no wider first search, no second scan)

and compares each setting with no feedback, query by query (paired sign-flip test), in four
groups: SciFact `train`, NFCorpus `train`+`dev`, each clean and with one real misspelling per
query. The rule, fixed before the runs: the best macro nDCG@10 of the four groups; kept only
if every group gains, and the choice fitted on one dataset alone does not lose on the other.

  bash research/scripts/dense_feedback_study.sh     # writes research/results/dense-feedback-study.txt

Needs numpy, onnxruntime and tokenizers (benches/peers/requirements.txt). Results and the
test measurement are in research/ranking-log.md ("Tenth round").
"""
import json
import sys
from pathlib import Path

import numpy as np

from dense_views_study import CACHE, embedder, read_vectors  # scripts/, beside this file
from fit_samples import firsts, minmax, ndcg10, paired_p

ALPHA = 0.45  # braid_fusion::BlendParams::DEFAULT's semantic share


class Corpus:
    """A dataset's record ids and the index's vectors, grouped by record."""

    def __init__(self, dataset, index):
        self.ids = [json.loads(line)["_id"] for line in open(dataset / "corpus.jsonl")]
        self.ordinal = {d: i for i, d in enumerate(self.ids)}
        ords, rows = read_vectors(index / "vectors/vectors.braidvec")
        order = np.argsort(ords, kind="stable")  # a record's first vector stays first
        self.rows = rows[order]
        self.starts = np.searchsorted(ords[order], np.arange(len(self.ids) + 1))
        self.heads = self.starts[:-1][self.starts[:-1] < len(self.rows)]

    def vectors(self, record):
        return self.rows[self.starts[record] : self.starts[record + 1]]

    def best(self, query):
        """Every record's best cosine with `query`."""
        return np.maximum.reduceat(self.rows @ query, self.heads)


def leg_arrays(lists, pool):
    """Min-max scores and 1-based ranks of each list over `pool` (0 and inf where absent)."""
    at = {o: i for i, o in enumerate(pool)}
    norm, rank = np.zeros((len(lists), len(pool))), np.full((len(lists), len(pool)), np.inf)
    for k, ranked in enumerate(lists):
        for r, ((o, _), x) in enumerate(zip(ranked, minmax([raw for _, raw in ranked]))):
            norm[k, at[o]], rank[k, at[o]] = x, r + 1
    return norm, rank


class Sample:
    def __init__(self, s, query, corpus):
        self.corpus, self.judged, self.q = corpus, s["judged"], query
        self.lists = [[(corpus.ordinal[s["ids"][o]], raw) for o, raw in firsts(s[leg])] for leg in ("lexical", "fuzzy", "semantic")]
        self.depth = len(self.lists[2])
        self.consistent = all(abs(float((corpus.vectors(o) @ query).max()) - raw) < 2e-3 for o, raw in self.lists[2][:5])

    def ranking(self, semantic):
        """Record ids by blend over the word legs and `semantic` (a ranked list)."""
        pool = np.array(sorted({o for ranked in self.lists[:2] + [semantic] for o, _ in ranked}))
        norm, rank = leg_arrays(self.lists[:2] + [semantic], pool)
        score = (1 - ALPHA) * np.maximum(norm[0], norm[1]) + ALPHA * norm[2]
        order = np.lexsort((pool, rank.min(axis=0), -score))
        return [self.corpus.ids[o] for o in pool[order[:10]]]

    def ndcg(self, semantic):
        return ndcg10(self.ranking(semantic), self.judged)

    def feedback(self, m, beta, view, search, source):
        if source == "fused":
            base = self.ranking(self.lists[2])  # ids, best first
            first = [self.corpus.ordinal[d] for d in base[:m]]
        else:
            first = [o for o, _ in self.lists[2][:m]]
        rows = [self.corpus.vectors(o) for o in first]
        picked = [r[0] if view == "first" else r[np.argmax(r @ self.q)] for r in rows]
        moved = self.q + beta * np.mean(picked, axis=0)
        scores = self.corpus.best(moved / np.linalg.norm(moved))
        if search != "rescan":  # rescan-K
            keep = np.argsort(-self.corpus.best(self.q), kind="stable")[: int(search.split("-")[1])]
            masked = np.full_like(scores, -9.0)
            masked[keep] = scores[keep]
            scores = masked
        top = np.argsort(-scores, kind="stable")[: self.depth]
        return self.ndcg([(int(o), float(scores[o])) for o in top])


def load(samples_path, datasets, indexes):
    """Samples by group (NFCorpus's two splits pooled), with their query vectors."""
    by_group = {}
    for line in open(samples_path):
        d = json.loads(line)
        by_group.setdefault(d["group_name"], []).append(d["sample"])
    embed, corpora, groups = None, {}, {}
    for name, samples in by_group.items():
        dataset = name.split("/")[0]
        if dataset not in corpora:
            corpora[dataset] = Corpus(datasets / dataset, indexes / f"{dataset}-minilm")
        cache = CACHE / f"dense-feedback-{name.replace('/', '-').replace('+', '-')}.npy"
        if cache.exists():
            vectors = np.load(cache)
        else:
            embed = embed or embedder()
            vectors = embed([s.get("embedded") or s["text"] for s in samples])
            CACHE.mkdir(parents=True, exist_ok=True)
            np.save(cache, vectors)
        built = [Sample(s, v, corpora[dataset]) for s, v in zip(samples, vectors)]
        kept = [s for s in built if s.consistent]
        print(f"{name}: {len(kept)} of {len(built)} samples reproduce their semantic scores", flush=True)
        group = dataset + ("+misspelt" if name.endswith("+misspelt") else "")
        groups.setdefault(group, []).extend(kept)
    return groups


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    samples, datasets, indexes = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    groups = load(samples, datasets, indexes)
    base = {g: np.array([s.ndcg(s.lists[2]) for s in v]) for g, v in groups.items()}
    print("no feedback: " + ", ".join(f"{g} {x.mean():.4f} ({len(x)})" for g, x in base.items()))
    settings = [(m, beta, view, "rescan", source) for source in ("fused", "own") for view in ("first", "best")
                for m in (3, 5, 10) for beta in (0.1, 0.25, 0.5)]
    gains = {}
    for setting in settings:
        row = []
        for g, v in groups.items():
            x = np.array([s.feedback(*setting) for s in v])
            d, p = paired_p(x, base[g], rounds=2000)
            gains[setting, g] = d
            row.append(f"{g} {d:+.4f} (p {p:.3f})")
        macro = np.mean([gains[setting, g] for g in groups])
        print(f"{setting}: macro {macro:+.4f}; " + ", ".join(row), flush=True)
    macro = {s: np.mean([gains[s, g] for g in groups]) for s in settings}
    chosen = max(settings, key=macro.get)
    print(f"\nbest macro: {chosen} {macro[chosen]:+.4f}; every group gains: {all(gains[chosen, g] > 0 for g in groups)}")
    for fit, other in (("scifact", "nfcorpus"), ("nfcorpus", "scifact")):
        mine = [g for g in groups if g.startswith(fit)]
        theirs = [g for g in groups if g.startswith(other)]
        pick = max(settings, key=lambda s: np.mean([gains[s, g] for g in mine]))
        print(f"fitted on {fit} alone: {pick}; on {other}: " + ", ".join(f"{g} {gains[pick, g]:+.4f}" for g in theirs))
    print("\nthe chosen setting, rescoring only the first search's top K records:")
    m, beta, view, _, source = chosen
    for k in (100, 150, 200, 300):
        row = []
        for g, v in groups.items():
            x = np.array([s.feedback(m, beta, view, f"rescan-{k}", source) for s in v])
            row.append(f"{g} {x.mean() - base[g].mean():+.4f}")
        print(f"K {k}: " + ", ".join(row), flush=True)


if __name__ == "__main__":
    main()
