"""trace_rules: one test per table entry, the folded is_compiling() family, and third-party
code from site-packages (the tiny package the test session installs) traced like user code."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import site
import sys
import warnings

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events, trace_rules
from framejit.graphcapture.variables.torch_calls import TRACING_FACTS


def assert_same(fn, compiled, *args):
    torch.testing.assert_close(compiled(*args), fn(*args))


def _file_of(module_name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return os.path.join(next(iter(spec.submodule_search_locations)), "__init__.py")
    return spec.origin


def _sample_file(rule: trace_rules.Rule) -> str | None:
    if rule.place == "<stdlib>":
        return os.__file__
    if rule.place == "<site-packages>":
        return os.path.join(site.getsitepackages()[0], "somepkg", "module.py")
    return _file_of(rule.place)


@pytest.mark.parametrize("rule", trace_rules.RULES, ids=lambda r: r.place)
def test_each_rule_covers_its_place(rule):
    filename = _sample_file(rule)
    if filename is None:
        pytest.skip(f"{rule.place} is not installed here")
    if rule.functions:  # it covers the functions it names, not the rest of their file
        module = importlib.import_module(rule.place)
        for name in rule.functions:
            fn = functools.reduce(getattr, name.split("."), module)
            assert os.path.samefile(fn.__code__.co_filename, filename)
            assert fn.__code__.co_qualname == name
            assert trace_rules.lookup(filename, name) == rule
            assert trace_rules.is_inlined(filename, name) is rule.inline
        assert trace_rules.lookup(filename, "not." + rule.functions[0]) != rule
        assert trace_rules.lookup(filename) != rule
        return
    assert trace_rules.lookup(filename) == rule
    assert trace_rules.is_captured(filename) is rule.capture
    assert trace_rules.is_inlined(filename) is rule.inline


def test_user_code_and_generated_code():
    assert trace_rules.lookup(__file__) is trace_rules.TRACED
    assert trace_rules.lookup("<string>").capture  # dataclass __init__, exec'd code
    assert not trace_rules.lookup("<frozen posixpath>").capture
    assert not trace_rules.lookup("<eval_with_key>.3").capture


def test_frozen_modules_follow_their_module_rule():
    """`<frozen importlib.util>` is importlib: not inlined (tracing find_spec read all of
    sys.modules, one identity guard per module); other frozen stdlib modules are inlined."""
    importlib_rule = next(r for r in trace_rules.RULES if r.place == "importlib")
    assert trace_rules.lookup("<frozen importlib.util>") is importlib_rule
    assert trace_rules.lookup("<frozen importlib._bootstrap>") is importlib_rule
    posix = trace_rules.lookup("<frozen posixpath>")
    assert posix.place == "<frozen>" and posix.inline and not posix.capture


def test_find_spec_is_a_break_not_a_trace_of_sys_modules():
    def f(x):
        y = x + 1
        found = importlib.util.find_spec("os") is not None
        return y * 2 if found else y

    x = torch.randn(3)
    seen, unsubscribe = _records()
    try:
        torch.testing.assert_close(fj.compile(f)(x), f(x))
    finally:
        unsubscribe()
    assert any("find_spec" in b.reason for r in seen for b in r.graph_breaks)
    parts = max(len(r.check_fn.code_parts) for r in seen if r.check_fn is not None)
    assert parts < 50  # not one guard per entry of sys.modules


def test_site_packages_is_not_skipped_through_a_single_file_module():
    """The old skip list added typing_extensions' directory, i.e. site-packages itself."""
    origin = _file_of("typing_extensions")
    if origin is None:
        pytest.skip("typing_extensions is not installed")
    assert trace_rules.is_captured(origin)


def test_torch_modules_traced_torch_internals_skipped():
    linear = torch.nn.modules.linear.__file__
    # inlined into traced code; a frame of theirs eager code starts is captured only
    # for a module with hooks (torch.compile's rule)
    assert trace_rules.is_inlined(linear) and not trace_rules.is_captured(linear)
    assert trace_rules.captures_hooked(linear)
    assert not trace_rules.captures_hooked(torch.nn.modules.module.__file__)
    assert not trace_rules.is_captured(torch.nn.modules.module.__file__)
    assert not trace_rules.is_captured(torch.__file__)
    assert not trace_rules.is_captured(torch._tensor.__file__)


def _records():
    seen = []
    return seen, events.subscribe(seen.append)


def test_logging_call_breaks_and_logs_once(caplog):
    def f(x):
        y = x + 1
        logging.getLogger("tinytest").warning("called with %s", tuple(x.shape))
        return y * 2

    x = torch.randn(3)
    expected = f(x)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tinytest"):
        torch.testing.assert_close(fj.compile(f)(x), expected)
    assert [r.getMessage() for r in caplog.records if r.name == "tinytest"] == ["called with (3,)"]


