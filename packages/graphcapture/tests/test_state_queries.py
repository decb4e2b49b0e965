"""Questions about torch's process state, read while tracing, are guarded (issue 10).

Each test compiles a function whose branch depends on one answer, calls it, changes the
state, calls again and goes back: every result must be eager's, and each answer is one
graph (fullgraph), as torch.compile recompiles on the same change.  These answers were
folded without a guard (the second call kept the first branch), or asked under the trace's
fake mode (a dispatch mode eager never sees).
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode, is_in_torch_dispatch_mode

from framejit import graphcapture as fj
from framejit.graphcapture import events


@contextlib.contextmanager
def _switched(getter, setter, value):
    before = getter()
    setter(value)
    try:
        yield
    finally:
        setter(before)


def _anomaly():
    return _switched(torch.is_anomaly_enabled, torch.set_anomaly_enabled, True)


def _warn_always():
    return _switched(torch.is_warn_always_enabled, torch.set_warn_always, True)


def _matmul_precision():
    return _switched(
        torch.get_float32_matmul_precision, torch.set_float32_matmul_precision, "medium"
    )


def _autocast_cache_off():
    return _switched(torch.is_autocast_cache_enabled, torch.set_autocast_cache_enabled, False)


def _autocast_dtype():
    # the dtype autocast would use, set while autocast is off: the global-state guard
    # compares dtypes only of the devices autocast is on for (torch.compile misses it too)
    return _switched(
        lambda: torch.get_autocast_dtype("cpu"),
        lambda d: torch.set_autocast_dtype("cpu", d),
        torch.float16,
    )


def _flash_sdp_off():
    return _switched(
        torch.backends.cuda.flash_sdp_enabled, torch.backends.cuda.enable_flash_sdp, False
    )


# (question, the change that flips its answer, whether torch.compile guards it)
QUERIES = {
    "anomaly": (torch.is_anomaly_enabled, _anomaly, True),
    "warn_always": (torch.is_warn_always_enabled, _warn_always, True),
    "matmul_precision": (lambda: torch.get_float32_matmul_precision() == "highest", _matmul_precision, True),
    "autocast_cache": (torch.is_autocast_cache_enabled, _autocast_cache_off, True),
    "autocast_dtype": (lambda: torch.get_autocast_dtype("cpu") == torch.bfloat16, _autocast_dtype, False),
    "flash_sdp": (torch.backends.cuda.flash_sdp_enabled, _flash_sdp_off, True),
}  # fmt: skip


def _branching_on(question):
    def fn(x):
        if question():
            return x + 1
        return x - 1

    return fn


def _run(compiled, fn, change):
    x = torch.zeros(2)
    torch.testing.assert_close(compiled(x), fn(x))
    with change():
        torch.testing.assert_close(compiled(x), fn(x))
    torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_state_answer_is_guarded(name):
    question, change, _ = QUERIES[name]
    fn = _branching_on(question)
    counter = fj.testing.CompileCounter()
    _run(fj.compile(fn, backend=counter, fullgraph=True), fn, change)
    assert counter.frame_count == 2  # one graph per answer, the first one reused after


@pytest.mark.parametrize("name", sorted(n for n, (_, _, guarded) in QUERIES.items() if guarded))
def test_graph_count_matches_torch_compile(name):
    import torch._dynamo
    import torch._dynamo.testing

    question, change, _ = QUERIES[name]
    fn = _branching_on(question)
    counter = fj.testing.CompileCounter()
    _run(fj.compile(fn, backend=counter), fn, change)
    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    try:
        _run(torch.compile(fn, backend=reference), fn, change)
    finally:
        torch._dynamo.reset()
    assert (counter.frame_count, counter.op_count) == (reference.frame_count, reference.op_count)


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    "question",
    [is_in_torch_dispatch_mode, lambda: torch._C._len_torch_dispatch_stack() > 0],
    ids=["is_in_torch_dispatch_mode", "len_torch_dispatch_stack"],
)
def test_dispatch_mode_queries_do_not_see_the_trace_fake_mode(question):
    """Asked under the fake mode that propagates the trace's ops, these answered True with
    no mode on (every call took the wrong branch)."""
    fn = _branching_on(question)
    _run(fj.compile(fn, backend="eager"), fn, _Passthrough)


def test_query_with_arguments_is_guarded_by_calling_it_again():
    fn = _branching_on(lambda: torch.get_autocast_dtype("cpu") == torch.bfloat16)
    records = []
    unsubscribe = events.subscribe(records.append)
    try:
        fj.compile(fn, backend="eager", fullgraph=True)(torch.zeros(2))
    finally:
        unsubscribe()
    parts = records[0].check_fn.code_parts
    assert any(".get_autocast_dtype('cpu')" in part for part in parts)


def _parallel_info(x):
    return x + len(torch.__config__.parallel_info())


def test_call_on_nothing_answering_a_constant_is_a_break():
    """No name says what a zero-argument torch call reads: its constant answer is not
    folded unguarded (the thread count in parallel_info() changes with set_num_threads)."""
    records = []
    unsubscribe = events.subscribe(records.append)
    try:
        compiled = fj.compile(_parallel_info, backend="eager")
        x = torch.zeros(2)
        torch.testing.assert_close(compiled(x), _parallel_info(x))
    finally:
        unsubscribe()
    reasons = [b.reason for r in records for b in r.graph_breaks]
    assert any("parallel_info" in reason and "unguarded" in reason for reason in reasons)


def test_setter_named_like_a_flag_is_not_a_query():
    """`torch._C._set_grad_enabled(False)` ends like a query's name (`_enabled`) but sets:
    it is traced as the switch it is, not called once at trace time."""

    def fn(x):
        torch._C._set_grad_enabled(False)
        y = x * 2
        torch._C._set_grad_enabled(True)
        return y

    x = torch.ones(2, requires_grad=True)
    got = fj.compile(fn, backend="eager", fullgraph=True)(x)
    assert torch.is_grad_enabled()
    assert not got.requires_grad
