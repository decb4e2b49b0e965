"""`assert <tensor condition>, "message"` traced as a check in the graph.

`assert (mask >= 0).all(), "negative mask"` compiles to a jump on the tensor's truth that
skips `raise AssertionError("...")`.  A data-dependent branch otherwise breaks the graph;
this one has a single outcome that continues, so, as torch.compile does, the graph gets a
run-time check and the trace goes on past it.  torch.compile's check (torch._assert_async)
raises RuntimeError; ours is the op `framejit::assert_true`, which raises eager's
AssertionError with eager's message (a condition of more than one element raises eager's
RuntimeError from the same bool()).  It is an op with a fake kernel, marked side-effectful,
so AOTAutograd traces it and no dead-code pass drops it (torch._assert would make a
compiling backend's trace call bool() on a fake tensor).

The graph raising part-way must leave what eager leaves, so the rewrite is made only
where nothing before it would be lost: no Python side effect waiting to be replayed after
the graph, no in-place tensor operation among the graph's ops so far (a backend may
apply input mutations at its end), and no try or with block around the assert, in its
frame or in a frame that called it (their handler would not run: the graph raises out of
the whole compiled frame).  Anything else, a message that is not a constant
string, or another shape of bytecode, stays the graph break it was.
"""

from __future__ import annotations

import operator

import torch
import torch.fx

from .tensor import TensorVariable


@torch.library.custom_op("framejit::assert_true", mutates_args=())
def assert_true(condition: torch.Tensor, message: str | None) -> None:
    """`assert condition[, message]` as eager runs it; None for an assert without one."""
    if not condition:
        raise AssertionError() if message is None else AssertionError(message)


@assert_true.register_fake
def _assert_true_fake(condition: torch.Tensor, message: str | None) -> None:
    return None


ASSERT_TRUE = torch.ops.framejit.assert_true.default
torch.fx.node.has_side_effect(ASSERT_TRUE)


def rewrite(tx, condition, jump) -> bool:
    """At POP_JUMP_IF_TRUE `jump` on `condition`: put the assert in the graph, if it is one."""
    if not isinstance(condition, TensorVariable):
        return False
    message = _assert_message(tx.insts, tx.ip)
    if message is None or tx.output.side_effects or _graph_mutates(tx.output.graph):
        return False
    if _in_handled_region(tx):
        return False
    tx.output.create_node("call_function", ASSERT_TRUE, (condition.node, *message), {}, None)
    return True


def _assert_message(insts, ip: int) -> tuple[str | None] | None:
    """The message of `raise AssertionError[(message)]` starting at `ip`: (message,), or
    (None,) for an assert without one; None when the code there is not that."""
    names = [i.opname for i in insts[ip : ip + 4]]
    if names[:2] == ["LOAD_ASSERTION_ERROR", "RAISE_VARARGS"] and insts[ip + 1].arg == 1:
        return (None,)
    if names != ["LOAD_ASSERTION_ERROR", "LOAD_CONST", "CALL", "RAISE_VARARGS"]:
        return None
    message, call, raise_ = insts[ip + 1].argval, insts[ip + 2], insts[ip + 3]
    if not isinstance(message, str) or call.arg != 0 or raise_.arg != 1:
        return None
    return (message,)


def _in_handled_region(tx) -> bool:
    frame = tx
    while frame is not None:  # each frame's instruction now running: the assert, or a call
        if frame.decoded.handler_for(frame.ip - 1) is not None:
            return True
        frame = frame.parent
    return False


_MUTATING_FUNCTIONS = {operator.setitem, operator.delitem} | {
    getattr(operator, name)
    for name in dir(operator)
    if name.startswith("i")
    and name not in ("index", "indexOf", "inv", "invert", "is_", "is_not", "itemgetter")
}  # operator.iadd and the other in-place operators


def _graph_mutates(graph) -> bool:
    for node in graph.nodes:
        if node.op not in ("call_method", "call_function"):
            continue
        if node.target in _MUTATING_FUNCTIONS or "out" in node.kwargs:
            return True
        name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
        if isinstance(name, str) and name.endswith("_") and not name.endswith("__"):
            return True
    return False
