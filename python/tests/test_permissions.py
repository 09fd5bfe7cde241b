"""Permissions first: a principal's answers are a function of the records it may see, and of
nothing else."""

from __future__ import annotations

import pytest

import braid
from conftest import ACME, GLOBEX, PUBLIC, RECORDS, SUPPORT, build, visible_to

QUERIES = ["invoices", "refund policy", "billing portal", "walrus merger", "marmot", "sign in", "retun polcy", "days"]


def test_a_tenant_never_sees_another_tenants_records(index: braid.Index) -> None:
    globex_only = {r["id"] for r in RECORDS if r["acl"] == ["tenant:globex"]}
    for mode in ["lexical", "fuzzy", "hybrid"]:
        for query in QUERIES:
            ids = set(index.search(query, principal=ACME, mode=mode, k=50).ids)
            assert not ids & globex_only, (mode, query, ids)
    # Globex's own words find nothing for Acme, and the record reads back as absent.
    assert index.search("walrus marmot", principal=ACME, mode="lexical").ids == []
    assert index.record("globex-secret", principal=ACME) is None
    assert index.record("globex-secret", principal=GLOBEX)["title"] == "Globex merger plan"
    # The anonymous caller sees the public records only.
    assert set(index.search("refund", principal=PUBLIC, k=50).ids) <= {"returns", "shipping"}


@pytest.mark.parametrize("principal", [ACME, GLOBEX, SUPPORT, PUBLIC], ids=["acme", "globex", "support", "public"])
def test_answers_equal_those_of_an_index_that_never_held_the_hidden_records(index: braid.Index, principal) -> None:
    alone = build(visible_to(principal))
    for mode in ["lexical", "fuzzy", "hybrid"]:
        for query in QUERIES:
            shared = index.search(query, principal=principal, mode=mode, k=20, facets=["category"])
            own = alone.search(query, principal=principal, mode=mode, k=20, facets=["category"])
            assert [(h.id, h.score, h.snippet) for h in shared] == [(h.id, h.score, h.snippet) for h in own], (mode, query)
            assert shared.suggestions == own.suggestions, (mode, query)
            assert shared.facets == own.facets, (mode, query)
            assert shared.stats["allowed"] == own.stats["allowed"] == len(visible_to(principal))


def test_principals_come_from_tokens_only() -> None:
    with pytest.raises(TypeError):
        braid.Principal("tenant:acme")  # a string is not a list of tokens
    with pytest.raises(braid.ReservedTokenError) as reserved:
        braid.Principal(["__braid:no-acl"])
    assert isinstance(reserved.value, ValueError) and reserved.value.token == "__braid:no-acl"
    assert ACME.tokens == ["public", "tenant:acme"] and ACME.tenants == ["tenant:acme"]
    assert braid.Principal(["tenant:acme", " tenant:acme "]) == ACME
    index = braid.Index.create_in_ram()
    with pytest.raises(TypeError):
        index.search("q", principal=["tenant:acme"])
    with pytest.raises(TypeError):
        index.search("q")  # no principal: no search


def test_a_deny_policy_hides_records_without_an_acl() -> None:
    records = [{"id": "open", "title": "Open door"}, {"id": "door", "title": "Door code", "acl": ["group:staff"]}]
    public = build(records)
    deny = build(records, policy="deny")
    assert public.search("door", principal=PUBLIC, mode="lexical").ids == ["open"]
    assert deny.search("door", principal=PUBLIC, mode="lexical").ids == []
    assert deny.search("door", principal=braid.Principal(["group:staff"]), mode="lexical").ids == ["door"]
