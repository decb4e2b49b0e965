"""Mechanisms behind failures of torch's recent test_misc_part*/ _repros_part* files (the
constructs real code uses), each compared with eager, and with torch.compile's frame count
where that is the yardstick."""

from __future__ import annotations

import copy
import re
import warnings

import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


@pytest.fixture(autouse=True)
def _fresh():
    fj.reset()
    yield
    fj.reset()


# ---------------------------------------------------------------- saved-tensor hooks
def test_saved_tensor_hooks_run_in_the_program_not_in_its_trace():
    # was: fake propagation of `x * y` called the pack hook, once more than eager
    calls = {"pack": 0, "unpack": 0}

    def pack(t):
        calls["pack"] += 1
        return t

    def unpack(t):
        calls["unpack"] += 1
        return t

    def f(x, y):
        return x * y

    opt = fj.compile(f, backend="eager")
    x = torch.ones(4, requires_grad=True)
    y = torch.ones(4)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = opt(x, y)
        assert calls == {"pack": 1, "unpack": 0}
        out.sum().backward()
        assert calls == {"pack": 1, "unpack": 1}
    torch.testing.assert_close(x.grad, y)


# ---------------------------------------------------------------- warnings.catch_warnings
def _frames(fn, *args):
    """(framejit's frames, torch.compile's frames), after checking both against eager."""
    expected = fn(*args)
    counts = []
    for compile_ in (fj.compile, torch.compile):
        counter = torch._dynamo.testing.CompileCounter()
        torch._dynamo.reset()
        fj.reset()
        got = compile_(fn, backend=counter)(*args)
        torch.testing.assert_close(got, expected)
        counts.append(counter.frame_count)
    return counts


def _cw_plain(x):
    with warnings.catch_warnings():
        return x.sin()


def _cw_record_unbound(x):
    with warnings.catch_warnings(record=True):
        y = x.sin()
    return y + 1


def _cw_length(x):
    # detectron2's Instances.set
    with warnings.catch_warnings(record=True):
        n = len(x)
    return x * n


@pytest.mark.parametrize("fn", [_cw_plain, _cw_record_unbound, _cw_length])
def test_catch_warnings_block_is_one_graph(fn):
    x = torch.randn(4)
    assert _frames(fn, x) == [1, 1]
    fj.reset()
    fj.compile(fn, backend="eager", fullgraph=True)(x)


def test_catch_warnings_object_escaping_is_built_again():
    def fn(x):
        return x.sin(), warnings.catch_warnings(record=True)

    opt = fj.compile(fn, backend="eager", fullgraph=True)
    x = torch.randn(3)
    (_, a), (_, b) = opt(x), opt(x)
    assert isinstance(a, warnings.catch_warnings) and a is not b
    with a as log:  # a fresh, unentered context of the same arguments
        warnings.warn("recorded", stacklevel=1)
    assert [str(w.message) for w in log] == ["recorded"]


def _cw_filter_inside(x):
    y = x + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a break, run inside a real catch_warnings
        y = y * 2
    return y


def test_catch_warnings_break_inside_restores_the_filters():
    before = list(warnings.filters)
    x = torch.randn(4)
    opt = fj.compile(_cw_filter_inside, backend="eager")
    for _ in range(2):
        torch.testing.assert_close(opt(x), _cw_filter_inside(x))
        assert warnings.filters == before


def _cw_record_bound(x):
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        warnings.warn("seen", stacklevel=1)
        y = x + 1
    return y, len(log)


def _cw_action(x):
    with warnings.catch_warnings(action="ignore"):
        warnings.warn("hidden", stacklevel=1)
        return x + 1


@pytest.mark.parametrize("fn", [_cw_record_bound, _cw_action])
def test_catch_warnings_forms_that_change_what_code_sees_run_eagerly(fn):
    x = torch.randn(4)
    opt = fj.compile(fn, backend="eager")
    torch.testing.assert_close(opt(x), fn(x))
    fj.reset()
    with pytest.raises(fj.exc.GraphBreakInFullgraph):
        fj.compile(fn, backend="eager", fullgraph=True)(x)


def test_catch_warnings_entered_twice_raises_as_eager():
    def fn(x):
        ctx = warnings.catch_warnings()
        with ctx:
            pass
        with ctx:
            return x + 1

    with pytest.raises(RuntimeError, match="twice"):
        fn(torch.randn(2))
    with pytest.raises(RuntimeError, match="twice"):
        fj.compile(fn, backend="eager")(torch.randn(2))


