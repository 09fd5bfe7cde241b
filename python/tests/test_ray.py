"""Braid on a local multi-node Ray cluster (`braid.ray`): partitions built by a Ray Data
pipeline and served by actors answer as one index; an actor or a node lost is reopened
elsewhere from storage; a partition that stays unavailable fails the search. Ingest loses no
record when a write task's process or node dies; with a model, the partitions hold every
passage vector one index holds; a Ray Serve deployment answers as one index.

Skipped, with the reason printed, when Ray is not installed, unless BRAID_REQUIRE_RAY=1 (as in
CI, which installs it): then its absence fails the test."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import numpy as np
import pytest

import braid
from conftest import ACME, GLOBEX, PUBLIC, RECORDS, SUPPORT, build

try:
    import ray
    from ray.cluster_utils import Cluster

    import braid.ray as braid_ray
except ImportError as e:  # pragma: no cover - depends on the environment
    if os.environ.get("BRAID_REQUIRE_RAY") == "1":
        raise
    pytest.skip(f"Ray is not installed ({e})", allow_module_level=True)

QUERIES = ["refund policy", "retun polcy", "invoices", "inv", "walrus merger", "sign in"]
PRINCIPALS = [PUBLIC, ACME, GLOBEX, SUPPORT]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Tuple["Cluster", object]]:
    """A head node and one worker node, two CPUs each, in this machine."""
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    worker = c.add_node(num_cpus=2)
    ray.init(address=c.address, log_to_driver=False)
    c.wait_for_nodes()
    yield c, worker
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def partitions(cluster, tmp_path_factory) -> List[str]:
    """The help center written into three partitions by the Ray Data pipeline."""
    root = tmp_path_factory.mktemp("partitions")
    return braid_ray.build_partitions(RECORDS, str(root), 3)


def answers(search) -> list:
    out = []
    for principal in PRINCIPALS:
        for query in QUERIES:
            for mode in ["hybrid", "lexical", "fuzzy"]:
                response = search(query, principal=principal, mode=mode, k=5)
                out.append([(h.id, h.score, h.snippet) for h in response] + [response.suggestions])
    return out


def test_the_pipeline_routes_tenants_together(partitions: List[str]) -> None:
    held = [set(braid.Index.open(p).record_ids()) for p in partitions]
    assert sorted(i for ids in held for i in ids) == sorted(r["id"] for r in RECORDS)
    for tenant in ["tenant:acme", "tenant:globex"]:
        ids = {r["id"] for r in RECORDS if tenant in r["acl"]}
        assert sum(1 for h in held if ids & h) == 1, tenant


def test_partitions_on_actors_answer_as_one_index(cluster, partitions: List[str]) -> None:
    router = braid_ray.Router(partitions)
    assert len(set(router.nodes())) == 2, "the actors are spread over both nodes"
    # Records written in id order into each partition: ties fall the same way.
    expected = answers(build(sorted(RECORDS, key=lambda r: r["id"])).search)
    assert answers(router.search) == expected


def test_a_dead_actor_is_reopened_and_the_search_goes_on(partitions: List[str]) -> None:
    router = braid_ray.Router(partitions)
    before = router.search("refund policy", principal=SUPPORT, k=5).ids
    ray.kill(router.actors[1], no_restart=False)
    after = router.search("refund policy", principal=SUPPORT, k=5).ids
    assert after == before and after


def test_a_lost_node_takes_no_answer_with_it(cluster, partitions: List[str]) -> None:
    c, worker = cluster
    router = braid_ray.Router(partitions)
    expected = router.search("invoices", principal=ACME, k=5).ids
    worker_id = worker.node_id
    assert worker_id in router.nodes()
    c.remove_node(worker)
    assert router.search("invoices", principal=ACME, k=5).ids == expected
    assert worker_id not in router.nodes(), "every actor now runs on the head node"
    c.add_node(num_cpus=2)


def test_a_partition_that_stays_unavailable_fails_the_search(partitions: List[str], tmp_path: Path) -> None:
    moved = tmp_path / "part-0"
    shutil.copytree(partitions[0], moved)
    router = braid_ray.Router([str(moved), *partitions[1:]], restart_wait=3.0)
    assert router.search("refund", principal=PUBLIC).hits
    shutil.rmtree(moved)
    ray.kill(router.actors[0], no_restart=False)
    # The kill is asynchronous: a search sent at once may still reach the old process. Wait
    # until the actor stops answering (its restart cannot open the partition).
    unavailable = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError)
    deadline = time.monotonic() + 30
    while True:
        try:
            ray.get(router.actors[0].node.remote(), timeout=5)
        except unavailable:
            break
        assert time.monotonic() < deadline, "the killed actor kept answering"
        time.sleep(0.05)
    with pytest.raises(braid.PartitionUnavailableError):
        router.search("refund", principal=PUBLIC)


# Ingest under faults: real process and node deaths at chosen points of the write tasks.
# The hooks run inside Ray workers, so they are pickled by value (workers cannot import this
# file).
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class DieOnce:
    """Ends the worker process (no cleanup, as a crash does) the first time each partition
    named in `deaths` reaches its stage: `written` (upserted, not committed) or `committed`."""

    def __init__(self, marks: str, deaths: Dict[int, str]) -> None:
        self.marks, self.deaths = marks, deaths

    def __call__(self, partition: int, stage: str) -> None:
        mark = os.path.join(self.marks, f"{partition}-{stage}")
        if self.deaths.get(partition) == stage and not os.path.exists(mark):
            open(mark, "w").close()
            os._exit(1)


class StallOnNode:
    """Stalls every write task on `node` once it has upserted (before its commit), after
    leaving a mark: the test removes the node while the task is mid-write."""

    def __init__(self, marks: str, node: str) -> None:
        self.marks, self.node = marks, node

    def __call__(self, partition: int, stage: str) -> None:
        if stage == "written" and ray.get_runtime_context().get_node_id() == self.node:
            open(os.path.join(self.marks, str(partition)), "w").close()
            time.sleep(600)


def routed(records: List[dict], n: int) -> List[List[str]]:
    """Each partition's record ids, as `route` assigns them."""
    out: List[List[str]] = [[] for _ in range(n)]
    for r in records:
        out[braid_ray.route(r, n)].append(r["id"])
    return [sorted(ids) for ids in out]


