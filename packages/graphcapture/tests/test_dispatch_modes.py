"""TorchDispatchModes and compiled code, against eager and torch.compile's rules.

Under a user dispatch mode a frame runs eagerly (the mode sees eager's ATen calls, not a
fused kernel's nor the trace's); a mode's own handler and what it calls are not compiled
unless compiled explicitly inside it; a builtin or ATen op handed to compile gets a frame.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


class IgnoresCompile(OpLog):
    @classmethod
    def ignore_compile_internals(cls):
        return True


def _fn(x):
    return (x + x).sin() * 2


def _other_ops_backend(gm, example_inputs):
    """Computes _fn's graph with other ATen ops (as a fusing backend would): a mode that saw
    the compiled graph run would log these instead of eager's."""
    return lambda x: (torch.sin(x * 2) * 2,)


def test_frame_runs_eagerly_under_a_user_dispatch_mode():
    fj.reset()
    x = torch.full((5,), 3.0)
    with OpLog() as eager:
        expected = _fn(x)
    f = fj.compile(_fn, backend=_other_ops_backend)
    f(x)  # compiled outside the mode first
    for _ in range(2):
        with OpLog() as mode:
            out = f(x)
        torch.testing.assert_close(out, expected)
        assert mode.ops == eager.ops  # not the trace's ops, nor one fused kernel's


def test_mode_that_ignores_compile_internals_still_compiles():
    fj.reset()
    cnt = CompileCounter()
    f = fj.compile(_fn, backend=cnt)
    x = torch.randn(4)
    with IgnoresCompile():
        torch.testing.assert_close(f(x), _fn(x))
    assert cnt.frame_count == 1


def test_handler_runs_eagerly_but_compile_inside_it_compiles():
    fj.reset()
    outer, inner = CompileCounter(), CompileCounter()
    seen = []

    def helper(func, args):
        return func(*args)

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(helper(func, args))  # not compiled: torch keeps handlers eager
            return fj.compile(torch.mul, backend=inner, fullgraph=True)(*args)

    x = torch.full((3,), 2.0)
    with Mode():
        out = fj.compile(lambda a, b: torch.add(a, b), backend=outer)(x, x)
    torch.testing.assert_close(out, x * x)
    torch.testing.assert_close(seen[0], x + x)
    assert outer.frame_count == 0  # the outer frame ran eagerly under the mode
    assert inner.frame_count == 1  # torch.mul got a frame and one graph


def test_builtin_and_aten_op_get_a_frame():
    for op in (torch.add, torch.ops.aten.add.Tensor, torch.ops.aten.add):
        fj.reset()
        cnt = CompileCounter()
        a, b = torch.randn(3), torch.randn(3)
        torch.testing.assert_close(fj.compile(op, backend=cnt, fullgraph=True)(a, b), a + b)
        assert cnt.frame_count == 1 and cnt.op_count == 1
