"""Creating, writing, committing, reopening and searching an index."""

from __future__ import annotations

import pytest

import braid
from conftest import ACME, PUBLIC, RECORDS, SUPPORT, build


def test_every_mode_without_a_model_finds_the_record(index: braid.Index) -> None:
    assert len(index) == len(RECORDS) == index.num_records
    for mode, query in [("lexical", "return policy"), ("fuzzy", "retun polcy"), ("hybrid", "retun policy")]:
        response = index.search(query, principal=PUBLIC, mode=mode, k=3)
        assert response.hits[0].id == "returns", (mode, response.ids)
        assert response.stats["mode"] == mode
        hit = response.hits[0]
        assert 0.0 < hit.score <= 1.0
        assert hit.title == "Return policy"
        assert hit.keywords == {"category": ["billing"]}
        assert hit.numbers == {"priority": 1.0}
        assert hit.explain is None
    legs = index.search("retun policy", principal=PUBLIC).stats["legs"]
    assert legs == ["lexical", "fuzzy"]


def test_hits_carry_snippets_explanations_and_suggestions(index: braid.Index) -> None:
    response = index.search("refnd", principal=SUPPORT, mode="hybrid", explain=True)
    assert {"term": "refnd", "suggestion": "refund", "distance": 1} in response.suggestions
    hit = next(h for h in response if h.id == "refund-exceptions")
    assert hit.explain["fused_rank"] >= 1 and hit.explain["legs"]
    lexical = index.search("faulty", principal=SUPPORT, mode="lexical")
    top = lexical[0]
    assert top.id == "refund-exceptions"
    start, end = top.highlights[0]
    assert top.snippet.encode()[start:end].decode().lower() == "faulty"
    assert "**faulty**" in top.marked()
    assert len(lexical) == len(lexical.hits) and list(lexical)[0].id == top.id


def test_filters_facets_paging_and_boosts(index: braid.Index) -> None:
    billing = index.search("invoices refund", principal=ACME, filter=braid.Filter.keyword("category", "billing"))
    assert billing.ids and all(h.keywords["category"] == ["billing"] for h in billing)

    faceted = index.search(
        "acme send parcels", principal=ACME, mode="lexical", k=1,
        facets=["category", braid.Facet.ranges("priority", [(None, 3), (3, None)])],
    )
    # The query matches the two public records and Acme's two: counts cover exactly those.
    assert faceted.facets["matched"] == 4
    values = {v["value"]: v["count"] for v in faceted.facets["values"]["category"]}
    assert values == {"billing": 2, "delivery": 1, "account": 1}
    assert [r["count"] for r in faceted.facets["ranges"]["priority"]] == [2, 2]

    first = index.search("acme invoices portal days", principal=ACME, mode="lexical", k=2)
    assert first.next_cursor is not None
    by_cursor = index.search("acme invoices portal days", principal=ACME, mode="lexical", k=2, cursor=first.next_cursor)
    by_offset = index.search("acme invoices portal days", principal=ACME, mode="lexical", k=2, offset=2)
    assert by_cursor.ids == by_offset.ids and not set(by_cursor.ids) & set(first.ids)

    plain = index.search("invoices", principal=braid.Principal(["tenant:acme", "tenant:globex"]), mode="lexical")
    boosted = index.search(
        "invoices",
        principal=braid.Principal(["tenant:acme", "tenant:globex"]),
        mode="lexical",
        boosts={"keywords": [{"field": "category", "value": "billing", "factor": 3.0}]},
        explain=True,
    )
    assert set(plain.ids) == set(boosted.ids)
    assert boosted.hits[0].explain["boost"]["factors"][0]["function"] == "keyword"


