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

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, is_constant_value


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


class ExceptionObjectVariable(VariableTracker):
    """`cls(*args)` of a builtin exception class with constant arguments."""

    def __init__(self, cls: type, args: list):
        self.cls = cls
        self.args = args

    def python_type(self) -> type:
        return self.cls

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .containers import TupleVariable

        if name == "args":
            return TupleVariable(list(self.args))
        raise Unsupported(f"attribute {name!r} of a traced {self.cls.__name__}")

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(self.cls))
        for a in self.args:
            a.reconstruct(cg)
        cg.call(len(self.args))

    def __repr__(self) -> str:
        return f"ExceptionObjectVariable({self.cls.__name__})"


class ObservedException(Unsupported):
    """An exception the traced code raised, held as `exc` for a handler to catch."""

    def __init__(self, exc: ExceptionObjectVariable, reason: str | None = None):
        super().__init__(reason or f"{exc.cls.__name__} raised in traced code")
        self.exc = exc
        self.exc_type = exc.cls


class TracedRaise(ObservedException):
    """An exception raised by a raise statement of the function `tx` traces."""

    def __init__(self, tx, exc: ExceptionObjectVariable):
        super().__init__(exc)
        self.caller = tx.parent


def observed(cls: type, *args, reason: str) -> Unsupported:
    """What an operation on constants that eager sees raise `cls(*args)` raises while
    tracing: catchable when its arguments are constants, else the plain graph break."""
    if not all(is_constant_value(a) for a in args):
        return Unsupported(reason)
    return ObservedException(
        ExceptionObjectVariable(cls, [ConstantVariable(a) for a in args]), reason
    )


def raise_exception(tx, inst, exc: VariableTracker):
    """RAISE_VARARGS 1: `raise exc` or `raise ExcClass`."""
    if not isinstance(exc, ExceptionObjectVariable):
        cls = _constant_class(exc)
        if cls is None or not is_args_only_exception(cls):
            raise Unsupported("raise statement in traced code")
        exc = ExceptionObjectVariable(cls, [])  # `raise Cls` raises Cls()
    raise TracedRaise(tx, exc)


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
