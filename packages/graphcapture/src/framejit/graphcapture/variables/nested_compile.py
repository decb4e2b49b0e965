"""`fj.compile(fn)` called inside a traced frame: the nested compile is ignored, fn inlined.

The frame being traced is compiled already, so compiling `fn` again inside it adds nothing:
as TorchDynamo does, calling what the inner compile returns traces `fn` inline, into the
outer frame's graph (its backend and fullgraph setting decide).  The wrapper that eager
would build is never made: if it leaves the frame (returned, stored, kept across a graph
break) it cannot be rebuilt, so that is a graph break and the compile call runs for real.
"""

from __future__ import annotations

from ..exc import Unsupported
from .base import VariableTracker
from .functions import BaseUserFunctionVariable, UserMethodVariable

# set on the API entry points that build a compiled wrapper (api.compile)
NESTED_COMPILE_MARK = "_framejit_nested_compile"
_COMPILE_PARAMS = ("backend", "fullgraph", "dynamic")  # model, then these, keyword-only


class NestedCompileVariable(VariableTracker):
    """fj.compile itself, seen in a traced frame."""

    def __init__(self, value, source=None):
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if len(args) != 1 or set(kwargs) - set(_COMPILE_PARAMS):
            raise Unsupported("fj.compile in a traced frame without exactly one function")
        model = args[0]
        if not isinstance(model, (BaseUserFunctionVariable, UserMethodVariable)):
            raise Unsupported(f"fj.compile of {model} in a traced frame")
        return InlinedCompiledVariable(model)

    def __repr__(self) -> str:
        return "NestedCompileVariable()"


class InlinedCompiledVariable(VariableTracker):
    """What a nested fj.compile returned: calling it traces the function inline."""

    def __init__(self, fn: VariableTracker):
        self.fn = fn

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        return self.fn.call_function(tx, args, kwargs)

    def reconstruct(self, cg) -> None:
        raise Unsupported("a function compiled inside the traced frame leaves it")

    def __repr__(self) -> str:
        return f"InlinedCompiledVariable({self.fn})"
