"""A LlamaIndex retriever over a Braid index (needs ``llama-index-core``).

::

    from braid.llama_index import BraidRetriever

    retriever = BraidRetriever(index, principal=braid.Principal(["tenant:acme"]), k=4)
    nodes = retriever.retrieve("how do I return an item?")

The principal is fixed when the retriever is built, from the application's verified
credentials: nothing in the query bundle changes it. Build one retriever per request (or per
session) for the caller at hand; it is cheap.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("braid.llama_index needs llama-index-core: pip install llama-index-core") from e

from braid import _retrieval
from braid._braid import Index, Principal

__all__ = ["BraidRetriever"]


class BraidRetriever(BaseRetriever):
    """Retrieves a Braid index's records as LlamaIndex ``NodeWithScore`` s for one principal.

    ``k`` hits per query, in ``mode`` (``hybrid`` by default); ``content`` is ``"body"`` (the
    record's whole body, the default) or ``"snippet"``; ``search_kwargs`` are further
    arguments of :meth:`braid.Index.search`, never ``principal`` or ``query``. With
    ``use_query_embedding=True`` a query bundle's ``embedding`` (computed by the caller's
    model) is passed as the query vector. Each node's ``id_`` is the record's id, its score the
    hit's, and its metadata carries ``title``, ``snippet`` and the record's fields.
    """

    def __init__(
        self,
        index: Index,
        principal: Principal,
        *,
        k: int = 4,
        mode: str = "hybrid",
        content: str = "body",
        search_kwargs: Optional[Mapping[str, Any]] = None,
        use_query_embedding: bool = False,
        callback_manager: Optional[CallbackManager] = None,
        verbose: bool = False,
    ) -> None:
        search_kwargs = dict(search_kwargs or {})
        _retrieval.check(index, principal, content, search_kwargs)
        self._braid_index = index
        self._principal = principal
        self._k = k
        self._mode = mode
        self._content = content
        self._search_kwargs = search_kwargs
        self._use_query_embedding = use_query_embedding
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def principal(self) -> Principal:
        """The principal every search runs for."""
        return self._principal

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        vector = query_bundle.embedding if self._use_query_embedding else None
        found = _retrieval.retrieve(
            self._braid_index,
            self._principal,
            query_bundle.query_str,
            k=self._k,
            mode=self._mode,
            content=self._content,
            search_kwargs=self._search_kwargs,
            vector=vector,
        )
        return [
            NodeWithScore(node=TextNode(id_=hit.id, text=text, metadata=metadata), score=float(hit.score))
            for text, hit, metadata in found
        ]
