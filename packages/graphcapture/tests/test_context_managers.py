"""`with` over user context managers traced in one graph: an exception raised in the body
reaches the traced __exit__, which swallows it (a true result) or lets it go on with its
own type; unittest's assertRaises / assertRaisesRegex (and torch's TestCase's) in both
forms, as torch's own tests run them inside a compiled test method.

Each case runs eagerly and compiled with fullgraph=True; results and the order of the
context managers' side effects must match eager, in as many graphs as torch.compile.
A raise that is not swallowed, and a failing assertion, fail as they do eagerly.
"""

from __future__ import annotations

import contextlib
import unittest

import pytest
import torch
import torch._dynamo.testing
from torch.testing._internal.common_utils import TestCase as TorchTestCase

from framejit import graphcapture as fj

LOG: list = []


class Recorder:
    """Logs what __exit__ receives; swallows the exception when `swallow`."""

    def __init__(self, tag, swallow=False):
        self.tag = tag
        self.swallow = swallow

    def __enter__(self):
        LOG.append(("enter", self.tag))
        return self

    def __exit__(self, kind, value, tb):
        LOG.append(("exit", self.tag, kind, None if value is None else str(value), tb is None))
        return self.swallow


class _Case(unittest.TestCase):
    def runTest(self):
        pass


class _TorchCase(TorchTestCase):
    def runTest(self):
        pass


CASE = _Case()
TORCH_CASE = _TorchCase()


def _lookup(d, k):
    return d[k]


def swallowed_raise(x):
    with Recorder("a", swallow=True) as r:
        x = x + 1
        raise KeyError("k")
    return x * 2, r.tag


def swallowed_from_a_callee(x):
    with Recorder("a", swallow=True):
        x = x.sin()
        _lookup({}, "missing")
        x = x + 100  # not reached
    return x


def normal_exit_gets_nones(x):
    with Recorder("a"):
        y = x.cos()
    return y


def not_swallowed_then_caught(x):
    try:
        with Recorder("a"):
            x = x + 1
            raise ValueError("v")
    except ValueError as e:
        return x - 1, str(e)
    return x, None


def nested_inner_lets_it_go(x):
    with Recorder("outer", swallow=True), Recorder("inner"):
        x = x * 3
        raise IndexError("i")
    return x


def context_from_the_inputs(x, ctx):
    with ctx:
        x = x + 2
        _lookup({}, "z")
    return x


def stdlib_suppress(x):
    with contextlib.suppress(KeyError, IndexError):
        x = x + 1
        [][1]
    return x


def unittest_assert_raises(x):
    CASE.assertRaises(TypeError, lambda: {1} - 1)
    CASE.assertRaises(KeyError, _lookup, {}, "k")
    s = {1, 2}
    CASE.assertRaises(TypeError, s.copy, 1)
    CASE.assertRaises(TypeError, s.issubset, [[]])
    CASE.assertRaises(KeyError, s.remove, 3)
    return x + len(s)


def unittest_assert_raises_context(x):
    with CASE.assertRaises(KeyError) as cm:
        x = x * 2
        _lookup({}, "k")
    with CASE.assertRaisesRegex(ValueError, "b+"):
        raise ValueError("abbc")
    return x, str(cm.exception), type(cm.exception)


def torch_testcase_assert_raises(x):
    TORCH_CASE.assertRaises(TypeError, lambda: {1} | 2)
    with TORCH_CASE.assertRaises(KeyError):
        set().pop()
    return x - 1


def exception_without_traceback(x):
    try:
        raise KeyError("k")
    except KeyError as e:
        stored = e.with_traceback(None)
    return x + 1, stored.__traceback__ is None, str(stored)


ONE_GRAPH = [
    swallowed_raise,
    swallowed_from_a_callee,
    normal_exit_gets_nones,
    not_swallowed_then_caught,
    nested_inner_lets_it_go,
    stdlib_suppress,
    unittest_assert_raises,
    unittest_assert_raises_context,
    torch_testcase_assert_raises,
    exception_without_traceback,
]


def _outcome(fn, *args):
    LOG.clear()
    try:
        result, error = fn(*args), None
    except Exception as e:  # the eager exception is part of the outcome
        result, error = None, (type(e), str(e))
    return result, error, list(LOG)


def _same(a, b) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, torch.Tensor):
        torch.testing.assert_close(b, a)
    else:
        assert a == b


def _graphs(fn, *args) -> int:
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        got = _outcome(fj.compile(fn, backend="eager", fullgraph=True), *args)
    finally:
        unsubscribe()
    return got, sum(len(r.graphs) for r in records)


@pytest.fixture
def trace_unittest():
    """torch.compile traces unittest only when asked (torch's tests ask)."""
    with torch._dynamo.config.patch(enable_trace_unittest=True):
        yield


@pytest.mark.parametrize("fn", ONE_GRAPH, ids=lambda f: f.__name__)
def test_with_over_user_context_managers_in_one_graph(fn, trace_unittest):
    x = torch.randn(4)
    eager = _outcome(fn, x)
    assert eager[1] is None
    fj.reset()
    got, graphs = _graphs(fn, x)
    _same(eager[0], got[0])
    assert got[1:] == eager[1:]
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=counter, fullgraph=True)(x)
    assert graphs == counter.frame_count == 1


@pytest.mark.parametrize("swallow", [False, True])
def test_context_manager_from_the_inputs(swallow):
    x = torch.randn(3)
    eager = _outcome(context_from_the_inputs, x, Recorder("in", swallow))
    compiled = fj.compile(context_from_the_inputs, backend="eager", fullgraph=swallow)
    for _ in range(2):
        got = _outcome(compiled, x, Recorder("in", swallow))
        _same(eager[0], got[0])
        assert got[1:] == eager[1:]


def assertion_fails(x):
    CASE.assertRaises(KeyError, lambda: x + 1)
    return x


def regex_does_not_match(x):
    with CASE.assertRaisesRegex(KeyError, "b+"):
        _lookup({}, "aa")
    return x


def other_exception_goes_through(x):
    with CASE.assertRaises(KeyError):
        x = x + 1
        raise TypeError("t")
    return x


def exit_lets_it_go(x):
    with Recorder("a"):
        x = x + 1
        _lookup({}, "k")
    return x


def exit_raises_its_own(x):
    with CASE.assertRaises(KeyError):
        x = x * 2  # nothing raised: the exit's AssertionError
    return x


FAILING = [
    assertion_fails,
    regex_does_not_match,
    other_exception_goes_through,
    exit_lets_it_go,
    exit_raises_its_own,
]


@pytest.mark.parametrize("fn", FAILING, ids=lambda f: f.__name__)
def test_failures_keep_their_eager_type_and_message(fn):
    x = torch.randn(3)
    eager = _outcome(fn, x)
    assert eager[1] is not None
    got = _outcome(fj.compile(fn, backend="eager"), x)
    assert got[1:] == eager[1:]
    fj.reset()
    with pytest.raises(fj.GraphBreakInFullgraph):  # torch.compile: Unsupported, likewise
        fj.compile(fn, backend="eager", fullgraph=True)(x)
