"""Regressions found by torch's repro tests (test/dynamo/_repros_*.py): each against eager,
and against torch.compile's graph count where that is the yardstick."""

from __future__ import annotations

import contextlib
import threading

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing

from framejit import graphcapture as fj


def _counts(fn, *args):
    """(framejit's frames, ops), (torch.compile's frames, ops), after checking both with eager."""
    expected = fn(*args)
    out = []
    for compile_ in (fj.compile, torch.compile):
        counter = torch._dynamo.testing.CompileCounter()
        torch._dynamo.reset()
        got = compile_(fn, backend=counter)(*args)
        torch.testing.assert_close(got, expected)
        out.append((counter.frame_count, counter.op_count))
    return out


# ---------------------------------------------------------------- locals() / vars()
def _locals_after_branch(x):
    if x.dim() > 2:
        batch_size, seq_len, hidden_dim = x.shape
        x = x.view(-1, hidden_dim)
    x = x + 1
    if "batch_size" in locals() and "seq_len" in vars():
        x = x.view(batch_size, seq_len, -1)
    return x


def _locals_after_break(x):
    a = 2
    b = x * 2
    print("", end="")  # graph break: locals() is read in the resume function
    d = locals()
    return d["b"] + d["a"], sorted(d)


def _locals_with_a_cell(x):
    y = x + 1

    def inner():
        return y

    return sorted(locals()), inner()


@pytest.mark.parametrize("fn", [_locals_after_branch, _locals_after_break, _locals_with_a_cell])
def test_locals_sees_every_bound_name(fn):
    # was a wrong answer: locals() ran in the rebuilt frame, which lacked batch_size
    x = torch.randn(2, 3, 4)
    expected = fn(x)
    got = fj.compile(fn, backend="eager")(x)
    if isinstance(expected, tuple):
        tensor_at = 0 if isinstance(expected[0], torch.Tensor) else 1
        torch.testing.assert_close(got[tensor_at], expected[tensor_at])
        assert got[1 - tensor_at] == expected[1 - tensor_at]
    else:
        torch.testing.assert_close(got, expected)


# ---------------------------------------------------------------- contextmanager throw
def test_exception_in_with_body_reaches_the_contextmanager_handler():
    # was AttributeError: 'tuple_iterator' object has no attribute 'throw' -- the run-ahead
    # generator crossed the break as a tuple iterator, and __exit__ threw into it
    hit = []

    @contextlib.contextmanager
    def ctx():
        try:
            yield
        except RuntimeError:
            hit.append(1)

    def raises():
        raise RuntimeError("boof")

    def f(x):
        with ctx():
            raises()
        return x + 1

    torch.testing.assert_close(fj.compile(f, backend="eager")(torch.ones(2)), torch.ones(2) + 1)
    assert hit == [1]


# ---------------------------------------------------------------- breaks in loops
def _sin(x):
    return torch.sin(x)


def _break_in_for(x):
    for _ in range(12):
        _sin(x)
        torch._dynamo.graph_break()
    return x


def _break_in_while(x):
    i = 12
    while i > 10:
        x = _sin(x)
        i -= 1
        torch._dynamo.graph_break()
    return x


def _loop_with_break_in_callee_helper(x):
    for _ in range(3):
        x += 1
        torch._dynamo.graph_break()
    return x


def _loop_with_break_in_callee(x):
    x = x + 2
    _loop_with_break_in_callee_helper(x)
    return x + 3


@pytest.mark.parametrize("fn", [_break_in_for, _break_in_while, _loop_with_break_in_callee])
def test_breaks_in_loops_count_as_torch(fn):
    # the looping frame runs eagerly (was a resume function per iteration, up to the cache limit)
    got, torch_counts = _counts(fn, torch.randn(4))
    assert got == torch_counts


# ---------------------------------------------------------------- graph raising in a try
LOG: list = []


def _select_or_fallback(x, idx):
    try:
        y = torch.index_select(x, 0, idx) * 2  # out of range only at run time
    except IndexError:
        LOG.append("except")
        y = x + 100
    return y


def _helper_with_try(x, idx):
    try:
        return torch.index_select(x, 0, idx) * 2
    except IndexError:
        LOG.append("inner")
        return x - 100


def _calls_helper_with_try(x, idx):
    return _helper_with_try(x, idx) + 1


def _break_in_try_after_raising_op(x, idx):
    try:
        y = torch.index_select(x, 0, idx) * 2
        print("", end="")  # graph break
        y = y + 1
    except IndexError:
        LOG.append("except")
        y = x * 0
    return y


