"""When a graph that raises at run time may hand the frame back to its original bytecode.

The generated code calls the graph before anything else of the frame runs (side effects
are replayed after it).  If the graph raises, the frame's own `try`/`with` blocks never see
the exception: they are not in the generated code.  Where the traced code ran inside such
a block, the graph call is wrapped in a handler that drops the exception and runs the
original bytecode from its start, so the frame's `except`/`__exit__` run as in eager.  That
is sound only when running the graph's completed part twice changes nothing: no op writes
to a tensor (in-place, `out=`, running statistics), draws random numbers or changes
global state.  Any op whose effects are not known keeps the exception as it is.
"""

from __future__ import annotations

import builtins
import functools
import operator

import torch

# schemas that do not declare the running statistics they update
_UNDECLARED_WRITES = frozenset({"batch_norm", "instance_norm", "_batch_norm_impl_index"})
# grad-mode switches are undone by the graph's wrapper when it raises (convert_frame)
_PURE_BUILTINS = frozenset(
    {builtins.getattr, builtins.len, builtins.isinstance, torch._C._set_grad_enabled}
)
_WRITING_OPERATORS = frozenset(
    {operator.setitem, operator.delitem}
    | {getattr(operator, n) for n in dir(operator) if n.startswith("i") and n != "index"}
)


def protected_trace(decoded, end: int | None) -> bool:
    """Did the trace (instructions before `end`; all of them when None) run inside a
    try/with block of the frame?"""
    limit = len(decoded.insts) if end is None else end
    return any(entry.start < limit for entry in decoded.exception_entries)


def rerunnable(gm: torch.fx.GraphModule) -> bool:
    """Can the graph's ops, completed up to any point, run again with no visible effect?"""
    return all(_pure(node) for node in gm.graph.nodes)


def _pure(node: torch.fx.Node) -> bool:
    if node.op in ("placeholder", "output", "get_attr"):
        return True
    if node.op == "call_module" or "out" in node.kwargs:
        return False
    target = node.target
    if node.op == "call_method":
        return _aten_pure(target)
    if isinstance(target, torch._ops.OpOverload):
        return _overloads_pure([target]) and target._schema.name.split("::")[-1] not in (
            _UNDECLARED_WRITES
        )
    if target in _PURE_BUILTINS:
        return True
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return target not in _WRITING_OPERATORS
    return _aten_pure(getattr(target, "__name__", ""))


@functools.cache
def _aten_pure(name: str) -> bool:
    if not name or name.endswith("_") or name in _UNDECLARED_WRITES:
        return False
    packet = getattr(torch.ops.aten, name, None)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return False  # not an ATen op: its effects are not known
    overloads = [getattr(packet, o) for o in packet.overloads() if "out" not in o]
    return bool(overloads) and _overloads_pure(overloads)


def _overloads_pure(overloads) -> bool:
    return not any(
        o._schema.is_mutable or torch.Tag.nondeterministic_seeded in o.tags for o in overloads
    )
