#!/usr/bin/env python3
"""Writes a copy of a BEIR folder whose test queries carry one real misspelling each — the very
texts `braid eval --misspellings LIST` asks (same list, same seeded choice as
crates/braid-eval/src/misspellings.rs) — so that a binary without that flag (an older braid,
another engine) can be measured on them. The corpus is linked, not copied; queries without a
listed word are left out, as `braid eval` does.

    python3 scripts/misspelt_copy.py ../shared/datasets/scifact LIST OUT_DIR [SPLIT]
"""
import json
import os
import sys

STOP = set("about after also been does from have into more most over than that their them then there these "
           "they this those were what when which while with would your".split())
M64 = (1 << 64) - 1


def seed_of(s):
    h = 0x9E3779B97F4A7C15
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


class SplitMix:
    def __init__(self, seed):
        self.s = seed

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % max(n, 1)


def load(path):
    by = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        wrong, rights = line.split("->", 1)
        wrong = wrong.strip().lower()
        if not wrong or not wrong.isalpha():
            continue
        for r in rights.split(","):
            r = r.strip().lower()
            if r and r.isalpha() and r != wrong:
                lst = by.setdefault(r, [])
                if wrong not in lst:
                    lst.append(wrong)
    for v in by.values():
        v.sort()
    return by


def content(w):
    return len(w.encode()) >= 4 and w.isascii() and w.isalpha() and w.lower() not in STOP


def misspell(by, text, seed):
    spans, start = [], None
    for i, c in enumerate(text + " "):
        if c.isalnum():
            if start is None:
                start = i
        elif start is not None:
            w = text[start:i]
            if content(w) and by.get(w.lower()):
                spans.append((start, i))
            start = None
    if not spans:
        return None
    rng = SplitMix(seed_of(seed))
    s, e = spans[rng.below(len(spans))]
    word = text[s:e]
    opts = by[word.lower()]
    typo = opts[rng.below(len(opts))]
    if len(word) > 1 and word.isupper():
        typo = typo.upper()
    elif word[0].isupper():
        typo = typo[0].upper() + typo[1:]
    return text[:s] + typo + text[e:]


def main():
    src, lst, out = sys.argv[1:4]
    split = sys.argv[4] if len(sys.argv) > 4 else "test"
    by = load(lst)
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    link = os.path.join(out, "corpus.jsonl")
    if not os.path.exists(link):
        os.symlink(os.path.abspath(os.path.join(src, "corpus.jsonl")), link)
    rows = open(os.path.join(src, "qrels", split + ".tsv"), encoding="utf-8").read().splitlines()
    judged = {r.split("\t")[0] for r in rows[1:] if r.strip()}
    kept = set()
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for line in open(os.path.join(src, "queries.jsonl"), encoding="utf-8"):
            q = json.loads(line)
            if q["_id"] not in judged:
                continue
            t = misspell(by, q["text"], q["_id"])
            if t is not None:
                kept.add(q["_id"])
                f.write(json.dumps({"_id": q["_id"], "text": t}) + "\n")
    with open(os.path.join(out, "qrels", split + ".tsv"), "w", encoding="utf-8") as f:
        f.write(rows[0] + "\n")
        for r in rows[1:]:
            if r.split("\t")[0] in kept:
                f.write(r + "\n")
    print(f"{len(kept)} of {len(judged)} queries misspelt into {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
