#!/usr/bin/env python3
"""Consistency checks for the Ferrybox help-center test corpus (stdlib only).

Usage: python3 datasets/helpcenter/check.py        (the English corpus)
       python3 datasets/helpcenter/check.py zh     (the Chinese corpus in zh/)

Verifies:
  * every article's front matter parses (simple parser: `key: value`,
    lists written as `[a, b]`, optional double quotes) and uses only the
    known keys; required keys are present; dates are YYYY-MM-DD;
  * ACLs match the folder (internal -> group:support, tenants/<t> -> tenant:<t>,
    everything else -> public or no acl at all = default public);
  * the body starts with `# <title>`, has `##` sections, and is 150-700 words
    (or a "long" article of 1200+ words);
  * queries.jsonl parses, ids are unique, kinds are known; English queries also carry
    `type` (question, fragment, code, phrase) and `misspelt`, consistent with the kind;
  * (English) qrels/fit.tsv and qrels/holdout.tsv are the deterministic split of
    qrels/test.tsv that datasets/split.py makes: disjoint, together all of test.tsv;
  * qrels/test.tsv has the BEIR header, every row's query and corpus id exist,
    every query has a score-2 row, and every judged article is visible to the
    query's principal (tokens default to ["public"]; an article is visible when
    its acl, defaulting to [public], shares a token with the principal);
  * minimum counts from the dataset brief.

Exits non-zero and prints every problem if any check fails.
"""

import datetime
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ZH = sys.argv[1:] == ["zh"]
ROOT = Path(__file__).resolve().parent / ("zh" if ZH else "")
ARTICLES = ROOT / "articles"
QUERIES = ROOT / "queries.jsonl"
QRELS = ROOT / "qrels" / "test.tsv"

KEYS = ["title", "tags", "acl", "audience", "updated"]
REQUIRED = {"title", "tags", "audience", "updated"}
LIST_KEYS = {"tags", "acl"}
AUDIENCES = {"customer", "admin", "agent"}
KINDS = {"natural", "typo", "fragment", "code", "keyword"}
# The query type every help-center set shares (datasets/cargo-book uses the same), by kind.
TYPE_OF_KIND = {"natural": "question", "keyword": "phrase", "typo": "phrase", "fragment": "fragment",
                "code": "code"}
if ZH:
    # Chinese articles carry `lang: zh`; their queries include pinyin and homophone typos.
    KEYS = KEYS + ["lang"]
    REQUIRED = REQUIRED | {"lang"}
    KINDS = {"natural", "keyword", "mixed", "pinyin", "homophone"}
DEFAULT_ACL = ["public"]

MIN_WORDS, MAX_WORDS, LONG_WORDS = 150, 700, 1200

errors = []


def err(msg):
    errors.append(msg)


