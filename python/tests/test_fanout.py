"""A search over several indexes (`Request`, `FanOut`, `Index.part`) answers as one index
holding all their records: the same hits, order and scores, for every principal."""

from __future__ import annotations

import json
from typing import List

import pytest

import braid
from conftest import ACME, GLOBEX, PUBLIC, RECORDS, SUPPORT, build


def split(records: List[dict], n: int) -> List[braid.Index]:
    """`records` over `n` in-memory indexes, round robin, each in id order."""
    ordered = sorted(records, key=lambda r: r["id"])
    return [build(ordered[i::n]) for i in range(n)]


def fan_out(parts: List[braid.Index], request: braid.Request) -> braid.SearchResponse:
    """The fan-out of `request` over `parts`, every ask and reply crossing as JSON text."""
    fan = braid.FanOut(request, len(parts))
    asks = fan.start()
    while True:
        json.loads(asks[0])  # plain JSON, for any transport
        step = fan.next([part.part(request, ask) for part, ask in zip(parts, asks)])
        if isinstance(step, braid.SearchResponse):
            return step
        asks = step


def answer(response: braid.SearchResponse) -> list:
    return [(h.id, h.score, h.title, h.snippet, h.explain) for h in response] + [response.suggestions]


@pytest.mark.parametrize("n", [2, 3])
def test_a_fan_out_answers_as_one_index(n: int) -> None:
    one = build(sorted(RECORDS, key=lambda r: r["id"]))
    parts = split(RECORDS, n)
    for principal in [PUBLIC, ACME, GLOBEX, SUPPORT]:
        for query in ["refund policy", "retun polcy", "invoices", "inv", "walrus merger", ""]:
            for mode in ["hybrid", "lexical", "fuzzy"]:
                options = dict(principal=principal, mode=mode, k=5, explain=True)
                expected = one.search(query, **options)
                got = fan_out(parts, braid.Request(query, **options))
                assert answer(got) == answer(expected), (n, principal, query, mode)
                assert got.stats["allowed"] == expected.stats["allowed"]


def test_what_cannot_fan_out_is_refused_and_bad_replies_raise() -> None:
    with pytest.raises(braid.InvalidRequestError):
        braid.FanOut(braid.Request("refund", principal=PUBLIC, facets=["category"]), 2)
    with pytest.raises(braid.InvalidRequestError):
        braid.FanOut(braid.Request("refund", principal=PUBLIC), 0)
    fan = braid.FanOut(braid.Request("refund", principal=PUBLIC), 2)
    fan.start()
    with pytest.raises(braid.InvalidRequestError):
        fan.next(["not json", "{}"])
    with pytest.raises(braid.InvalidRequestError):
        build(RECORDS).part(braid.Request("refund", principal=PUBLIC), '{"nonsense": 1}')
