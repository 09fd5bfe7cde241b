"""Braid's error kinds as exceptions.

Every error the engine raises is a :class:`BraidError`; each kind has its own subclass, which
also derives from the built-in exception it resembles (``ValueError`` for a bad request or
record, ``OSError`` for I/O, ``TimeoutError`` for a deadline), so ``except ValueError`` works
too. Each exception carries ``kind`` (the kind's name), ``is_user_error`` (whether the caller
can fix it by changing the request or the input) and the kind's fields (``expected`` and
``got`` for a dimension mismatch, ``path`` for a locked or damaged index, …). No message names
a record the caller may not see.
"""

from __future__ import annotations

__all__ = [
    "BraidError",
    "InvalidRequestError",
    "QueryTooLongError",
    "UnknownFieldError",
    "InvalidRecordError",
    "DimensionMismatchError",
    "LegUnavailableError",
    "ModelError",
    "LockBusyError",
    "CorruptError",
    "FormatVersionError",
    "BraidIOError",
    "ReservedTokenError",
    "SynonymsError",
    "DeadlineExceededError",
    "PageOutOfRangeError",
    "InvalidCursorError",
    "StaleCursorError",
    "LexicalError",
    "VectorError",
    "PartitionUnavailableError",
]


class BraidError(Exception):
    """Base class of every error Braid raises."""

    kind: str = "other"
    is_user_error: bool = False


class InvalidRequestError(BraidError, ValueError):
    """The request is malformed (``k`` above ``MAX_K``, an unknown mode, a bad filter, …)."""


class QueryTooLongError(BraidError, ValueError):
    """The query text is longer than ``MAX_QUERY_BYTES`` (attributes ``max``, ``got``)."""


class UnknownFieldError(BraidError, ValueError):
    """A record or filter names a field the schema does not declare (attribute ``field``)."""


class InvalidRecordError(BraidError, ValueError):
    """A record is not acceptable: empty id, bad date, non-finite number (``reason``)."""


class DimensionMismatchError(BraidError, ValueError):
    """A vector has another dimension than the index's (attributes ``expected``, ``got``)."""


class LegUnavailableError(BraidError):
    """A leg was asked for that the index cannot run (semantic without a model or vectors)."""


class ModelError(BraidError):
    """A model or the ONNX Runtime library could not be found or loaded (``reason``)."""


class LockBusyError(BraidError):
    """Another writer, in this or another process, holds the index's write lock (``path``)."""


class CorruptError(BraidError):
    """A file of the index is missing, truncated or damaged (``path``, ``reason``)."""


class FormatVersionError(BraidError):
    """Another version of Braid wrote the index (``path``, ``found``, ``expected``)."""


class BraidIOError(BraidError, OSError):
    """An I/O error on a path (``path``); the operating system's error is the ``__cause__``."""


class ReservedTokenError(BraidError, ValueError):
    """A token in Braid's reserved namespace (``__braid:…``) was given as an ACL or principal token."""


class SynonymsError(BraidError, ValueError):
    """A synonym file could not be read (``line``, ``reason``)."""


class DeadlineExceededError(BraidError, TimeoutError):
    """The search ran past its ``timeout`` and was cancelled."""


class PageOutOfRangeError(BraidError, ValueError):
    """A page ends past the ranking it is cut from (``end``, ``window``, ``max``): raise ``depth``."""


class InvalidCursorError(BraidError, ValueError):
    """A paging cursor is malformed or was made for another request."""


class StaleCursorError(BraidError):
    """The hits before a cursor changed since it was made: start again from the first page."""


class LexicalError(BraidError):
    """An error inside the lexical engine (tantivy)."""


class VectorError(BraidError):
    """An error inside the vector store."""


class PartitionUnavailableError(BraidError):
    """A partition of a search fanned out over several (``braid.ray``) did not answer: the
    search fails rather than answer from the others."""

    kind = "partition_unavailable"
