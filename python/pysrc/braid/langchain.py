"""A LangChain retriever over a Braid index (needs ``langchain-core``).

::

    from braid.langchain import BraidRetriever

    retriever = BraidRetriever(index=index, principal=braid.Principal(["tenant:acme"]), k=4)
    docs = retriever.invoke("how do I return an item?")

The principal is fixed when the retriever is built, from the application's verified
credentials: nothing in the query, the run's config or ``invoke``'s keyword arguments changes
it, so a prompt cannot widen what the chain retrieves. Build one retriever per request (or
per session) for the caller at hand; it is cheap.
"""

from __future__ import annotations

from typing import Any, Dict, List

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, model_validator
except ImportError as e:  # pragma: no cover - exercised only without the framework
    raise ImportError("braid.langchain needs langchain-core: pip install langchain-core") from e

from braid import _retrieval
from braid._braid import Index, Principal

__all__ = ["BraidRetriever"]


class BraidRetriever(BaseRetriever):
    """Retrieves a Braid index's records as LangChain ``Document`` s for one principal.

    ``k`` hits per query, in ``mode`` (``hybrid`` by default); ``content`` is ``"body"`` (the
    record's whole body, the default) or ``"snippet"``; ``search_kwargs`` are further
    arguments of :meth:`braid.Index.search` (``filter``, ``boosts``, ``min_score``,
    ``collapse``…), never ``principal`` or ``query``. Each document's ``id`` is the record's
    id and its metadata carries ``score``, ``title``, ``snippet`` and the record's fields.
    The search runs with the GIL released, so ``ainvoke`` (run in a thread by LangChain)
    does not hold up the event loop's other work.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    principal: Principal
    k: int = 4
    mode: str = "hybrid"
    content: str = "body"
    search_kwargs: Dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _checked(self) -> "BraidRetriever":
        _retrieval.check(self.index, self.principal, self.content, self.search_kwargs)
        return self

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        found = _retrieval.retrieve(
            self.index,
            self.principal,
            query,
            k=self.k,
            mode=self.mode,
            content=self.content,
            search_kwargs=self.search_kwargs,
        )
        return [Document(page_content=text, id=hit.id, metadata=metadata) for text, hit, metadata in found]
