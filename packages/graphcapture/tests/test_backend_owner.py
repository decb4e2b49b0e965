"""A cache entry serves the backend and settings it was compiled for.

Compiling one function again with another backend (or fullgraph setting) compiles it for
that backend instead of running the first one's graphs; compiling it again with the same
backend and settings reuses them (torch's test_backend_match_guard).  fj.run uses what
any of them compiled.
"""

from __future__ import annotations

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


def foo(x):
    return x.sin() + x.cos()


def foo_graph_break(x):
    a = x.sin()
    print("", end="")  # graph break
    b = x.cos()
    return a + b


class Counting:
    """A backend counting the frames it compiles, running another backend's result."""

    def __init__(self, backend="eager"):
        self.backend = fj.lookup_backend(backend)
        self.frame_count = 0

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        return self.backend(gm, example_inputs)


class Recording:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


@pytest.mark.parametrize(("fn", "frames"), [(foo, 1), (foo_graph_break, 2)])
def test_each_backend_compiles_its_own_and_reuses_it(fn, frames):
    x = torch.randn(3, 4)
    expected = fn(x)
    for backend in (Recording(), "eager"):
        counter = Counting(backend)
        for _ in range(3):
            torch.testing.assert_close(fj.compile(fn, backend=counter)(x), expected)
            assert counter.frame_count == frames


def test_graphs_of_one_backend_never_run_for_another():
    calls = []

    def tagging(tag):
        def backend(gm, example_inputs):
            def run(*args):
                calls.append(tag)
                return gm.forward(*args)

            return run

        return backend

    x = torch.randn(3)
    first, second = fj.compile(foo, backend=tagging("a")), fj.compile(foo, backend=tagging("b"))
    first(x), second(x), first(x), second(x)
    assert calls == ["a", "b", "a", "b"]
    assert len(fe.cache_entries(foo)) == 2


def test_fullgraph_is_not_served_an_entry_with_breaks():
    x = torch.randn(3)
    fj.compile(foo_graph_break)(x)
    with pytest.raises(fj.GraphBreakInFullgraph):
        fj.compile(foo_graph_break, fullgraph=True)(x)


def test_same_named_backend_and_settings_share_entries():
    x = torch.randn(3)
    fj.compile(foo, backend="eager")(x)
    fj.compile(foo, backend="eager")(x)
    assert len(fe.cache_entries(foo)) == 1


def test_run_uses_what_any_backend_compiled():
    counter = Counting()
    x = torch.randn(3)
    fj.compile(foo, backend=counter)(x)
    fe.stats(reset=True)
    torch.testing.assert_close(fj.run(foo)(x), foo(x))
    assert counter.frame_count == 1
    assert fe.stats()["hits"] >= 1


def test_recompile_reason_names_the_other_backend(caplog):
    x = torch.randn(3)
    fj.compile(foo, backend=Counting())(x)
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        fj.compile(foo, backend=Counting())(x)
    finally:
        unsubscribe()
    assert records[-1].is_recompile
    assert any("another backend" in r for r in records[-1].recompile_reasons)
