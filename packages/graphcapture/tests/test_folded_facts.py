"""Every fact the trace folds about a module, function or global is guarded.

Each test compiles, calls, changes the fact, and calls again: the second result must be
eager's (a fold without its guard keeps the first answer, silently).  The bugs of
issue 10 are here as regression tests.
"""

from __future__ import annotations

import enum
import sys
import types

import pytest
import torch
from torch import nn

from framejit import graphcapture as fj
from framejit.graphcapture import events


def same(fn, compiled, *args):
    torch.testing.assert_close(compiled(*args), fn(*args))


def call_through(mod):
    """A function calling the module: the module's call is inlined in the caller's trace."""

    def f(x):
        return mod(x) + 1

    return f


ENTRY_POINTS = {
    "module": lambda mod: (mod, fj.compile(mod)),
    "caller": lambda mod: (call_through(mod), fj.compile(call_through(mod))),
}


@pytest.fixture(params=sorted(ENTRY_POINTS))
def entry(request):
    return ENTRY_POINTS[request.param]


class Doubler(nn.Module):
    def forward(self, x):
        return x * 2


def tripled(self, x):
    return x * 3


def test_forward_replaced_on_the_instance(entry):
    mod = Doubler()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    same(fn, compiled, x)
    mod.forward = types.MethodType(tripled, mod)
    same(fn, compiled, x)
    del mod.forward
    same(fn, compiled, x)


def test_forward_replaced_on_the_class(entry):
    class Local(nn.Module):
        def forward(self, x):
            return x - 1

    mod = Local()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    same(fn, compiled, x)
    Local.forward = tripled
    same(fn, compiled, x)


class Scaled(nn.Linear):
    """Overrides __call__ and calls nn.Module's through super()."""

    def __init__(self):
        super().__init__(4, 4)
        self.k = 3.0

    def __call__(self, x):
        return super().__call__(x) * self.k


class CallOnly(nn.Module):
    def forward(self, x):
        return x + 100

    def __call__(self, x):
        return x * 5


@pytest.mark.parametrize("cls", [Scaled, CallOnly])
def test_call_override_is_honoured(entry, cls):
    torch.manual_seed(0)
    mod = cls()
    fn, compiled = entry(mod)
    x = torch.randn(2, 4)
    same(fn, compiled, x)
    same(fn, compiled, x)


class TwoParams(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.tensor([1.0, 2.0]))
        self.b = nn.Parameter(torch.tensor([3.0]))
        self.register_buffer("c", torch.tensor([4.0, 5.0, 6.0]))
        self.register_buffer("d", torch.tensor([7.0]))
        self.first = nn.Linear(2, 2)
        self.second = nn.Identity()

    def forward(self, x):
        params = torch.cat([p.flatten() for p in self.parameters()])
        buffers = torch.cat([b.flatten() for b in self.buffers()])
        names = [name for name, _ in self.named_children()]
        scale = 1.0 if names[0] == "first" else -1.0
        return x + params[: x.numel()] * scale + buffers[: x.numel()]


@pytest.mark.parametrize("table", ["_parameters", "_buffers", "_modules"])
def test_iteration_order_of_module_tables(entry, table):
    mod = TwoParams()
    fn, compiled = entry(mod)
    x = torch.randn(2)
    same(fn, compiled, x)
    d = getattr(mod, table)
    items = list(d.items())
    d.clear()  # the same dict, its keys in the other order
    d.update(reversed(items))
    same(fn, compiled, x)
    # a new dict, the original order
    object.__setattr__(mod, table, type(d)(items))
    same(fn, compiled, x)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3) * 2)

    def forward(self, x):
        if self.w.requires_grad:
            return x * self.w
        return x - self.w


def test_requires_grad_flipped(entry):
    mod = Gate()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    same(fn, compiled, x)
    mod.w.requires_grad_(False)
    same(fn, compiled, x)


def _helper(x):
    return x + 1


def _other_helper(x):
    return x * 10


class Mode(enum.Enum):
    A = "a"
    B = "b"


MODE = Mode.A


def test_global_function_rebound():
    global _helper

    def f(x):
        return _helper(x) - 1

    compiled = fj.compile(f)
    x = torch.randn(3)
    original = _helper
    try:
        same(f, compiled, x)
        _helper = _other_helper
        same(f, compiled, x)
    finally:
        _helper = original


def test_global_enum_rebound():
    global MODE

    def f(x):
        if MODE is Mode.A:
            return x + 1
        if MODE == Mode.B:
            return x * 3
        return x

    compiled = fj.compile(f)
    x = torch.randn(3)
    try:
        same(f, compiled, x)
        MODE = Mode.B
        same(f, compiled, x)
    finally:
        MODE = Mode.A


class Extra(nn.Module):
    def forward(self, x):
        extra = getattr(self, "extra", None)
        if extra is None:
            return x
        return x + extra


