#!/usr/bin/env python3
"""Which documents the questions of this set were written for, drawn, not chosen.

    python3 datasets/classic-questions/draw.py SHARED_DATASETS [--check]

For each collection, the documents with at least a minimum of text, in the order of the SHA-256
of `classic-questions:<collection>:<id>`, first N: Cranfield 30 (300 characters), CACM 15 (300),
NPL 15 (180). Prints `collection id` lines; with `--check`, verifies that each collection's
`qrels/fit.tsv` names exactly those documents, in that order.
"""
import hashlib
import json
import sys
from pathlib import Path

PLAN = {"cranfield": (30, 300), "cacm": (15, 300), "npl": (15, 180)}
HERE = Path(__file__).resolve().parent


def drawn(shared, name):
    n, min_chars = PLAN[name]
    docs = [json.loads(line) for line in open(Path(shared) / name / "corpus.jsonl")]
    kept = [d["_id"] for d in docs if len(d.get("text", "")) >= min_chars]
    kept.sort(key=lambda i: hashlib.sha256(f"classic-questions:{name}:{i}".encode()).hexdigest())
    return kept[:n]


def judged(name):
    lines = (HERE / name / "qrels" / "fit.tsv").read_text().splitlines()[1:]
    return [line.split("\t")[1] for line in lines]


def main(shared, check=False):
    bad = 0
    for name in PLAN:
        ids = drawn(shared, name)
        if check:
            if ids != judged(name):
                print(f"{name}: qrels do not name the drawn documents", file=sys.stderr)
                bad += 1
        else:
            for i in ids:
                print(name, i)
    if check and not bad:
        print("classic-questions: every collection's questions are for its drawn documents")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--check" in sys.argv[2:]))