def check_built(paths: List[str], records: List[dict]) -> None:
    """Every record in its partition exactly once, and the partitions answer as one index."""
    for path, ids in zip(paths, routed(records, len(paths))):
        index = braid.Index.open(path)
        assert sorted(index.record_ids()) == ids and index.num_records == len(ids), path
    expected = answers(build(sorted(records, key=lambda r: r["id"])).search)
    assert answers(braid_ray.Router(paths).search) == expected


def test_a_write_task_whose_process_dies_is_run_again(cluster, tmp_path: Path) -> None:
    # One partition's writer dies before its commit, another's after it: both run again.
    holding = [p for p, ids in enumerate(routed(RECORDS, 3)) if ids]
    deaths = {holding[0]: "written", holding[1]: "committed"}
    marks = tmp_path / "marks"
    marks.mkdir()
    paths = braid_ray.build_partitions(RECORDS, str(tmp_path / "parts"), 3, _hook=DieOnce(str(marks), deaths))
    assert sorted(os.listdir(marks)) == sorted(f"{p}-{s}" for p, s in deaths.items()), "the workers died"
    check_built(paths, RECORDS)


def test_a_node_lost_mid_ingest_loses_no_record(cluster, tmp_path: Path) -> None:
    c, _ = cluster
    worker = next(iter(c.worker_nodes))
    marks = tmp_path / "marks"
    marks.mkdir()
    removed = threading.Event()

    def remove_when_stalled() -> None:
        deadline = time.monotonic() + 60
        while not os.listdir(marks) and time.monotonic() < deadline:
            time.sleep(0.05)
        if os.listdir(marks):
            c.remove_node(worker)
            removed.set()

    remover = threading.Thread(target=remove_when_stalled, daemon=True)
    remover.start()
    try:
        paths = braid_ray.build_partitions(
            RECORDS, str(tmp_path / "parts"), 4, _hook=StallOnNode(str(marks), worker.node_id)
        )
        remover.join()
        assert removed.is_set(), "a write task stalled on the worker node, which was removed"
        check_built(paths, RECORDS)
    finally:
        remover.join()
        if removed.is_set():
            c.add_node(num_cpus=2)
            c.wait_for_nodes()


def minilm() -> Path:
    """The MiniLM model (shared/models), as test_model.py finds it; the test is skipped without
    it or ONNX Runtime, unless BRAID_REQUIRE_MODEL=1 (as in CI)."""
    from test_model import missing, model_dir

    reason = missing()
    if reason is not None:
        if os.environ.get("BRAID_REQUIRE_MODEL") == "1":
            pytest.fail(f"BRAID_REQUIRE_MODEL=1 but {reason}")
        pytest.skip(reason)
    found = model_dir()
    assert found is not None
    return found


# Long records: several passages each (128 words every 96), the last words only in the last
# passage, past what the model reads of the whole text; and a Chinese one, which an English
# model does not embed.
FILLER = ("Our warehouse team checks every parcel, logs its weight, prints a label and hands it to "
          "the courier before noon on working days. ").split()
