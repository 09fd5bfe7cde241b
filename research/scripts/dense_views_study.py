#!/usr/bin/env python3
"""Other views of a record for the semantic leg, tried on training splits only (issue 20).

The passage index keeps, per record, the whole text's vector (the model's first 256 tokens)
and, for a record longer than 128 words, one vector per 128-word window (stride 96); a record
scores by its best vector. This study reads those very vectors from a MiniLM index's vector
file (`vectors/vectors.braidvec`, format 4, f32; ordinal i is the corpus's i-th record, as
`braid index` writes a BEIR corpus, checked against the first vector of each record), embeds
the split's queries and every record's title with the same model (Python onnxruntime, the same
pooling as `braid_models`: the query vectors match Braid's to a cosine of 0.9999998), and
scores the semantic leg alone (exact search, nDCG@10) under other record scores:

  whole only           the whole text's vector (an index without passages)
  max all              the shipped score: best of the whole text and its windows
  windows only         the windows, without the whole text's vector (fewer rows to scan)
  all but window 0     without the first window, which the whole text's vector overlaps
  title                a vector of the title alone, on its own, as one more vector of the
                       record (max), or mixed in: (1 - w) * max + w * title
  whole, mean          (1 - w) * max + w * whole, and the same with the mean of its vectors

  python3 research/scripts/dense_views_study.py ../shared/datasets/scifact ~/.cache/braid/eval/scifact-minilm train
  python3 research/scripts/dense_views_study.py ../shared/datasets/nfcorpus ~/.cache/braid/eval/nfcorpus-minilm dev

Needs numpy, onnxruntime and tokenizers (benches/peers/requirements.txt has them) and the
shared model (`BRAID_MODEL_DIR`, default ../shared/models/all-MiniLM-L6-v2). Embeddings are
cached in ~/.cache/braid/studies/. The results are in research/ranking-log.md ("Eighth round").
"""
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np

from fit_samples import ndcg10  # research/scripts/fit_samples.py, beside this file

HERE = Path(__file__).resolve().parent
MODEL = Path(os.environ.get("BRAID_MODEL_DIR", HERE.parent.parent / "shared/models/all-MiniLM-L6-v2"))
CACHE = Path.home() / ".cache/braid/studies"


def read_vectors(path):
    """Live slots of a format-4 f32 vector file: (ordinal per slot, rows)."""
    data = Path(path).read_bytes()
    if data[:8] != b"BRAIDVEC":
        sys.exit(f"{path}: not a Braid vector file")
    version, dim = struct.unpack_from("<II", data, 8)
    at = 8 + 8 + 12 + 8 + 4  # magic, version and dim, m/ef_construction/ef_search, threshold, fraction
    quantization = data[at]
    count, slots = struct.unpack_from("<QQ", data, at + 1)
    if version != 4 or quantization != 0:
        sys.exit(f"{path}: format {version}, quantization {quantization}; the study reads format 4, f32")
    slot = np.dtype([("ord", "<u8"), ("live", "u1"), ("row", "<f4", (dim,))])
    table = np.frombuffer(data, dtype=slot, count=slots, offset=at + 1 + 16)
    live = table[table["live"] == 1]
    assert len(live) == count
    return live["ord"].astype(np.int64), np.ascontiguousarray(live["row"])