# ---------------------------------------------------------------- a tensor's own methods
def _add_one(t):
    return t + 1


_PARAM = torch.nn.Parameter(torch.ones(2))
_PARAM.add_one = _add_one


def _own_method_of_a_global_parameter(x):
    return _PARAM.add_one(_PARAM) + x


def _own_method_of_an_input(x):
    return x.add_one(x) * 2


def _own_method_stored_in_the_frame(x):
    y = x * 3
    y.add_one = _add_one
    return y.add_one(y)


def _own_attribute_shadowing_a_tensor_method(x):
    return x.sin(x)  # the instance's `sin`, not Tensor.sin


@pytest.mark.parametrize(
    "fn",
    [
        _own_method_of_a_global_parameter,
        _own_method_of_an_input,
        _own_method_stored_in_the_frame,
        _own_attribute_shadowing_a_tensor_method,
    ],
)
def test_a_tensors_own_function_attribute_is_called(fn):
    x = torch.randn(2)
    x.add_one = _add_one
    x.sin = _add_one
    expected = fn(x)
    got = fj.compile(fn, backend="eager", fullgraph=True)(x)
    torch.testing.assert_close(got, expected)


# ---------------------------------------------------------------- a failing torch._check
CHECK_LIMIT = 3


def _check_with_global_message(x):
    torch._check(x.shape[0] > CHECK_LIMIT, lambda: f"{x.shape[0]} is not above {CHECK_LIMIT}")
    return x + 1


def _check_without_message(x):
    torch._check(x.shape[0] > CHECK_LIMIT)
    return x + 1


@pytest.mark.parametrize(
    "fn, message",
    [
        (_check_with_global_message, "3 is not above 3"),
        (_check_without_message, "Expected cond to be True"),
    ],
)
@pytest.mark.parametrize("fullgraph", [False, True])
def test_failing_torch_check_raises_with_eagers_message(fn, message, fullgraph):
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match=message):
        fn(x)
    with pytest.raises(RuntimeError, match=message):
        fj.compile(fn, backend="eager", fullgraph=fullgraph)(x)
    fj.reset()
    y = torch.randn(5)
    torch.testing.assert_close(fj.compile(fn, backend="eager", fullgraph=fullgraph)(y), y + 1)


# ---------------------------------------------------------------- a constant tensor as an index
def _size_at_tensor(x):
    idx = torch.tensor(1)
    return x.reshape(-1, x.shape[idx])


def _list_at_tensor(x):
    idx = torch.tensor([2])
    return [x, x + 1, x * 3][idx]


def _tuple_at_mutated_tensor(x):
    idx = torch.tensor(0)
    idx.add_(1)  # the known value follows the mutation
    return (x, x - 1)[idx]


def _size_at_bool_tensor(x):
    return x.new_zeros(x.shape[torch.tensor(True)])


@pytest.mark.parametrize(
    "fn", [_size_at_tensor, _list_at_tensor, _tuple_at_mutated_tensor, _size_at_bool_tensor]
)
def test_container_index_by_a_tensor_the_trace_knows(fn):
    x = torch.randn(2, 3, 4)
    assert _frames(fn, x) == [1, 1]
    fj.reset()
    torch.testing.assert_close(fj.compile(fn, backend="eager", fullgraph=True)(x), fn(x))


def test_container_index_by_an_input_tensor_breaks():
    def fn(x, i):
        return [x, x + 1][i]

    x = torch.randn(2)
    for i in (torch.tensor(0), torch.tensor(1)):
        torch.testing.assert_close(fj.compile(fn, backend="eager")(x, i), fn(x, i))


# ---------------------------------------------------------------- deepcopy of a compiled module
def test_deepcopy_of_a_compiled_module_runs_the_copy():
    # was a wrong answer: the copy kept the original's bound call, so its own parameters
    # got no gradient and changing them changed nothing
    mod = torch.nn.Linear(2, 3)
    opt = fj.compile(mod, backend="eager")
    clone = copy.deepcopy(opt)
    assert isinstance(clone, type(opt))
    x = torch.randn(1, 2)
    clone(x).sum().backward()
    assert mod.weight.grad is None
    torch.testing.assert_close(clone.weight.grad, x.expand(3, 2))
    with torch.no_grad():
        clone.bias.add_(1.0)
    torch.testing.assert_close(clone(x), mod(x) + 1.0)
    torch.testing.assert_close(opt(x), mod(x))


