"""Publish/subscribe for CompileRecords: inspect and user code listen, graphcapture never imports them."""

from __future__ import annotations

import logging
from collections.abc import Callable

from .records import CompileRecord

log = logging.getLogger("framejit.dynamo")

_subscribers: list[Callable[[CompileRecord], None]] = []


def subscribe(fn: Callable[[CompileRecord], None]) -> Callable[[], None]:
    """Call `fn(record)` after every frame compile; returns a callable that unsubscribes."""
    _subscribers.append(fn)

    def unsubscribe() -> None:
        if fn in _subscribers:
            _subscribers.remove(fn)

    return unsubscribe


def publish(record: CompileRecord) -> None:
    for fn in list(_subscribers):
        try:
            fn(record)
        except Exception:  # a faulty listener must not break the user's program
            log.exception("framejit: event subscriber %r raised", fn)
