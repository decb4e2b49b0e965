"""The user API of DESIGN.md: compile/optimize/disable/run/reset, backends, events, records."""

from __future__ import annotations

import importlib.util
import os
from importlib.metadata import EntryPoint

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


def double_plus_one(x):
    return x * 2 + 1


def test_compile_as_decorator_with_and_without_arguments():
    @fj.compile
    def f(x):
        return x.cos()

    @fj.compile(backend="eager")
    def g(x):
        return x.sin()

    x = torch.randn(3)
    torch.testing.assert_close(f(x), x.cos())
    torch.testing.assert_close(g(x), x.sin())


def test_compile_a_method():
    class Scaler:
        def __init__(self):
            self.k = 3.0

        def apply(self, x):
            return x * self.k

    s = Scaler()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(s.apply, backend=counter)
    x = torch.randn(2)
    torch.testing.assert_close(compiled(x), x * 3.0)
    assert counter.frame_count == 1


def test_optimize_as_context_manager():
    counter = fj.testing.CompileCounter()
    x = torch.randn(3)
    with fj.optimize(counter):
        result = double_plus_one(x)
    torch.testing.assert_close(result, x * 2 + 1)
    assert counter.frame_count == 1
    double_plus_one(x)  # outside the context: not intercepted
    assert counter.frame_count == 1
    assert fe.get_callback() is None


def test_optimize_as_decorator():
    counter = fj.testing.CompileCounter()
    f = fj.optimize(counter)(double_plus_one)
    f(torch.randn(2))
    assert counter.frame_count == 1 and counter.op_count == 2


def test_run_uses_the_cache_but_never_compiles():
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(double_plus_one, backend=counter)
    x = torch.randn(3)
    compiled(x)
    runner = fj.run(double_plus_one)
    torch.testing.assert_close(runner(x), x * 2 + 1)
    y = torch.randn(7)
    torch.testing.assert_close(runner(y), y * 2 + 1)  # a miss: runs eagerly
    assert counter.frame_count == 1


def test_disable_inside_compiled_code():
    counter = fj.testing.CompileCounter()

    @fj.disable
    def eager_only(x):
        return x.exp()

    def f(x):
        return eager_only(x) + 1

    x = torch.randn(3)
    torch.testing.assert_close(fj.compile(f, backend=counter)(x), x.exp() + 1)
    assert all(torch.exp not in [n.target for n in g.graph.nodes] for g in counter.graphs)


def test_reset_forgets_compiled_code():
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(double_plus_one, backend=counter)
    x = torch.randn(3)
    compiled(x)
    assert fe.cache_entries(double_plus_one)
    fj.reset()
    assert not fe.cache_entries(double_plus_one)
    compiled(x)
    assert counter.frame_count == 2


def test_unknown_backend_lists_the_available_ones():
    with pytest.raises(fj.UnknownBackendError) as info:
        fj.compile(double_plus_one, backend="no-such-backend")
    assert "eager" in str(info.value)
    assert "no-such-backend" in str(info.value)


def test_inductor_lite_hint_when_missing():
    if importlib.util.find_spec("framejit.inductor_lite") is not None:
        pytest.skip("framejit-inductor-lite is installed here; the hint is for when it is not")
    with pytest.raises(fj.UnknownBackendError, match="framejit-inductor-lite"):
        fj.lookup_backend("inductor-lite")


def test_register_backend():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append(len(example_inputs))
        return gm.forward

    fj.register_backend("test-registered", my_backend)
    try:
        assert "test-registered" in fj.list_backends()
        assert fj.lookup_backend("test-registered") is my_backend
        x = torch.randn(2)
        torch.testing.assert_close(
            fj.compile(double_plus_one, backend="test-registered")(x), x * 2 + 1
        )
        assert seen == [1]
    finally:
        from framejit.graphcapture import backends

        backends._registry.pop("test-registered", None)


def _entry_point_backend(gm, example_inputs):
    return gm.forward


