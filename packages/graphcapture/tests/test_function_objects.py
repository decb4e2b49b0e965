"""Function objects library code passes around, read like any object: a functools.partial's
own attributes (hasattr(p, "__name__"), set ones), eager's answers, guarded."""

from __future__ import annotations

import functools

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events


def _graphs(fn, *args):
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        out = fj.compile(fn, fullgraph=True)(*args)
    finally:
        unsubscribe()
    return sum(len(r.graphs) for r in seen), out


def bar(x, y):
    return torch.sin(x) + torch.cos(y)


GLOBAL_PARTIAL = functools.partial(bar, y=4)
NAMED_PARTIAL = functools.partial(bar, y=4)
NAMED_PARTIAL.__name__ = "named"


PARTIAL_ATTRIBUTES = {
    "hasattr_name_global": lambda x: (x + 1, hasattr(GLOBAL_PARTIAL, "__name__")),
    "getattr_default_global": lambda x: (x + 1, getattr(GLOBAL_PARTIAL, "__name__", "none")),
    "set_name": lambda x: (x + 1, getattr(NAMED_PARTIAL, "__name__", "none")),
    "doc": lambda x: (x + 1, GLOBAL_PARTIAL.__doc__),
    "made_in_frame": lambda x: (
        functools.partial(bar, y=x)(x),
        hasattr(functools.partial(bar, y=x), "__name__"),
    ),
}


@pytest.mark.parametrize("case", list(PARTIAL_ATTRIBUTES))
def test_partial_own_attributes(case):
    fj.reset()
    fn = PARTIAL_ATTRIBUTES[case]
    x = torch.randn(3)
    count, (value, answer) = _graphs(fn, x)
    expected_value, expected_answer = fn(x)
    assert count == 1 and answer == expected_answer
    torch.testing.assert_close(value, expected_value)


def test_partial_gaining_an_attribute_recompiles():
    fj.reset()
    p = functools.partial(bar, y=1)

    def f():
        return hasattr(p, "__name__")

    compiled = fj.compile(f)
    assert compiled() is False
    p.__name__ = "late"
    assert compiled() is True
