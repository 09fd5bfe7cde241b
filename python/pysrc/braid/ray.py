"""Braid on Ray: partitions served by actors across a cluster, one search fanned out over
them, and partitions built in parallel.

Each partition is a Braid index in storage every node can read (a shared filesystem here; on
object storage, a node copies a committed partition down before opening it — a committed
partition does not change until its next commit). A :class:`Partition` actor opens one; a
:class:`Router` fans a search out over the actors with :class:`braid.FanOut`, which gathers the
counts the ranking needs from every partition first, so the answer is the one a single index
holding every record would give: the same hits, order and scores.

Faults: an actor that dies (its process or its node) is restarted by Ray on a live node and
reopens its partition from storage; a round that was in flight is asked again (every ask is a
read of a committed partition, so asking twice is safe). When a partition stays unavailable the
search fails with :class:`braid.PartitionUnavailableError`: it never answers from a subset of
the partitions.

>>> import ray, braid, braid.ray
>>> router = braid.ray.Router(["/data/part-0", "/data/part-1"])          # doctest: +SKIP
>>> router.search("retun policy", principal=braid.Principal.public()).hits  # doctest: +SKIP

:func:`build_partitions` writes partitions from records with a Ray Data pipeline: records are
routed to a partition (their tenant, else a hash of the id), embedded in batches by actors
holding Braid's ONNX embedder, and each partition is written and committed by one task.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import braid
from braid.errors import PartitionUnavailableError

__all__ = ["Partition", "Router", "build_partitions", "route"]

#: How long a round waits, in all, for a partition whose actor died to be restarted and answer
#: before the search fails (seconds).
RESTART_WAIT = 60.0


@ray.remote(max_restarts=-1, max_task_retries=0)
class Partition:
    """One partition (a Braid index in shared storage) served by a Ray actor. Ray restarts it
    on a live node when its process or node dies; it then reopens the partition from storage."""

    def __init__(self, path: str, model: Optional[str] = None) -> None:
        self.path = path
        self.index = braid.Index.open(path, model=model)

    def part(self, ask: str, query: str, tokens: List[str], options: Dict[str, Any]) -> str:
        """Answers one ask of a fan-out (:meth:`braid.Index.part`) for the request ``query``
        on behalf of the principal with ``tokens`` (verified by the router), with ``options``
        as :meth:`braid.Index.search` takes them."""
        request = braid.Request(query, principal=braid.Principal(tokens), **options)
        return self.index.part(request, ask)

    def reload(self) -> bool:
        """Opens the partition's newest commit; whether it changed."""
        return self.index.reload()

    def node(self) -> str:
        """The id of the node this actor runs on."""
        return ray.get_runtime_context().get_node_id()


def _nodes() -> List[str]:
    """The ids of the cluster's live nodes that have CPUs, sorted."""
    return sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0)


class Router:
    """Fans each search out over one :class:`Partition` actor per path, placed round robin on
    the cluster's live nodes (``spread``; else where Ray likes). Actors open the partitions
    with ``model`` (needed to embed query text for the semantic leg)."""

    def __init__(
        self,
        paths: Sequence[str],
        *,
        model: Optional[str] = None,
        spread: bool = True,
        restart_wait: float = RESTART_WAIT,
    ) -> None:
        if not paths:
            raise ValueError("a router needs at least one partition")
        self.restart_wait = restart_wait
        self.paths = list(paths)
        nodes = _nodes() if spread else []
        self.actors = []
        for at, path in enumerate(self.paths):
            options: Dict[str, Any] = {}
            if nodes:
                # Round robin over the live nodes; soft, so that an actor whose node dies is
                # restarted on another.
                node = nodes[at % len(nodes)]
                options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=True)
            self.actors.append(Partition.options(**options).remote(path, model))

    def search(self, query: str = "", *, principal: braid.Principal, **options: Any) -> braid.SearchResponse:
        """:meth:`braid.Index.search` over every partition: what one index holding all their
        records would answer. Raises :class:`braid.PartitionUnavailableError` when a partition
        cannot answer within ``restart_wait`` seconds (:data:`RESTART_WAIT` by default)."""
        request = braid.Request(query, principal=principal, **options)
        fan_out = braid.FanOut(request, len(self.actors))
        asks = fan_out.start()
        tokens = list(principal.tokens)
        while True:
            replies = self._round(asks, query, tokens, options)
            step = fan_out.next(replies)
            if not isinstance(step, list):
                return step
            asks = step

    def _round(self, asks: List[str], query: str, tokens: List[str], options: Dict[str, Any]) -> List[str]:
        """Every partition's reply to its ask; a partition whose actor died is asked again,
        with growing pauses, while Ray restarts it, for at most ``restart_wait`` seconds."""
        replies: Dict[int, str] = {}
        pending = list(range(len(asks)))
        deadline = time.monotonic() + self.restart_wait
        pause = 0.1
        while True:
            refs = {at: self.actors[at].part.remote(asks[at], query, tokens, options) for at in pending}
            failed = []
            for at, ref in refs.items():
                try:
                    replies[at] = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as e:
                    failed.append((at, e))
            if not failed:
                return [replies[at] for at in range(len(asks))]
            if time.monotonic() + pause > deadline:
                at, error = failed[0]
                raise PartitionUnavailableError(f"partition {at} ({self.paths[at]}) did not answer: {error}")
            time.sleep(pause)
            pause = min(pause * 2, 5.0)
            pending = [at for at, _ in failed]

    def reload(self) -> List[bool]:
        """Every partition opens its newest commit; which changed."""
        return ray.get([actor.reload.remote() for actor in self.actors])

    def nodes(self) -> List[str]:
        """The node each partition's actor runs on."""
        return ray.get([actor.node.remote() for actor in self.actors])