def embedder():
    """all-MiniLM-L6-v2 as Braid runs it: 256 tokens, mean pooling over the mask, unit length."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(MODEL / "model.onnx"), options)
    tokenizer = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    inputs = {i.name for i in session.get_inputs()}

    def embed(texts):
        out = []
        for start in range(0, len(texts), 32):
            batch = tokenizer.encode_batch(texts[start : start + 32])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append((pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32))
        return np.concatenate(out)

    return embed


def read_split(dataset, split):
    corpus = [json.loads(line) for line in open(dataset / "corpus.jsonl")]
    texts = {}
    for line in open(dataset / "queries.jsonl"):
        q = json.loads(line)
        texts[q["_id"]] = q["text"]
    qrels = {}
    for n, line in enumerate(open(dataset / "qrels" / f"{split}.tsv")):
        fields = line.rstrip("\n").split("\t")
        if n == 0 and not fields[-1].lstrip("-").isdigit():
            continue  # the header
        qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return corpus, [(q, texts[q]) for q in qrels if q in texts], qrels


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    dataset, index, split = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    if split == "test":
        sys.exit("the study fits nothing on test qrels: give a train or dev split")
    corpus, queries, qrels = read_split(dataset, split)
    ids = [c["_id"] for c in corpus]
    ords, rows = read_vectors(index / "vectors/vectors.braidvec")
    if ords.max() >= len(ids):
        sys.exit(f"{index} holds ordinals past the corpus: not built from {dataset} by `braid index`")
    titles = [(c.get("title") or "").strip() for c in corpus]
    cache = CACHE / f"{dataset.name}-{split}.npz"
    if cache.exists():
        saved = np.load(cache)
        title_vecs, query_vecs = saved["titles"], saved["queries"]
    else:
        embed = embedder()
        title_vecs, query_vecs = embed([t or " " for t in titles]), embed([text for _, text in queries])
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(cache, titles=title_vecs, queries=query_vecs)

    n = np.bincount(ords, minlength=len(ids))
    first = np.full(len(ids), -1)
    for slot in range(len(ords) - 1, -1, -1):
        first[ords[slot]] = slot
    cos = query_vecs @ rows.T

    def best(keep):
        """Each record's best cosine over its slots in `keep`."""
        out = np.full((len(queries), len(ids)), -9.0, dtype=np.float32)
        cols = np.nonzero(keep)[0]
        np.maximum.at(out.T, ords[cols], cos[:, cols].T)
        return out

    def ndcg(scores):
        top = np.argsort(-scores, axis=1, kind="stable")[:, :10]
        return np.mean([ndcg10([ids[d] for d in top[i]], qrels[q]) for i, (q, _) in enumerate(queries)])

    is_whole = np.zeros(len(ords), bool)
    is_whole[first] = True
    is_window0 = np.zeros(len(ords), bool)
    is_window0[first[n > 1] + 1] = True
    whole, shipped = best(is_whole), best(np.ones(len(ords), bool))
    has_title = np.array([bool(t) for t in titles])
    title = np.where(has_title, query_vecs @ title_vecs.T, -9.0)
    total = np.zeros_like(shipped)
    np.add.at(total.T, ords, cos.T)
    mean = total / n
    print(f"{dataset.name} {split}: {len(queries)} queries, {len(ids)} records, {len(ords)} vectors, {int((n > 1).sum())} with windows")
    base = ndcg(shipped)
    rows_out = [
        ("whole only (one vector a record)", ndcg(whole), len(ids)),
        ("max all (shipped)", base, len(ords)),
        ("windows only", ndcg(best(~is_whole | (n[ords] == 1))), int((~is_whole | (n[ords] == 1)).sum())),
        ("all but window 0", ndcg(best(~is_window0)), int((~is_window0).sum())),
        ("title alone", ndcg(title), len(ids)),
        ("max(all, title)", ndcg(np.maximum(shipped, title)), len(ords) + len(ids)),
    ]
    for w in (0.1, 0.2, 0.3):
        rows_out.append((f"(1-w) max + w title, w {w}", ndcg((1 - w) * shipped + w * np.where(has_title, title, shipped)), len(ords) + len(ids)))
    for w in (0.2, 0.4):
        rows_out.append((f"(1-w) max + w whole, w {w}", ndcg((1 - w) * shipped + w * whole), len(ords)))
        rows_out.append((f"(1-w) max + w mean, w {w}", ndcg((1 - w) * shipped + w * mean), len(ords)))
    for name, value, vectors in rows_out:
        print(f"  {name:<36} {value:.4f}  {value - base:+.4f}  {vectors:>6} vectors")


if __name__ == "__main__":
    main()