def test_buffer_added_later_read_with_getattr_default(entry):
    mod = Extra()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    same(fn, compiled, x)
    mod.register_buffer("extra", torch.full((3,), 5.0))
    same(fn, compiled, x)


class Settings:
    pass


def test_hasattr_on_an_object_that_gains_the_attribute():
    cfg = Settings()

    def f(x):
        if hasattr(cfg, "scale"):
            return x * cfg.scale
        return x

    compiled = fj.compile(f)
    x = torch.randn(3)
    same(f, compiled, x)
    cfg.scale = 4.0
    same(f, compiled, x)


class WithDefault(nn.Module):
    def scale(self, x, k=2.0):
        return x * k

    def forward(self, x):
        return self.scale(x)


def test_method_default_changed(entry):
    mod = WithDefault()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    try:
        same(fn, compiled, x)
        WithDefault.scale.__defaults__ = (7.0,)
        same(fn, compiled, x)
    finally:
        WithDefault.scale.__defaults__ = (2.0,)


def test_builtin_shadowed_by_a_global_later(monkeypatch):
    module = types.ModuleType("framejit_test_shadowing")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec("def f(x):\n    return x + abs(-2)\n", vars(module))
    f = module.f
    compiled = fj.compile(f)
    x = torch.randn(3)
    same(f, compiled, x)
    module.abs = lambda v: 100
    same(f, compiled, x)


class _LazyModule(types.ModuleType):
    """transformers' _LazyModule: a missing attribute runs the import machinery."""

    misses = 0

    def __getattr__(self, name):
        type(self).misses += 1
        raise AttributeError(name)


def test_builtin_read_in_a_lazy_module_is_guarded_on_its_globals(monkeypatch):
    """The guard that no global shadows `abs` reads the module's dict: it neither runs the
    module's __getattr__ on every check nor misses a global defined later."""
    module = _LazyModule("framejit_test_lazy_shadowing")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec("def f(x):\n    return x + abs(-2)\n", vars(module))
    f = module.f
    compiled = fj.compile(f)
    x = torch.randn(3)
    same(f, compiled, x)
    before = _LazyModule.misses
    same(f, compiled, x)  # a hit
    assert _LazyModule.misses == before
    module.abs = lambda v: 100
    same(f, compiled, x)
    del module.abs
    same(f, compiled, x)


def test_builtin_shadowed_in_an_exec_namespace():
    """A namespace no module owns (exec, a notebook cell's globals) is guarded through the
    frame's globals themselves: a later `len` global shadowed the builtin in eager only."""
    scope = {}
    exec("def f(x):\n    return x * len(x) + abs(-2)\n", scope)
    f, compiled = scope["f"], fj.compile(scope["f"])
    x = torch.randn(3)
    same(f, compiled, x)
    scope["len"] = lambda v: 100
    same(f, compiled, x)
    del scope["len"]
    same(f, compiled, x)
    scope["abs"] = lambda v: -50
    same(f, compiled, x)


@pytest.mark.parametrize("where", ["module", "namespace"])
def test_builtin_patched_in_the_builtins(where, monkeypatch):
    """The builtin itself is guarded (`B['len']`): mock.patch('builtins.len') or a
    namespace's own __builtins__ changed kept the traced one."""
    import builtins

    scope = {} if where == "module" else {"__builtins__": dict(vars(builtins))}
    exec("def f(x):\n    return x * len(x) + round(2.6)\n", scope)
    f, compiled = scope["f"], fj.compile(scope["f"])
    x = torch.randn(3)
    same(f, compiled, x)
    target = builtins if where == "module" else None
    if target is not None:
        monkeypatch.setattr(builtins, "round", lambda v: -1)
    else:
        scope["__builtins__"]["round"] = lambda v: -1
    same(f, compiled, x)


def _count_graphs(run):
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        run()
    finally:
        unsubscribe()
    return seen


@pytest.mark.parametrize("kind", ["pre", "post", "both"])
def test_forward_hooks_are_traced(kind):
    torch.manual_seed(0)
    inner = nn.Linear(3, 3)
    if kind in ("pre", "both"):
        inner.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    if kind in ("post", "both"):
        inner.register_forward_hook(lambda m, args, out: out + args[0])

    def f(x):
        return inner(x).relu()

    x = torch.randn(2, 3)
    compiled = fj.compile(f)
    seen = _count_graphs(lambda: same(f, compiled, x))
    assert sum(len(r.graphs) for r in seen) == 1
    assert not [b for r in seen for b in r.graph_breaks]


def test_hook_added_after_the_first_call():
    inner = nn.Linear(3, 3)

    def f(x):
        return inner(x) * 2

    compiled = fj.compile(f)
    x = torch.randn(2, 3)
    same(f, compiled, x)
    handle = inner.register_forward_hook(lambda m, args, out: out - 10)
    same(f, compiled, x)
    handle.remove()
    same(f, compiled, x)


