"""Python onnxruntime baseline for Braid's embedder: same model, passages, batch and threads.

usage: embed_python.py MODEL_DIR CORPUS_JSONL N THREADS BATCH [SORTED]
Prints one JSON line like benches/embed_throughput.rs (tokenisation included, after one
warm-up batch). Batch-longest padding, truncation at 256 tokens, mean pooling, L2 norm.
SORTED = 1 orders the passages by token count first (less padding per batch; the sort's time
is included), as Braid's embedder does within each call.
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model_dir, corpus, n, threads, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sort_lengths = len(sys.argv) > 6 and sys.argv[6] == "1"
passages = []
with open(corpus) as f:
    for line in f:
        if len(passages) == n:
            break
        d = json.loads(line)
        passages.append(f"{d.get('title') or ''} {d.get('text') or ''}")

tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.enable_truncation(256)
tok.enable_padding(pad_id=0, pad_token="[PAD]")
opts = ort.SessionOptions()
opts.intra_op_num_threads = threads
opts.inter_op_num_threads = 1
sess = ort.InferenceSession(f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])


def embed(texts):
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    out = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    m = mask[..., None].astype(np.float32)
    pooled = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


embed(passages[:batch])
start = time.perf_counter()
ordered = passages
if sort_lengths:
    lengths = [len(e.ids) for e in tok.encode_batch(passages)]
    ordered = [p for _, p in sorted(zip(lengths, passages), key=lambda x: x[0])]
for i in range(0, len(ordered), batch):
    embed(ordered[i : i + batch])
secs = time.perf_counter() - start
print(json.dumps({"engine": "python-onnxruntime", "docs": len(passages), "threads": threads, "batch": batch,
                  "sorted": sort_lengths, "seconds": round(secs, 3), "docs_per_s": round(len(passages) / secs, 2)}))
