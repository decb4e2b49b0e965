"""The seed document's walkthrough, through all five packages together."""

from __future__ import annotations

import dis
import sys

import torch

from framejit import graphcapture as fj
from framejit import inspect as fji


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def call_ops(gm: torch.fx.GraphModule) -> list[str]:
    return [n.op for n in gm.graph.nodes]


def test_first_graph_is_the_seeds(recording_backend):
    compiled = fj.compile(toy_example, backend=recording_backend)
    a, b = torch.randn(10), torch.randn(10)
    torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    first = recording_backend.graphs[0]
    nodes = list(first.graph.nodes)
    assert [n.op for n in nodes if n.op == "placeholder"] == ["placeholder", "placeholder"]
    targets = [n.target for n in nodes if n.op in ("call_function", "call_method")]
    names = [getattr(t, "__name__", t) for t in targets]
    assert names == ["abs", "add", "truediv", "sum", "lt"]
    output = nodes[-1]
    assert output.op == "output"
    assert len(output.args[0]) == 2


def test_both_branches_match_eager_over_100_calls(recording_backend):
    compiled = fj.compile(toy_example, backend=recording_backend)
    for i in range(100):
        a, b = torch.randn(10), torch.randn(10)
        if i % 2:
            b = -b.abs()
        torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    # the first graph plus one graph per resume function, nothing recompiled
    assert len(recording_backend.graphs) == 3


# resume offsets of toy_example on each CPython (torch.compile's names on that version)
RESUME_OFFSETS = {(3, 11): (102, 112), (3, 12): (94, 104), (3, 13): (98, 108)}


def test_resume_functions_are_named_as_torch_names_them(recording_backend):
    compiled = fj.compile(toy_example, backend=recording_backend)
    compiled(torch.randn(10), -torch.ones(10))
    compiled(torch.randn(10), torch.ones(10))
    names = sorted(n for n in toy_example.__globals__ if n.startswith("__resume_at_"))
    expected = sorted(f"__resume_at_{o}" for o in RESUME_OFFSETS[sys.version_info[:2]])
    assert sorted(n.rsplit("_", 1)[0] for n in names) == expected


def test_guards_and_cache_entries_read_as_in_the_seed(recording_backend):
    compiled = fj.compile(toy_example, backend=recording_backend)
    compiled(torch.randn(10), torch.randn(10))
    entries = fji.debug_get_cache_entry_list(fji.innermost_fn(compiled))
    assert len(entries) == 1
    guard, code = entries[0].check_fn, entries[0].code
    parts = "\n".join(guard.code_parts)
    assert "___check_tensors(L['a'], L['b']" in parts
    assert "___check_global_state()" in parts
    assert "___check_tensors" in guard.__code__.co_freevars
    assert "tensor_check_names" in guard.__code__.co_freevars
    assert guard({"a": torch.randn(10), "b": torch.randn(10)})
    assert not guard({"a": torch.randn(11), "b": torch.randn(10)})
    assert not guard({"a": torch.randn(10, dtype=torch.float64), "b": torch.randn(10)})
    loaded = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    assert any(n.startswith("__compiled_fn_") for n in loaded)


def test_decompiled_rewritten_code_calls_the_graph_and_the_resume_functions(recording_backend):
    compiled = fj.compile(toy_example, backend=recording_backend)
    compiled(torch.randn(10), torch.randn(10))
    compiled(torch.randn(10), -torch.ones(10))
    code = fji.debug_get_cache_entry_list(fji.innermost_fn(compiled))[0].code
    source = fji.decompile(code)
    assert source.startswith("def toy_example(a, b):")
    assert "__compiled_fn_" in source
    assert source.count("__resume_at_") == 2
    for name, value in toy_example.__globals__.items():
        if name.startswith("__resume_at_"):
            resumed = fji.decompile(value)
            assert "x * b" in resumed


def test_explain_reports_the_graph_break_with_its_source_line():
    report = fji.explain(toy_example, torch.randn(10), torch.randn(10))
    text = str(report)
    assert "if b.sum() < 0:" in text
    assert report.graph_count >= 2
