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


def load(dataset, vectors):
    docs_meta = json.load(open(os.path.join(vectors, "docs.json")))
    queries_meta = json.load(open(os.path.join(vectors, "queries.json")))
    dim = docs_meta["dim"]
    doc_vecs = np.fromfile(os.path.join(vectors, "docs.f32"), dtype="<f4").reshape(-1, dim)
    query_vecs = np.fromfile(os.path.join(vectors, "queries.f32"), dtype="<f4").reshape(-1, dim)
    texts = {}
    with open(os.path.join(dataset, "corpus.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            texts[d["_id"]] = (d.get("title", "") + " " + d.get("text", "")).strip()
    ids = docs_meta["ids"]
    assert len(ids) == doc_vecs.shape[0] and set(ids) == set(texts), "vectors and corpus disagree"
    corpus = [texts[i] for i in ids]
    queries = list(zip(queries_meta["ids"], queries_meta["texts"], query_vecs))
    return ids, corpus, doc_vecs, queries


def load_passages(vectors, ids):
    """Braid's passages: (row record ids, row texts, row vectors), a record's rows adjacent and
    its first row the whole text as one vector reads it."""
    meta = json.load(open(os.path.join(vectors, "passages.json")))
    rows = np.fromfile(os.path.join(vectors, "passages.f32"), dtype="<f4").reshape(-1, meta["dim"])
    assert len(meta["ids"]) == len(meta["texts"]) == rows.shape[0], "passages.json and passages.f32 disagree"
    assert set(meta["ids"]) == set(ids), "passages and documents name different records"
    return meta["ids"], meta["texts"], rows


def records_of(fetch, k, start):
    """Deduplicates passage rows to records: fetch(limit) returns the record ids of the best
    `limit` rows, best first; a record keeps its best row's rank. Starts at `start` rows and
    doubles until k distinct records come back or the engine returns fewer rows than asked
    (there are no more)."""
    limit = start
    while True:
        rows = fetch(limit)
        records = list(dict.fromkeys(rows))
        if len(records) >= k or len(rows) < limit:
            return records[:k]
        limit *= 2


def first_fetch(row_ids, k):
    """Rows asked for first: k times the mean passages a record (enough when the best rows
    spread like the records' passages do; records_of asks again when not)."""
    return k * math.ceil(len(row_ids) / len(set(row_ids)))


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
    for _, text, vec in queries:
        search(text, vec)
    rankings = {}

    def run_pass(first):
        for qid, text, vec in queries:
            ranking = search(text, vec)
            if first:
                rankings[qid] = ranking

    count, seconds = passes(run_pass)
    calls = count * len(queries)
    print(f"{engine} {mode} k={k}: {calls / seconds:.0f} q/s", file=sys.stderr)
    return {"engine": engine, "mode": mode, "k": k, "queries": calls, "seconds": seconds, "rankings": rankings}


def bm25s_runs(ids, corpus, queries, k, batch):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()  # method "lucene", k1 = 1.5, b = 0.75
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    if batch:
        # bm25s's own benchmark shape: every query tokenized and retrieved in one call.
        texts = [t for _, t, _ in queries]
        run = lambda: retriever.retrieve(  # noqa: E731
            bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
            k=k, show_progress=False, n_threads=1)
        run()
        first = []
        count, seconds = passes(lambda is_first: first.append(run()[0]) if is_first else run())
        calls = count * len(queries)
        print(f"bm25s-batch lexical k={k}: {calls / seconds:.0f} q/s", file=sys.stderr)
        rankings = {qid: [ids[i] for i in row] for (qid, _, _), row in zip(queries, first[0])}
        return [{"engine": "bm25s-batch", "mode": "lexical", "k": k, "queries": calls, "seconds": seconds,
                 "rankings": rankings}]

    def search(text, _vec):
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [ids[i] for i in docs[0]]

    return [timed("bm25s", "lexical", k, queries, search)]


def numpy_runs(ids, doc_vecs, queries, k):
    def search(_text, vec):
        scores = doc_vecs @ vec
        top = np.argpartition(-scores, k)[:k]
        return [ids[i] for i in top[np.argsort(-scores[top])]]

    return [timed("numpy-exact", "semantic", k, queries, search)]


def numpy_passage_runs(row_ids, row_vecs, queries, k):
    start = first_fetch(row_ids, k)

    def fetch(vec, limit):
        scores = row_vecs @ vec
        if limit >= len(scores):
            top = np.arange(len(scores))
        else:
            top = np.argpartition(-scores, limit)[:limit]
        return [row_ids[i] for i in top[np.argsort(-scores[top])]]

    def search(_text, vec):
        return records_of(lambda limit: fetch(vec, limit), k, start)

    return [timed("numpy-exact-passages", "semantic", k, queries, search)]


def lancedb_runs(ids, corpus, doc_vecs, queries, k, work, engine="lancedb", fetch=None):
    """LanceDB over one row per record, or (fetch: the first number of rows to ask) one row
    per passage with the results deduplicated to records."""
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

    def lexical_rows(text, _vec, limit):
        return ranked(table.search(text, query_type="fts").limit(limit).select(["id"]).to_arrow())

    def semantic_rows(_text, vec, limit):
        return ranked(table.search(vec, query_type="vector").distance_type("dot").limit(limit).select(["id"])
                      .to_arrow())

    def hybrid_rows(text, vec, limit):
        q = table.search(query_type="hybrid").vector(vec).text(text).distance_type("dot").rerank(reranker)
        return ranked(q.limit(limit).select(["id"]).to_arrow())

    return [timed(engine, m, k, queries, by_record(f, k, fetch))
            for m, f in (("lexical", lexical_rows), ("semantic", semantic_rows), ("hybrid", hybrid_rows))]


def by_record(rows, k, fetch):
    """A search(text, vec) from rows(text, vec, limit): k rows when each row is a record,
    else passage rows deduplicated to k records (records_of), starting at `fetch` rows."""
    if fetch is None:
        return lambda text, vec: rows(text, vec, k)
    return lambda text, vec: records_of(lambda limit: rows(text, vec, limit), k, fetch)


# Milvus Lite knows the "standard" and "jieba" tokenizers only (its "english" analyzer is not
# built in); English stemming and stop words are asked for as filters on the standard one.
MILVUS_ANALYZER = {"tokenizer": "standard",
                   "filter": ["lowercase", {"type": "stop", "stop_words": ["_english_"]},
                              {"type": "stemmer", "language": "english"}]}


def milvus_runs(ids, corpus, doc_vecs, queries, k, work, engine="milvus-lite", fetch=None):
    """Milvus Lite over one row per record, or (fetch: the first number of rows to ask) one
    row per passage with the results deduplicated to records."""
    from pymilvus import (AnnSearchRequest, DataType, Function, FunctionType, MilvusClient, RRFRanker)

    client = MilvusClient(os.path.join(work, f"{engine}.db" if fetch else "milvus.db"))
    if client.has_collection("docs"):
        client.drop_collection("docs")
    schema = client.create_schema(auto_id=False)
    if fetch is None:
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=128)
    else:
        # A passage row's key is its row number; `id` is its record's (a record's rows share it).
        schema.add_field("row", DataType.INT64, is_primary=True)
        schema.add_field("id", DataType.VARCHAR, max_length=128)
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
    if fetch is not None:
        for n, row in enumerate(rows):
            row["row"] = n
    for start in range(0, len(rows), 1000):
        client.insert("docs", rows[start:start + 1000])
    client.flush("docs")
    client.load_collection("docs")
    ranker = RRFRanker(60)

    def ids_of(result):
        return [hit["id"] for hit in result[0]]

    def lexical_rows(text, _vec, limit):
        return ids_of(client.search("docs", data=[text], anns_field="sparse", limit=limit, output_fields=["id"],
                                    search_params={"metric_type": "BM25"}))

    def semantic_rows(_text, vec, limit):
        return ids_of(client.search("docs", data=[vec.tolist()], anns_field="dense", limit=limit,
                                    output_fields=["id"], search_params={"metric_type": "IP"}))

    def hybrid_rows(text, vec, limit):
        reqs = [AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"}, limit=limit),
                AnnSearchRequest(data=[vec.tolist()], anns_field="dense", param={"metric_type": "IP"}, limit=limit)]
        return ids_of(client.hybrid_search("docs", reqs, ranker, limit=limit, output_fields=["id"]))

    runs = [timed(engine, m, k, queries, by_record(f, k, fetch))
            for m, f in (("lexical", lexical_rows), ("semantic", semantic_rows), ("hybrid", hybrid_rows))]
    client.close()
    return runs


def main():
    dataset, vectors, work, k, out = sys.argv[1:6]
    k = int(k)
    engines = sys.argv[6:] or ["bm25s", "bm25s-batch", "numpy", "lancedb", "milvus", "numpy-passages",
                               "lancedb-passages", "milvus-passages"]
    os.makedirs(work, exist_ok=True)
    ids, corpus, doc_vecs, queries = load(dataset, vectors)
    passages = None
    runs, failures = [], {}
    for engine in engines:
        try:
            if engine.endswith("-passages"):
                passages = passages or load_passages(vectors, ids)
                row_ids, row_texts, row_vecs = passages
                fetch = first_fetch(row_ids, k)
            if engine == "bm25s":
                runs += bm25s_runs(ids, corpus, queries, k, batch=False)
            elif engine == "bm25s-batch":
                runs += bm25s_runs(ids, corpus, queries, k, batch=True)
            elif engine == "numpy":
                runs += numpy_runs(ids, doc_vecs, queries, k)
            elif engine == "lancedb":
                runs += lancedb_runs(ids, corpus, doc_vecs, queries, k, work)
            elif engine == "milvus":
                runs += milvus_runs(ids, corpus, doc_vecs, queries, k, work)
            elif engine == "numpy-passages":
                runs += numpy_passage_runs(row_ids, row_vecs, queries, k)
            elif engine == "lancedb-passages":
                runs += lancedb_runs(row_ids, row_texts, row_vecs, queries, k, work, engine, fetch)
            elif engine == "milvus-passages":
                runs += milvus_runs(row_ids, row_texts, row_vecs, queries, k, work, "milvus-lite-passages", fetch)
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
