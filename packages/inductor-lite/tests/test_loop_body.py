"""The loop IR is data: traced bodies are hashable, comparable, printable, and the scheduler
and generators read them without running lowering code again."""

from __future__ import annotations

import torch
import torch.fx

from framejit.inductor_lite.compile_fx import lower_parts
from framejit.inductor_lite.loop_body import LoopBody, Op, Ref, trace
from framejit.inductor_lite.ops import ops


def _body(scale: float) -> LoopBody:
    def fn(index):
        x = ops.load("arg0", index[0] * 7 + index[1])
        return ops.mul(ops.exp(x), ops.constant(scale, torch.float32))

    return trace(fn, (3, 7), lambda name: torch.float32)


def test_traced_body_is_hashable_and_comparable():
    a, b, c = _body(2.0), _body(2.0), _body(3.0)
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    assert [op.name for op in a.ops] == ["load", "exp", "constant", "mul"]
    assert a.ops[1] == Op("exp", (Ref(0),), torch.float32)


def test_body_prints_and_lists_loads():
    body = _body(2.0)
    text = str(body)
    assert "load(arg0, 7*x0 + x1) : float32" in text and "mul(%1, %2)" in text
    assert [(name, str(expr)) for name, expr in body.loads()] == [("arg0", "7*x0 + x1")]


def test_duplicate_calls_merge():
    def fn(index):
        x = ops.load("arg0", index[0])
        return ops.add(ops.exp(x), ops.exp(ops.load("arg0", index[0])))

    body = trace(fn, (5,), lambda name: torch.float32)
    assert [op.name for op in body.ops] == ["load", "exp", "add"]


def test_scheduled_nodes_hold_bodies_over_their_loop_variables():
    gm = torch.fx.symbolic_trace(lambda x: torch.softmax(x, -1))
    (part,) = lower_parts(gm, [torch.randn(4, 9)])
    (group,) = part.groups
    names = [sorted(str(s) for s in n.loop.ops[0].args[1].free_symbols) for n in group.nodes]
    # the reductions read along r0, the pointwise nodes inside the row along y0
    assert ["r0", "x0"] in names and ["x0", "y0"] in names
