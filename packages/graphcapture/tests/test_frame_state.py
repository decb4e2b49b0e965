"""What a compiled frame leaves behind matches eager: global state it switches, functions it
makes for another module, what it keeps alive.

- `torch.set_grad_enabled(b)` and `torch.use_deterministic_algorithms(b)` called in a frame
  leave the mode switched after it, as in eager, whatever the backend (a backend that
  traces the graph drops a switch node with no outputs: the frame replays the state);
- a function made in inlined code of another module, rebuilt after a graph break, reads
  that module's globals (torch's test_nested_function_resuming_with_correct_globals);
- a compiled module's parameters are freed by reference counting once the user drops the
  module (the graph module refers to its graph's owner weakly);
- `OptimizedModule.dynamo_ctx` applies the module's capture to other callables.
"""

from __future__ import annotations

import gc
import sys
import types
import weakref

import pytest
import torch

from framejit import graphcapture as fj


def _backends():
    names = ["eager", "aot_eager"]
    if "inductor-lite" in fj.list_backends():
        names.append("inductor-lite")
    return names


def _backend(name):
    if name == "aot_eager":
        from torch._dynamo.backends.debugging import aot_eager  # the reference: tests may

        return aot_eager
    return name


class Counting:
    def __init__(self, backend):
        self.backend = fj.lookup_backend(_backend(backend))
        self.frames = 0

    def __call__(self, gm, example_inputs):
        self.frames += 1
        return self.backend(gm, example_inputs)


@pytest.fixture
def grad_mode():
    prior = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(prior)


@pytest.fixture
def deterministic():
    prior = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    yield
    torch.use_deterministic_algorithms(prior[0], warn_only=prior[1])


def _grad_off_at_return(x):
    y = x * 2
    torch.set_grad_enabled(False)
    return y + 1


def _grad_off_before_break(x):
    y = x * 2
    torch.set_grad_enabled(False)
    z = y + 1
    print("", end="")  # graph break
    return z.sin(), torch.is_grad_enabled()


def _grad_off_in_with(x):
    with torch.set_grad_enabled(False):
        y = x * 2
    return y + x, torch.is_grad_enabled()


def _grad_on_inside_no_grad(x):
    with torch.no_grad():
        torch.set_grad_enabled(True)
        y = x * 2
    return y, torch.is_grad_enabled()


def _grad_decorator(x):
    @torch.set_grad_enabled(False)
    def inner(t):
        return t * 3

    return inner(x) + x, torch.is_grad_enabled()


class _GradSwitch:
    """A user context manager switching grad mode with torch._C._set_grad_enabled."""

    def __init__(self, mode):
        self.mode, self.prev = mode, torch.is_grad_enabled()

    def __enter__(self):
        torch._C._set_grad_enabled(self.mode)

    def __exit__(self, *exc_info):
        torch._C._set_grad_enabled(self.prev)


def _grad_off_in_user_context(x):
    with _GradSwitch(False):
        y = x * 2
    return y, y + x, torch.is_grad_enabled()


def _grad_context_made_before_break(x):
    ctx = torch.set_grad_enabled(False)  # switches now; its __exit__ goes back to on
    y = x * 2
    print("", end="")  # graph break: the resume function gets an equal context
    with ctx:
        z = x * 3
    return y, z, torch.is_grad_enabled()


def _no_grad_called_on_a_function(x):
    def inner(t):
        return t * 3

    return torch.no_grad(inner)(x), torch.enable_grad(inner)(x), torch.is_grad_enabled()


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize(
    "fn",
    [
        _grad_off_at_return,
        _grad_off_before_break,
        _grad_off_in_with,
        _grad_on_inside_no_grad,
        _grad_decorator,
        _grad_off_in_user_context,
        _grad_context_made_before_break,
        _no_grad_called_on_a_function,
    ],
)
def test_set_grad_enabled_leaves_the_mode_as_eager(fn, backend, grad_mode):
    x = torch.randn(4, requires_grad=True)
    expected, expected_modes = [], []
    for _ in range(2):
        torch.set_grad_enabled(True)
        expected.append(fn(x))
        expected_modes.append(torch.is_grad_enabled())
    counter = Counting(backend)
    compiled = fj.compile(fn, backend=counter)
    for i in range(2):
        torch.set_grad_enabled(True)
        got = compiled(x)
        assert torch.is_grad_enabled() == expected_modes[i]
        torch.set_grad_enabled(True)
        torch.testing.assert_close(got, expected[i])
        got_flat = got if isinstance(got, tuple) else (got,)
        for g, e in zip(
            got_flat, expected[i] if isinstance(got, tuple) else (expected[i],), strict=True
        ):
            if isinstance(e, torch.Tensor):
                assert g.requires_grad == e.requires_grad
    frames = counter.frames
    torch.set_grad_enabled(True)
    compiled(x)
    assert counter.frames == frames  # the entry mode is the guarded one: no recompile


def test_set_grad_enabled_in_fullgraph_persists(grad_mode):
    """torch's test_grad_state_mutated: a function the graph calls first sees the entry
    mode; the mode stays off after the frame; one frame for both calls."""
    value = None

    def check_state():
        nonlocal value
        value = torch.is_grad_enabled()

    def fn(x):
        check_state()
        torch.set_grad_enabled(False)
        return x + 1

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    for _ in range(2):
        value = None
        torch.set_grad_enabled(True)
        compiled(torch.randn(10))
        assert value is True
        assert torch.is_grad_enabled() is False
    assert counter.frame_count == 1