def test_super_after_a_graph_break():
    """Zero-argument super() in a resume function (was TypeError: super(type, obj))."""

    class Base:
        def __init__(self, v):
            self.v = v

    class Child(Base):
        def __init__(self, v):
            print("", end="")  # a graph break before super()
            super().__init__(v * 2)

    def f(x):
        return x + Child(3).v

    torch.testing.assert_close(fj.compile(f)(torch.zeros(2)), torch.full((2,), 6.0))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(3, 3) for _ in range(4))
        self.used = 2

    def forward(self, x):
        for layer in self.layers[: self.used]:  # LLaMA's `self.layers[: num_hidden_layers]`
            x = layer(x)
        return x


def test_module_list_slice(entry):
    torch.manual_seed(0)
    mod = Stack()
    fn, compiled = entry(mod)
    x = torch.randn(2, 3)
    same(fn, compiled, x)
    mod.used = 3
    same(fn, compiled, x)
    items = list(mod.layers._modules.items())
    mod.layers._modules.clear()
    mod.layers._modules.update(reversed(items))
    same(fn, compiled, x)


def test_call_replaced_on_the_class(entry):
    """`M.__call__ = other` between calls: special methods are looked up on the class (the
    module entry bound `mod.__call__` once; the inlined call had no guard on the class's)."""

    class Local(nn.Module):
        def forward(self, x):
            return x + 1

    def minus_two(self, *args):
        return nn.Module.__call__(self, *args) - 2

    mod = Local()
    fn, compiled = entry(mod)
    x = torch.randn(3)
    same(fn, compiled, x)
    Local.__call__ = minus_two
    same(fn, compiled, x)
    Local.__call__ = nn.Module.__call__
    same(fn, compiled, x)


def test_method_found_by_super_rebound_on_the_base():
    """`super().helper(x)` after `Base.helper = other`: the attribute super() found in the
    MRO is guarded (it ran the old helper)."""

    class Base(nn.Module):
        def helper(self, x):
            return x * 0.5

    class Child(Base):
        def forward(self, x):
            return super().helper(x) + 1

    mod = Child()
    fn, compiled = call_through(mod), fj.compile(call_through(mod))
    x = torch.randn(3)
    same(fn, compiled, x)
    Base.helper = lambda self, x: x * 3
    same(fn, compiled, x)


def test_subclasses_folded_and_guarded():
    """`C.__subclasses__()` (torch's test_builtin_subclasses_*): the live subclasses are
    identity-guarded with their count, so defining another one recompiles."""

    class Base:
        pass

    class First(Base):
        pass

    def fn(x):
        subs = Base.__subclasses__()
        return x + len(subs), subs

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.randn(3)
    out, subs = compiled(x)
    torch.testing.assert_close(out, x + 1)
    assert subs == [First]

    class Second(Base):
        pass

    out, subs = compiled(x)
    torch.testing.assert_close(out, x + 2)
    assert subs == [First, Second] and counter.frame_count == 2
    compiled(x)
    assert counter.frame_count == 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(self.fc(x)).relu()


