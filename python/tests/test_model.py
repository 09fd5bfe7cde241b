"""Braid's ONNX embedder with the real all-MiniLM-L6-v2, through ONNX Runtime.

Skipped, with the reason printed, when ONNX Runtime or the model is missing, unless
BRAID_REQUIRE_MODEL=1 (as in CI, which installs both): then a missing one fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

import braid
from conftest import ACME, PUBLIC, RECORDS, releases_gil, shared_dir

ORT_LIB = Path.home() / ".cache/braid/onnxruntime-1.31.1/libonnxruntime.so.1.31.1"


def model_dir() -> Optional[Path]:
    shared = shared_dir()
    found = shared / "models" / "all-MiniLM-L6-v2" if shared else None
    return found if found and (found / "model.onnx").is_file() else None


def missing() -> Optional[str]:
    ort = os.environ.get("ORT_DYLIB_PATH")
    if not (ort and Path(ort).is_file()) and not ORT_LIB.is_file():
        return "no ONNX Runtime (set ORT_DYLIB_PATH, or run scripts/setup-onnxruntime.sh)"
    if model_dir() is None:
        return "no shared/models/all-MiniLM-L6-v2/model.onnx (set BRAID_SHARED)"
    return None


@pytest.fixture(scope="module")
def model() -> Path:
    reason = missing()
    if reason is not None:
        if os.environ.get("BRAID_REQUIRE_MODEL") == "1":
            pytest.fail(f"BRAID_REQUIRE_MODEL=1 but {reason}")
        print(f"SKIPPED: the MiniLM test: {reason}")
        pytest.skip(reason)
    found = model_dir()
    assert found is not None
    return found


def test_minilm_embeds_records_and_queries(model: Path, tmp_path) -> None:
    index = braid.Index.create(tmp_path / "minilm", model=model)
    assert index.embedding == {"model_id": "all-MiniLM-L6-v2", "dim": 384} or index.embedding is None
    index.upsert(RECORDS)
    index.commit()
    extra = iter(range(100))

    def upsert_and_commit() -> None:  # embeds and commits one record nobody here may see
        index.upsert(braid.Record(f"extra-{next(extra)}", "Staff notes", "Notes for the night shift. " * 20, acl=["group:night"]))
        index.commit()

    assert releases_gil(upsert_and_commit, attempts=5)
    assert index.embedding["dim"] == 384
    # No shared word with the answer: only the semantic leg can find it.
    semantic = index.search("can I get my money back if I no longer want it", principal=PUBLIC, mode="semantic", k=2)
    assert semantic.hits[0].id == "returns", semantic.ids
    hybrid = index.search("parcel delivery how long", principal=PUBLIC, k=3)
    assert hybrid.stats["legs"] == ["lexical", "fuzzy", "semantic"] and hybrid.hits[0].id == "shipping"
    # The semantic leg is confined to the principal's records too.
    assert all(not h.id.startswith("globex") for h in index.search("merger plan", principal=ACME, mode="semantic", k=10))

    texts = ["Send an item back", "Return an item", "Parcels arrive soon"]
    assert releases_gil(lambda: index.embed(texts * 8), attempts=3)
    vectors = index.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]

    index.close()
    reopened = braid.Index.open(tmp_path / "minilm", model=model)
    again = reopened.search("can I get my money back if I no longer want it", principal=PUBLIC, mode="semantic", k=2)
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in semantic]
    # Without the model the stored vectors still answer a query vector.
    bare = braid.Index.open(tmp_path / "minilm")
    assert bare.search(principal=PUBLIC, mode="semantic", vector=vectors[0], k=1).ids == ["returns"]