def test_warnings_call_breaks_and_warns_once():
    def f(x):
        y = x.relu()
        warnings.warn("careful", UserWarning, stacklevel=1)
        return y - 1

    x = torch.randn(4)
    expected = f(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fj.compile(f)(x)
    torch.testing.assert_close(got, expected)
    assert [str(w.message) for w in caught] == ["careful"]


def test_stdlib_helpers_are_inlined():
    import math
    import operator

    def f(x):
        return operator.mul(x, math.sqrt(4.0)) + operator.neg(x)

    seen, unsubscribe = _records()
    try:
        assert_same(f, fj.compile(f, fullgraph=True), torch.randn(5))
    finally:
        unsubscribe()
    assert sum(len(r.graphs) for r in seen) == 1


@pytest.mark.parametrize(
    "query",
    sorted(TRACING_FACTS, key=str),
    ids=lambda key: ".".join(key),
)
def test_tracing_facts_are_folded(query):
    module_name, name = query
    if module_name.startswith("torch._dynamo"):
        pytest.skip("torch._dynamo is not imported by framejit")
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    fn = getattr(module, name)
    folded = TRACING_FACTS[query]

    def f(x):
        if fn():
            return x + 1
        return x - 1

    x = torch.randn(3)
    compiled = fj.compile(f, fullgraph=True)
    expected = x + 1 if folded else x - 1
    torch.testing.assert_close(compiled(x), expected)
    assert not fn()  # eagerly, nothing is compiling (scripting, tracing, exporting)


def test_is_compiling_spellings_true_while_tracing():
    def f(x):
        a = torch.compiler.is_compiling()
        b = torch._utils.is_compiling()
        c = torch.compiler.is_dynamo_compiling()
        d = torch.jit.is_scripting() or torch.jit.is_tracing()
        return x + (a and b and c and not d)

    torch.testing.assert_close(fj.compile(f, fullgraph=True)(torch.zeros(2)), torch.ones(2))


def test_testcase_assertions_called_from_a_traced_frame_are_inlined():
    # unittest.case is inlined (torch traces it under enable_trace_unittest); the runner's
    # own frames stay uncaptured (the "unittest" rule)
    import unittest

    case = unittest.TestCase()

    def fn(x, s):
        case.assertTrue(len(s) == 2)
        case.assertIn("a", s)
        case.assertIsInstance(s, set)
        case.assertFalse("z" in s)
        return x + 1

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(2), {"a", "b"}), torch.ones(2) + 1)
    with pytest.raises(AssertionError):  # (its message is built by unittest.util: a break)
        fj.compile(fn, backend="eager")(torch.ones(2), {"a", "z"})


tinypkg = pytest.importorskip(
    "framejit_tinypkg",
    reason="the graphcapture nox session pip-installs tests/fixtures/tinypkg",
)


def test_tinypkg_lives_in_site_packages():
    assert trace_rules.lookup(tinypkg.__file__).place == "<site-packages>"


def test_tinypkg_model_is_one_graph():
    torch.manual_seed(0)
    model = tinypkg.TinyModel(tinypkg.TinyConfig(dim=8, layers=3)).eval()
    x = torch.randn(2, 8)
    seen, unsubscribe = _records()
    try:
        compiled = fj.compile(model, fullgraph=True)
        torch.testing.assert_close(compiled(x), model(x))
        torch.testing.assert_close(compiled(x), model(x))
    finally:
        unsubscribe()
    graphs = [g for r in seen for g in r.graphs]
    assert len(graphs) == 1
    ops = [n for n in graphs[0].graph_module.graph.nodes if n.op == "call_function"]
    assert len(ops) >= 3 * 3 + 2  # linear, gelu, add per block; layer_norm, scale


def test_tinypkg_function_with_logging_replays_the_call_after_the_graph(caplog):
    # a logging call with constant arguments is recorded and made after the graph, in
    # program order, rather than breaking it (transformers' warning_once in every layer)
    x = torch.randn(3)
    expected = tinypkg.noisy(x)
    caplog.clear()
    seen, unsubscribe = _records()
    try:
        with caplog.at_level(logging.WARNING, logger="framejit_tinypkg"):
            torch.testing.assert_close(fj.compile(tinypkg.noisy)(x), expected)
    finally:
        unsubscribe()
    assert [r.getMessage() for r in caplog.records] == ["tinypkg.noisy called"]
    assert [b.reason for r in seen for b in r.graph_breaks] == []
    assert len([g for r in seen for g in r.graphs]) == 1
