"""Publish/subscribe for CompileRecords: inspect and user code listen, graphcapture never imports them."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from importlib.metadata import entry_points

from .records import CompileRecord

log = logging.getLogger("framejit.dynamo")

_subscribers: list[Callable[[CompileRecord], None]] = []

LISTENER_GROUP = "framejit.listeners"
# Listener plugins (e.g. framejit-inspect's dump writer) are loaded only when an artifact
# directory is requested, so a plain compile never pays for importing them.
LISTENER_TRIGGER = "FRAMEJIT_DUMP_DIR"
_plugins_loaded = False


def subscribe(fn: Callable[[CompileRecord], None]) -> Callable[[], None]:
    """Call `fn(record)` after every frame compile; returns a callable that unsubscribes."""
    _subscribers.append(fn)

    def unsubscribe() -> None:
        if fn in _subscribers:
            _subscribers.remove(fn)

    return unsubscribe


def _load_listener_plugins() -> None:
    """Run each `framejit.listeners` entry point once; each may subscribe what it wants."""
    global _plugins_loaded
    _plugins_loaded = True
    if not os.environ.get(LISTENER_TRIGGER):
        return
    for ep in entry_points(group=LISTENER_GROUP):
        try:
            ep.load()()
        except Exception:
            log.exception("framejit: listener plugin %r failed to load", ep.value)


def publish(record: CompileRecord) -> None:
    if not _plugins_loaded:
        _load_listener_plugins()
    for fn in list(_subscribers):
        try:
            fn(record)
        except Exception:  # a faulty listener must not break the user's program
            log.exception("framejit: event subscriber %r raised", fn)
