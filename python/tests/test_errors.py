"""Braid's error kinds arrive as exceptions of their own classes, with their fields."""

from __future__ import annotations

import numpy as np
import pytest

import braid
from conftest import PUBLIC


def test_every_kind_is_a_braid_error_and_its_builtin() -> None:
    names = braid.errors.__all__
    assert len(names) == 21
    for name in names:
        assert issubclass(getattr(braid, name), braid.BraidError)
    assert issubclass(braid.InvalidRequestError, ValueError)
    assert issubclass(braid.BraidIOError, OSError)
    assert issubclass(braid.DeadlineExceededError, TimeoutError)


def test_request_errors(index: braid.Index) -> None:
    with pytest.raises(braid.InvalidRequestError) as e:
        index.search("q", principal=PUBLIC, k=braid.MAX_K + 1)
    assert e.value.kind == "invalid_request" and e.value.is_user_error
    with pytest.raises(ValueError, match="unknown mode"):
        index.search("q", principal=PUBLIC, mode="telepathic")
    with pytest.raises(braid.QueryTooLongError) as long:
        index.search("x" * (braid.MAX_QUERY_BYTES + 1), principal=PUBLIC)
    assert (long.value.max, long.value.got) == (braid.MAX_QUERY_BYTES, braid.MAX_QUERY_BYTES + 1)
    with pytest.raises(braid.UnknownFieldError) as unknown:
        index.search("q", principal=PUBLIC, filter=braid.Filter.keyword("colour", "red"))
    assert unknown.value.field == "colour"
    with pytest.raises(braid.InvalidRequestError, match="bad filter"):
        index.search("q", principal=PUBLIC, filter={"keyword": {"field": "category"}})
    with pytest.raises(braid.InvalidRequestError, match="bad boosts"):
        index.search("q", principal=PUBLIC, boosts={"shout": 1})
    with pytest.raises(braid.LegUnavailableError):
        index.search("q", principal=PUBLIC, mode="semantic")
    with pytest.raises(braid.InvalidCursorError):
        index.search("refund", principal=PUBLIC, cursor="not-a-cursor")
    with pytest.raises(braid.PageOutOfRangeError) as page:
        index.search("refund", principal=PUBLIC, k=10, offset=95, depth=100)
    assert page.value.end == 105
    with pytest.raises(braid.DeadlineExceededError):
        index.search("refund", principal=PUBLIC, timeout=0)
    with pytest.raises(braid.InvalidRequestError, match="timeout"):
        index.search("refund", principal=PUBLIC, timeout=-1)


def test_record_errors() -> None:
    index = braid.Index.create_in_ram(vector_dim=3)
    with pytest.raises(braid.InvalidRecordError, match="empty id"):
        index.upsert(braid.Record(" "))
    with pytest.raises(braid.InvalidRecordError, match="unknown key"):
        index.upsert({"id": "a", "tittle": "typo"})
    with pytest.raises(braid.UnknownFieldError):
        index.upsert(braid.Record("a", keywords={"colour": "red"}))
    with pytest.raises(braid.InvalidRecordError):
        braid.Record("a", dates={"updated": "yesterday"})
    with pytest.raises(braid.ReservedTokenError):
        index.upsert(braid.Record("a", acl=["__braid:no-acl"]))
    with pytest.raises(braid.DimensionMismatchError) as dim:
        index.upsert(braid.Record("a", vector=np.ones(4, dtype=np.float32)))
    assert (dim.value.expected, dim.value.got) == (3, 4)


def test_storage_errors(tmp_path) -> None:
    with pytest.raises(braid.BraidError) as missing:
        braid.Index.open(tmp_path / "nothing-here")
    assert missing.value.kind in {"corrupt", "io"} and not missing.value.is_user_error
    braid.Index.create(tmp_path / "one")
    with pytest.raises(braid.InvalidRequestError, match="already holds an index"):
        braid.Index.create(tmp_path / "one")
    (tmp_path / "one" / "braid.json").write_text("{ not json")
    with pytest.raises(braid.CorruptError) as corrupt:
        braid.Index.open(tmp_path / "one")
    assert str(corrupt.value.path).endswith("braid.json")
    with pytest.raises(braid.ModelError):
        braid.Index.create_in_ram(model=tmp_path)  # a directory without a model
    with pytest.raises(braid.SynonymsError):
        braid.Index.create_in_ram().set_synonyms("a => b => c")