def route(record: Dict[str, Any], partitions: int) -> int:
    """The partition of ``record``: by a stable hash of its tenant (its ``tenant:`` ACL token)
    when it has one, so a tenant's records stay together; else of its id."""
    acl = record.get("acl") or []
    tenants = sorted(t for t in acl if t.startswith("tenant:"))
    key = tenants[0] if tenants else record["id"]
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") % partitions


class _Embed:
    """A Ray Data actor that embeds batches of records (title and body) with Braid's ONNX
    embedder: one vector per record."""

    def __init__(self, model: str) -> None:
        self.index = braid.Index.create_in_ram(model=model)

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        records = [json.loads(r) for r in batch["record"]]
        texts = [f"{r.get('title', '')}\n{r.get('body', '')}" for r in records]
        batch["vector"] = list(self.index.embed(texts))
        return batch


def _write(group: Dict[str, Any], root: str, model: Optional[str]) -> Dict[str, Any]:
    """Writes and commits one partition: all its records, one group."""
    import numpy as np

    partition = int(group["partition"][0])
    path = os.path.join(root, f"part-{partition}")
    # In id order: records that tie break the tie by id on every partition, as the router does.
    order = sorted(range(len(group["record"])), key=lambda i: json.loads(group["record"][i])["id"])
    records = [json.loads(group["record"][i]) for i in order]
    vectors = np.stack([group["vector"][i] for i in order]).astype(np.float32) if "vector" in group else None
    index = braid.Index.open_or_create(path, model=model)
    index.upsert(records, vectors=vectors)
    index.commit()
    index.close()
    return {"partition": [partition], "records": [len(records)]}


def build_partitions(
    records: Iterable[Dict[str, Any]],
    root: str,
    partitions: int,
    *,
    model: Optional[str] = None,
    embed_actors: int = 1,
    batch_size: int = 64,
) -> List[str]:
    """Writes ``records`` (dicts as :meth:`braid.Index.upsert` takes them) into ``partitions``
    Braid indexes under ``root`` with a Ray Data pipeline: each routed by :func:`route`,
    embedded (title and body, one vector a record) by ``embed_actors`` actors holding the model
    at ``model`` (no vectors without one), each partition written and committed by one task.
    Returns the partitions' paths in partition order; a partition no record went to is created
    empty. A task that fails (its worker or node lost) is run again by Ray Data; a partition is
    committed once, whole, by the task that writes it."""
    rows = [{"record": json.dumps(r), "partition": route(r, partitions)} for r in records]
    dataset = ray.data.from_items(rows)
    if model is not None:
        dataset = dataset.map_batches(
            _Embed,
            fn_constructor_args=(model,),
            batch_size=batch_size,
            compute=ray.data.ActorPoolStrategy(size=embed_actors),
        )
    dataset.groupby("partition").map_groups(_write, fn_args=(root, model)).take_all()
    paths = [os.path.join(root, f"part-{p}") for p in range(partitions)]
    for path in paths:
        if not braid.Index.exists(path):
            braid.Index.open_or_create(path, model=model).close()
    return paths
