"""fj.compile called inside a compiled frame: ignored, the function inlined (as TorchDynamo).

The outer frame's one graph holds the inner function's ops; a compiled wrapper that would
leave the frame is a graph break, and eager's wrapper comes back.
"""

from __future__ import annotations

import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


def _inner(x):
    return x.sin() + 1


def _outer(x):
    y = fj.compile(_inner, backend="eager", fullgraph=True)(x * 2)
    return y.cos()


def _outer_method(m, x):
    return fj.compile(m.forward)(x) - 1


def _returns_wrapper(x):
    return fj.compile(_inner), x + 1


def test_nested_compile_is_inlined_into_one_graph():
    fj.reset()
    cnt = CompileCounter()
    x = torch.randn(4)
    f = fj.compile(_outer, backend=cnt, fullgraph=True)
    for _ in range(2):
        torch.testing.assert_close(f(x), _outer(x))
    assert (cnt.frame_count, cnt.op_count) == (1, 4)


def test_nested_compile_of_a_bound_method():
    fj.reset()
    cnt = CompileCounter()
    m = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    torch.testing.assert_close(
        fj.compile(_outer_method, backend=cnt, fullgraph=True)(m, x), _outer_method(m, x)
    )
    assert cnt.frame_count == 1


def test_compiled_wrapper_leaving_the_frame_is_the_real_one():
    fj.reset()
    x = torch.randn(4)
    g, y = fj.compile(_returns_wrapper, backend="eager")(x)
    assert getattr(g, "_framejit_orig", None) is _inner  # eager's wrapper, not _inner itself
    torch.testing.assert_close(g(x), _inner(x))
    torch.testing.assert_close(y, x + 1)
