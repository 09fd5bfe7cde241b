"""The LangChain retriever, against the real langchain-core."""

from __future__ import annotations

import asyncio

import pytest

langchain_core = pytest.importorskip("langchain_core")  # CI installs it: see .ci/run

import braid  # noqa: E402
from braid.langchain import BraidRetriever  # noqa: E402
from conftest import ACME, GLOBEX, RECORDS  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402


def test_documents_for_the_principal(index: braid.Index) -> None:
    retriever = BraidRetriever(index=index, principal=ACME, k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("download invoices from the billing portal")
    assert all(isinstance(d, Document) for d in docs)
    assert docs[0].id == "acme-invoice" and docs[0].metadata["id"] == "acme-invoice"
    body = next(r["body"] for r in RECORDS if r["id"] == "acme-invoice")
    assert docs[0].page_content == body
    assert docs[0].metadata["title"] == "Acme invoices" and 0 < docs[0].metadata["score"] <= 1
    assert docs[0].metadata["keywords"] == {"category": ["billing"]}
    assert not any(d.id.startswith("globex") for d in docs)
    snippets = BraidRetriever(index=index, principal=ACME, k=3, content="snippet").invoke("zephyr portal")
    assert "zephyr" in snippets[0].page_content.lower()
    batch = retriever.batch(["invoices", "sign in"])
    assert len(batch) == 2 and batch[1][0].id == "acme-sso"
    assert [d.id for d in asyncio.run(retriever.ainvoke("invoices"))] == [d.id for d in batch[0]]


def test_the_principal_cannot_be_changed_from_the_query(index: braid.Index) -> None:
    retriever = BraidRetriever(index=index, principal=ACME, k=10)
    # Globex's own words find none of its records for Acme, whatever the invocation carries.
    assert all(not d.id.startswith("globex") for d in retriever.invoke("walrus merger marmot"))
    assert all(not d.id.startswith("globex") for d in retriever.invoke("walrus merger", principal=GLOBEX))
    assert all(
        not d.id.startswith("globex")
        for d in retriever.invoke("walrus merger", config={"configurable": {"principal": GLOBEX}, "metadata": {"principal": GLOBEX}})
    )
    with pytest.raises(ValueError, match="principal"):
        BraidRetriever(index=index, principal=ACME, search_kwargs={"principal": GLOBEX})
    with pytest.raises(ValueError):
        BraidRetriever(index=index, principal=["tenant:globex"])
    with pytest.raises(ValueError):
        BraidRetriever(index=index)


def test_search_kwargs_reach_the_search(index: braid.Index) -> None:
    retriever = BraidRetriever(
        index=index, principal=ACME, k=10, mode="lexical", search_kwargs={"filter": braid.Filter.keyword("category", "account")}
    )
    assert [d.id for d in retriever.invoke("acme")] == ["acme-sso"]
