"""The peers' side of the comparison: bm25s, exact dense search in numpy, LanceDB and Milvus Lite.

Every engine gets the same documents (title + " " + text, as Braid indexes BEIR corpora), the
same document vectors and the same query vectors, written by `braid-report export` (so nobody
re-embeds, and query embedding is excluded from every engine's q/s, Braid's included). Each
engine runs one untimed warm-up pass, then timed passes, one query at a time, until at least
MIN_SECONDS have passed (a set of 64 queries at 10,000 q/s is timed over 6 ms otherwise, less
than the machine's jitter); `braid-report run` times Braid the same way. The run file has the
shape `braid-report score` reads (engine, mode, k, queries, seconds, rankings): queries counts
every timed call, rankings are the first timed pass's.

Braid's semantic leg reads passages (a long record is several vectors, scored by its best), so
each vector engine also runs over the same passages: `braid-report export` writes every passage
Braid embedded (passages.json: the record id and text of each row, as Braid cut it;
passages.f32: its vector as the index stores it). The `*-passages` engines hold one row per
passage — the full-text leg scores the passage rows too — and deduplicate their results to
records, each at its best row's rank, fetching more rows until k distinct records come back (or
the rows run out). They are reported beside the one-vector rows, as engines of their own
(`numpy-exact-passages`, `lancedb-passages`, `milvus-lite-passages`).

A help center (a Markdown corpus, `articles/`, as datasets/cargo-book and datasets/helpcenter
are) is read from the export too: its records are the sections Braid indexes (`docs.json`
holds each one's text, as one vector reads it, and its article), every engine holds those
rows, and its results are collapsed to articles — what the qrels judge, as `braid eval`
collapses Braid's — fetching more rows until k distinct articles come back. Queries asked as a
principal (`metadata.principal`) see what the index lets that principal see (`visible` in
`queries.json`): numpy masks the rest out, LanceDB and Milvus Lite filter on it in the engine
before ranking (`where(..., prefilter=True)`, `filter`/`expr` on `id`), and bm25s, which has no
filter, drops the rest from its ranking (the same ranking, as BM25 scores do not depend on it).

usage: python peers.py DATASET_DIR VECTORS_DIR WORK_DIR K OUT.json [ENGINE ...]
engines: bm25s bm25s-batch numpy lancedb milvus numpy-passages lancedb-passages milvus-passages
(default: all; the passage engines need passages.json from `braid-report export`)
"""

import json
import math
import os
import sys
import time

import numpy as np


class Scope:
    """What one query may see (`ids`: a set of record ids, None for everything) and the same
    as each engine's filter expression on the `id` column."""

    def __init__(self, ids):
        self.ids = ids
        listed = sorted(ids) if ids is not None else []
        self.lance = "id IN ({})".format(", ".join("'" + i.replace("'", "''") + "'" for i in listed))
        self.milvus = "id in " + json.dumps(listed)


EVERYTHING = Scope(None)


def load(dataset, vectors):
    """(ids, corpus, doc_vecs, queries, unit): queries are (id, text, vector, Scope); unit maps
    a record to what the qrels judge (its article on a Markdown corpus), None when the records
    are judged themselves."""
    docs_meta = json.load(open(os.path.join(vectors, "docs.json")))
    queries_meta = json.load(open(os.path.join(vectors, "queries.json")))
    dim = docs_meta["dim"]
    doc_vecs = np.fromfile(os.path.join(vectors, "docs.f32"), dtype="<f4").reshape(-1, dim)
    query_vecs = np.fromfile(os.path.join(vectors, "queries.f32"), dtype="<f4").reshape(-1, dim)
    ids = docs_meta["ids"]
    unit = None
    if os.path.exists(os.path.join(dataset, "corpus.jsonl")):
        texts = {}
        with open(os.path.join(dataset, "corpus.jsonl")) as f:
            for line in f:
                d = json.loads(line)
                texts[d["_id"]] = (d.get("title", "") + " " + d.get("text", "")).strip()
        assert len(ids) == doc_vecs.shape[0] and set(ids) == set(texts), "vectors and corpus disagree"
        corpus = [texts[i] for i in ids]
    else:
        # A Markdown corpus: Braid's sections, their texts and articles, from the export.
        corpus, parents = docs_meta["texts"], docs_meta["parents"]
        assert len(ids) == len(corpus) == len(parents) == doc_vecs.shape[0], "docs.json and docs.f32 disagree"
        unit = dict(zip(ids, parents))
    scopes = {p: Scope(frozenset(seen)) for p, seen in queries_meta.get("visible", {}).items()}
    principals = queries_meta.get("principals") or [""] * len(queries_meta["ids"])
    queries = [(qid, text, vec, scopes.get(p, EVERYTHING))
               for qid, text, vec, p in zip(queries_meta["ids"], queries_meta["texts"], query_vecs, principals)]
    return ids, corpus, doc_vecs, queries, unit


