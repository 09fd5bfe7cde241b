#!/usr/bin/env python3
"""Would other BM25 parameters pay? A sweep of k1 and b on training splits only (issue 20).

Braid's lexical leg scores with tantivy's BM25 (k1 1.2, b 0.75, fixed in tantivy). This sweep
re-implements BM25 over the flat title+body text with a rough analyser (lower case, Lucene's
33 stop words, a few English suffixes cut) — not Braid's analyser, so its numbers sit a little
below Braid's lexical leg — and prints nDCG@10 of the top 10 for k1 in {0.6 … 2.0} and b in
{0.3 … 1.0}. What matters is the spread across the grid, not the level.

  python3 research/scripts/bm25_sweep.py scifact train            # needs numpy; ../shared/datasets
  python3 research/scripts/bm25_sweep.py nfcorpus train,dev
"""
import collections
import json
import math
import os
import re
import sys

import numpy as np

from fit_samples import ndcg10  # research/scripts/fit_samples.py, beside this file

SHARED = os.environ.get("BRAID_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "shared")) + "/datasets"
STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then there "
           "these they this to was will with".split())
SUFFIXES = ("ational", "ization", "ations", "ness", "ments", "ment", "ings", "ing", "edly", "ed", "ies", "es", "s")
K1S = (0.6, 0.9, 1.2, 1.5, 2.0)
BS = (0.3, 0.5, 0.75, 0.9, 1.0)


def analyse(text):
    """Lower case, alphanumeric runs, stop words out, one common suffix cut."""
    out = []
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOP:
            continue
        for suffix in SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.append(word)
    return out


def main(dataset, splits):
    root = f"{SHARED}/{dataset}"
    ids, docs = [], []
    for line in open(f"{root}/corpus.jsonl"):
        record = json.loads(line)
        ids.append(record["_id"])
        docs.append(analyse(record.get("title", "") + " " + record.get("text", "")))
    n = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=float)
    average = lengths.mean()
    postings = collections.defaultdict(list)
    for i, words in enumerate(docs):
        for word, tf in collections.Counter(words).items():
            postings[word].append((i, tf))
    postings = {w: (np.array([i for i, _ in p]), np.array([tf for _, tf in p], dtype=float)) for w, p in postings.items()}
    queries = {}
    for line in open(f"{root}/queries.jsonl"):
        record = json.loads(line)
        queries[record["_id"]] = set(analyse(record["text"]))
    qrels = collections.defaultdict(dict)
    for split in splits:
        for line in open(f"{root}/qrels/{split}.tsv"):
            query, doc, grade = line.rstrip("\n").split("\t")[:3]
            if query != "query-id":
                qrels[query][doc] = int(grade)
    judged = [(queries[q], j) for q, j in qrels.items() if q in queries]
    print(f"{dataset} {'+'.join(splits)} ({len(judged)} queries): nDCG@10, rows k1, columns b = {BS}")
    for k1 in K1S:
        row = []
        for b in BS:
            total = 0.0
            for words, j in judged:
                score = np.zeros(n)
                for word in words:
                    if word not in postings:
                        continue
                    docs_with, tf = postings[word]
                    idf = math.log(1 + (n - len(docs_with) + 0.5) / (len(docs_with) + 0.5))
                    score[docs_with] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[docs_with] / average))
                total += ndcg10([ids[i] for i in np.argsort(-score)[:10]], j)
            row.append(f"{total / len(judged):.4f}")
        print(f"  k1 {k1:<4} " + "  ".join(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","))
