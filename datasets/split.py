#!/usr/bin/env python3
"""Deterministic fitting/test split of a help-center set's judged queries (stdlib only).

Usage:
  python3 datasets/split.py DIR --field type --from fit,test --to fit,test [--check]
  python3 datasets/split.py datasets/helpcenter --field kind --from test --to fit,holdout [--check]

Reads the qrels rows of the `--from` splits (DIR/qrels/<split>.tsv, BEIR layout) and the
queries of DIR/queries.jsonl, assigns every judged query to the first (fitting) or second
(test) `--to` split, and writes DIR/qrels/<fit>.tsv and DIR/qrels/<test>.tsv. With `--check`
nothing is written: it exits 1 when the files on disk differ from what the rule gives.

The rule (`assign`): queries are grouped by their text, lowercased with runs of whitespace
collapsed, so that a text asked under several principals (the Ferrybox tenant queries) lands
on one side only. Within each value of the metadata field `--field` (the query type), the
groups are ordered by the SHA-256 of `braid-split:` + the normalised text and dealt
alternately, fitting first. Every type is therefore split evenly (the fitting side gets the
extra one of an odd count), and the assignment depends only on the query texts and types,
never on any ranking.
"""

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

HEADER = "query-id\tcorpus-id\tscore"


def normalise(text):
    """The grouping key of a query text: lowercased, whitespace runs collapsed."""
    return " ".join(text.lower().split())


def read_queries(path):
    """`{id: query}` of a queries.jsonl file."""
    queries = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            queries[q["_id"]] = q
    return queries


def read_qrels(path):
    """The rows of a BEIR qrels file as `(query id, corpus id, score)` strings."""
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    if lines[0] != HEADER:
        raise ValueError(f"{path}: bad header {lines[0]!r}")
    return [tuple(line.split("\t")) for line in lines[1:] if line.strip()]


def assign(queries, ids, field):
    """`{query id: 0 or 1}` for the query ids `ids`: 0 fitting, 1 test (see the module doc)."""
    groups = defaultdict(list)  # (type, normalised text) -> ids
    for qid in ids:
        q = queries[qid]
        kind = (q.get("metadata") or {}).get(field)
        if kind is None:
            raise ValueError(f"query {qid} has no metadata.{field}")
        groups[(kind, normalise(q["text"]))].append(qid)
    by_kind = defaultdict(list)
    for kind, text in groups:
        digest = hashlib.sha256(("braid-split:" + text).encode("utf-8")).hexdigest()
        by_kind[kind].append((digest, text))
    side = {}
    for kind, items in by_kind.items():
        for n, (_, text) in enumerate(sorted(items)):
            for qid in groups[(kind, text)]:
                side[qid] = n % 2
    return side


def render(rows):
    """A qrels file's text: header, then rows sorted by query id (natural order) and corpus id."""

    def key(row):
        qid = row[0]
        digits = "".join(c for c in qid if c.isdigit())
        return (qid.rstrip("0123456789"), int(digits) if digits else 0, qid, row[1])

    return HEADER + "\n" + "".join("\t".join(r) + "\n" for r in sorted(rows, key=key))


def split(root, field, sources, targets):
    """`{target split: file text}` for the dataset at `root`."""
    queries = read_queries(root / "queries.jsonl")
    rows = []
    seen = set()
    for s in sources:
        for row in read_qrels(root / "qrels" / f"{s}.tsv"):
            if (row[0], row[1]) not in seen:
                seen.add((row[0], row[1]))
                rows.append(row)
    missing = sorted({r[0] for r in rows} - queries.keys())
    if missing:
        raise ValueError(f"qrels judge unknown queries: {missing[:5]}")
    side = assign(queries, sorted({r[0] for r in rows}), field)
    return {t: render([r for r in rows if side[r[0]] == n]) for n, t in enumerate(targets)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir", type=Path)
    p.add_argument("--field", required=True, help="metadata field to stratify by (type, kind)")
    p.add_argument("--from", dest="sources", required=True, help="comma-separated source splits")
    p.add_argument("--to", dest="targets", required=True, help="FIT,TEST split names")
    p.add_argument("--check", action="store_true", help="verify instead of writing")
    a = p.parse_args()
    targets = a.targets.split(",")
    if len(targets) != 2 or targets[0] == targets[1]:
        sys.exit("--to takes two different split names: FIT,TEST")
    files = split(a.dir, a.field, a.sources.split(","), targets)
    stale = []
    for name, text in files.items():
        path = a.dir / "qrels" / f"{name}.tsv"
        if a.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
        print(f"{path}: {len({line.split(chr(9))[0] for line in text.splitlines()[1:]})} queries, "
              f"{len(text.splitlines()) - 1} rows")
    if stale:
        sys.exit("not the deterministic split: " + ", ".join(stale))


if __name__ == "__main__":
    main()
