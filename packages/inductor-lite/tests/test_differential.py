"""Differential fuzzing (kept small): random elementwise/reduction programs over random
layouts, compiled and compared with eager.  Derandomized, so reruns hit the disk cache."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.fx.experimental.proxy_tensor import make_fx

from framejit.inductor_lite import compile_fx

UNARY = [torch.exp, torch.tanh, torch.sigmoid, torch.relu, torch.abs, torch.neg, torch.sin]
BINARY = [torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum]
REDUCE = [
    lambda x: x.sum(-1, keepdim=True),
    lambda x: x.amax(0, keepdim=True),
    lambda x: x.mean(-1, keepdim=True),
    lambda x: torch.softmax(x, -1),
]


@st.composite
def programs(draw):
    steps = draw(
        st.lists(
            st.tuples(st.sampled_from(["u", "b", "r"]), st.integers(0, 6), st.integers(0, 10)),
            min_size=1,
            max_size=6,
        )
    )
    shape = draw(st.sampled_from([(3, 5), (1, 7), (8, 1), (4, 4)]))
    transposed = draw(st.booleans())
    return steps, shape, transposed


def build(steps):
    def fn(x, y):
        values = [x, y]
        for kind, op, pick in steps:
            a = values[pick % len(values)]
            if kind == "u":
                values.append(UNARY[op % len(UNARY)](a))
            elif kind == "b":
                values.append(BINARY[op % len(BINARY)](a, values[(pick + 1) % len(values)]))
            else:
                values.append(REDUCE[op % len(REDUCE)](a))
        return values[2:]

    return fn


@settings(max_examples=8, deadline=None, derandomize=True)
@given(programs())
def test_random_programs_match_eager(program):
    steps, shape, transposed = program
    x = torch.randn(shape)
    y = torch.randn(shape[::-1]).t() if transposed else torch.randn(shape)
    fn = build(steps)
    gm = make_fx(fn)(x, y)
    compiled = compile_fx(gm, [x, y])
    torch.testing.assert_close(compiled(x, y), fn(x, y), equal_nan=True)
    assert not compiled.fallback_reasons
