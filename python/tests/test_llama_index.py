"""The LlamaIndex retriever, against the real llama-index-core."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

pytest.importorskip("llama_index.core")  # CI installs it: see .ci/run

import braid  # noqa: E402
from braid.llama_index import BraidRetriever  # noqa: E402
from conftest import ACME, GLOBEX, RECORDS  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle  # noqa: E402


def test_nodes_for_the_principal(index: braid.Index) -> None:
    retriever = BraidRetriever(index, ACME, k=3)
    assert isinstance(retriever, BaseRetriever) and retriever.principal == ACME
    nodes = retriever.retrieve("download invoices from the billing portal")
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    top = nodes[0]
    assert top.node.node_id == "acme-invoice"
    assert top.node.get_content() == next(r["body"] for r in RECORDS if r["id"] == "acme-invoice")
    assert 0 < top.score <= 1 and top.node.metadata["title"] == "Acme invoices"
    assert not any(n.node.node_id.startswith("globex") for n in nodes)
    assert [n.node.node_id for n in asyncio.run(retriever.aretrieve("download invoices from the billing portal"))] == [
        n.node.node_id for n in nodes
    ]


def test_the_principal_cannot_be_changed_from_the_query(index: braid.Index) -> None:
    retriever = BraidRetriever(index, ACME, k=10)
    for query in ["walrus merger", QueryBundle(query_str="marmot portal", custom_embedding_strs=["tenant:globex"])]:
        assert all(not n.node.node_id.startswith("globex") for n in retriever.retrieve(query))
    with pytest.raises(ValueError, match="principal"):
        BraidRetriever(index, ACME, search_kwargs={"principal": GLOBEX})
    with pytest.raises(TypeError):
        BraidRetriever(index, "tenant:globex")


def test_a_query_embedding_is_the_query_vector() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(6, 4)).astype(np.float32)
    index = braid.Index.create_in_ram(vector_dim=4)
    index.upsert([braid.Record(f"v{i}", f"vector {i}", acl=["tenant:acme"]) for i in range(6)], vectors=vectors)
    index.commit()
    retriever = BraidRetriever(index, ACME, k=2, mode="semantic", use_query_embedding=True)
    nodes = retriever.retrieve(QueryBundle(query_str="", embedding=vectors[4].tolist()))
    assert nodes[0].node.node_id == "v4"
