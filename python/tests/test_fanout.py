"""A search over several indexes (`Request`, `FanOut`, `Index.session`) answers as one index
holding all their records: the same hits, order and scores, for every principal; a commit and
a reload between its rounds change nothing in its answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, List

import pytest

import braid
from conftest import ACME, GLOBEX, PUBLIC, RECORDS, SUPPORT, build


def split(records: List[dict], n: int) -> List[braid.Index]:
    """`records` over `n` in-memory indexes, round robin, each in id order."""
    ordered = sorted(records, key=lambda r: r["id"])
    return [build(ordered[i::n]) for i in range(n)]


def fan_out(
    parts: List[braid.Index], request: braid.Request, between: Callable[[int], None] = lambda _: None
) -> braid.SearchResponse:
    """The fan-out of `request` over `parts`, every ask and reply crossing as JSON text, each
    index answering with its session of the request; `between(n)` runs before round n."""
    fan = braid.FanOut(request, len(parts))
    sessions = [part.session(request) for part in parts]
    asks = fan.start()
    rounds = 0
    while True:
        rounds += 1
        between(rounds)
        json.loads(asks[0])  # plain JSON, for any transport
        step = fan.next([session.part(ask) for session, ask in zip(sessions, asks)])
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
        build(RECORDS).session(braid.Request("refund", principal=PUBLIC)).part('{"nonsense": 1}')
    with pytest.raises(braid.InvalidRequestError):
        build(RECORDS).session(braid.Request("refund", principal=PUBLIC, facets=["category"]))


def test_a_commit_and_reload_between_rounds_do_not_change_the_answer(tmp_path: Path) -> None:
    """Each index's session reads the commit it served at the request's first round: records
    deleted and written, committed and reloaded between two rounds, change nothing in the
    answer, which is the one of one index before the commit."""
    ordered = sorted(RECORDS, key=lambda r: r["id"])
    one = build(ordered)
    paths = [tmp_path / f"part-{i}" for i in range(2)]
    for i, path in enumerate(paths):
        build(ordered[i::2], path).close()
    serving = [braid.Index.open(path) for path in paths]
    options = dict(principal=SUPPORT, k=5, explain=True)
    expected = one.search("refund policy", **options)
    assert expected.ids

    def commit(round: int) -> None:
        if round != 2:
            return
        for path, index in zip(paths, serving):
            with braid.Index.open(path) as writing:
                writing.delete(expected.ids)
                writing.upsert({"id": f"new-{path.name}", "title": "Refund policy", "body": "Refund policy.",
                                "acl": ["group:support"]})
                writing.commit()
            assert index.reload()

    got = fan_out(serving, braid.Request("refund policy", **options), commit)
    assert answer(got) == answer(expected)
    # A new request reads the new commit.
    after = fan_out(serving, braid.Request("refund policy", **options))
    assert not set(after.ids) & set(expected.ids)


def test_a_session_that_lost_what_it_held_is_asked_again_in_full() -> None:
    ordered = sorted(RECORDS, key=lambda r: r["id"])
    one = build(ordered)
    parts = split(RECORDS, 2)
    request = braid.Request("retun polcy", principal=PUBLIC, k=5, explain=True)
    fan = braid.FanOut(request, 2)
    sessions = [part.session(request) for part in parts]
    asks = fan.start()
    resent = 0
    while True:
        # Index 1 restarts before every round: a new session.
        sessions[1] = parts[1].session(request)
        if not sessions[1].holds(asks[1]):
            with pytest.raises(braid.InvalidRequestError):
                sessions[1].part(asks[1])
            asks[1] = fan.resend(1)
            resent += 1
        step = fan.next([session.part(ask) for session, ask in zip(sessions, asks)])
        if isinstance(step, braid.SearchResponse):
            break
        asks = step
    assert resent > 0
    assert answer(step) == answer(one.search("retun polcy", principal=PUBLIC, k=5, explain=True))
    assert fan.resend(7) is None
