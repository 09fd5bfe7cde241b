"""What both framework retrievers share: one search on behalf of a fixed principal."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from braid._braid import Hit, Index, Principal

# Arguments a retriever's search_kwargs may not set: the query comes from the framework, the
# principal from the retriever's construction, and nothing else may replace them.
_RESERVED = ("query", "principal")

CONTENTS = ("body", "snippet")


def check(index: Any, principal: Any, content: str, search_kwargs: Mapping[str, Any]) -> None:
    """Raises ``TypeError`` or ``ValueError`` for arguments a retriever cannot use."""
    if not isinstance(index, Index):
        raise TypeError(f"index must be a braid.Index, got {type(index).__name__}")
    if not isinstance(principal, Principal):
        raise TypeError(
            f"principal must be a braid.Principal built from verified tokens, got {type(principal).__name__}"
        )
    if content not in CONTENTS:
        raise ValueError(f"content must be one of {CONTENTS}, got {content!r}")
    for key in _RESERVED:
        if key in search_kwargs:
            raise ValueError(f"search_kwargs may not set {key!r}: the retriever's principal and query are fixed")


def retrieve(
    index: Index,
    principal: Principal,
    query: str,
    *,
    k: int,
    mode: str,
    content: str,
    search_kwargs: Mapping[str, Any],
    vector: Optional[Any] = None,
) -> List[Tuple[str, Hit, Dict[str, Any]]]:
    """``(text, hit, metadata)`` for each hit the principal may see, best first.

    With ``content="body"`` the text is the record's whole body, read back on behalf of the
    same principal (a hit deleted since the search is left out); with ``"snippet"``, the
    passage around the query's words.
    """
    kwargs = dict(search_kwargs)
    if vector is not None:
        kwargs["vector"] = vector
    response = index.search(query, principal=principal, k=k, mode=mode, **kwargs)
    out = []
    for hit in response.hits:
        text = hit.snippet
        if content == "body":
            record = index.record(hit.id, principal=principal)
            if record is None:
                continue
            text = record["body"]
        metadata: Dict[str, Any] = {"id": hit.id, "score": hit.score, "title": hit.title, "snippet": hit.snippet}
        if hit.parent is not None:
            metadata["parent"] = hit.parent
        if hit.section:
            metadata["section"] = list(hit.section)
        if hit.lines is not None:
            metadata["lines"] = list(hit.lines)
        if hit.keywords:
            metadata["keywords"] = dict(hit.keywords)
        if hit.numbers:
            metadata["numbers"] = dict(hit.numbers)
        out.append((text, hit, metadata))
    return out
