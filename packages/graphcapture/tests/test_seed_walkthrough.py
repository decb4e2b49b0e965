"""The seed document's toy_example, end to end through the real frame hook."""

from __future__ import annotations

import importlib
import operator
import sys
import types

import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj

# toy_example's graph break (the `if`) and its two resume points, as bytecode offsets of each
# CPython: what framejit prints on each version, and what torch.compile names its resume
# functions there (test_resume_offsets_match_torch_compile); the seed shows 3.11's.
SEED_OFFSETS = {(3, 11): (100, (102, 112)), (3, 12): (92, (94, 104)), (3, 13): (94, (98, 108))}
BREAK_AT, (RESUME_A, RESUME_B) = SEED_OFFSETS[sys.version_info[:2]]
NAME_A, NAME_B = f"__resume_at_{RESUME_A}_1", f"__resume_at_{RESUME_B}_2"


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def _compile_and_run(n=20):
    graphs = []

    def my_compiler(gm, example_inputs):
        graphs.append((gm, example_inputs))
        return gm.forward

    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(toy_example, backend=my_compiler)
        for _ in range(n):
            a, b = torch.randn(10), torch.randn(10)
            torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    finally:
        unsubscribe()
    return graphs, records


def test_first_graph_is_the_seed_graph():
    graphs, _ = _compile_and_run()
    gm, example_inputs = graphs[0]
    nodes = list(gm.graph.nodes)
    assert [n.op for n in nodes[:2]] == ["placeholder", "placeholder"]
    # named as the seed's `source code of __compiled_fn_0` shows: forward(self, L_a_, L_b_)
    assert [(n.name, n.target) for n in nodes[:2]] == [("l_a_", "L_a_"), ("l_b_", "L_b_")]
    calls = [(n.op, n.target) for n in nodes[2:-1]]
    assert calls == [
        ("call_function", torch.abs),
        ("call_function", operator.add),
        ("call_function", operator.truediv),
        ("call_method", "sum"),
        ("call_function", operator.lt),
    ]
    output = nodes[-1]
    assert output.op == "output"
    # the quotient is stored in `x`: torch.compile (2.13, after the seed) names its node so
    assert {n.name for n in output.args[0]} == {"x", "lt"}
    assert len(example_inputs) == 2 and all(isinstance(t, torch.Tensor) for t in example_inputs)


def test_rewritten_code_calls_compiled_fn_and_resume_functions():
    _, records = _compile_and_run()
    first = records[0]
    assert first.function_name == "toy_example"
    assert [g.name for g in first.graphs] == ["__compiled_fn_0"]
    assert set(first.resume_functions) == {NAME_A, NAME_B}
    names = set(first.transformed_code.co_names)
    assert {"__compiled_fn_0", NAME_A, NAME_B} <= names
    for name in ("__compiled_fn_0", NAME_A, NAME_B):
        assert name in toy_example.__globals__
    resume = toy_example.__globals__[NAME_A]
    assert isinstance(resume, types.FunctionType)
    assert resume.__code__.co_varnames[: resume.__code__.co_argcount] == ("b", "x")
    [brk] = first.graph_breaks
    assert brk.reason == "data-dependent branch: if on a Tensor"
    assert brk.source_line == "if b.sum() < 0:"
    assert brk.offset == BREAK_AT
    assert brk.lineno == toy_example.__code__.co_firstlineno + 2


def test_resume_functions_are_captured_on_their_first_call():
    _, records = _compile_and_run(n=40)
    compiled_names = {r.function_name for r in records}
    assert compiled_names == {"toy_example", NAME_A, NAME_B}
    for r in records:
        if r.function_name.startswith("__resume"):
            assert len(r.graphs) == 1 and not r.graph_breaks
    # each code object compiled once: the rest were cache hits
    assert len(records) == 3


def test_guards_of_the_first_graph():
    _compile_and_run()
    [entry] = fe.cache_entries(toy_example)
    parts = entry.check_fn.code_parts
    assert any("___check_tensors(L['a'], L['b']" in p for p in parts)
    assert any("G['torch'].abs" in p for p in parts)
    assert "___check_global_state()" in parts
    assert entry.check_fn({"a": torch.randn(10), "b": torch.randn(10)})
    assert not entry.check_fn({"a": torch.randn(11), "b": torch.randn(10)})
    assert not entry.check_fn({"a": torch.randn(10, dtype=torch.float64), "b": torch.randn(10)})


def reference_toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_resume_offsets_match_torch_compile():
    dynamo = importlib.import_module("torch._dynamo")
    reference = reference_toy_example
    assert reference.__code__.co_code == toy_example.__code__.co_code
    dynamo.reset()
    compiled = torch.compile(reference, backend="eager")
    for _ in range(10):
        compiled(torch.randn(10), torch.randn(10))
    torch_names = {
        k.rsplit("_", 1)[0] for k in reference.__globals__ if k.startswith("__resume_at_")
    }
    dynamo.reset()
    _, records = _compile_and_run()
    ours = {k.rsplit("_", 1)[0] for k in records[0].resume_functions}
    assert ours == {f"__resume_at_{RESUME_A}", f"__resume_at_{RESUME_B}"}
    assert ours <= torch_names
