#!/usr/bin/env python3
"""Consistency checks for the Cargo Book help-center set (stdlib only).

Usage: python3 datasets/cargo-book/check.py

Verifies:
  * articles/ holds exactly the files of articles.sha256, each with its pinned sha256 (the
    text as the `cargo` 0.100.0 crate ships it; fetch.sh reproduces the folder), all UTF-8
    Markdown opening with a heading;
  * queries.jsonl parses; ids are unique `cbNNN`; every query has a non-empty text, a `type`
    (question, fragment, code, phrase) and a boolean `misspelt`;
  * qrels/fit.tsv and qrels/test.tsv have the BEIR header and rows of an existing query, an
    existing article (its path under articles/ without `.md`) and a score of 1 or 2; no
    duplicate pair; every query has a score-2 row and is judged in exactly one split;
  * the two splits are the deterministic split of datasets/split.py (stratified by `type`);
  * counts: 150-250 queries, at least 25 of each type, 10-20 % misspelt, 80+ articles.

Prints counts and exits non-zero, listing every problem, if any check fails.
"""

import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ARTICLES = ROOT / "articles"
TYPES = {"question", "fragment", "code", "phrase"}
SPLITS = ("fit", "test")
HEADER = "query-id\tcorpus-id\tscore"

errors = []


def err(msg):
    errors.append(msg)


def check_articles():
    pinned = {}
    for n, line in enumerate((ROOT / "articles.sha256").read_text(encoding="utf-8").splitlines(), 1):
        m = re.fullmatch(r"([0-9a-f]{64})  (\S+\.md)", line)
        if not m:
            err(f"articles.sha256:{n}: bad line {line!r}")
            continue
        pinned[m.group(2)] = m.group(1)
    present = {p.relative_to(ARTICLES).as_posix() for p in ARTICLES.rglob("*") if p.is_file()}
    for rel in sorted(present - pinned.keys()):
        err(f"articles/{rel}: not in articles.sha256")
    for rel in sorted(pinned.keys() - present):
        err(f"articles/{rel}: missing (bash datasets/cargo-book/fetch.sh reproduces the folder)")
    words = {}
    for rel in sorted(present & pinned.keys()):
        data = (ARTICLES / rel).read_bytes()
        if hashlib.sha256(data).hexdigest() != pinned[rel]:
            err(f"articles/{rel}: sha256 differs from articles.sha256 (the text must stay as shipped)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            err(f"articles/{rel}: not UTF-8")
            continue
        if not re.match(r"#{1,2} \S", text):
            err(f"articles/{rel}: does not open with a heading")
        words[rel[:-3]] = len(text.split())
    return words


def check_queries():
    queries = {}
    for n, line in enumerate((ROOT / "queries.jsonl").read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            err(f"queries.jsonl:{n}: invalid JSON ({e})")
            continue
        qid = q.get("_id")
        if not isinstance(qid, str) or not re.fullmatch(r"cb\d{3}", qid):
            err(f"queries.jsonl:{n}: bad _id {qid!r}")
            continue
        if qid in queries:
            err(f"queries.jsonl:{n}: duplicate _id {qid}")
        if not isinstance(q.get("text"), str) or not q["text"].strip():
            err(f"queries.jsonl:{n}: empty text")
        md = q.get("metadata") or {}
        if md.get("type") not in TYPES:
            err(f"queries.jsonl:{n}: type {md.get('type')!r} not in {sorted(TYPES)}")
        if not isinstance(md.get("misspelt"), bool):
            err(f"queries.jsonl:{n}: misspelt must be true or false")
        queries[qid] = q
    return queries


def check_qrels(docs, queries):
    where = {}
    by_q = defaultdict(list)
    for split in SPLITS:
        path = ROOT / "qrels" / f"{split}.tsv"
        if not path.exists():
            err(f"qrels/{split}.tsv missing")
            continue
        lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
        if lines[0] != HEADER:
            err(f"qrels/{split}.tsv: bad header {lines[0]!r}")
        for n, line in enumerate(lines[1:], 2):
            parts = line.split("\t")
            if len(parts) != 3:
                err(f"qrels/{split}.tsv:{n}: expected 3 tab-separated columns: {line!r}")
                continue
            qid, did, score = parts
            if qid not in queries:
                err(f"qrels/{split}.tsv:{n}: unknown query {qid}")
            if did not in docs:
                err(f"qrels/{split}.tsv:{n}: unknown article {did}")
            if score not in ("1", "2"):
                err(f"qrels/{split}.tsv:{n}: score must be 1 or 2, got {score!r}")
            if where.setdefault(qid, split) != split:
                err(f"qrels: {qid} is judged in both {where[qid]} and {split}")
            if any(d == did for d, _ in by_q[qid]):
                err(f"qrels/{split}.tsv:{n}: duplicate pair {qid} {did}")
            by_q[qid].append((did, int(score) if score.isdigit() else 0))
    for qid in queries:
        if qid not in where:
            err(f"qrels: query {qid} is not judged")
        elif not any(s == 2 for _, s in by_q[qid]):
            err(f"qrels: query {qid} has no score-2 row")
    return where, by_q


def check_split():
    sys.path.insert(0, str(ROOT.parent))
    import split  # datasets/split.py

    try:
        want = split.split(ROOT, "type", list(SPLITS), list(SPLITS))
    except (OSError, ValueError, KeyError) as e:
        err(f"split: {e}")
        return
    for name, text in want.items():
        path = ROOT / "qrels" / f"{name}.tsv"
        if path.exists() and path.read_text(encoding="utf-8") != text:
            err(f"qrels/{name}.tsv is not the split datasets/split.py makes "
                f"(python3 datasets/split.py datasets/cargo-book --field type --from fit,test --to fit,test)")


def main():
    docs = check_articles()
    queries = check_queries()
    where, by_q = check_qrels(docs, queries)
    check_split()

    types = Counter(q["metadata"].get("type") for q in queries.values())
    misspelt = sum(q["metadata"].get("misspelt") is True for q in queries.values())
    if len(docs) < 80:
        err(f"only {len(docs)} articles (want >= 80)")
    if not 150 <= len(queries) <= 250:
        err(f"{len(queries)} queries (want 150-250)")
    for t in sorted(TYPES):
        if types[t] < 25:
            err(f"only {types[t]} {t} queries (want >= 25)")
    if queries and not 0.10 <= misspelt / len(queries) <= 0.20:
        err(f"{misspelt} of {len(queries)} queries misspelt (want 10-20 %)")

    wc = sorted(docs.values())
    if wc:
        print(f"articles: {len(docs)}; words min {wc[0]}, median {wc[len(wc) // 2]}, max {wc[-1]}, "
              f"total {sum(wc)}")
    print(f"queries: {len(queries)}; misspelt {misspelt}")
    for split in SPLITS:
        ids = [q for q, s in where.items() if s == split]
        t = Counter(queries[q]["metadata"].get("type") for q in ids if q in queries)
        rows = sum(len(by_q[q]) for q in ids)
        print(f"  {split:5s} {len(ids):4d} queries, {rows} qrels rows: "
              + ", ".join(f"{k} {t[k]}" for k in sorted(TYPES))
              + f"; misspelt {sum(queries[q]['metadata'].get('misspelt') is True for q in ids if q in queries)}")
    judged = Counter(d for rows in by_q.values() for d, _ in rows)
    print(f"articles judged relevant to some query: {len(judged)} of {len(docs)}")

    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  - " + e)
        sys.exit(1)
    print("\nOK")


if __name__ == "__main__":
    main()