def load_passages(vectors, ids):
    """Braid's passages: (row record ids, row texts, row vectors), a record's rows adjacent and
    its first row the whole text as one vector reads it."""
    meta = json.load(open(os.path.join(vectors, "passages.json")))
    rows = np.fromfile(os.path.join(vectors, "passages.f32"), dtype="<f4").reshape(-1, meta["dim"])
    assert len(meta["ids"]) == len(meta["texts"]) == rows.shape[0], "passages.json and passages.f32 disagree"
    assert set(meta["ids"]) == set(ids), "passages and documents name different records"
    return meta["ids"], meta["texts"], rows


def records_of(fetch, k, start, unit=None, allowed=None):
    """Deduplicates passage rows to records: fetch(limit) returns the record ids of the best
    `limit` rows, best first; a record keeps its best row's rank. Starts at `start` rows and
    doubles until k distinct records come back or the engine returns fewer rows than asked
    (there are no more). With `unit`, records are collapsed to what it maps them to (a
    section to its article); with `allowed`, rows of other records are dropped (engines that
    cannot filter)."""
    limit = start
    while True:
        rows = fetch(limit)
        records = collapse(rows, unit, allowed)
        if len(records) >= k or len(rows) < limit:
            return records[:k]
        limit *= 2


def collapse(rows, unit=None, allowed=None):
    """Rows (record ids, best first) to distinct judged units, each at its best row's rank:
    rows outside `allowed` (when given) dropped, records mapped by `unit` (when given)."""
    kept = rows if allowed is None else [r for r in rows if r in allowed]
    return list(dict.fromkeys(kept if unit is None else (unit[r] for r in kept)))


def deep(queries, unit):
    """Whether results need more rows than k: records collapse to articles, or some query
    sees part of the records."""
    return unit is not None or any(scope.ids is not None for _, _, _, scope in queries)


def first_fetch(row_ids, k, unit=None):
    """Rows asked for first: k times the mean rows a judged unit — passages a record, or rows
    an article (enough when the best rows spread like the units' rows do; records_of asks
    again when not)."""
    units = set(row_ids) if unit is None else {unit[r] for r in row_ids}
    return k * math.ceil(len(row_ids) / len(units))


# Timed passes go on until this many seconds have passed (at least one pass).
MIN_SECONDS = 1.0


def passes(run_pass):
    """Calls run_pass(first) until MIN_SECONDS have passed; returns (passes, seconds)."""
    count = 0
    started = time.perf_counter()
    while True:
        run_pass(count == 0)
        count += 1
        seconds = time.perf_counter() - started
        if seconds >= MIN_SECONDS:
            return count, seconds


def timed(engine, mode, k, queries, search):
    """One warm-up pass, then timed passes (see MIN_SECONDS), one query at a time."""
    for _, text, vec, scope in queries:
        search(text, vec, scope)
    rankings = {}

    def run_pass(first):
        for qid, text, vec, scope in queries:
            ranking = search(text, vec, scope)
            if first:
                rankings[qid] = ranking

    count, seconds = passes(run_pass)
    calls = count * len(queries)
    print(f"{engine} {mode} k={k}: {calls / seconds:.0f} q/s", file=sys.stderr)
    return {"engine": engine, "mode": mode, "k": k, "queries": calls, "seconds": seconds, "rankings": rankings}


