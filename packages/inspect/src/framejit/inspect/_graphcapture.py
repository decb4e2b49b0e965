"""The optional dependency on framejit.graphcapture, imported only when a feature needs it."""

from __future__ import annotations

from types import ModuleType

INSTALL_HINT = (
    "this needs framejit-graphcapture; install it with `pip install framejit-inspect[graphcapture]`"
)


def load() -> ModuleType:
    """``framejit.graphcapture``, or an ImportError that says how to get it."""
    try:
        from framejit import graphcapture
    except ImportError as exc:
        raise ImportError(f"framejit.inspect: {INSTALL_HINT} ({exc})") from exc
    return graphcapture


def available() -> bool:
    try:
        load()
    except ImportError:
        return False
    return True