@pytest.mark.parametrize(
    "fn", [_select_or_fallback, _calls_helper_with_try, _break_in_try_after_raising_op]
)
def test_graph_raising_at_run_time_reaches_the_frames_except(fn):
    # was: the IndexError left the compiled frame, skipping its except (torch.compile too)
    compiled = fj.compile(fn, backend="eager")
    for idx in (torch.tensor([7]), torch.tensor([1]), torch.tensor([9])):
        LOG.clear()
        expected = fn(torch.ones(4), idx)
        expected_log = list(LOG)
        LOG.clear()
        torch.testing.assert_close(compiled(torch.ones(4), idx), expected)
        assert expected_log == LOG


def _no_grad_select(x, idx):
    y = x * 2
    with torch.no_grad():
        y = torch.index_select(y, 0, idx)
    return y


def test_graph_raising_inside_no_grad_restores_grad_mode():
    # was: the graph's set_grad_enabled(False) stayed in force after the IndexError
    x = torch.ones(4, requires_grad=True)
    with pytest.raises(IndexError):
        fj.compile(_no_grad_select, backend="eager")(x, torch.tensor([9]))
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------- nullcontext, @no_grad()
def _with_ctx_object(x, ctx):
    x = x.sin()
    with ctx as bound:
        x = x.cos()
    return x.sin(), bound


def _with_ctx_class(x, ctx):
    x = x.sin()
    with ctx(7) as bound:
        x = x.cos()
    return x.sin() + bound


@torch.no_grad()
def _no_grad_sin(x):
    return x.sin()


def _calls_no_grad_function(x):
    return _no_grad_sin(x).cos(), (x * 2).requires_grad


@pytest.mark.parametrize(
    "fn, args",
    [
        (_with_ctx_object, (torch.randn(3), contextlib.nullcontext(5))),
        (_with_ctx_class, (torch.randn(3), contextlib.nullcontext)),
        (_calls_no_grad_function, (torch.randn(3, requires_grad=True),)),
    ],
    ids=["nullcontext_object", "nullcontext_class", "no_grad_decorated"],
)
def test_context_managers_torch_traces_in_one_graph(fn, args):
    expected = fn(*args)
    counter = torch._dynamo.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*args)
    torch.testing.assert_close(got, expected)
    assert got[0].requires_grad == expected[0].requires_grad
    assert counter.frame_count == 1


# ---------------------------------------------------------------- user-defined iterators
class _CountTo:
    def __init__(self, n):
        self.i = 0
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i


class _Wrapping:  # omegaconf's ListConfig: __iter__ returns an iterator object over a list
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return _WrappingIterator(self.items)


class _WrappingIterator:
    def __init__(self, items):
        self.it = iter(items)

    def __next__(self):
        return next(self.it) * 2  # its StopIteration comes from next()


def _sum_made_iterator(x):
    for i in _CountTo(3):
        x = x + i
    return x


def _body_reads_iterator_state(x, it):
    out = []
    for v in it:
        out.append(x * v + it.i)  # the state __next__ left: eager's interleaving
    return out


def _sum_wrapped(x, obj):
    for v in obj:
        x = x + v
    return x


@pytest.mark.parametrize(
    "fn, make_args",
    [
        (_sum_made_iterator, lambda: (torch.zeros(1),)),
        (_body_reads_iterator_state, lambda: (torch.ones(1), _CountTo(3))),
        (_sum_wrapped, lambda: (torch.zeros(2), _Wrapping([1, 3, torch.tensor([7.0, 8.0])]))),
    ],
    ids=["made_in_frame", "state_read_in_body", "iterator_object"],
)
def test_user_iterators_are_consumed_lazily(fn, make_args):
    # was: __iter__ returning self recursed until the inlining depth limit (a graph break)
    expected = fn(*make_args())
    counter = torch._dynamo.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*make_args())
    torch.testing.assert_close(got, expected)
    assert counter.frame_count == 1


def test_compiled_container_module_keeps_its_truth_and_length():
    # was: an empty compiled ModuleList was truthy (the wrapper has no __len__)
    empty, filled = torch.nn.ModuleList(), torch.nn.ModuleList([torch.nn.Linear(2, 2)])
    assert not fj.compile(empty) and len(fj.compile(empty)) == 0
    compiled = fj.compile(filled)
    assert compiled and len(compiled) == 1 and compiled[0] is filled[0]
    assert list(compiled) == list(filled)
    assert fj.compile(torch.nn.Linear(2, 2))  # a module without __len__ is true


_LOCAL = threading.local()


def _reads_thread_local(x):
    return torch.cat([x, _LOCAL.x])


def test_thread_local_attribute_is_read_in_the_calling_thread():
    # was a graph break: _local.__getattribute__ is a C slot (a generic lookup per thread)
    _LOCAL.x = torch.rand(1)
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_reads_thread_local, backend=counter, fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(1)), _reads_thread_local(torch.ones(1)))
    got = {}

    def other_thread():
        _LOCAL.x = torch.full((1,), 5.0)
        got["value"] = compiled(torch.ones(1))

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    torch.testing.assert_close(got["value"], torch.tensor([1.0, 5.0]))
    assert counter.frame_count == 1
