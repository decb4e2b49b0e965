"""The `ops` namespace that loop bodies are written against, and the handler behind it.

A loop body is a Python function over symbolic indices that only calls `ops.<name>(...)`.
Which handler answers decides what running the body means: the C++ generator emits code,
the dependency recorder collects the buffers and indices a body loads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import sympy

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


class DependencyRecorder:
    """Runs a body for its loads only: every other op returns a placeholder."""

    def __init__(self) -> None:
        self.loads: list[tuple[str, sympy.Expr]] = []
        self.op_count = 0
        self._indirect = 0

    def load(self, name: str, index: sympy.Expr) -> str:
        self.loads.append((name, index))
        return "v"

    def indirect_index(self, value: Any, size: int, allow_negative: bool) -> sympy.Symbol:
        self._indirect += 1
        return sympy.Symbol(f"ind{self._indirect}", integer=True)

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> str:
            self.op_count += 1
            return "v"

        return record
