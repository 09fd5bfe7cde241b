"""Shared fixtures: a small help center held by two tenants, public articles and a support
group, and the helpers the tests share."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

import pytest

import braid

# Two tenants write about the same topics in different words; `public` and support-only
# records sit beside them. Words unique to one tenant let a test ask for exactly its records.
RECORDS: List[dict] = [
    {"id": "returns", "title": "Return policy", "body": "Send an item back within 30 days for a full refund.",
     "keywords": {"category": "billing"}, "numbers": {"priority": 1}, "acl": ["public"]},
    {"id": "shipping", "title": "Shipping times", "body": "Parcels arrive in three to five working days.",
     "keywords": {"category": "delivery"}, "numbers": {"priority": 2}, "acl": ["public"]},
    {"id": "refund-exceptions", "title": "Refund exceptions", "body": "Agents may refund after 30 days when the item was faulty.",
     "keywords": {"category": "billing"}, "numbers": {"priority": 5}, "acl": ["group:support"]},
    {"id": "acme-invoice", "title": "Acme invoices", "body": "Acme customers download invoices from the zephyr billing portal.",
     "keywords": {"category": "billing"}, "numbers": {"priority": 3}, "acl": ["tenant:acme"]},
    {"id": "acme-sso", "title": "Acme single sign-on", "body": "Acme staff sign in through the quokka identity provider.",
     "keywords": {"category": "account"}, "numbers": {"priority": 4}, "acl": ["tenant:acme"]},
    {"id": "globex-invoice", "title": "Globex invoices", "body": "Globex customers download invoices from the marmot billing portal.",
     "keywords": {"category": "billing"}, "numbers": {"priority": 3}, "acl": ["tenant:globex"]},
    {"id": "globex-secret", "title": "Globex merger plan", "body": "The walrus merger closes next quarter; refund policy unchanged.",
     "keywords": {"category": "account"}, "numbers": {"priority": 9}, "acl": ["tenant:globex"]},
]

ACME = braid.Principal(["tenant:acme"])
GLOBEX = braid.Principal(["tenant:globex"])
SUPPORT = braid.Principal(["group:support"])
PUBLIC = braid.Principal.public()


def build(records: List[dict], path: Optional[Path] = None, **settings) -> braid.Index:
    """An index holding `records`, committed."""
    index = braid.Index.create(path, **settings) if path is not None else braid.Index.create_in_ram(**settings)
    index.upsert(records)
    index.commit()
    return index


@pytest.fixture()
def index() -> braid.Index:
    """The help center, in memory."""
    return build(RECORDS)


def visible_to(principal: braid.Principal, records: List[dict] = RECORDS) -> List[dict]:
    """The records `principal` may see (every record here has an ACL)."""
    return [r for r in records if any(principal.has(t) for t in r["acl"])]


def releases_gil(call: Callable[[], object], attempts: int = 20) -> bool:
    """Whether `call` lets another thread run Python while it runs.

    The switch interval is raised so that the interpreter never takes the GIL from a thread
    that holds it: a call that keeps the GIL lets the ticker thread run nothing between the two
    reads of its counter (exactly 0 ticks), while a call that releases it lets the ticker,
    which sleeps a little between ticks, tick while the call runs.
    """
    ticks = [0]
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0002)

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    thread = threading.Thread(target=ticker, daemon=True)
    thread.start()
    try:
        time.sleep(0.01)  # let the ticker start (sleep releases the GIL)
        for _ in range(attempts):
            before = ticks[0]
            call()
            if ticks[0] != before:
                return True
        return False
    finally:
        stop.set()
        sys.setswitchinterval(old)
        thread.join()


def shared_dir() -> Optional[Path]:
    """The shared assets folder: $BRAID_SHARED, else a `shared/` above this file."""
    env = os.environ.get("BRAID_SHARED")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared").is_dir():
            return parent / "shared"
    return None
