"""Type stubs of the extension module ``braid._braid`` (re-exported by ``braid``)."""

import os
import pathlib
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

from typing_extensions import TypedDict, Unpack

import numpy as np
import numpy.typing as npt

_Path = Union[str, "os.PathLike[str]"]
_Vector = Union["npt.NDArray[np.floating[Any]]", Sequence[float]]
_Matrix = Union["npt.NDArray[np.floating[Any]]", Sequence[Sequence[float]]]
_Mode = Literal["hybrid", "lexical", "fuzzy", "semantic", "auto", "bm25", "dense", "vector"]
_RecordLike = Union["Record", Mapping[str, Any]]

MAX_K: int
MAX_QUERY_BYTES: int
MAX_DEPTH: int

class _SearchOptions(TypedDict, total=False):
    """The arguments of :meth:`Index.search` and :class:`Request` besides the query and principal."""

    mode: Optional[_Mode]
    k: int
    filter: Optional[Mapping[str, Any]]
    facets: Optional[Sequence[Union[str, Mapping[str, Any]]]]
    offset: int
    cursor: Optional[str]
    boosts: Optional[Mapping[str, Any]]
    explain: bool
    vector: Optional[_Vector]
    depth: Optional[int]
    fusion: Optional[Literal["blend", "rrf", "minmax", "zscore", "dbsf"]]
    weights: Optional[Mapping[str, float]]
    syntax: Optional[Literal["plain", "simple", "tantivy"]]
    min_score: Optional[float]
    collapse: bool
    ids_only: bool
    snippet_chars: Optional[int]
    suggest: bool
    feedback: bool
    rerank: Optional[int]
    timeout: Optional[float]
    group_by: Optional[Tuple[str, int]]
    mmr: Optional[float]
    token_budget: Optional[int]

class Principal:
    """Who is asking: ACL tokens from verified credentials (``public`` always included)."""

    def __init__(self, tokens: Iterable[str]) -> None: ...
    @staticmethod
    def public() -> "Principal":
        """An anonymous caller: sees public records only."""
    @property
    def tokens(self) -> List[str]:
        """The tokens, sorted."""
    @property
    def tenants(self) -> List[str]:
        """The ``tenant:…`` tokens, sorted."""
    def has(self, token: str) -> bool:
        """Whether the principal holds ``token``."""
    def __eq__(self, other: object) -> bool: ...

class Record:
    """A record: id, title, body, fields, ACL tokens, chunk position and optional vector."""

    def __init__(
        self,
        id: str,
        title: str = "",
        body: str = "",
        *,
        keywords: Optional[Mapping[str, Union[str, Sequence[str]]]] = None,
        numbers: Optional[Mapping[str, float]] = None,
        dates: Optional[Mapping[str, str]] = None,
        acl: Optional[Sequence[str]] = None,
        parent: Optional[str] = None,
        section: Optional[Sequence[str]] = None,
        lines: Optional[Tuple[int, int]] = None,
        vector: Optional[_Vector] = None,
    ) -> None: ...
    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def keywords(self) -> Dict[str, List[str]]: ...
    @property
    def numbers(self) -> Dict[str, float]: ...
    @property
    def acl(self) -> List[str]: ...
    @property
    def parent(self) -> Optional[str]: ...
    @property
    def section(self) -> List[str]: ...
    @property
    def lines(self) -> Optional[Tuple[int, int]]: ...
    @property
    def vector(self) -> Optional["npt.NDArray[np.float32]"]: ...

class Hit:
    """One ranked record."""

    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def title(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def highlights(self) -> List[Tuple[int, int]]: ...
    @property
    def parent(self) -> Optional[str]: ...
    @property
    def section(self) -> List[str]: ...
    @property
    def lines(self) -> Optional[Tuple[int, int]]: ...
    @property
    def keywords(self) -> Dict[str, List[str]]: ...
    @property
    def numbers(self) -> Dict[str, float]: ...
    @property
    def explain(self) -> Optional[Dict[str, Any]]:
        """How the score came about (``legs``, ``fused``, ``fused_rank``…), with ``explain=True``."""
    def marked(self, open: str = "**", close: str = "**") -> str:
        """The snippet with each highlight wrapped in ``open`` … ``close``."""

class SearchResponse:
    """Ranked hits, suggestions, stats, the next page's cursor and facets."""

    @property
    def hits(self) -> List[Hit]: ...
    @property
    def ids(self) -> List[str]: ...
    @property
    def suggestions(self) -> List[Dict[str, Any]]: ...
    @property
    def stats(self) -> Dict[str, Any]: ...
    @property
    def next_cursor(self) -> Optional[str]: ...
    @property
    def facets(self) -> Optional[Dict[str, Any]]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Hit]: ...
    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> List[Hit]: ...