def test_group_by_and_mmr(index: braid.Index) -> None:
    both = braid.Principal(["tenant:acme", "tenant:globex"])
    plain = index.search("invoices billing refund", principal=both, mode="lexical")
    grouped = index.search("invoices billing refund", principal=both, mode="lexical", group_by=("category", 1))
    categories = [h.keywords.get("category", [h.id])[0] for h in grouped]
    assert len(categories) == len(set(categories)) and grouped.ids[0] == plain.ids[0]
    assert index.search("invoices billing refund", principal=both, mode="lexical", mmr=1.0).ids == plain.ids
    with pytest.raises(braid.InvalidRequestError):
        index.search("invoices", principal=both, mmr=2.0)
    with pytest.raises(braid.UnknownFieldError):
        index.search("invoices", principal=both, group_by=("nope", 1))
    budgeted = index.search("invoices billing refund", principal=both, mode="lexical", token_budget=10_000)
    assert budgeted.ids == plain.ids and budgeted.stats["tokens"] > 0
    one = index.search("invoices billing refund", principal=both, mode="lexical", token_budget=budgeted.stats["tokens"] // len(plain.ids))
    assert len(one.ids) < len(plain.ids) and one.ids == plain.ids[: len(one.ids)]


def test_delete_and_commit(index: braid.Index) -> None:
    index.delete("returns")
    assert index.pending == 1
    assert index.search("return policy", principal=PUBLIC, mode="lexical").hits[0].id == "returns"
    index.commit()
    assert "returns" not in index.search("return policy", principal=PUBLIC, mode="lexical").ids
    assert len(index) == len(RECORDS) - 1


def test_on_disk_index_reopens_with_the_same_answers(tmp_path) -> None:
    path = tmp_path / "help"
    index = build(RECORDS, path, keyword_fields=["category"], numeric_fields=["priority"])
    before = index.search("retun policy", principal=ACME)
    index.close()
    assert braid.Index.exists(path)
    reopened = braid.Index.open(path)
    after = reopened.search("retun policy", principal=ACME)
    assert [(h.id, h.score) for h in after] == [(h.id, h.score) for h in before]
    assert reopened.commit_id is not None and len(reopened) == len(RECORDS)
    assert reopened.record("acme-sso", principal=ACME)["body"].startswith("Acme staff")
    assert sorted(reopened.record_ids()) == sorted(r["id"] for r in RECORDS)


def test_writer_commits_on_a_clean_exit_and_discards_on_an_exception(tmp_path) -> None:
    index = braid.Index.create(tmp_path / "w")
    with index.writer() as w:
        w.upsert(braid.Record("a", "Alpha", "first letter", acl=["public"]))
        assert w.pending == 1
    assert len(index) == 1
    with pytest.raises(RuntimeError):
        with index.writer() as w:
            w.upsert(braid.Record("b", "Beta", "second letter", acl=["public"]))
            raise RuntimeError("boom")
    assert len(index) == 1
    # The index's own writer holds the lock until it closes.
    index.upsert({"id": "c", "title": "Gamma", "acl": ["public"]})
    with pytest.raises(braid.LockBusyError) as busy:
        index.writer()
    assert busy.value.kind == "lock_busy"
    index.commit()
    index.close()
    with index.writer() as w:
        w.upsert(braid.Record("c", "Gamma", acl=["public"]))
        w.upsert(braid.Record("d", "Delta", acl=["public"]))
    assert len(index) == 3


def test_record_objects_keep_their_fields() -> None:
    record = braid.Record(
        "doc#1", "Title", "Body", keywords={"tags": ["a", "b"], "category": "x"}, numbers={"priority": 2},
        dates={"updated": "2024-01-02"}, acl=["tenant:acme"], parent="doc", section=["Top", "Sub"], lines=(3, 9),
    )
    assert record.keywords == {"tags": ["a", "b"], "category": ["x"]}
    assert record.numbers == {"priority": 2.0, "updated": 1704153600.0}
    assert (record.parent, record.section, record.lines, record.acl) == ("doc", ["Top", "Sub"], (3, 9), ["tenant:acme"])
    assert record.vector is None
