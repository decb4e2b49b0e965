"""The `ops` namespace that loop bodies are written against, and the handler behind it.

A loop body is a Python function over symbolic indices that only calls `ops.<name>(...)`.
The handler in force decides what running the body means: `loop_body.BodyTracer` records
it as data (a `LoopBody`), which code generators then replay through their own handlers.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_state = threading.local()  # the handler in force, per thread


class _OpsProxy:
    """`ops.exp` is resolved against the handler in force when it is called, so lowerings
    may pass `ops.exp` around as a function."""

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            handler = getattr(_state, "handler", None)
            if handler is None:
                raise RuntimeError("inductor-lite: ops used outside of a handler")
            return getattr(handler, name)(*args, **kwargs)

        call.__name__ = name
        return call


ops = _OpsProxy()


@contextlib.contextmanager
def use_handler(handler: Any) -> Iterator[Any]:
    previous = getattr(_state, "handler", None)
    _state.handler = handler
    try:
        yield handler
    finally:
        _state.handler = previous