def test_backends_from_entry_points(monkeypatch):
    from framejit.graphcapture import backends

    ep = EntryPoint(
        "from-entry-point", f"{__name__}:_entry_point_backend", backends.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(
        backends, "entry_points", lambda group: [ep] if group == backends.ENTRY_POINT_GROUP else []
    )
    assert "from-entry-point" in fj.list_backends()
    assert fj.lookup_backend("from-entry-point") is _entry_point_backend
    backends._registry.pop("from-entry-point", None)


def test_events_subscribe_and_record_fields():
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    fj.compile(double_plus_one, backend="eager")(torch.randn(3))
    unsubscribe()
    fj.compile(double_plus_one, backend="eager")(torch.randn(4))
    [record] = records
    assert isinstance(record, fj.CompileRecord)
    assert record.index == 0
    assert record.function_name == "double_plus_one"
    assert record.filename == __file__
    assert record.firstlineno == double_plus_one.__code__.co_firstlineno
    assert record.code is double_plus_one.__code__
    assert record.transformed_code is not None and record.check_fn is not None
    [graph] = record.graphs
    assert graph.name == "__compiled_fn_0" and graph.backend == "eager"
    assert isinstance(graph.graph_module, torch.fx.GraphModule)
    assert callable(graph.compiled)
    assert set(record.timings) >= {"trace", "backend", "guards", "total"}
    assert not record.is_recompile and record.skipped_reason is None


def test_frames_without_tensor_ops_are_left_alone():
    records = []
    unsubscribe = fj.events.subscribe(records.append)

    def no_tensors(a, b):
        return a + b

    try:
        assert fj.compile(no_tensors, backend="eager")(2, 3) == 5
    finally:
        unsubscribe()
    assert records[0].transformed_code is None
    assert records[0].skipped_reason == "no tensor operations to capture"


def test_nested_compiled_functions():
    inner_counter = fj.testing.CompileCounter()
    outer_counter = fj.testing.CompileCounter()
    inner = fj.compile(lambda x: x.sin() * 2, backend=inner_counter)

    def outer(x):
        return inner(x + 1) - 1

    compiled = fj.compile(outer, backend=outer_counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), (x + 1).sin() * 2 - 1)
    assert outer_counter.frame_count + inner_counter.frame_count >= 1


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2, n - 1) + 1


def test_recursion_through_the_compiled_entry():
    compiled = fj.compile(recursive, backend="eager")
    x = torch.randn(2)
    torch.testing.assert_close(compiled(x, 4), recursive(x, 4))
    torch.testing.assert_close(compiled(x, 2), recursive(x, 2))


@pytest.mark.skipif(
    os.environ.get("FRAMEJIT_ISOLATED") != "graphcapture", reason="isolated nox venv only"
)
def test_isolated_venv_has_no_optional_packages():
    assert importlib.util.find_spec("framejit.inductor_lite") is None
    assert importlib.util.find_spec("framejit.inspect") is None


def test_dynamic_true_compiles_once_for_every_size():
    compiled = fj.compile(double_plus_one, backend="eager", dynamic=True)
    for n in (3, 4, 7):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), x * 2 + 1)
    assert len(fe.cache_entries(double_plus_one)) == 1


@pytest.mark.parametrize(
    "fn, args",
    [
        (torch.sin, (torch.randn(5, 10),)),  # a builtin: no Python frame of its own
        (torch.add, (torch.randn(3), torch.randn(3))),
        (torch.nn.functional.relu, (torch.randn(4),)),  # torch's Python layer, not captured
    ],
)
def test_compile_a_callable_without_a_captured_frame(fn, args):
    # was nothing captured (0 frames): the call now runs in a frame around it, as
    # torch.compile's wrap_inline does; torch.compile's counts are the yardstick
    import torch._dynamo.testing

    counter = torch._dynamo.testing.CompileCounter()
    torch.testing.assert_close(fj.compile(fn, backend=counter, fullgraph=True)(*args), fn(*args))
    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=reference, fullgraph=True)(*args)
    assert (counter.frame_count, counter.op_count) == (reference.frame_count, reference.op_count)
    assert fj.compile(fn).__name__ == fn.__name__


def test_callables_compiled_alone_keep_separate_caches():
    sin, cos = fj.compile(torch.sin), fj.compile(torch.cos)
    x = torch.randn(3)
    torch.testing.assert_close((sin(x), cos(x)), (torch.sin(x), torch.cos(x)))
    assert len(fe.cache_entries(sin._framejit_target)) == 1
    assert len(fe.cache_entries(cos._framejit_target)) == 1
