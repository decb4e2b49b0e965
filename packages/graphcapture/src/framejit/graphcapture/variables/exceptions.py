"""Builtin exceptions raised by traced code: the instance built in the frame, and the raise.

`raise IndexError("...")` outside any try/with block becomes a `TracedRaise`, an
Unsupported: where nothing catches it, it is the graph break it always was.  A protocol
that ends on an exception catches it only from the very function it called
(`collections.abc.Sequence.__iter__` stops at the IndexError of `self[i]`), so a handler
in some deeper frame, which eager would have run, is never skipped.
"""

from __future__ import annotations

import dis

from ..exc import Unsupported
from .base import VariableTracker


def is_builtin_exception(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == "builtins"


class ExceptionObjectVariable(VariableTracker):
    """`cls(*args)` of a builtin exception class with constant arguments."""

    def __init__(self, cls: type, args: list):
        self.cls = cls
        self.args = args

    def python_type(self) -> type:
        return self.cls

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(self.cls))
        for a in self.args:
            a.reconstruct(cg)
        cg.call(len(self.args))

    def __repr__(self) -> str:
        return f"ExceptionObjectVariable({self.cls.__name__})"


class TracedRaise(Unsupported):
    """A builtin exception raised, unprotected, by the function `tx` traces."""

    def __init__(self, tx, exc: ExceptionObjectVariable):
        super().__init__(f"{exc.cls.__name__} raised in traced code")
        self.exc_type = exc.cls
        self.caller = tx.parent


def _protected(code, offset: int) -> bool:
    return any(e.start <= offset < e.end for e in dis.Bytecode(code).exception_entries)


def raise_exception(tx, inst, exc: VariableTracker):
    """RAISE_VARARGS 1: a TracedRaise where it is safe, else the plain graph break."""
    if isinstance(exc, ExceptionObjectVariable) and not _protected(tx.code, inst.offset):
        raise TracedRaise(tx, exc)
    raise Unsupported("raise statement in traced code")


def call_until(tx, exc_type: type, call, limit: int = 10_000) -> list[VariableTracker]:
    """call(i) for i = 0, 1, ... until the function it traces raises `exc_type` itself."""
    out = []
    for i in range(limit):
        try:
            out.append(call(i))
        except TracedRaise as e:
            if e.caller is tx and issubclass(e.exc_type, exc_type):
                return out
            raise
    raise Unsupported(f"more than {limit} items")
