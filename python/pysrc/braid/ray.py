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
routed to a partition (their tenant, else a hash of the id), and each partition is written,
embedded (every passage, by the partition's own writer) and committed by one task.
:func:`deploy` serves a router as a Ray Serve application (:class:`Search`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import braid
from braid.errors import PartitionUnavailableError

__all__ = ["Partition", "Router", "Search", "build_partitions", "deploy", "route"]

#: How long a round waits, in all, for a partition whose actor died to be restarted and answer
#: before the search fails (seconds).
RESTART_WAIT = 60.0

#: How many requests' sessions a partition actor keeps at most; past it, the least recently
#: asked goes first.
SESSIONS = 1024

#: How long a partition actor keeps a request's session after its last ask (seconds).
SESSION_TTL = 120.0


@ray.remote(max_restarts=-1, max_task_retries=0)
class Partition:
    """One partition (a Braid index in shared storage) served by a Ray actor. Ray restarts it
    on a live node when its process or node dies; it then reopens the partition from storage.

    It keeps one :class:`braid.Session` per request in flight, by the router's request id,
    from the request's first round to its last: every round of a request reads the commit
    the partition served at its first, whatever :meth:`reload` does meanwhile, and each
    search ask carries only the counts that are new to it. A session goes when the router
    ends the request (:meth:`end`), after ``session_ttl`` seconds without an ask, or when
    more than ``sessions`` are held (the least recently asked first); memory is bounded by
    ``sessions`` times a request's gathered counts (their words: a few KB, up to a few
    hundred KB for a two-letter prefix's completions)."""

    def __init__(
        self,
        path: str,
        model: Optional[str] = None,
        sessions: int = SESSIONS,
        session_ttl: float = SESSION_TTL,
    ) -> None:
        self.path = path
        self.index = braid.Index.open(path, model=model)
        self.max_sessions = sessions
        self.session_ttl = session_ttl
        self.sessions: "OrderedDict[str, Any]" = OrderedDict()
        self.asked: Dict[str, float] = {}

    def part(
        self, request_id: str, ask: str, query: str, tokens: List[str], options: Dict[str, Any]
    ) -> Optional[str]:
        """Answers one ask of a fan-out with the session of request ``request_id``, opened at
        its first ask for the request ``query`` on behalf of the principal with ``tokens``
        (verified by the router), with ``options`` as :meth:`braid.Index.search` takes them.
        ``None`` when the session does not hold what the ask builds on (this actor restarted,
        or dropped the session): ask again in full (:meth:`braid.FanOut.resend`)."""
        now = time.monotonic()
        for stale in [r for r, at in self.asked.items() if now - at > self.session_ttl]:
            self.end(stale)
        session = self.sessions.get(request_id)
        if session is None:
            request = braid.Request(query, principal=braid.Principal(tokens), **options)
            session = self.index.session(request)
            self.sessions[request_id] = session
            while len(self.sessions) > self.max_sessions:
                self.end(next(iter(self.sessions)))
        self.sessions.move_to_end(request_id)
        self.asked[request_id] = now
        if not session.holds(ask):
            self.end(request_id)
            return None
        return session.part(ask)

    def end(self, request_id: str) -> None:
        """Drops the session of request ``request_id``, if held."""
        self.sessions.pop(request_id, None)
        self.asked.pop(request_id, None)

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

    def search(
        self,
        query: str = "",
        *,
        principal: braid.Principal,
        _between_rounds: Optional[Callable[[int], None]] = None,
        **options: Any,
    ) -> braid.SearchResponse:
        """:meth:`braid.Index.search` over every partition: what one index holding all their
        records would answer. Every round of the search reads the commit each partition
        served at its first (a :meth:`reload` meanwhile changes nothing in it). Raises
        :class:`braid.PartitionUnavailableError` when a partition cannot answer within
        ``restart_wait`` seconds (:data:`RESTART_WAIT` by default). ``_between_rounds(n)``,
        for tests, runs before round ``n`` (from 1) is asked."""
        request = braid.Request(query, principal=principal, **options)
        fan_out = braid.FanOut(request, len(self.actors))
        request_id = uuid.uuid4().hex
        tokens = list(principal.tokens)
        try:
            asks = fan_out.start()
            rounds = 0
            while True:
                rounds += 1
                if _between_rounds is not None:
                    _between_rounds(rounds)
                replies = self._round(request_id, fan_out, asks, query, tokens, options)
                step = fan_out.next(replies)
                if not isinstance(step, list):
                    return step
                asks = step
        finally:
            # The partitions drop the request's session (after its last ask: an actor runs
            # its calls in order); no one waits for it.
            for actor in self.actors:
                actor.end.remote(request_id)

    def _round(
        self,
        request_id: str,
        fan_out: braid.FanOut,
        asks: List[str],
        query: str,
        tokens: List[str],
        options: Dict[str, Any],
    ) -> List[str]:
        """Every partition's reply to its ask; a partition whose actor died is asked again,
        with growing pauses, while Ray restarts it, for at most ``restart_wait`` seconds, and
        a partition that lost the request's session (restarted) is asked again in full."""
        asks = list(asks)
        replies: Dict[int, str] = {}
        pending = list(range(len(asks)))
        deadline = time.monotonic() + self.restart_wait
        pause = 0.1
        while True:
            refs = {
                at: self.actors[at].part.remote(request_id, asks[at], query, tokens, options) for at in pending
            }
            failed = []
            lost = []
            for at, ref in refs.items():
                try:
                    reply = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as e:
                    failed.append((at, e))
                    continue
                if reply is None:
                    lost.append(at)
                    asks[at] = fan_out.resend(at)
                else:
                    replies[at] = reply
            if not failed and not lost:
                return [replies[at] for at in range(len(asks))]
            if failed:
                if time.monotonic() + pause > deadline:
                    at, error = failed[0]
                    raise PartitionUnavailableError(f"partition {at} ({self.paths[at]}) did not answer: {error}")
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
            pending = [at for at, _ in failed] + lost

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


def _write(
    item: Dict[str, Any],
    root: str,
    model: Optional[str],
    settings: Dict[str, Any],
    hook: Optional[Callable[[int, str], None]],
) -> Dict[str, Any]:
    """Writes and commits one partition: its records (``item["records"]``, each as JSON
    text), embedded by the partition's own writer with ``model`` (every passage, as one index
    embeds it). Idempotent: run again, it rewrites nothing a previous run committed.
    ``hook(partition, stage)``, for tests, runs after the upsert (``"written"``) and after
    the commit (``"committed"``)."""
    partition = int(item["partition"])
    path = os.path.join(root, f"part-{partition}")
    records = [json.loads(line) for line in item["records"]]
    # In id order: records that tie break the tie by id on every partition, as the router does.
    records.sort(key=lambda r: r["id"])
    with braid.Index.open_or_create(path, model=model, **settings) as index:
        if records:
            index.upsert(records)
        if hook is not None:
            hook(partition, "written")
        index.commit()
        commit = index.commit_id
    if hook is not None:
        hook(partition, "committed")
    return {"partition": partition, "records": len(records), "commit": commit}


def build_partitions(
    records: Iterable[Dict[str, Any]],
    root: str,
    partitions: int,
    *,
    model: Optional[str] = None,
    retries: int = 3,
    _hook: Optional[Callable[[int, str], None]] = None,
    **settings: Any,
) -> List[str]:
    """Writes ``records`` (dicts as :meth:`braid.Index.upsert` takes them) into ``partitions``
    Braid indexes under ``root`` (``part-0``, ``part-1``, …) with a Ray Data pipeline, and
    returns their paths in partition order.

    Each record goes to the partition :func:`route` names; one Ray task per partition, spread
    over the cluster's nodes, opens it (created with ``model`` and ``settings``, the keyword
    arguments of :meth:`braid.Index.open_or_create`, when new), upserts its records in id
    order, commits once and closes it. The partition's own writer embeds the records with
    ``model`` — every passage of a long record, in batches, skipping records in a language the
    model does not cover — so each partition holds exactly the vectors one index built from
    the same records with the same model and settings would hold for them. A partition no
    record goes to is created empty.

    Faults: a task whose worker process or node dies is run again by Ray (at most ``retries``
    more times; an exception the task raises fails the pipeline at once — among them
    :class:`braid.LockBusyError` when a first attempt cut off from the cluster, not dead,
    still holds the partition's writer lock). A
    partition's records become visible only at its one commit, which is atomic, so a task
    that died before it leaves the partition at its previous commit, and one that died after
    it is run again without changing anything (upserts of unchanged records are skipped).
    When this function returns, every record is committed, once, in its partition; when it
    raises, each partition is at its previous commit or holds all its records, and running
    it again with the same records finishes the job. ``_hook(partition, stage)``, for tests,
    runs inside each write task (see :func:`_write`)."""
    import warnings

    if partitions < 1:
        raise ValueError("build_partitions needs at least one partition")
    groups: List[List[str]] = [[] for _ in range(partitions)]
    for record in records:
        groups[route(record, partitions)].append(json.dumps(record))
    items = [{"partition": p, "records": groups[p]} for p in range(partitions)]
    # One block, so one task, per partition; Ray Data spreads tasks over the nodes. Ray Data
    # retries a task forever by default: `max_retries` bounds it, so that a write that kills
    # its process every time (out of memory) fails the pipeline. Ray 2.60 passes it only as a
    # deprecated free remote argument, whose warning says nothing a caller can act on.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        dataset = ray.data.from_items(items, override_num_blocks=partitions).map(
            _write,
            fn_args=(root, None if model is None else str(model), settings, _hook),
            max_retries=retries,
        )
    written = dataset.take_all()
    done = sorted(int(w["partition"]) for w in written)
    if done != list(range(partitions)):
        raise RuntimeError(f"the pipeline wrote partitions {done}, not 0 to {partitions - 1}")
    return [os.path.join(root, f"part-{p}") for p in range(partitions)]


def _response(response: braid.SearchResponse) -> Dict[str, Any]:
    """A search response as plain data (what a Ray Serve handle returns): its hits, each with
    every field :class:`braid.Hit` has, its suggestions, stats and next cursor."""
    hits = [
        {
            "id": h.id,
            "score": h.score,
            "title": h.title,
            "snippet": h.snippet,
            "highlights": [list(span) for span in h.highlights],
            "parent": h.parent,
            "section": list(h.section),
            "lines": None if h.lines is None else list(h.lines),
            "keywords": h.keywords,
            "numbers": h.numbers,
            "explain": h.explain,
        }
        for h in response.hits
    ]
    return {
        "hits": hits,
        "suggestions": response.suggestions,
        "stats": response.stats,
        "next_cursor": response.next_cursor,
    }


class Search:
    """The Ray Serve deployment of a :class:`Router` (see :func:`deploy`): each replica holds
    one router, which holds one :class:`Partition` actor per partition."""

    def __init__(self, paths: Sequence[str], model: Optional[str], restart_wait: float) -> None:
        self.router = Router(paths, model=model, restart_wait=restart_wait)

    def search(self, query: str = "", *, tokens: Sequence[str], **options: Any) -> Dict[str, Any]:
        """:meth:`Router.search` for the principal holding ``tokens`` — tokens the caller
        verified, never taken from the request's user — as plain data (:func:`_response`).
        Raises :class:`braid.PartitionUnavailableError` as the router does."""
        return _response(self.router.search(query, principal=braid.Principal(list(tokens)), **options))

    def reload(self) -> List[bool]:
        """Every partition opens its newest commit; which changed."""
        return self.router.reload()


def deploy(
    paths: Sequence[str],
    *,
    model: Optional[str] = None,
    name: str = "braid",
    replicas: int = 1,
    restart_wait: float = RESTART_WAIT,
) -> Any:
    """Serves ``paths`` as the Ray Serve application ``name``: ``replicas`` replicas of
    :class:`Search`, each a router over its own partition actors (a replica is a full copy
    of the serving set; more replicas answer more searches at once). Returns the
    application's ``DeploymentHandle``:

    >>> handle = braid.ray.deploy(paths, model=model)                          # doctest: +SKIP
    >>> handle.search.remote("retun policy", tokens=["public"], k=5).result()["hits"]  # doctest: +SKIP

    The handle takes the principal's tokens as an argument: call it from the code that
    verified them (your HTTP ingress deployment, or the driver), never with tokens a client
    chose. The application has no HTTP route of its own. Needs ``ray[serve]``; Serve starts
    with its defaults unless started before (``serve.start(proxy_location="Disabled")``
    runs no HTTP proxies). Ray Serve restarts a replica that dies; the replica makes its
    router anew, whose actors reopen the partitions from storage."""
    from ray import serve

    deployment = serve.deployment(Search, name=name, num_replicas=replicas, ray_actor_options={"num_cpus": 0})
    app = deployment.bind(list(paths), None if model is None else str(model), restart_wait)
    return serve.run(app, name=name, route_prefix=None)
