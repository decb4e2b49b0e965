"""Edges a new user hits: threads, interrupts, deep recursion, tracers, reset, long runs.

Every result is compared with eager; where torch.compile is the yardstick it is named.
"""

from __future__ import annotations

import gc
import os
import sys
import threading

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


def _fn(k):
    def f(x):
        return torch.sin(x) * k + x.cos()

    return f


def test_eight_threads_compile_and_call_eight_functions():
    fns = [_fn(k) for k in range(8)]
    compiled = [fj.compile(f) for f in fns]
    x = torch.randn(16)
    errors, results = [], {}
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for _ in range(20):
                results[i] = compiled[i](x)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, f in enumerate(fns):
        torch.testing.assert_close(results[i], f(x))
        assert len(fe.cache_entries(f)) >= 1


def test_two_threads_compile_the_same_function_at_once():
    f = _fn(3)
    compiled = fj.compile(f)
    x = torch.randn(16)
    errors, results = [], []
    barrier = threading.Barrier(2)

    def work():
        try:
            barrier.wait()
            for _ in range(20):
                results.append(compiled(x))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for r in results:
        torch.testing.assert_close(r, f(x))
    assert 1 <= len(fe.cache_entries(f)) <= 2  # at most one entry per racing compile


def test_keyboard_interrupt_from_a_backend_propagates_and_the_next_call_compiles():
    calls = []

    def interrupting(gm, example_inputs):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return gm.forward

    f = _fn(2)
    x = torch.randn(8)
    compiled = fj.compile(f, backend=interrupting)
    with pytest.raises(KeyboardInterrupt):
        compiled(x)
    assert fe.cache_entries(f) == []
    assert fe.get_callback() is None  # the wrapper restored the thread's setting
    torch.testing.assert_close(compiled(x), f(x))
    assert len(calls) == 2 and len(fe.cache_entries(f)) == 1


def _chain(n: int) -> dict:
    """f0 -> f1 -> ... -> f<n>: n distinct functions, each inlined into its caller."""
    src = f"def f{n}(x):\n    return x.sin()\n"
    for i in range(n - 1, -1, -1):
        src += f"def f{i}(x):\n    return f{i + 1}(x + 1)\n"
    namespace: dict = {"torch": torch}
    exec(src, namespace)
    return namespace


def _depth() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


@pytest.fixture
def low_recursion_limit():
    """A lower limit keeps these traces short; the logic is the same at any limit."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(_depth() + 400)
    yield sys.getrecursionlimit()
    sys.setrecursionlimit(previous)


def test_inlining_deeper_than_the_recursion_limit_compiles_what_fits(
    monkeypatch, low_recursion_limit
):
    monkeypatch.setattr(fj.config, "max_inline_depth", 100_000)  # only the stack limits it
    namespace = _chain(250)  # eager fits in the 400 frames left; inlining all of it would not
    x = torch.randn(4)
    expected = namespace["f0"](x)
    torch.testing.assert_close(fj.compile(namespace["f0"])(x), expected)
    assert fe.cache_entries(namespace["f0"])  # the part that fits was compiled


def test_a_chain_called_near_the_recursion_limit_runs_eagerly_where_it_must(
    low_recursion_limit,
):
    namespace = _chain(400 - 30)  # eager just fits; no room left to trace near the bottom
    x = torch.randn(4)
    expected = namespace["f0"](x)
    torch.testing.assert_close(fj.compile(namespace["f0"])(x), expected)


def _recurse(x, n):
    if n == 0:
        return x.sin()
    return _recurse(x + 1, n - 1)


def test_a_user_recursion_error_keeps_its_type():
    x = torch.randn(4)
    n = sys.getrecursionlimit() + 100
    with pytest.raises(RecursionError):
        _recurse(x, n)
    with pytest.raises(RecursionError):
        fj.compile(_recurse)(x, n)


def test_compile_and_run_while_sys_settrace_is_active():
    f = _fn(5)
    x = torch.randn(8)
    seen = []

    def tracer(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)
        return None

    sys.settrace(tracer)
    try:
        out = fj.compile(f)(x)
    finally:
        sys.settrace(None)
    torch.testing.assert_close(out, f(x))
    assert "f" in seen  # the tracer saw the user's function, as under eager
    torch.testing.assert_close(fj.compile(f)(x), f(x))  # and compiling works after it


def test_reset_between_calls():
    f = _fn(7)
    x = torch.randn(8)
    compiled = fj.compile(f)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), f(x))
        fj.reset()
        assert fe.cache_entries(f) == []
    torch.testing.assert_close(compiled(x), f(x))


def _rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_a_million_hit_path_calls_keep_rss_flat():
    def f(x):
        return x + 1

    compiled = fj.compile(f)
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x), f(x))
    for _ in range(20_000):  # warm up allocator pools
        compiled(x)
    gc.collect()
    before = _rss_kib()
    for _ in range(1_000_000):
        compiled(x)
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB over 1,000,000 hit-path calls"
    torch.testing.assert_close(compiled(x), f(x))