class Writer:
    """A writer of its own (``Index.writer``); commits on a clean ``with`` exit."""

    def upsert(self, records: Union[_RecordLike, Iterable[_RecordLike]], *, vectors: Optional[_Matrix] = None) -> None: ...
    def delete(self, ids: Union[str, Iterable[str]]) -> None: ...
    def commit(self) -> None: ...
    def optimize(self) -> None: ...
    @property
    def pending(self) -> int: ...
    @property
    def unchanged(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> bool: ...

class Index:
    """A Braid index: BM25, fuzzy and semantic recall fused into one ranking, permissions first."""

    @classmethod
    def create(
        cls,
        path: _Path,
        *,
        model: Optional[_Path] = None,
        keyword_fields: Optional[Sequence[str]] = None,
        numeric_fields: Optional[Sequence[str]] = None,
        policy: Optional[Literal["public", "deny"]] = None,
        analyzer: Optional[Literal["english", "simple"]] = None,
        title_boost: Optional[float] = None,
        quantization: Optional[Literal["f32", "int8"]] = None,
        passages: bool = True,
        vector_dim: Optional[int] = None,
        vector_model: Optional[str] = None,
    ) -> "Index": ...
    @classmethod
    def create_in_ram(
        cls,
        *,
        model: Optional[_Path] = None,
        keyword_fields: Optional[Sequence[str]] = None,
        numeric_fields: Optional[Sequence[str]] = None,
        policy: Optional[Literal["public", "deny"]] = None,
        analyzer: Optional[Literal["english", "simple"]] = None,
        title_boost: Optional[float] = None,
        quantization: Optional[Literal["f32", "int8"]] = None,
        passages: bool = True,
        vector_dim: Optional[int] = None,
        vector_model: Optional[str] = None,
    ) -> "Index": ...
    @classmethod
    def open(cls, path: _Path, *, model: Optional[_Path] = None) -> "Index": ...
    @classmethod
    def open_or_create(
        cls,
        path: _Path,
        *,
        model: Optional[_Path] = None,
        keyword_fields: Optional[Sequence[str]] = None,
        numeric_fields: Optional[Sequence[str]] = None,
        policy: Optional[Literal["public", "deny"]] = None,
        analyzer: Optional[Literal["english", "simple"]] = None,
        title_boost: Optional[float] = None,
        quantization: Optional[Literal["f32", "int8"]] = None,
        passages: bool = True,
        vector_dim: Optional[int] = None,
        vector_model: Optional[str] = None,
    ) -> "Index": ...
    @staticmethod
    def exists(path: _Path) -> bool: ...
    def upsert(self, records: Union[_RecordLike, Iterable[_RecordLike]], *, vectors: Optional[_Matrix] = None) -> None: ...
    def delete(self, ids: Union[str, Iterable[str]]) -> None: ...
    def commit(self) -> None: ...
    @property
    def pending(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Index": ...
    def __exit__(self, *exc: Any) -> bool: ...
    def writer(self, *, heap_bytes: Optional[int] = None, embed_batch: Optional[int] = None) -> Writer: ...
    def search(
        self, query: str = "", *, principal: Principal, **options: Unpack[_SearchOptions]
    ) -> SearchResponse: ...
    def session(self, request: "Request") -> "Session": ...
    def record(self, id: str, *, principal: Principal) -> Optional[Dict[str, Any]]: ...
    def vector(self, id: str, *, principal: Principal) -> Optional["npt.NDArray[np.float32]"]: ...
    def embed(self, texts: Sequence[str]) -> "npt.NDArray[np.float32]": ...
    @property
    def num_records(self) -> int: ...
    def __len__(self) -> int: ...
    def record_ids(self) -> List[str]: ...
    def reload(self) -> bool: ...
    def set_synonyms(self, text: str) -> None: ...
    @property
    def commit_id(self) -> Optional[str]: ...
    @property
    def has_semantic(self) -> bool: ...
    @property
    def embedding(self) -> Optional[Dict[str, Any]]: ...
    @property
    def path(self) -> Optional[pathlib.Path]: ...

class Request:
    """A search request, with the arguments of :meth:`Index.search`, for :class:`FanOut`."""

    def __init__(
        self, query: str = "", *, principal: Principal, **options: Unpack[_SearchOptions]
    ) -> None: ...

class FanOut:
    """One search over several indexes, answering as one index holding all their records."""

    def __init__(self, request: Request, parts: int) -> None: ...
    def start(self) -> List[str]: ...
    def next(self, replies: Sequence[str]) -> Union[List[str], SearchResponse]: ...
    def resend(self, at: int) -> Optional[str]: ...

class Session:
    """One index's share of one fanned-out search, on one commit, from its first ask to its last."""

    def part(self, ask: str) -> str: ...
    def holds(self, ask: str) -> bool: ...
