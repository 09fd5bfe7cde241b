#!/usr/bin/env python3
"""Deterministic synthetic corpus for scripts/scale.sh, from the shared datasets' real text.

Usage: scale_corpus.py DATASETS_DIR OUT_DIR N [DIM]

Writes OUT_DIR/corpus.jsonl (BEIR layout with an `acl` per record), vectors.npy (N x DIM
float32, C order), ids.txt (the id of each row), queries.jsonl (text and a query vector per
line) and stats.json (raw text bytes). DIM 0 writes no vectors (and queries without one).
Same arguments, same bytes: every choice comes from a seeded random.Random. With numpy
installed (scripts/scale.sh puts it in a virtual environment) each record's vector sum runs in
numpy, about 50x faster than the pure-Python sums that otherwise dominate the run at 1M
records; both sum in double precision in the same order, so they write the same float32s.

Metadata for facets: `category` (one of 20 values) and `updated` (a date in 2022-2025), both
from a multiplicative hash of the record's number, so they change neither the text nor the
ACLs drawn from the seeded generator.

Records: 3-12 sentences drawn from the sentences of every corpus.jsonl under DATASETS_DIR.
ACLs: half the records belong to one of 10 tenants (`tenant:tT`, 5 % each), the other half to
one of 100 groups (`group:gG`, 0.5 % each), so principals of 100 %, 10 % and 1 % exist:
all tokens; `tenant:t3` plus groups g0-g9; groups g0 and g1.

Vectors are random projections, not a model's embeddings: each source document gets a seeded
Gaussian vector, a record's vector is the normalised sum of its sentences' documents' vectors,
and a query's vector is its sentence's document's vector plus noise.
"""
import array
import datetime
import json
import math
import os
import random
import re
import sys

try:
    import numpy as np
except ImportError:
    np = None


def sentences_of(datasets):
    out = []  # (doc index, sentence)
    doc = 0
    for name in sorted(os.listdir(datasets)):
        path = os.path.join(datasets, name, "corpus.jsonl")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                text = (d.get("text") or "").strip()
                for s in re.split(r"(?<=[.!?])\s+", text):
                    if 20 <= len(s) <= 400:
                        out.append((doc, s))
                doc += 1
    return out, doc


def gaussian_vectors(n, dim, rng):
    return [[rng.gauss(0.0, 1.0) for _ in range(dim)] for _ in range(n)]


def normalised(v):
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def updated(h):
    """A date in 2022-2025 (1,461 days from 2022-01-01), as YYYY-MM-DD."""
    return (datetime.date(2022, 1, 1) + datetime.timedelta(days=h % 1461)).isoformat()


def npy_header(rows, dim):
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, dim)
    pad = 64 - (10 + len(d) + 1) % 64
    h = (d + " " * pad + "\n").encode("latin1")
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h


def main():
    datasets, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dim = int(sys.argv[4]) if len(sys.argv) > 4 else 384
    rng = random.Random(20261201)
    sents, docs = sentences_of(datasets)
    doc_vecs = gaussian_vectors(docs, dim, random.Random(7)) if dim else []
    doc_mat = np.array(doc_vecs, dtype=np.float64) if dim and np is not None else None
    os.makedirs(out, exist_ok=True)
    raw = 0
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as corpus, \
            open(os.path.join(out, "vectors.npy") if dim else os.devnull, "wb") as vecs, \
            open(os.path.join(out, "ids.txt"), "w", encoding="utf-8") as ids:
        if dim:
            vecs.write(npy_header(n, dim))
        for i in range(n):
            picks = [sents[rng.randrange(len(sents))] for _ in range(rng.randint(3, 12))]
            title = " ".join(picks[0][1].split()[:8])
            body = " ".join(s for _, s in picks)
            if rng.random() < 0.5:
                acl = ["tenant:t%d" % rng.randrange(10)]
            else:
                acl = ["group:g%d" % rng.randrange(100)]
            rid = "r%07d" % i
            h = (i * 2654435761) % 2**32
            metadata = {"category": "c%02d" % (h % 20), "updated": updated(h >> 8)}
            corpus.write(json.dumps({"_id": rid, "title": title, "text": body, "acl": acl,
                                     "metadata": metadata}) + "\n")
            raw += len(title.encode()) + len(body.encode())
            if dim and np is not None:
                v = doc_mat[[d for d, _ in picks[:1]]].copy()[0]
                for d, _ in picks[1:]:
                    v += doc_mat[d]
                vecs.write((v / math.sqrt(float(v @ v))).astype("<f4").tobytes())
            elif dim:
                v = list(map(sum, zip(*(doc_vecs[d] for d, _ in picks))))
                array.array("f", normalised(v)).tofile(vecs)
            ids.write(rid + "\n")
    qrng = random.Random(99)
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as q:
        for i in range(200):
            d, s = sents[qrng.randrange(len(sents))]
            words = s.split()
            start = qrng.randrange(max(1, len(words) - 6))
            text = " ".join(words[start:start + qrng.randint(2, 6)])
            query = {"_id": "q%d" % i, "text": text}
            # Drawn even without vectors (as for 384-d), so DIM 0 asks the same queries.
            noise = [qrng.gauss(0.0, 0.5) for _ in range(dim or 384)]
            if dim:
                vec = normalised([x + e for x, e in zip(doc_vecs[d], noise)])
                query["vector"] = [round(x, 6) for x in vec]
            q.write(json.dumps(query) + "\n")
    with open(os.path.join(out, "stats.json"), "w") as f:
        json.dump({"records": n, "dim": dim, "raw_text_bytes": raw, "source_sentences": len(sents)}, f)


if __name__ == "__main__":
    main()
