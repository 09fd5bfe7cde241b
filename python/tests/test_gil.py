"""The GIL is released while Braid searches and commits: other Python threads run meanwhile."""

from __future__ import annotations

import threading

import braid
from conftest import ACME, releases_gil

WORDS = "refund invoice portal parcel shipping return policy billing account login password reset".split()


def big_index(n: int = 3000) -> braid.Index:
    index = braid.Index.create_in_ram()
    index.upsert(
        braid.Record(f"r{i}", f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}", " ".join(WORDS[(i + j) % len(WORDS)] for j in range(40)), acl=["tenant:acme"])
        for i in range(n)
    )
    index.commit()
    return index


def test_search_and_commit_release_the_gil() -> None:
    index = big_index()
    assert releases_gil(lambda: index.search("refnd invoise portl", principal=ACME, mode="fuzzy", k=50))
    assert releases_gil(lambda: index.search("refund invoice", principal=ACME, k=50))

    def write_and_commit() -> None:
        index.upsert(braid.Record(f"n{len(index)}", "new", "fresh text " * 200, acl=["tenant:acme"]))
        index.commit()

    assert releases_gil(write_and_commit, attempts=20)


def test_a_pure_python_call_is_seen_holding_the_gil() -> None:
    """The probe itself can fail: a call that keeps the GIL is reported as such."""
    assert not releases_gil(lambda: sum(i * i for i in range(200_000)), attempts=3)


def test_searches_from_many_threads_agree() -> None:
    index = big_index(500)
    expected = index.search("refund portal", principal=ACME, k=20).ids
    results = []

    def worker() -> None:
        for _ in range(20):
            results.append(index.search("refund portal", principal=ACME, k=20).ids)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and all(r == expected for r in results)
