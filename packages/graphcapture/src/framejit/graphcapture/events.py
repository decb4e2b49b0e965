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


_wants_tensors: list[Callable[[CompileRecord], None]] = []


def subscribe(
    fn: Callable[[CompileRecord], None], *, example_inputs: bool = False
) -> Callable[[], None]:
    """Call `fn(record)` after every frame compile; returns a callable that unsubscribes.

    With ``example_inputs=True`` each ``record.graphs[i].example_tensors`` holds the real
    example tensors while `fn` runs (a listener that keeps them keeps them alive); otherwise
    records carry only their metadata (``example_inputs``: InputMeta).
    """
    _subscribers.append(fn)
    if example_inputs:
        _wants_tensors.append(fn)

    def unsubscribe() -> None:
        if fn in _subscribers:
            _subscribers.remove(fn)
        if fn in _wants_tensors:
            _wants_tensors.remove(fn)

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


def wants_example_tensors() -> bool:
    """Whether some listener asked for the real example tensors (see subscribe)."""
    if not _plugins_loaded:
        _load_listener_plugins()
    return bool(_wants_tensors)


def publish(record: CompileRecord) -> None:
    if not _plugins_loaded:
        _load_listener_plugins()
    try:
        for fn in list(_subscribers):
            try:
                fn(record)
            except Exception:  # a faulty listener must not break the user's program
                log.exception("framejit: event subscriber %r raised", fn)
    finally:
        for graph in getattr(record, "graphs", ()):  # the record outlives this call: no tensors
            graph.example_tensors = None
