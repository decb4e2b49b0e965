"""`with` over a user context manager: BEFORE_WITH and WITH_EXCEPT_START, traced.

BEFORE_WITH looks `__enter__` and `__exit__` up on the object's type, as CPython does
(guarded where the object comes from the frame's inputs), pushes the bound `__exit__` (a
`UserContextExit`) and the result of the inlined `__enter__`.  The with-statement's own
bytecode does the rest: a normal exit calls the exit with three Nones, and an exception
raised in the body (in any function it calls) reaches the handler of the code's exception
table (symbolic_convert.catch), whose WITH_EXCEPT_START calls the exit with (type, value,
traceback) here: a true result suppresses the exception, anything else re-raises it,
with its own type, as CPython's handler does.

The traceback is a placeholder (`TracebackVariable`): it may be passed around, compared
with None, cleared (`traceback.clear_frames`) or dropped (`exc.with_traceback(None)`);
anything else about it is a graph break.
"""

from __future__ import annotations

import traceback
import types

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .exception_objects import ExceptionObjectVariable
from .functions import UserFunctionVariable, UserMethodVariable
from .objects import (
    UserDefinedObjectVariable,
    WithExitVariable,
    _class_lookup,
    _guard_class_attr,
)


class UserContextExit(UserMethodVariable):
    """`type(ctx).__exit__` bound to a user context manager, as BEFORE_WITH pushes it; a
    resume function gets the real bound method (rebuilt from the function and the object)."""

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(types.MethodType))
        cg.load_const(self.value)
        self.obj.reconstruct(cg)
        cg.call(2)


class TracebackVariable(VariableTracker):
    """The traceback of an exception raised in the trace, as an __exit__ receives it."""

    def __init__(self, exc: ExceptionObjectVariable):
        self.exc = exc

    def python_type(self) -> type:
        return types.TracebackType

    def reconstruct(self, cg) -> None:
        raise Unsupported("a traceback of a traced exception escaping the frame")


def enter(tx, ctx: VariableTracker) -> tuple[VariableTracker, VariableTracker] | None:
    """(the bound __exit__, what __enter__ returned) for a user object whose class defines
    both in Python; None for any other object."""
    if not isinstance(ctx, UserDefinedObjectVariable) or isinstance(ctx, ExceptionObjectVariable):
        return None
    cls = type(ctx.value)
    enter_fn = _class_lookup(cls, "__enter__")
    exit_fn = _class_lookup(cls, "__exit__")
    if not (isinstance(enter_fn, types.FunctionType) and isinstance(exit_fn, types.FunctionType)):
        return None
    _guard_class_attr(tx, ctx, "__enter__", enter_fn)
    _guard_class_attr(tx, ctx, "__exit__", exit_fn)
    exit_vt = UserContextExit(exit_fn, ctx)
    return exit_vt, UserFunctionVariable(enter_fn).call_function(tx, [ctx], {})


def exit_with_exception(tx, exit_vt: VariableTracker, exc: VariableTracker) -> VariableTracker:
    """WITH_EXCEPT_START: `exit(type(exc), exc, tb)`, whose truth says whether the with
    statement swallows the exception."""
    from .builder import wrap

    if isinstance(exit_vt, WithExitVariable):
        exit_vt.call_function(tx, [], {})  # grad-mode and null contexts never swallow it
        return ConstantVariable(False)
    if not isinstance(exit_vt, UserMethodVariable):
        raise Unsupported(f"exception through a with-block over {exit_vt}")
    if not isinstance(exc, ExceptionObjectVariable):
        raise Unsupported(f"exception {exc} through a with-block")
    args = [wrap(tx, exc.cls, None), exc, TracebackVariable(exc)]
    return exit_vt.call_function(tx, args, {})


def _clear_frames(tx, tb):
    """traceback.clear_frames(tb): the frames of a traced traceback are the trace's own,
    which hold nothing to clear; None is a no-op eagerly too."""
    if isinstance(tb, TracebackVariable) or (
        tb.is_python_constant() and tb.as_python_constant() is None
    ):
        return ConstantVariable(None)
    return None


TRACEBACK_MODELS = {traceback.clear_frames: _clear_frames}