LONG: List[dict] = [
    {"id": "acme-handbook", "title": "Acme handbook", "acl": ["tenant:acme"],
     "body": " ".join(FILLER * 16 + "Narwhals migrate along the arctic ice edge every spring.".split())},
    {"id": "field-guide", "title": "Field guide", "acl": ["public"],
     "body": " ".join(FILLER * 12 + "Penguins huddle together through the antarctic winter storms.".split())},
    {"id": "zh-returns", "title": "退货政策", "body": "三十天内可以退货并全额退款。", "acl": ["public"]},
]


def test_partitions_hold_the_vectors_one_index_holds(cluster, tmp_path: Path) -> None:
    model = str(minilm())
    records = sorted(RECORDS + LONG, key=lambda r: r["id"])
    paths = braid_ray.build_partitions(records, str(tmp_path / "parts"), 3, model=model)
    one = build(records, model=model)
    # Every record's vector (its first passage), and none for the Chinese one, as one index.
    holder = {i: path for path, ids in zip(paths, routed(records, 3)) for i in ids}
    for r in records:
        principal = braid.Principal(r["acl"])
        held = braid.Index.open(holder[r["id"]]).vector(r["id"], principal=principal)
        expected = one.vector(r["id"], principal=principal)
        assert (held is None) == (expected is None) and (held is None or np.array_equal(held, expected)), r["id"]
    assert one.vector("zh-returns", principal=PUBLIC) is None
    # The semantic leg scores a record by its best passage (the raw score is its cosine): the
    # words past the model's window are found, which one vector a record would miss.
    flat = build(LONG, model=model, passages=False)  # a record's raw score is its own

    def raw(hit: braid.Hit) -> float:
        return hit.explain["legs"][0]["raw"]

    deep_ones = [("narwhal migration", ACME, "acme-handbook"), ("penguins in winter", PUBLIC, "field-guide")]
    for query, principal, id in deep_ones:
        deep = one.search(query, principal=principal, mode="semantic", k=3, explain=True)
        shallow = {h.id: raw(h) for h in flat.search(query, principal=principal, mode="semantic", k=3, explain=True)}
        assert deep.hits[0].id == id and raw(deep.hits[0]) > shallow[id] + 0.2, query
    # The partitions answer as the one index: hits, scores and explain (each leg's raw score).
    router = braid_ray.Router(paths, model=model)
    for principal in [PUBLIC, ACME]:
        for query in ["narwhal migration", "refund policy", "parcel courier label"]:
            for mode in ["semantic", "hybrid"]:
                a = one.search(query, principal=principal, mode=mode, k=5, explain=True)
                b = router.search(query, principal=principal, mode=mode, k=5, explain=True)
                assert [(h.id, h.score, h.explain) for h in b] == [(h.id, h.score, h.explain) for h in a], (query, mode)


def test_a_serve_deployment_answers_as_one_index(partitions: List[str]) -> None:
    from ray import serve

    serve.start(proxy_location="Disabled")
    try:
        handle = braid_ray.deploy(partitions, name="braid-test")
        one = build(sorted(RECORDS, key=lambda r: r["id"]))
        for principal in PRINCIPALS:
            for query in ["retun polcy", "inv"]:
                for mode in ["hybrid", "fuzzy"]:
                    a = one.search(query, principal=principal, mode=mode, k=5)
                    b = handle.search.remote(query, tokens=list(principal.tokens), mode=mode, k=5).result()
                    served = [(h["id"], h["score"], h["snippet"]) for h in b["hits"]]
                    assert served == [(h.id, h.score, h.snippet) for h in a], (query, mode)
                    assert b["suggestions"] == a.suggestions
    finally:
        serve.shutdown()


def test_a_reload_between_rounds_does_not_change_the_answer(partitions: List[str], tmp_path: Path) -> None:
    """Each partition actor answers a request's rounds with its session of it, on the commit it
    served at the first: a commit and a reload between two rounds change nothing in the answer,
    which is one index's before the commit."""
    copies = []
    for at, path in enumerate(partitions):
        copy = tmp_path / f"part-{at}"
        shutil.copytree(path, copy)
        copies.append(str(copy))
    router = braid_ray.Router(copies)
    expected = build(sorted(RECORDS, key=lambda r: r["id"])).search("refund policy", principal=SUPPORT, k=5)
    assert expected.ids

    def commit(round: int) -> None:
        if round != 2:
            return
        for path in copies:
            with braid.Index.open(path) as index:
                index.delete(expected.ids)
                index.commit()
        assert any(router.reload())

    got = router.search("refund policy", principal=SUPPORT, k=5, _between_rounds=commit)
    assert [(h.id, h.score, h.snippet) for h in got] == [(h.id, h.score, h.snippet) for h in expected]
    assert not set(router.search("refund policy", principal=SUPPORT, k=5).ids) & set(expected.ids)
