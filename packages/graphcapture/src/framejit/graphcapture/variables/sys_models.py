"""sys.exc_info() and sys.exception(): the exception being handled, as the trace knows it.

Inside an except block of the trace the answer is that block's exception.  Outside every
traced handler it is whatever the caller was handling when the frame started: read now,
and guarded (`HandledExceptionSource`), so a call from inside an except block recompiles;
only "none" is folded (the caller's exception object is not the trace's to hand out).
"""

from __future__ import annotations

import sys

from framejit.guards import GuardKind, HandledExceptionSource

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker


def handled_exception(tx) -> VariableTracker:
    """sys.exception() at this point of the trace."""
    if tx.handled is not None:
        return tx.handled
    if sys.exc_info()[1] is not None:
        raise Unsupported("sys.exc_info() while the caller handles an exception")
    tx.output.add_guard(HandledExceptionSource(), GuardKind.EQUALS_MATCH, None, origin=tx.origin())
    return ConstantVariable(None)


def _exception(tx):
    return handled_exception(tx)


def _exc_info(tx):
    from .builder import wrap
    from .containers import TupleVariable

    exc = handled_exception(tx)
    if isinstance(exc, ConstantVariable):
        return TupleVariable([exc, exc, exc])
    return TupleVariable([wrap(tx, exc.python_type(), None), exc, _TracebackVariable()])


class _TracebackVariable(VariableTracker):
    """The traceback of an exception raised in the trace: not modelled, so any use of it
    (reading it, keeping it across a graph break) is a graph break."""

    def python_type(self) -> type:
        raise Unsupported("traceback of a traced exception")


SYS_HANDLERS = {sys.exc_info: _exc_info}
if hasattr(sys, "exception"):  # 3.11+
    SYS_HANDLERS[sys.exception] = _exception