def bm25s_runs(ids, corpus, queries, k, batch, unit=None):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()  # method "lucene", k1 = 1.5, b = 0.75
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    # bm25s has no filter: where a query sees part of the records, or records collapse to
    # articles, it ranks deeper and the rest is dropped (BM25 scores do not depend on it).
    more = deep(queries, unit)
    if batch:
        # bm25s's own benchmark shape: every query tokenized and retrieved in one call (every
        # record ranked where results are collapsed or filtered).
        texts = [t for _, t, _, _ in queries]
        depth = len(ids) if more else k
        run = lambda: retriever.retrieve(  # noqa: E731
            bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
            k=depth, show_progress=False, n_threads=1)
        run()
        first = []
        count, seconds = passes(lambda is_first: first.append(run()[0]) if is_first else run())
        calls = count * len(queries)
        print(f"bm25s-batch lexical k={k}: {calls / seconds:.0f} q/s", file=sys.stderr)
        rankings = {qid: collapse([ids[i] for i in row], unit, scope.ids)[:k]
                    for (qid, _, _, scope), row in zip(queries, first[0])}
        return [{"engine": "bm25s-batch", "mode": "lexical", "k": k, "queries": calls, "seconds": seconds,
                 "rankings": rankings}]

    def rows(tokens, limit):
        docs, _ = retriever.retrieve(tokens, k=min(limit, len(ids)), show_progress=False, n_threads=1)
        return [ids[i] for i in docs[0]]

    start = first_fetch(ids, k, unit)

    def search(text, _vec, scope):
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not more:
            return rows(tokens, k)
        return records_of(lambda limit: rows(tokens, limit), k, start, unit, scope.ids)

    return [timed("bm25s", "lexical", k, queries, search)]


def numpy_runs(ids, doc_vecs, queries, k, unit=None):
    if deep(queries, unit):
        return numpy_passage_runs(ids, doc_vecs, queries, k, unit, "numpy-exact")

    def search(_text, vec, _scope):
        scores = doc_vecs @ vec
        top = np.argpartition(-scores, k)[:k]
        return [ids[i] for i in top[np.argsort(-scores[top])]]

    return [timed("numpy-exact", "semantic", k, queries, search)]


def numpy_passage_runs(row_ids, row_vecs, queries, k, unit=None, engine="numpy-exact-passages"):
    """Exact search over rows (passages, or records where results collapse or are filtered):
    a query that sees part of the records searches only their rows."""
    start = first_fetch(row_ids, k, unit)
    subsets = {}

    def rows_of(scope):
        if scope.ids is None:
            return row_ids, row_vecs
        if id(scope) not in subsets:
            keep = [i for i, r in enumerate(row_ids) if r in scope.ids]
            subsets[id(scope)] = ([row_ids[i] for i in keep], row_vecs[keep])
        return subsets[id(scope)]

    def fetch(vec, limit, scope):
        ids, vecs = rows_of(scope)
        scores = vecs @ vec
        if limit >= len(scores):
            top = np.arange(len(scores))
        else:
            top = np.argpartition(-scores, limit)[:limit]
        return [ids[i] for i in top[np.argsort(-scores[top])]]

    def search(_text, vec, scope):
        return records_of(lambda limit: fetch(vec, limit, scope), k, start, unit)

    return [timed(engine, "semantic", k, queries, search)]


