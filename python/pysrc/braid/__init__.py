"""Braid: hybrid retrieval for RAG services, help centers and agent tools.

BM25 keyword recall, fuzzy recall (typos, fragments, prefixes) and semantic recall over
embeddings, fused into one ranking and confined to the records the caller may see::

    import braid

    index = braid.Index.create_in_ram()
    index.upsert([
        braid.Record("returns", "Return policy", "Send an item back within 30 days.", acl=["public"]),
        braid.Record("refunds", "Refund exceptions", "Agents may refund after 30 days.", acl=["group:support"]),
    ])
    index.commit()
    response = index.search("retun policy", principal=braid.Principal.public())
    assert response.hits[0].id == "returns"

The names are the Rust crate's: :class:`Index`, :class:`Writer`, :class:`Record`,
:class:`Principal`, :class:`SearchResponse`, :class:`Hit`, and one exception class per error
kind (:mod:`braid.errors`). Filters, facets and boosts are dicts in the REST API's JSON shape;
:class:`Filter` and :class:`Facet` build them. Retrievers for LangChain and LlamaIndex are in
:mod:`braid.langchain` and :mod:`braid.llama_index` (each needs its framework installed). A
search over several indexes that answers as one (:class:`Request`, :class:`FanOut`,
:meth:`Index.session`) is served across a Ray cluster by :mod:`braid.ray`.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple

from braid._braid import (
    MAX_DEPTH,
    MAX_K,
    MAX_QUERY_BYTES,
    FanOut,
    Hit,
    Index,
    Principal,
    Record,
    Request,
    SearchResponse,
    Session,
    Writer,
)
from braid.errors import *  # noqa: F403  (the exception classes, listed in errors.__all__)
from braid.errors import __all__ as _error_names

__all__ = [
    "Index",
    "Writer",
    "Record",
    "Principal",
    "SearchResponse",
    "Hit",
    "Request",
    "FanOut",
    "Session",
    "Filter",
    "Facet",
    "MAX_K",
    "MAX_QUERY_BYTES",
    "MAX_DEPTH",
    *_error_names,
]


class Filter:
    """Builds filters (dicts in the REST API's JSON shape) for ``Index.search(filter=...)``.

    A filter only ever narrows what the principal may see: it is applied with access control,
    before ranking. Dates compare as Unix seconds.

    >>> Filter.all([Filter.keyword("category", "billing"), Filter.range("updated", min=1.7e9)])
    {'all': {'filters': [{'keyword': {'field': 'category', 'value': 'billing'}}, {'range': {'field': 'updated', 'min': 1700000000.0, 'max': None}}]}}
    """

    @staticmethod
    def keyword(field: str, value: str) -> Dict[str, Any]:
        """``field`` equals ``value``."""
        return {"keyword": {"field": field, "value": value}}

    @staticmethod
    def keyword_any(field: str, values: Iterable[str]) -> Dict[str, Any]:
        """``field`` equals one of ``values``."""
        return {"keyword_any": {"field": field, "values": list(values)}}

    @staticmethod
    def range(field: str, min: Optional[float] = None, max: Optional[float] = None) -> Dict[str, Any]:  # noqa: A002
        """A numeric or date field lies in ``[min, max]`` (either bound optional, not both; both inclusive)."""
        return {"range": {"field": field, "min": min, "max": max}}

    @staticmethod
    def parent(id: str) -> Dict[str, Any]:  # noqa: A002
        """The record is a chunk of the parent ``id``."""
        return {"parent": {"id": id}}

    @staticmethod
    def section(path: Sequence[str]) -> Dict[str, Any]:
        """The record's heading path starts with ``path``."""
        return {"section": {"path": list(path)}}

    @staticmethod
    def all(filters: Iterable[Dict[str, Any]]) -> Dict[str, Any]:  # noqa: A003
        """Every filter holds."""
        return {"all": {"filters": list(filters)}}

    @staticmethod
    def any(filters: Iterable[Dict[str, Any]]) -> Dict[str, Any]:  # noqa: A003
        """At least one filter holds."""
        return {"any": {"filters": list(filters)}}

    @staticmethod
    def not_(filter: Dict[str, Any]) -> Dict[str, Any]:  # noqa: A002
        """The filter does not hold."""
        return {"not": {"filter": filter}}


class Facet:
    """Builds facets (dicts in the REST API's JSON shape) for ``Index.search(facets=[...])``.

    Counts are over every matched record the principal may see, never more.
    """

    @staticmethod
    def values(field: str, size: int = 10) -> Dict[str, Any]:
        """The ``size`` most frequent values of a keyword field."""
        return {"values": {"field": field, "size": size}}

    @staticmethod
    def ranges(field: str, ranges: Iterable[Tuple[Optional[float], Optional[float]]]) -> Dict[str, Any]:
        """Counts per ``(from, to)`` range of a numeric or date field (``from`` inclusive, ``to`` exclusive)."""
        return {"ranges": {"field": field, "ranges": [{"from": lo, "to": hi} for lo, hi in ranges]}}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("braid")
    except Exception:  # not installed as a distribution (a source checkout on sys.path)
        return "0+unknown"


__version__: str = _version()