def parse_scalar(raw):
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def parse_front_matter(text, where):
    """Return (meta dict, body str) or (None, None) on a fatal problem."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        err(f"{where}: does not start with '---'")
        return None, None
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        err(f"{where}: front matter is not closed with '---'")
        return None, None
    meta = {}
    for ln in lines[1:end]:
        if not ln.strip():
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$", ln)
        if not m:
            err(f"{where}: bad front-matter line {ln!r}")
            continue
        key, raw = m.group(1), m.group(2).strip()
        if key in meta:
            err(f"{where}: duplicate key {key!r}")
        if key not in KEYS:
            err(f"{where}: unknown key {key!r}")
        if key in LIST_KEYS:
            if not (raw.startswith("[") and raw.endswith("]")):
                err(f"{where}: {key} must be a [a, b] list, got {raw!r}")
                continue
            items = [parse_scalar(x) for x in raw[1:-1].split(",") if x.strip()]
            if not items:
                err(f"{where}: {key} is an empty list")
            meta[key] = items
        else:
            # an unquoted ': ' would not be valid YAML
            if not (raw[:1] in "\"'") and ": " in raw:
                err(f"{where}: value of {key} contains ': ' and must be quoted")
            meta[key] = parse_scalar(raw)
    body = "\n".join(lines[end + 1:])
    return meta, body


def expected_acl(doc_id):
    if doc_id.startswith("internal/"):
        return ["group:support"]
    m = re.match(r"^tenants/([^/]+)/", doc_id)
    if m:
        return [f"tenant:{m.group(1)}"]
    return None  # public category: [public] or omitted


def check_articles():
    docs = {}
    for path in sorted(ARTICLES.rglob("*")):
        if path.is_dir():
            continue
        rel = path.relative_to(ARTICLES).as_posix()
        if not rel.endswith(".md"):
            err(f"{rel}: unexpected non-markdown file")
            continue
        doc_id = rel[:-3]
        text = path.read_text(encoding="utf-8")
        meta, body = parse_front_matter(text, rel)
        if meta is None:
            continue
        for k in REQUIRED - meta.keys():
            err(f"{rel}: missing key {k!r}")
        if "updated" in meta and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", meta["updated"]):
            err(f"{rel}: updated must be YYYY-MM-DD, got {meta['updated']!r}")
        elif "updated" in meta:
            try:
                datetime.date.fromisoformat(meta["updated"])
            except ValueError:
                err(f"{rel}: updated {meta['updated']!r} is not a real date")
        if meta.get("audience") not in AUDIENCES:
            err(f"{rel}: audience {meta.get('audience')!r} not in {sorted(AUDIENCES)}")

        exp = expected_acl(doc_id)
        acl = meta.get("acl")
        if exp is not None:
            if acl != exp:
                err(f"{rel}: acl must be {exp}, got {acl}")
            if doc_id.startswith("internal/") and meta.get("audience") != "agent":
                err(f"{rel}: internal articles must have audience: agent")
        else:
            if acl is not None and acl != ["public"]:
                err(f"{rel}: public-category article has acl {acl}")
            if meta.get("audience") == "agent":
                err(f"{rel}: public article with audience: agent")

        # body structure
        nonempty = [ln for ln in body.split("\n") if ln.strip()]
        if not nonempty or not nonempty[0].startswith("# "):
            err(f"{rel}: body must start with '# Title'")
        elif nonempty[0][2:].strip() != meta.get("title", ""):
            err(f"{rel}: H1 {nonempty[0][2:].strip()!r} != title {meta.get('title')!r}")
        if not re.search(r"^## ", body, re.M):
            err(f"{rel}: no '##' sections")
        if body.count("```") % 2:
            err(f"{rel}: unbalanced code fences")
        # A Han character counts as one word (Chinese has no spaces), plus the Latin words.
        han = len(re.findall(r"[\u3400-\u9fff]", body))
        words = han + len(re.sub(r"[\u3400-\u9fff]", " ", body).split()) if ZH else len(body.split())
        if ZH and meta.get("lang") != "zh":
            err(f"{rel}: lang must be zh")
        if words < MIN_WORDS or (MAX_WORDS < words < LONG_WORDS):
            err(f"{rel}: {words} body words (want {MIN_WORDS}-{MAX_WORDS} or >= {LONG_WORDS})")

        docs[doc_id] = {
            "acl": acl if acl is not None else DEFAULT_ACL,
            "acl_omitted": acl is None,
            "words": words,
            "code": "```" in body,
            "table": bool(re.search(r"^\|.*\|\s*$", body, re.M)),
            "h3": bool(re.search(r"^### ", body, re.M)),
            "body": body,
        }
    return docs


def check_queries():
    queries = {}
    if not QUERIES.exists():
        err("queries.jsonl missing")
        return queries
    for n, line in enumerate(QUERIES.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            err(f"queries.jsonl:{n}: invalid JSON ({e})")
            continue
        qid = q.get("_id")
        if not isinstance(qid, str) or not qid:
            err(f"queries.jsonl:{n}: missing _id")
            continue
        if qid in queries:
            err(f"queries.jsonl:{n}: duplicate _id {qid}")
        if not isinstance(q.get("text"), str) or not q["text"].strip():
            err(f"queries.jsonl:{n}: empty text")
        md = q.get("metadata") or {}
        if md.get("kind") not in KINDS:
            err(f"queries.jsonl:{n}: kind {md.get('kind')!r} not in {sorted(KINDS)}")
        if not ZH and md.get("kind") in TYPE_OF_KIND:
            if md.get("type") != TYPE_OF_KIND[md["kind"]]:
                err(f"queries.jsonl:{n}: type {md.get('type')!r}, want {TYPE_OF_KIND[md['kind']]!r}")
            if md.get("misspelt") is not (md["kind"] == "typo"):
                err(f"queries.jsonl:{n}: misspelt must be {md['kind'] == 'typo'}")
        principal = md.get("principal")
        if principal is not None and (
            not isinstance(principal, list) or not principal
            or not all(isinstance(t, str) and t for t in principal)
        ):
            err(f"queries.jsonl:{n}: principal must be a non-empty list of strings")
        queries[qid] = q
    return queries


def check_qrels(docs, queries):
    rows = []
    if not QRELS.exists():
        err("qrels/test.tsv missing")
        return rows
    lines = QRELS.read_text(encoding="utf-8").rstrip("\n").split("\n")
    if lines[0] != "query-id\tcorpus-id\tscore":
        err(f"qrels: bad header {lines[0]!r}")
    seen = set()
    for n, line in enumerate(lines[1:], 2):
        parts = line.split("\t")
        if len(parts) != 3:
            err(f"qrels:{n}: expected 3 tab-separated columns: {line!r}")
            continue
        qid, did, score = parts
        if qid not in queries:
            err(f"qrels:{n}: unknown query {qid}")
        if did not in docs:
            err(f"qrels:{n}: unknown corpus id {did}")
        if score not in ("1", "2"):
            err(f"qrels:{n}: score must be 1 or 2, got {score!r}")
        if (qid, did) in seen:
            err(f"qrels:{n}: duplicate pair {qid} {did}")
        seen.add((qid, did))
        rows.append((qid, did, int(score) if score.isdigit() else 0))

    by_q = defaultdict(list)
    for qid, did, score in rows:
        by_q[qid].append((did, score))
    for qid, q in queries.items():
        judged = by_q.get(qid, [])
        if not any(s == 2 for _, s in judged):
            err(f"qrels: query {qid} has no score-2 row")
        tokens = set((q.get("metadata") or {}).get("principal") or ["public"])
        for did, _ in judged:
            if did in docs and not (set(docs[did]["acl"]) & tokens):
                err(f"qrels: {qid} (principal {sorted(tokens)}) judged {did} "
                    f"with acl {docs[did]['acl']}, which it cannot see")
    return rows


def check_split():
    """fit.tsv and holdout.tsv: the deterministic halves of test.tsv (datasets/split.py)."""
    sys.path.insert(0, str(ROOT.parent))
    import split  # datasets/split.py

    try:
        want = split.split(ROOT, "kind", ["test"], ["fit", "holdout"])
    except (OSError, ValueError, KeyError) as e:
        err(f"split: {e}")
        return
    for name, text in want.items():
        path = ROOT / "qrels" / f"{name}.tsv"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            err(f"qrels/{name}.tsv is not the split datasets/split.py makes "
                f"(run: python3 datasets/split.py datasets/helpcenter --field kind --from test --to fit,holdout)")


def main():
    docs = check_articles()
    queries = check_queries()
    rows = check_qrels(docs, queries)
    if not ZH:
        check_split()

    per_cat = Counter("/".join(d.split("/")[:2]) if d.startswith("tenants/") else d.split("/")[0]
                      for d in docs)
    kinds = Counter((q.get("metadata") or {}).get("kind") for q in queries.values())
    perm = [q for q in queries.values() if (q.get("metadata") or {}).get("principal")]
    omitted = sum(d["acl_omitted"] for d in docs.values())
    long_docs = sum(d["words"] >= LONG_WORDS for d in docs.values())
    with_code = sum(d["code"] for d in docs.values())
    with_table = sum(d["table"] for d in docs.values())

    if ZH:
        if len(docs) < 20:
            err(f"only {len(docs)} articles (want >= 20)")
        if len(queries) < 40:
            err(f"only {len(queries)} queries (want >= 40)")
        for k in sorted(KINDS):
            if kinds[k] < 8:
                err(f"only {kinds[k]} {k} queries (want >= 8)")
    else:
        # minimum counts from the brief
        if len(docs) < 85:
            err(f"only {len(docs)} articles (want >= 85)")
        if not 8 <= per_cat["internal"] <= 12:
            err(f"internal has {per_cat['internal']} articles (want 8-12)")
        for t in ("tenants/acme", "tenants/globex"):
            if not 4 <= per_cat[t] <= 6:
                err(f"{t} has {per_cat[t]} articles (want 4-6)")
        for c in ("billing", "accounts-security", "integrations", "api-errors", "troubleshooting", "admin"):
            if per_cat[c] == 0:
                err(f"category {c} is empty")
        if not 10 <= omitted <= 20:
            err(f"{omitted} public articles omit acl (want about 15)")
        if long_docs < 3:
            err(f"only {long_docs} long (1200+ word) articles")
        if with_code < 10:
            err(f"only {with_code} articles with fenced code blocks")
        if with_table < 5:
            err(f"only {with_table} articles with tables")
        for tid in ("acme", "globex"):
            names = {d.split("/")[-1] for d in docs if d.startswith(f"tenants/{tid}/")}
            for need in ("sso-setup", "data-retention"):
                if need not in names:
                    err(f"tenants/{tid}/{need} missing (tenants must overlap)")
        api_text = "\n".join(d["body"] for k, d in docs.items() if k.startswith("api-errors/"))
        for code in ["400", "401", "403", "404", "409", "413", "422", "429", "451", "500", "502",
                     "503", "FBX-1042", "FBX-2210", "E_TOKEN_EXPIRED", "ERR_SSO_ASSERTION_INVALID",
                     "600 requests per minute"]:
            if code not in api_text:
                err(f"api-errors: code {code!r} not mentioned")
        if len(queries) < 70:
            err(f"only {len(queries)} queries (want >= 70)")
        for k, lo in (("natural", 12), ("typo", 12), ("code", 12), ("fragment", 8)):
            if kinds[k] < lo:
                err(f"only {kinds[k]} {k} queries (want >= {lo})")
        if len(perm) < 8:
            err(f"only {len(perm)} permission queries (want >= 8)")

    print("articles per category:")
    for c in sorted(per_cat):
        print(f"  {c:20s} {per_cat[c]}")
    print(f"  {'TOTAL':20s} {len(docs)}")
    print(f"public articles without acl key: {omitted}")
    print(f"long (>= {LONG_WORDS} words): {long_docs}; with code blocks: {with_code}; "
          f"with tables: {with_table}; with ### subsections: {sum(d['h3'] for d in docs.values())}")
    wc = sorted(d["words"] for d in docs.values())
    print(f"body words: min {wc[0]}, median {wc[len(wc) // 2]}, max {wc[-1]}, total {sum(wc)}")
    print("queries per kind:")
    for k in sorted(kinds):
        print(f"  {k:10s} {kinds[k]}")
    print(f"  {'TOTAL':10s} {len(queries)}")
    pc = Counter(tuple(sorted(q['metadata']['principal'])) for q in perm)
    print(f"permission queries: {len(perm)} " + ", ".join(f"{list(p)}={n}" for p, n in sorted(pc.items())))
    sc = Counter(s for _, _, s in rows)
    print(f"qrels rows: {len(rows)} (score 2: {sc[2]}, score 1: {sc[1]})")

    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  - " + e)
        sys.exit(1)
    print("\nOK")


if __name__ == "__main__":
    main()