def lancedb_runs(ids, corpus, doc_vecs, queries, k, work, engine="lancedb", fetch=None, unit=None):
    """LanceDB over one row per record, or (fetch: the first number of rows to ask) one row
    per passage with the results deduplicated to records (collapsed by `unit` when given)."""
    import lancedb
    import pyarrow as pa
    from lancedb.rerankers import RRFReranker

    db = lancedb.connect(os.path.join(work, engine))
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(doc_vecs.reshape(-1), type=pa.float32()), doc_vecs.shape[1])
    table = db.create_table("docs", pa.table({"id": ids, "text": corpus, "vector": vectors}), mode="overwrite")
    # Lance's native full-text index: BM25, English stemming and stop words, like Braid's.
    table.create_fts_index("text", use_tantivy=False, stem=True, remove_stop_words=True, language="English",
                           replace=True)
    reranker = RRFReranker(K=60)

    def ranked(result):
        return result.column("id").to_pylist()

    def scoped(q, scope):
        # What the query's principal may not see is filtered out before ranking.
        return q if scope.ids is None else q.where(scope.lance, prefilter=True)

    def lexical_rows(text, _vec, limit, scope):
        return ranked(scoped(table.search(text, query_type="fts"), scope).limit(limit).select(["id"]).to_arrow())

    def semantic_rows(_text, vec, limit, scope):
        q = scoped(table.search(vec, query_type="vector").distance_type("dot"), scope)
        return ranked(q.limit(limit).select(["id"]).to_arrow())

    def hybrid_rows(text, vec, limit, scope):
        q = table.search(query_type="hybrid").vector(vec).text(text).distance_type("dot").rerank(reranker)
        return ranked(scoped(q, scope).limit(limit).select(["id"]).to_arrow())

    return [timed(engine, m, k, queries, by_record(f, k, fetch, unit))
            for m, f in (("lexical", lexical_rows), ("semantic", semantic_rows), ("hybrid", hybrid_rows))]


def by_record(rows, k, fetch, unit=None):
    """A search(text, vec, scope) from rows(text, vec, limit, scope): k rows when each row is
    a record, else rows deduplicated to k records or collapsed to k articles (records_of),
    starting at `fetch` rows."""
    if fetch is None:
        return lambda text, vec, scope: rows(text, vec, k, scope)
    return lambda text, vec, scope: records_of(lambda limit: rows(text, vec, limit, scope), k, fetch, unit)


# Milvus Lite knows the "standard" and "jieba" tokenizers only (its "english" analyzer is not
# built in); English stemming and stop words are asked for as filters on the standard one.
MILVUS_ANALYZER = {"tokenizer": "standard",
                   "filter": ["lowercase", {"type": "stop", "stop_words": ["_english_"]},
                              {"type": "stemmer", "language": "english"}]}


def milvus_runs(ids, corpus, doc_vecs, queries, k, work, engine="milvus-lite", fetch=None, unit=None, rows_keyed=None):
    """Milvus Lite over one row per record, or (fetch: the first number of rows to ask) one
    row per passage with the results deduplicated to records (collapsed by `unit` when
    given). `rows_keyed`: whether rows have a key of their own (passages; default: when
    `fetch` is given)."""
    rows_keyed = fetch is not None if rows_keyed is None else rows_keyed
    from pymilvus import (AnnSearchRequest, DataType, Function, FunctionType, MilvusClient, RRFRanker)

    client = MilvusClient(os.path.join(work, f"{engine}.db" if rows_keyed else "milvus.db"))
    if client.has_collection("docs"):
        client.drop_collection("docs")
    schema = client.create_schema(auto_id=False)
    # Braid's ids are at most 512 bytes (a help center's section ids are long).
    if not rows_keyed:
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=512)
    else:
        # A passage row's key is its row number; `id` is its record's (a record's rows share it).
        schema.add_field("row", DataType.INT64, is_primary=True)
        schema.add_field("id", DataType.VARCHAR, max_length=512)
    schema.add_field("text", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                     analyzer_params=MILVUS_ANALYZER)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=doc_vecs.shape[1])
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    index.add_index(field_name="dense", index_type="FLAT", metric_type="IP")
    client.create_collection("docs", schema=schema, index_params=index)
    rows = [{"id": i, "text": t, "dense": v.tolist()} for i, t, v in zip(ids, corpus, doc_vecs)]
    if rows_keyed:
        for n, row in enumerate(rows):
            row["row"] = n
    for start in range(0, len(rows), 1000):
        client.insert("docs", rows[start:start + 1000])
    client.flush("docs")
    client.load_collection("docs")
    ranker = RRFRanker(60)

    def ids_of(result):
        return [hit["id"] for hit in result[0]]

    # What the query's principal may not see is filtered out before ranking.
    def filt(scope):
        return {} if scope.ids is None else {"filter": scope.milvus}

    def expr(scope):
        return {} if scope.ids is None else {"expr": scope.milvus}

    def lexical_rows(text, _vec, limit, scope):
        return ids_of(client.search("docs", data=[text], anns_field="sparse", limit=limit, output_fields=["id"],
                                    search_params={"metric_type": "BM25"}, **filt(scope)))

    def semantic_rows(_text, vec, limit, scope):
        return ids_of(client.search("docs", data=[vec.tolist()], anns_field="dense", limit=limit,
                                    output_fields=["id"], search_params={"metric_type": "IP"}, **filt(scope)))

    def hybrid_rows(text, vec, limit, scope):
        reqs = [AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"}, limit=limit,
                                 **expr(scope)),
                AnnSearchRequest(data=[vec.tolist()], anns_field="dense", param={"metric_type": "IP"}, limit=limit,
                                 **expr(scope))]
        return ids_of(client.hybrid_search("docs", reqs, ranker, limit=limit, output_fields=["id"]))

    runs = [timed(engine, m, k, queries, by_record(f, k, fetch, unit))
            for m, f in (("lexical", lexical_rows), ("semantic", semantic_rows), ("hybrid", hybrid_rows))]
    client.close()
    return runs


