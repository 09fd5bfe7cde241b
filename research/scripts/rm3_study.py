#!/usr/bin/env python3
"""Pseudo-relevance feedback on the lexical leg (RM3), tried on training splits only (issue 20).

RM3 reads the lexical leg's top `docs` records as relevant, takes the `terms` terms most
likely under their relevance model (each record's term frequencies over its length, weighted
by the softmax of its BM25 score), and searches again with the query's terms at weight
`keep` and the expansion terms at `1 - keep`. Dense feedback was tried before and did not pay
(research/scripts/feedback_study.py); this is the lexical one.

This study re-implements BM25 (k1 1.2, b 0.75,
research/scripts/bm25_sweep.py's rough analyser) and puts its list in place of Braid's lexical leg in
the samples of `braid-report fit --samples` (SciFact `train`, NFCorpus `train` and `dev`, clean and
misspelt), beside Braid's own fuzzy and semantic lists, fused by the shipped blend. It prints
nDCG@10 per group for Braid's lexical leg, the re-implemented BM25 (the baseline: the same
analyser without feedback) and RM3 at each setting, with the paired sign-flip test against
the baseline over all samples.

  python3 research/scripts/rm3_study.py SAMPLES.jsonl [--guards]   # samples: research/scripts/fusion_study.sh; numpy

`--guards` tries the shipped setting with guards against drift instead: expansion terms that
at least 1, 2 or 3 of the top records hold, and the second search with or without the
records the query itself did not match; then, with agreement of 2, 3 or 4 records read, and
each record read up to its first 32, 64 or 128 terms (research/results/rm3-guards.txt).
"""
import collections
import json
import math
import sys

import numpy as np

import bm25_sweep  # scripts/, beside this file
import fusion_study

SETTINGS = [(docs, terms, keep) for docs in (5, 10) for terms in (10, 20) for keep in (0.5, 0.7)]
# Guards on the shipped setting (5, 10, 0.5): `agree`, the top records an expansion term must
# occur in; `rerank`, whether the second search keeps only records the query itself matched.
GUARDS = [(agree, rerank) for agree in (1, 2, 3) for rerank in (False, True)]
# Then, with agreement of 2: fewer records read, and each record read up to its first terms.
HEADS = [(5, 32), (5, 64), (5, 128), (3, None), (4, None)]
K1, B = 1.2, 0.75
DEPTH = 100


