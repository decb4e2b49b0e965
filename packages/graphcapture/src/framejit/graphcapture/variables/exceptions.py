"""Exceptions raised by traced code: the instance built in the frame, and the raise.

An exception the traced code raises (`raise KeyError(k)`, a missing dict key, a constant
division by zero) is an `ObservedException`, an Unsupported that carries the exception
object.  The translator that runs the raising instruction looks it up in its code's
exception table (symbolic_convert.catch): a handler there runs symbolically, as eager runs
it; without one the exception leaves the inlined call and the caller's table is asked,
up to the root frame, where an uncaught one is the graph break it always was.  A protocol
that ends on an exception catches it only from the very function it called
(`collections.abc.Sequence.__iter__` stops at the IndexError of `self[i]`).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, is_constant_value

if TYPE_CHECKING:
    from .exception_objects import ExceptionObjectVariable


def is_builtin_exception(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == "builtins"


def is_args_only_exception(cls) -> bool:
    """An exception class whose instances hold only their args: a builtin one, or a user
    subclass that defines no __init__ or __new__ (`class Exc(Exception): ...`)."""
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return False
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            return True
        if "__init__" in klass.__dict__ or "__new__" in klass.__dict__:
            return False
    return True


def is_python_init_exception(cls) -> bool:
    """A user exception class whose __init__ is a Python function and whose instances are
    made by BaseException.__new__ (no class of its MRO defines __new__)."""
    if not (isinstance(cls, type) and issubclass(cls, BaseException)) or issubclass(cls, OSError):
        return False  # (OSError.__new__ may pick a subclass from the args)
    init = None
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            break
        if "__new__" in klass.__dict__:
            return False
        if init is None and "__init__" in klass.__dict__:
            init = klass.__dict__["__init__"]
    return isinstance(init, types.FunctionType)


class ObservedException(Unsupported):
    """An exception the traced code raised, held as `exc` for a handler to catch."""

    def __init__(self, exc: ExceptionObjectVariable, reason: str | None = None, fresh: bool = True):
        super().__init__(reason or f"{exc.cls.__name__} raised in traced code")
        self.exc = exc
        self.exc_type = exc.cls
        # a new raise chains the exception being handled (a re-raise does not): done once,
        # by the translator whose instruction raised it (see chain_to)
        self.unchained = fresh

    def chain_to(self, handled: VariableTracker | None) -> None:
        if self.unchained:
            self.unchained = False
            self.exc.chain_context(handled)


class TracedRaise(ObservedException):
    """An exception raised by a raise statement of the function `tx` traces."""

    def __init__(self, tx, exc: ExceptionObjectVariable, fresh: bool = True):
        super().__init__(exc, fresh=fresh)
        self.caller = tx.parent


def observed(cls: type, *args, reason: str) -> Unsupported:
    """What an operation on constants that eager sees raise `cls(*args)` raises while
    tracing: catchable when its arguments are constants, else the plain graph break."""
    from .exception_objects import ExceptionObjectVariable

    if not all(is_constant_value(a) for a in args):
        return Unsupported(reason)
    return ObservedException(
        ExceptionObjectVariable(cls, [ConstantVariable(a) for a in args]), reason
    )


def raise_exception(tx, inst, exc: VariableTracker, cause: VariableTracker | None = None):
    """RAISE_VARARGS 1: `raise exc` or `raise ExcClass`; 2: `raise exc from cause`."""
    exc = _instance(exc)
    if cause is not None:
        exc.store_attr("__cause__", cause if _is_none(cause) else _instance(cause))
    raise TracedRaise(tx, exc)


def _instance(exc: VariableTracker) -> ExceptionObjectVariable:
    from .exception_objects import ExceptionObjectVariable

    if isinstance(exc, ExceptionObjectVariable):
        return exc
    cls = _constant_class(exc)
    if cls is None or not is_args_only_exception(cls):
        raise Unsupported("raise statement in traced code")
    return ExceptionObjectVariable(cls, [])  # `raise Cls` raises Cls()


def _is_none(vt: VariableTracker) -> bool:
    return vt.is_python_constant() and vt.as_python_constant() is None


def _constant_class(vt: VariableTracker):
    value = getattr(vt, "value", None)
    if isinstance(value, type):
        return value
    if vt.is_python_constant() and isinstance(vt.as_python_constant(), type):
        return vt.as_python_constant()
    return None


def exception_matches(exc: VariableTracker, spec: VariableTracker) -> bool:
    """CHECK_EXC_MATCH: `isinstance(exc, spec)` for the classes (or tuple) of an except."""
    from .containers import TupleVariable
    from .exception_objects import ExceptionObjectVariable

    specs = spec.items if isinstance(spec, TupleVariable) else [spec]
    classes = [_constant_class(s) for s in specs]
    if any(c is None for c in classes) or not isinstance(exc, ExceptionObjectVariable):
        raise Unsupported(f"except clause over {spec}")
    return issubclass(exc.cls, tuple(classes))


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