def main():
    dataset, vectors, work, k, out = sys.argv[1:6]
    k = int(k)
    engines = sys.argv[6:] or ["bm25s", "bm25s-batch", "numpy", "lancedb", "milvus", "numpy-passages",
                               "lancedb-passages", "milvus-passages"]
    os.makedirs(work, exist_ok=True)
    ids, corpus, doc_vecs, queries, unit = load(dataset, vectors)
    # One row a record needs deeper fetches too where records collapse to articles or some
    # query sees part of them.
    one_fetch = first_fetch(ids, k, unit) if deep(queries, unit) else None
    passages = None
    runs, failures = [], {}
    for engine in engines:
        try:
            if engine.endswith("-passages"):
                passages = passages or load_passages(vectors, ids)
                row_ids, row_texts, row_vecs = passages
                fetch = first_fetch(row_ids, k, unit)
            if engine == "bm25s":
                runs += bm25s_runs(ids, corpus, queries, k, batch=False, unit=unit)
            elif engine == "bm25s-batch":
                runs += bm25s_runs(ids, corpus, queries, k, batch=True, unit=unit)
            elif engine == "numpy":
                runs += numpy_runs(ids, doc_vecs, queries, k, unit)
            elif engine == "lancedb":
                runs += lancedb_runs(ids, corpus, doc_vecs, queries, k, work, fetch=one_fetch, unit=unit)
            elif engine == "milvus":
                runs += milvus_runs(ids, corpus, doc_vecs, queries, k, work, fetch=one_fetch, unit=unit,
                                    rows_keyed=False)
            elif engine == "numpy-passages":
                runs += numpy_passage_runs(row_ids, row_vecs, queries, k, unit)
            elif engine == "lancedb-passages":
                runs += lancedb_runs(row_ids, row_texts, row_vecs, queries, k, work, engine, fetch, unit)
            elif engine == "milvus-passages":
                runs += milvus_runs(row_ids, row_texts, row_vecs, queries, k, work, "milvus-lite-passages", fetch,
                                    unit)
            else:
                raise ValueError(f"unknown engine {engine}")
        except Exception as e:  # one engine failing must not hide the others' numbers
            failures[engine] = f"{type(e).__name__}: {e}"
            print(f"{engine} failed: {failures[engine]}", file=sys.stderr)
    with open(out, "w") as f:
        json.dump(runs, f)
    failures_file = out + ".failures.json"
    if failures:
        with open(failures_file, "w") as f:
            json.dump(failures, f, indent=1)
    elif os.path.exists(failures_file):
        os.remove(failures_file)


if __name__ == "__main__":
    main()