class Corpus:
    """One dataset's records, analysed, with postings for BM25."""

    def __init__(self, dataset):
        root = f"{bm25_sweep.SHARED}/{dataset}"
        self.ids, docs = [], []
        for line in open(f"{root}/corpus.jsonl"):
            record = json.loads(line)
            self.ids.append(record["_id"])
            docs.append(bm25_sweep.analyse(record.get("title", "") + " " + record.get("text", "")))
        self.n = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=float)
        self.average = self.lengths.mean()
        self.counts = [collections.Counter(d) for d in docs]
        self.docs = docs
        postings = collections.defaultdict(list)
        for i, counts in enumerate(self.counts):
            for term, tf in counts.items():
                postings[term].append((i, tf))
        self.postings = {t: (np.array([i for i, _ in p]), np.array([tf for _, tf in p], dtype=float))
                         for t, p in postings.items()}

    def bm25(self, weights):
        score = np.zeros(self.n)
        for term, weight in weights.items():
            if term not in self.postings:
                continue
            docs, tf = self.postings[term]
            idf = math.log(1 + (self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            norm = K1 * (1 - B + B * self.lengths[docs] / self.average)
            score[docs] += weight * idf * tf * (K1 + 1) / (tf + norm)
        return score

    def ranked(self, score):
        return [(self.ids[i], float(score[i])) for i in np.argsort(-score)[:DEPTH] if score[i] > 0]

    def feedback(self, query, score, docs, terms, keep, agree=1, head=None):
        """The RM3 query: `query`'s terms at `keep`, the relevance model's top `terms` at 1 - keep
        (among terms at least `agree` of the top records hold; each record read up to its
        `head`-th term, all of it when None)."""
        top = np.argsort(-score)[:docs]
        top = top[score[top] > 0]
        if len(top) == 0:
            return query
        weights = np.exp(score[top] - score[top].max())
        model, holding = collections.Counter(), collections.Counter()
        for d, w in zip(top, weights):
            counts = self.counts[d] if head is None else collections.Counter(self.docs[d][:head])
            length = self.lengths[d] if head is None else max(1, min(head, len(self.docs[d])))
            for term, tf in counts.items():
                model[term] += w * tf / length
                holding[term] += 1
        model = collections.Counter({t: p for t, p in model.items() if holding[t] >= agree})
        if not model:
            return query
        expansion = dict(model.most_common(terms))
        total_query, total_expansion = sum(query.values()), sum(expansion.values())
        out = collections.Counter({t: keep * w / total_query for t, w in query.items()})
        for term, w in expansion.items():
            out[term] += (1 - keep) * w / total_expansion
        return out


def main(path):
    corpora = {d: Corpus(d) for d in ("scifact", "nfcorpus")}
    rows = collections.defaultdict(list)  # label -> [(group, ndcg)]
    for line in open(path):
        record = json.loads(line)
        s = record["sample"]
        name = record["group_name"]
        dataset = name.split("/")[0]
        group = dataset + ("+misspelt" if name.endswith("+misspelt") else "")
        corpus = corpora[dataset]
        query = collections.Counter(bm25_sweep.analyse(s["text"]))
        score = corpus.bm25(query)
        lists = {"braid lexical leg": None, "bm25 (baseline)": corpus.ranked(score)}
        if GUARDED:
            for agree, rerank in GUARDS:
                again = corpus.bm25(corpus.feedback(query, score, 5, 10, 0.5, agree))
                if rerank:
                    again[score <= 0] = 0
                lists[f"rm3 5/10/0.5 agree={agree} rerank={int(rerank)}"] = corpus.ranked(again)
            for docs, head in HEADS:
                again = corpus.bm25(corpus.feedback(query, score, docs, 10, 0.5, 2, head))
                lists[f"rm3 docs={docs}/10/0.5 agree=2 head={head}"] = corpus.ranked(again)
        else:
            for docs, terms, keep in SETTINGS:
                lists[f"rm3 docs={docs} terms={terms} keep={keep}"] = corpus.ranked(
                    corpus.bm25(corpus.feedback(query, score, docs, terms, keep)))
        for label, ranked in lists.items():
            sample = dict(s)
            if ranked is not None:
                ids = list(s["ids"])
                local = {doc: i for i, doc in enumerate(ids)}
                sample["lexical"] = []
                for doc, raw in ranked:
                    if doc not in local:
                        local[doc] = len(ids)
                        ids.append(doc)
                    sample["lexical"].append([local[doc], raw])
                sample["ids"] = ids
            fused = fusion_study.Sample(group, sample)
            rows[label].append((group, fused.ndcg(fused.blend(fusion_study.SHIPPED_ALPHA))))
    groups = sorted({g for g, _ in rows["bm25 (baseline)"]})
    baseline = np.array([v for _, v in rows["bm25 (baseline)"]])
    print(f"{'blend (a 0.45) with this lexical list':<40} macro   vs bm25  paired   " + "  ".join(groups))
    for label, values in rows.items():
        v = np.array([x for _, x in values])
        per = [v[[g == h for h, _ in values]].mean() for g in groups]
        base = [baseline[[g == h for h, _ in values]].mean() for g in groups]
        print(f"{label:<40} {np.mean(per):.4f}  {np.mean(per) - np.mean(base):+.4f}  "
              f"p {fusion_study.randomization(v - baseline):.3f}  " + "  ".join(f"{x:.4f}" for x in per), flush=True)


GUARDED = "--guards" in sys.argv

if __name__ == "__main__":
    main(sys.argv[1])
