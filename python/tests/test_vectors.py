"""Supplied vectors from numpy, and the semantic leg searching them."""

from __future__ import annotations

import numpy as np
import pytest

import braid
from conftest import ACME, GLOBEX, PUBLIC

DIM = 8


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture()
def vectors() -> np.ndarray:
    return unit(np.random.default_rng(7).normal(size=(40, DIM)))


def records(n: int):
    return [
        braid.Record(f"r{i}", f"Record {i}", f"body of record {i}", acl=["tenant:acme" if i % 2 == 0 else "tenant:globex"])
        for i in range(n)
    ]


def test_semantic_search_with_supplied_vectors(vectors: np.ndarray) -> None:
    index = braid.Index.create_in_ram(vector_dim=DIM, vector_model="test-model")
    index.upsert(records(len(vectors)), vectors=vectors)
    index.commit()
    assert index.embedding == {"model_id": "test-model", "dim": DIM} and index.has_semantic
    for i in [0, 2, 10, 38]:  # Acme's records: each is its own nearest neighbour
        response = index.search(principal=ACME, mode="semantic", vector=vectors[i], k=3, explain=True)
        assert response.hits[0].id == f"r{i}"
        assert response.hits[0].explain["legs"][0]["raw"] == pytest.approx(1.0, abs=1e-5)
        assert all(int(h.id[1:]) % 2 == 0 for h in response.hits)
    # Globex's record nearest to it is never Acme's answer.
    assert index.search(principal=ACME, mode="semantic", vector=vectors[1], k=40).hits[0].id != "r1"
    assert index.search(principal=GLOBEX, mode="semantic", vector=vectors[1], k=1).ids == ["r1"]
    # Hybrid runs the text legs and the vector together.
    hybrid = index.search("record 4", principal=ACME, vector=vectors[4], k=3)
    assert hybrid.ids[0] == "r4" and hybrid.stats["legs"] == ["lexical", "fuzzy", "semantic"]
    stored = index.vector("r6", principal=ACME)
    assert stored.dtype == np.float32 and np.allclose(stored, vectors[6])
    assert index.vector("r7", principal=ACME) is None


def test_any_array_layout_or_dtype_gives_the_same_vectors(vectors: np.ndarray) -> None:
    wide = np.zeros((len(vectors), DIM * 2), dtype=np.float64)
    wide[:, ::2] = vectors
    layouts = {
        "float32 C": vectors,
        "float64": vectors.astype(np.float64),
        "Fortran": np.asfortranarray(vectors),
        "strided view": wide[:, ::2],
        "lists": vectors.tolist(),
    }
    answers = {}
    for name, matrix in layouts.items():
        index = braid.Index.create_in_ram(vector_dim=DIM)
        index.upsert(records(len(vectors)), vectors=matrix)
        index.commit()
        answers[name] = [(h.id, h.score) for h in index.search(principal=ACME, mode="semantic", vector=matrix[3], k=5)]
        assert np.array_equal(index.vector("r2", principal=ACME), vectors[2]), name
    assert all(a == answers["float32 C"] for a in answers.values()), answers
    # The caller's array is read, never written.
    before = vectors.copy()
    braid.Index.create_in_ram(vector_dim=DIM).upsert(records(len(vectors)), vectors=vectors)
    assert np.array_equal(before, vectors)


def test_record_vectors_and_their_errors(vectors: np.ndarray) -> None:
    index = braid.Index.create_in_ram()
    index.upsert([braid.Record("a", "A", acl=["public"], vector=vectors[0]), {"id": "b", "acl": ["public"], "vector": vectors[1]}])
    index.commit()
    assert index.embedding == {"model_id": "supplied", "dim": DIM}
    assert index.search(principal=PUBLIC, mode="semantic", vector=vectors[1], k=1).ids == ["b"]
    assert np.array_equal(braid.Record("x", vector=vectors[2]).vector, vectors[2])
    with pytest.raises(braid.DimensionMismatchError):
        index.search(principal=PUBLIC, mode="semantic", vector=np.ones(DIM + 1))
    with pytest.raises(braid.InvalidRequestError, match="1-dimensional"):
        index.search(principal=PUBLIC, mode="semantic", vector=vectors[:2])
    with pytest.raises(braid.InvalidRequestError, match="3 vectors for 2 records"):
        index.upsert(records(2), vectors=vectors[:3])
    with pytest.raises(braid.InvalidRequestError):
        index.search(principal=PUBLIC, mode="semantic", vector=np.zeros(DIM))
    with pytest.raises(braid.InvalidRequestError, match="array of numbers"):
        index.search(principal=PUBLIC, mode="semantic", vector=["a", "b"])
