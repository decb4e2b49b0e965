"""`logger.warning(...)` and its siblings in traced code: a call replayed after the graph.

transformers warns from inside attention layers (`logger.warning_once("sdpa attention does
not support output_attentions=True ...")` on every call of every layer); as a graph break
each layer's forward split in three.  A logging call whose arguments are all constants
does not feed the computation: it is recorded as a side effect (side_effects.record_call)
and made, with the same arguments on the same logger, right after the graph runs, in
program order with the trace's other side effects.  `warning_once`'s lru_cache then
emits the message once, as in eager.

Left to eager (a graph break): `exception` (it reads the exception being handled),
keyword arguments (`exc_info`, `stack_info`, `stacklevel` depend on the frame), messages
built from non-constants, loggers of classes that replace these methods or
`__getattribute__`.  What does differ: a record's caller (funcName, lineno) is where the
replay runs, the compiled frame's code; handlers run with the frame hook off.
"""

from __future__ import annotations

import logging

from ..exc import Unsupported
from ..sources import AttrSource
from .base import ConstantVariable, VariableTracker

# Logger methods that only emit (transformers adds warning_once, info_once, warning_advice)
_EMITTING = (
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "critical",
    "fatal",
    "log",
    "warning_once",
    "info_once",
    "warning_advice",
)

_OWN_METHODS = frozenset(_EMITTING[:8])


def logging_method(tx, obj, name: str) -> VariableTracker | None:
    """The deferred method `obj.name` of a logger (None: not one this module models)."""
    from .objects import _OBJECT_GETATTRIBUTE, _class_lookup, _guard_class_attr

    value = obj.value
    if name not in _EMITTING or not isinstance(value, logging.Logger) or obj.source is None:
        return None
    cls = type(value)
    attr = _class_lookup(cls, name)
    if attr is not logging.Logger.__dict__.get(name) or name in vars(value):
        return None
    if _class_lookup(cls, "__getattribute__") is not _OBJECT_GETATTRIBUTE:
        return None
    _guard_class_attr(tx, obj, name, attr)
    return DeferredLogCall(obj, name)


class DeferredLogCall(VariableTracker):
    def __init__(self, logger: VariableTracker, name: str):
        self.logger = logger
        self.name = name
        self.source = AttrSource(logger.source, name)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if kwargs or not all(a.is_python_constant() for a in args):
            raise Unsupported(f"logger.{self.name} with keyword or non-constant arguments")
        values = tuple(a.as_python_constant() for a in args)
        tx.output.side_effects.record_call(self.logger, self.name, values)
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return f"DeferredLogCall({self.name})"


def replay_log_call(logger, name: str, args: tuple) -> None:
    """The logging call, its handlers run as eager code (as logging's own frames are):
    they are not the compiled program, so a fullgraph compile must not capture them."""
    from framejit import frameeval as fe

    # logging's own methods name the record's caller: the compiled frame, not this one
    caller = {"stacklevel": 2} if name in _OWN_METHODS else {}
    previous = fe.set_callback(fe.SKIP)
    try:
        getattr(logger, name)(*args, **caller)
    finally:
        fe.set_callback(previous)
