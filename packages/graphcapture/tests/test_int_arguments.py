"""Python int arguments of a frame as symbols (dim_policy.int_dynamic), beside torch.compile.

Automatic dynamic: the first compile specialises an int argument, a compile that sees another
value traces it as a SymInt graph input and reuses that graph for any value; dynamic=True
makes it a symbol from the first call, dynamic=False never.  Every use that needs the number
(a branch, range(n), a list index) is guarded through the ShapeEnv.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj

torch_dynamo = pytest.importorskip("torch._dynamo")
from torch._dynamo.testing import CompileCounter  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh():
    fj.reset()
    yield
    fj.reset()


def scale(x, n):
    return x * n


def reshape(x, n):
    return x.reshape(n, -1)


def arange(x, n):
    return torch.arange(n) + x.sum()


def branch(x, n):
    if n > 3:
        return x + 1
    return x - 1


def unrolled(x, n):
    for i in range(n):
        x = x + i
    return x


def indexed(x, n):
    table = [1, 2, 3, 4, 5, 6]
    return x * table[n]


def returned(x, n):
    return x * 2, n + 1, n


def across_break(x, n):
    y = x * n
    torch._dynamo.graph_break()
    return y + n, n


X = torch.randn(12)
CASES = {
    "mul": (scale, [(X, n) for n in range(2, 8)], None),
    "reshape": (reshape, [(X, n) for n in (2, 3, 4, 6)], None),
    "arange": (arange, [(X, n) for n in range(2, 8)], None),
    "branch": (branch, [(X, n) for n in range(1, 8)], None),
    "range-unrolled": (unrolled, [(X, n) for n in range(1, 5)], None),
    "list-index": (indexed, [(X, n) for n in range(1, 5)], None),
    "returned": (returned, [(X, n) for n in range(1, 5)], None),
    "across-break": (across_break, [(X, n) for n in range(1, 6)], None),
    "mul-dynamic-true": (scale, [(X, n) for n in range(0, 6)], True),
    "mul-dynamic-false": (scale, [(X, n) for n in range(2, 6)], False),
    "bool-and-float-are-not-int": (scale, [(X, 2), (X, 3), (X, True), (X, 4), (X, 2.5)], None),
}


def _frames(compile_fn, counter, fn, calls, dynamic) -> int:
    compiled = compile_fn(fn, backend=counter, dynamic=dynamic)
    for args in calls:
        torch.testing.assert_close(compiled(*args), fn(*args))
    return counter.frame_count


@pytest.mark.parametrize("name", list(CASES))
def test_int_argument_frames_match_torch_compile(name):
    fn, calls, dynamic = CASES[name]
    torch_dynamo.reset()
    expected = _frames(torch.compile, CompileCounter(), fn, calls, dynamic)
    torch_dynamo.reset()
    got = _frames(fj.compile, fj.testing.CompileCounter(), fn, calls, dynamic)
    assert got == expected, (name, got, expected)


def _parts(fn) -> list[str]:
    return [p for e in fe.cache_entries(fn) for p in e.check_fn.code_parts]


def test_symbolic_int_is_a_graph_input_guarded_by_type_only():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(list(example_inputs))
        return gm.forward

    compiled = fj.compile(scale, backend=backend)
    for n in (2, 3, 4, 5):
        torch.testing.assert_close(compiled(X, n), scale(X, n))
    assert len(graphs) == 2
    # the SymInt placeholder's example: the value it was traced at
    assert [v for v in graphs[1] if type(v) is int] == [3]
    (newest, *_) = fe.cache_entries(scale)
    parts = list(newest.check_fn.code_parts)
    assert any("type(L['n']) is int" in p for p in parts), parts
    assert not any("L['n'] ==" in p for p in parts), parts


def test_branch_on_symbolic_int_is_guarded():
    compiled = fj.compile(branch, backend="eager", dynamic=True)
    for n in (5, 6, 2, 1, 9, -3):
        torch.testing.assert_close(compiled(X, n), branch(X, n))
    parts = _parts(branch)
    assert any("L['n'] > 3" in p or "3 < L['n']" in p for p in parts), parts
    assert any("L['n'] <= 3" in p or "3 >= L['n']" in p for p in parts), parts
    assert len(fe.cache_entries(branch)) == 2


def test_list_index_specialises_the_symbolic_int():
    compiled = fj.compile(indexed, backend="eager", dynamic=True)
    for n in (2, 3, 2, 3):
        torch.testing.assert_close(compiled(X, n), indexed(X, n))
    assert len(fe.cache_entries(indexed)) == 2
    assert any("L['n'] == 2" in p for p in _parts(indexed))


@pytest.mark.skipif(
    importlib.util.find_spec("framejit.inductor_lite") is None,
    reason="framejit-inductor-lite is not installed (graphcapture's own session)",
)
def test_symbolic_int_reaches_inductor_lite():
    def fn(x, n):
        return x * n + torch.arange(n).sum()

    compiled = fj.compile(fn, backend="inductor-lite")
    for n in (2, 3, 5, 7):
        torch.testing.assert_close(compiled(X, n), fn(X, n))
    assert len(fe.cache_entries(fn)) == 2


@pytest.mark.parametrize("method", ["bit_length", "as_integer_ratio", "conjugate"])
def test_int_methods_of_a_symbolic_int_specialise_it(method):
    def fn(t, m):
        return 2 * t if getattr(m, method)() else t

    compiled = fj.compile(fn, backend="eager", fullgraph=True, dynamic=True)
    for m in (0, 1, 5, 5):
        torch.testing.assert_close(compiled(X, m), fn(X, m))
    assert len(fe.cache_entries(fn)) == 3  # one per value: each is guarded


def test_int_item_of_an_argument_list_mutated_each_call():
    # torch's test_user_ctor_ctx_manager_custom_init_graph_break: counter[0] += 1 per call
    # specialised on every value until the cache limit; a symbol after the second value
    def fn(x, counter):
        counter[0] += 1
        return x * counter[0]

    counts = []
    for compile_fn, counter_cls in (
        (torch.compile, CompileCounter),
        (fj.compile, fj.testing.CompileCounter),
    ):
        torch_dynamo.reset()
        frames = counter_cls()
        compiled = compile_fn(fn, backend=frames)
        got, ref = [0], [0]
        for _ in range(12):
            torch.testing.assert_close(compiled(X, got), fn(X, ref))
            assert got == ref
        counts.append(frames.frame_count)
    assert counts[1] == counts[0] == 2, counts


def test_old_value_of_a_symbolic_cell_survives_its_store():
    def make():
        n = 0

        def bump(k):
            nonlocal n
            n += k

        def fn(x):
            old = n
            bump(10)
            torch._dynamo.graph_break()
            return x + 1, old, n

        return fn, lambda: n

    fn, read = make()
    ref, ref_read = make()
    compiled = fj.compile(fn, backend="eager", dynamic=True)
    for _ in range(4):
        got, expected = compiled(X), ref(X)
        assert got[1:] == expected[1:] and read() == ref_read()
        torch.testing.assert_close(got[0], expected[0])