class Tower(nn.Module):
    """Two levels of submodules: their hook dicts are checked in one batched guard call,
    their sources read once into locals of the check; each fact must still be guarded."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _deep_changes():
    def pre_hook(tower):
        tower.blocks[1].norm.register_forward_pre_hook(lambda m, args: (args[0] * 2,))

    def post_hook(tower):
        tower.blocks[0].fc.register_forward_hook(lambda m, args, out: out + 1)

    def forward(tower):
        tower.blocks[1].fc.forward = types.MethodType(lambda self, x: x * 3, tower.blocks[1].fc)

    def requires_grad(tower):
        tower.blocks[0].norm.weight.requires_grad_(False)

    def parameter(tower):
        tower.head.weight = nn.Parameter(torch.randn(2, 4))

    def global_hook(tower):
        return nn.modules.module.register_module_forward_hook(lambda m, args, out: out + 1)

    return {
        "pre_hook": pre_hook,
        "post_hook": post_hook,
        "forward": forward,
        "requires_grad": requires_grad,
        "parameter": parameter,
        "global_hook": global_hook,
    }


@pytest.mark.parametrize("change", sorted(_deep_changes()))
def test_deep_submodule_fact_changed(change):
    torch.manual_seed(0)
    tower = Tower()
    compiled = fj.compile(tower)
    x = torch.randn(2, 4, requires_grad=True)
    same(tower, compiled, x)
    handle = _deep_changes()[change](tower)
    try:
        seen = _count_graphs(lambda: same(tower, compiled, x))
        assert seen, "the changed fact did not fail the guards"
        out = compiled(x)
        out.sum().backward()  # the recompiled graph is differentiable as eager's
    finally:
        if handle is not None:
            handle.remove()


def test_parameter_dtype_or_shape_changed_in_place():
    """The trace folds a parameter's dtype and sizes (`y.shape[-1]`, `w.dtype == ...`),
    which change under the same Parameter object: `mod.double()` sets `p.data`, and so
    can user code.  Only identity and requires_grad were guarded (stale constants)."""
    torch.manual_seed(0)
    mod = nn.Linear(4, 2)

    def f(x):
        y = mod(x.to(mod.weight.dtype))
        if mod.weight.dtype == torch.float64:
            y = y + 100
        return y * y.shape[-1]

    compiled = fj.compile(f)
    x = torch.randn(3, 4)
    same(f, compiled, x)
    mod.double()
    same(f, compiled, x)
    mod.weight.data = torch.randn(5, 4, dtype=torch.float64)
    mod.bias.data = torch.randn(5, dtype=torch.float64)
    same(f, compiled, x)


def _profiled(x):
    if torch.autograd._profiler_enabled():
        return x + 1
    return x - 1


def _hooks_disabled(x):
    if torch._C._autograd._saved_tensors_hooks_get_disabled_error_message() is None:
        return x + 1
    return x - 1


def _hooks_enabled(x):
    if torch._C._autograd._saved_tensors_hooks_is_enabled():
        return x + 1
    return x - 1


@pytest.mark.parametrize(
    "fn,state",
    [
        (_profiled, torch.autograd.profiler.profile),
        (_hooks_disabled, lambda: torch.autograd.graph.disable_saved_tensors_hooks("no")),
        (_hooks_enabled, lambda: torch.autograd.graph.disable_saved_tensors_hooks("no")),
    ],
)
def test_autograd_state_queries_are_read_at_run_time(fn, state):
    """Global autograd state no guard covers (the profiler, saved-tensor hooks disabled):
    a state entered after the first call must see its branch (torch.compile breaks too)."""
    compiled = fj.compile(fn, backend="eager")
    x = torch.zeros(2)
    same(fn, compiled, x)
    with state():
        same(fn, compiled, x)
    same(fn, compiled, x)


class _Marker:
    pass


def _is_marker(x, y):
    if isinstance(y, _Marker):
        return x + 1
    return x - 1


def test_builtin_patched_then_restored():
    """A replaced builtin (builtins.isinstance = f) is traced through, guarded: restoring
    the real one recompiles instead of reusing the patched answer."""
    import builtins

    real = builtins.isinstance

    def never_a_marker(obj, cls):
        return False if real(obj, _Marker) else real(obj, cls)

    x, y = torch.ones(2), _Marker()
    compiled = fj.compile(_is_marker, backend="eager", fullgraph=True)
    try:
        builtins.isinstance = never_a_marker
        same(_is_marker, compiled, x, y)  # x - 1
    finally:
        builtins.isinstance = real
    same(_is_marker, compiled, x, y)  # x + 1


def _view_replay(x):
    if torch._C._is_view_replay_enabled():
        return x + 1
    return x - 1


def _mkldnn(x):
    if torch._C._get_mkldnn_enabled():
        return x * 2
    return x * 3


@pytest.mark.parametrize(
    "fn,getter,setter",
    [
        (_view_replay, torch._C._is_view_replay_enabled, torch._C._set_view_replay_enabled),
        (_mkldnn, torch._C._get_mkldnn_enabled, torch._C._set_mkldnn_enabled),
    ],
    ids=["view_replay", "mkldnn"],
)
def test_flag_queries_are_guarded(fn, getter, setter):
    """A torch._C flag read at trace time (`_get_*`/`_is_*`) is folded with a guard that
    asks again on each call: flipping the flag recompiles, in one graph (fullgraph)."""
    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x, before = torch.ones(2), getter()
    same(fn, compiled, x)
    try:
        setter(not before)
        same(fn, compiled, x)
    finally:
        setter(before)
    same(fn, compiled, x)


def _mkldnn_available(x):
    # torch.backends.mkldnn is a module subclass (PropModule): is_available is its method
    if torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled:
        return x * 2
    return x * 3


def test_backend_module_method_query_is_folded():
    """`torch.backends.mkldnn.is_available()` is the build's answer, folded in the graph as
    torch.compile folds it (was a break: a call into torch internals); the flag beside it
    stays guarded."""
    compiled = fj.compile(_mkldnn_available, backend="eager", fullgraph=True)
    x, before = torch.ones(2), torch.backends.mkldnn.enabled
    same(_mkldnn_available, compiled, x)
    # flags(): torch's test utilities forbid setting the flag directly once imported
    with torch.backends.mkldnn.flags(enabled=not before):
        same(_mkldnn_available, compiled, x)
    same(_mkldnn_available, compiled, x)
