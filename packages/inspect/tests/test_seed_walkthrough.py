"""The seed document's inspection steps, on a function compiled by graphcapture.

Needs framejit.graphcapture (skipped in ``nox -s inspect``, run by the integration session).
"""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")
fj = pytest.importorskip("framejit.graphcapture")

from framejit.inspect import debug_get_cache_entry_list, decompile, innermost_fn  # noqa: E402

GRAPHS: list = []


def my_compiler(gm, example_inputs):
    GRAPHS.append(gm)
    return gm.forward


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def _rebuild(source: str, name: str, namespace: dict) -> types.FunctionType:
    scope = dict(namespace)
    exec(compile(source, f"<decompiled {name}>", "exec"), scope)
    return scope[name]


@pytest.fixture(scope="module")
def compiled_toy():
    fj.reset()
    compiled = fj.optimize(my_compiler)(toy_example)
    torch.manual_seed(0)
    for _ in range(100):
        a, b = torch.randn(10), torch.randn(10)
        torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    yield compiled
    fj.reset()


def test_cache_entry_list_of_the_innermost_function(compiled_toy):
    assert innermost_fn(compiled_toy) is toy_example
    entries = debug_get_cache_entry_list(innermost_fn(compiled_toy))
    assert len(entries) >= 1
    guard, code = entries[0].check_fn, entries[0].code
    assert callable(guard) and isinstance(code, types.CodeType)
    assert code.co_name == "toy_example" and code is not toy_example.__code__


def test_guard_code_parts_and_closure(compiled_toy):
    guard = debug_get_cache_entry_list(innermost_fn(compiled_toy))[0].check_fn
    tensor_parts = [p for p in guard.code_parts if p.startswith("___check_tensors(")]
    assert tensor_parts and "L['a']" in tensor_parts[0] and "L['b']" in tensor_parts[0]
    assert {"___check_tensors", "tensor_check_names"} <= set(guard.__code__.co_freevars)
    assert len(guard.__closure__) == len(guard.__code__.co_freevars)
    assert guard({"a": torch.randn(10), "b": torch.randn(10)})
    assert not guard({"a": torch.randn(3), "b": torch.randn(10)})


def test_decompiled_rewritten_code_reads_and_runs_like_the_seed(compiled_toy):
    code = debug_get_cache_entry_list(innermost_fn(compiled_toy))[0].code
    source = decompile(code)
    assert source.startswith("def toy_example(a, b):")
    names = {n for n in code.co_names if n.startswith(("__compiled_fn_", "__resume_at_"))}
    assert any(n.startswith("__compiled_fn_") for n in names)
    assert sum(n.startswith("__resume_at_") for n in names) == 2
    for name in names:
        assert name in source
    rebuilt = _rebuild(source, "toy_example", toy_example.__globals__)
    for sign in (1, -1):
        a, b = torch.randn(10), sign * torch.rand(10)
        torch.testing.assert_close(rebuilt(a, b), toy_example(a, b))


def test_decompiled_resume_functions_match_the_seed(compiled_toy):
    code = debug_get_cache_entry_list(innermost_fn(compiled_toy))[0].code
    g = toy_example.__globals__
    resumes = sorted(
        (n for n in code.co_names if n.startswith("__resume_at_")),
        key=lambda n: int(n.split("_")[4]),
    )
    flipped, plain = (decompile(g[name]) for name in resumes)
    assert flipped.splitlines()[1:] == ["    b = b * -1", "    return x * b"]
    assert plain.splitlines()[1:] == ["    return x * b"]
    assert "torch.abs" not in flipped + plain  # the part before the break is not repeated


def test_compiled_fn_source_through_innermost_fn(compiled_toy):
    code = debug_get_cache_entry_list(innermost_fn(compiled_toy))[0].code
    name = next(n for n in code.co_names if n.startswith("__compiled_fn_"))
    compiled_fn = toy_example.__globals__[name]
    graph_code = innermost_fn(compiled_fn).__self__.code
    assert "torch.abs" in graph_code and "sum" in graph_code