# ---------------------------------------------------------------- an outer tracer
def _double_plus_one(x):
    return x + x + 1


@pytest.mark.parametrize("wrap", [lambda f: f, lambda f: torch.nn.Sequential(torch.nn.ReLU())])
def test_jit_trace_of_a_compiled_callable_raises(wrap):
    # a backend's kernels would be opaque to the jit tracer: a wrong trace
    target = wrap(_double_plus_one)
    opt = fj.compile(target, backend="eager")
    with pytest.raises(RuntimeError, match=r"torch\.jit\.trace"):
        torch.jit.trace(opt, torch.randn(3))


def test_fx_trace_of_a_compiled_function_records_its_ops():
    opt = fj.compile(_double_plus_one, backend="eager")
    gm = torch.fx.symbolic_trace(opt)
    ops = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    reference = torch.fx.symbolic_trace(_double_plus_one)
    assert ops == [n.target for n in reference.graph.nodes if n.op == "call_function"]
    x = torch.randn(3)
    torch.testing.assert_close(gm(x), _double_plus_one(x))


# ---------------------------------------------------------------- torch.jit.script'ed helpers
@torch.jit.script
def _scripted_cos(x, c: float = 2.0):
    return torch.cos(x) * c


@torch.jit.script
def _scripted_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


class _ScriptedHelperModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = _scripted_cos

    def forward(self, x):
        return self.act(x) + self.act(x, 3.0)


def _calls_a_scripted_global(x):
    return _scripted_gelu(x + 1)


@pytest.mark.parametrize("make", [_ScriptedHelperModule, lambda: _calls_a_scripted_global])
def test_a_scripted_function_is_inlined_in_one_graph(make):
    fn = make()
    x = torch.randn(4)
    counter = torch._dynamo.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(x)
    torch.testing.assert_close(got, fn(x))
    assert counter.frame_count == 1 and counter.op_count >= 3


def test_a_rebound_scripted_function_recompiles():
    mod = _ScriptedHelperModule()
    opt = fj.compile(mod, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(opt(x), mod(x))
    mod.act = _scripted_gelu_with_default
    torch.testing.assert_close(opt(x), mod(x))


@torch.jit.script
def _scripted_gelu_with_default(x, c: float = 1.0):
    return torch.nn.functional.gelu(x) * c


# ---------------------------------------------------------------- attributes of builtin classes
class _WithFoo:
    foo: int = 1


def _getattr_of_the_type(x, m):
    if getattr(type(m), "foo", 0):
        return x + _WithFoo.foo
    return x - 1


def _hasattr_of_the_type(x, m):
    return x * 2 if hasattr(type(m), "foo") else x * 3


def _missing_attribute_caught(x, m):
    try:
        return x + type(m).foo
    except AttributeError:
        return x - 5


@pytest.mark.parametrize(
    "fn", [_getattr_of_the_type, _hasattr_of_the_type, _missing_attribute_caught]
)
@pytest.mark.parametrize("m", [_WithFoo(), 0, "s", (1,), None, 2.5])
def test_attribute_queries_on_builtin_classes(fn, m):
    x = torch.zeros(())
    got = fj.compile(fn, backend="eager", fullgraph=True)(x, m)
    torch.testing.assert_close(got, fn(x, m))


# ---------------------------------------------------------------- torch.__version__, class patterns
try:
    from packaging import version
except ImportError:  # (not a dependency of torch: graphcapture's own session may lack it)
    version = None


def _version_gate(x):
    if version.parse(torch.__version__) >= version.parse("2.0.0"):
        return x + 1
    return x - 1


def _torch_version_compare(x):
    return x * 2 if torch.__version__ >= "2.1" else x * 3


class _Tokenizer:
    _word = re.compile(r"[a-z]+")

    def count(self, text):
        return len(self._word.findall(text))


def _pattern_class_attribute(x):
    return x * _Tokenizer().count("ab cd ef")


@pytest.mark.parametrize("fn", [_version_gate, _torch_version_compare, _pattern_class_attribute])
def test_version_checks_and_class_patterns_fold(fn):
    if fn is _version_gate and version is None:
        pytest.skip("packaging is not installed")
    x = torch.randn(3)
    counter = torch._dynamo.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(x)
    torch.testing.assert_close(got, fn(x))
    assert counter.frame_count == 1