@pytest.mark.parametrize("backend", _backends())
def test_use_deterministic_algorithms_persists(backend, deterministic):
    """torch's test_deterministic_algorithms_mutated: the trace sees the switch, the
    caller sees it after the frame, and the entry state is what is guarded."""
    seen = None

    def check_state():
        nonlocal seen
        seen = (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        )

    def fn(x):
        check_state()
        if not torch.are_deterministic_algorithms_enabled():
            raise RuntimeError("expected deterministic algorithms on")
        torch.use_deterministic_algorithms(False, warn_only=False)
        after = torch.are_deterministic_algorithms_enabled()
        return x + 1, after

    counter = Counting(backend)
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.randn(10)
    for _ in range(2):
        seen = None
        torch.use_deterministic_algorithms(True, warn_only=True)
        out, after = compiled(x)
        torch.testing.assert_close(out, x + 1)
        assert seen == (True, True)
        assert after is False
        assert torch.are_deterministic_algorithms_enabled() is False
        assert torch.is_deterministic_algorithms_warn_only_enabled() is False
    assert counter.frames == 1
    torch.use_deterministic_algorithms(False)
    eager_fn = fj.compile(fn, backend=counter)  # another entry state: the frame raises
    with pytest.raises(RuntimeError, match="expected deterministic"):
        eager_fn(x)


def test_use_deterministic_algorithms_entry_state_guarded(deterministic):
    def fn(x):
        return x + 1, torch.are_deterministic_algorithms_enabled()

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter)
    x = torch.randn(3)
    for mode in (True, False, True):
        torch.use_deterministic_algorithms(mode)
        assert compiled(x)[1] is mode
    assert counter.frame_count == 2


_OTHER_MODULE = """
import torch

def inner_func():
    return torch.cos(torch.ones(2))

def outer_func(func):
    def wrapped(*args):
        a = func(*args)
        print("", end="")  # graph break
        return torch.sin(a + 1), inner_func()
    return wrapped

def outer_with_default(func, k=2):
    def wrapped(x, scale=k):
        y = func(x) * scale
        print("", end="")
        return y, inner_func()
    return wrapped
"""


@pytest.fixture
def other_module():
    mod = types.ModuleType("framejit_test_other_module")
    sys.modules[mod.__name__] = mod
    exec(compile(_OTHER_MODULE, "<other module>", "exec"), mod.__dict__)
    yield mod
    del sys.modules[mod.__name__]


@pytest.mark.parametrize("maker", ["outer_func", "outer_with_default"])
def test_function_made_in_another_module_keeps_its_globals(other_module, maker):
    make = getattr(other_module, maker)

    def gn(x, *rest):
        return x + sum(rest) if rest else x

    def fn(x):
        return make(gn)(x)

    x = torch.rand(3)
    expected = fn(x)
    got = fj.compile(fn, backend="eager")(x)
    torch.testing.assert_close(got, expected)


def test_released_module_frees_its_parameters():
    """torch's test_release_module_memory: nothing but the cycle collector held them."""

    class NoLeakBackend:
        def __call__(self, gm, example_inputs):
            def run(*args):
                return (1,)

            return run

    mod = torch.nn.Linear(10, 10)
    x = torch.rand(10, 10)
    mod_ref, weight_ref = weakref.ref(mod), weakref.ref(mod.weight)

    def foo(mod, x):
        return mod(x)

    compiled = fj.compile(foo, backend=NoLeakBackend())
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        compiled(mod, x)
        del mod, x
        assert mod_ref() is None
        assert weight_ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_released_module_frees_its_parameters_eager_backend():
    mod = torch.nn.Linear(4, 4)
    weight_ref = weakref.ref(mod.weight)

    def foo(mod, x):
        return mod(x)

    compiled = fj.compile(foo, backend="eager")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        compiled(mod, torch.rand(2, 4))
        del mod
        assert weight_ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_graph_module_still_finds_its_graph_owner():
    from framejit.graphcapture.output_graph import WeakOwnerGraph

    graph = WeakOwnerGraph()
    x = graph.placeholder("x")
    graph.output((graph.call_function(torch.sin, (x,)),))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    assert gm.graph.owning_module is gm
    assert gm.graph._owning_module is gm
    import copy
    import pickle

    assert copy.deepcopy(gm).graph.owning_module is not None
    torch.testing.assert_close(
        pickle.loads(pickle.dumps(gm))(torch.ones(2))[0], torch.ones(2).sin()
    )


def test_dynamo_ctx_applies_the_module_capture():
    """torch's test_torch_compile_ctx_on_forward_and_training_step."""
    calls = []

    class MyModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            calls.append(1)
            return self.lin(x).relu()

        def training_step(self, x):
            return self(x).sum()

    model = MyModel()
    x = torch.randn(2, 3)
    expected = model.training_step(x)
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(model, backend=counter)
    model.forward = compiled.dynamo_ctx(model.forward)
    model.training_step = compiled.dynamo_ctx(model.training_step)
    calls.clear()
    torch.testing.assert_close(model.training_step(x), expected)
    assert len(calls) == 1
    assert counter.frame_count >= 1


def test_redundant_grad_context_is_no_op_in_the_graph(grad_mode):
    """A no_grad() block under no_grad switches nothing: torch.compile coalesces it."""

    def fn(a, b):
        x = a + 1
        with torch.no_grad():
            x = x + b
        return x + 2

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    a = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(a, a), fn(a, a))
    assert (counter.frame_count, counter.op_count) == (1, 3)
    torch.testing.assert_close(compiled(a, a), fn(a, a))  # grad on: a new graph switches
    assert (counter.frame_count, counter.op_count) == (2, 8)
