"""Differential fuzzing: random pointwise/reduction programs, framejit vs eager, both backends."""

from __future__ import annotations

import operator

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from framejit import graphcapture as fj

UNARY = [torch.relu, torch.sigmoid, torch.tanh, torch.exp, torch.neg, torch.abs, torch.sin]
BINARY = [operator.add, operator.sub, operator.mul, torch.maximum, torch.minimum]
REDUCE = [
    lambda t: t.sum(dim=-1, keepdim=True),
    lambda t: t.amax(dim=-1, keepdim=True),
    lambda t: t.mean(dim=0),
    lambda t: torch.softmax(t, dim=-1),
]

step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(range(len(UNARY)))),
    st.tuples(st.just("b"), st.sampled_from(range(len(BINARY)))),
    st.tuples(st.just("r"), st.sampled_from(range(len(REDUCE)))),
)


def build(program):
    def fn(x, y):
        for kind, i in program:
            if kind == "u":
                x = UNARY[i](x)
            elif kind == "b":
                x = BINARY[i](x, y)
            else:
                x = REDUCE[i](x)
        return x

    return fn


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    program=st.lists(step, min_size=1, max_size=6),
    backend=st.sampled_from(["eager", "inductor-lite"]),
)
def test_random_programs_match_eager(program, backend):
    fn = build(program)
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    expected = fn(x, y)
    got = fj.compile(fn, backend=backend)(x, y)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
    fj.reset()
