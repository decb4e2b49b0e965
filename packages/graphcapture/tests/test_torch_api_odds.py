"""torch calls whose arguments or answers are not plain tensors: a 0-d tensor as an op's
Scalar (optimizers' tensor betas), a grad-mode context used as a decorator, the process
group query; each against eager and torch.compile's frame count (fullgraph)."""

from __future__ import annotations

import copy

import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


def _check(fn, *args):
    expected_args = copy.deepcopy(args)
    expected = fn(*expected_args)
    counter = fj.testing.CompileCounter()
    got_args = copy.deepcopy(args)
    got = fj.compile(fn, backend=counter, fullgraph=True)(*got_args)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(got_args, expected_args)  # in-place ops changed the same
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=True)(*copy.deepcopy(args))
    assert counter.frame_count == torch_counter.frame_count == 1
    return got


def addcmul_inplace(x, y, z, s):
    return x.addcmul_(y, z, value=s)


def addcmul(x, y, z, s):
    return torch.addcmul(x, y, z, value=s)


def foreach_lerp_inplace(xs, ys, w):
    out = torch._foreach_lerp_(xs, ys, w)
    return out is xs, out


def foreach_pow_of_a_scalar_tensor(s, exps):
    return torch._foreach_pow(s, exps)


def _mats():
    return torch.ones(2, 2), torch.full((2, 2), 2.0), torch.rand(2, 2)


SCALAR_CASES = [
    (addcmul_inplace, (*_mats(), torch.tensor(0.3))),
    (addcmul_inplace, (*_mats(), torch.tensor(0.3, dtype=torch.float64))),
    (addcmul, (*_mats(), torch.tensor(0.3))),
    (foreach_lerp_inplace, ([torch.full((2,), 4.0), torch.ones(2)], [torch.ones(2), torch.zeros(2)], torch.tensor(0.5))),
    (foreach_pow_of_a_scalar_tensor, (torch.tensor(0.8), [torch.tensor(3.4), torch.arange(3)])),
    (foreach_pow_of_a_scalar_tensor, (torch.tensor(0.8, dtype=torch.float64), [torch.rand(2)])),
]  # fmt: skip


@pytest.mark.parametrize("fn, args", SCALAR_CASES, ids=[c[0].__name__ for c in SCALAR_CASES])
def test_zero_dim_tensor_scalar_stays_a_tensor(fn, args):
    # the ops read it with .item() inside: traced as tensor math, in one graph, eager's dtypes
    _check(fn, *args)


def test_grad_mode_context_as_a_decorator_in_the_frame():
    def fn(x):
        @torch.no_grad()
        def augment(x):
            return (x + 1) * 2

        @torch.no_grad()
        def fails(x):
            raise KeyError("k")

        try:
            fails(x)
        except KeyError:
            grad_in_handler = torch.is_grad_enabled()
        return augment(x), x * 2, grad_in_handler

    x = torch.ones(2, requires_grad=True)
    no_grad, with_grad, grad_in_handler = _check(fn, x)
    assert not no_grad.requires_grad and with_grad.requires_grad and grad_in_handler

    def escapes(x):
        @torch.no_grad()
        def augment(x):
            return x + 1

        return augment, x * 2

    augment, _ = fj.compile(escapes, backend="eager", fullgraph=True)(x)
    assert not augment(x).requires_grad and augment.__name__ == "augment"


@pytest.mark.skipif(not torch.distributed.is_available(), reason="no torch.distributed")
def test_distributed_is_initialized_is_read_and_guarded(tmp_path):
    def fn(x):
        if torch.distributed.is_initialized():
            return x + 1
        return x - 1

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x = torch.ones(1)
    torch.testing.assert_close(compiled(x), fn(x))
    torch.distributed.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1
    )
    try:
        torch.testing.assert_close(compiled(x), x + 1)
    finally:
        torch.distributed.destroy_process_group()
    torch.testing.assert_close(compiled(x), x - 1)


def test_float_and_int_of_a_one_element_tensor_in_one_graph():
    # fullgraph: t.item() captured, as torch.compile captures scalar outputs
    for make, conv in ((lambda: torch.tensor([1.5]), float), (lambda: torch.tensor([2]), float),
                       (lambda: torch.tensor([2]), int)):  # fmt: skip

        def fn(x, conv=conv):
            return conv(x + 1)

        x = make()
        got = fj.compile(fn, backend="eager", fullgraph=True)(x)
        assert type(got) is type(fn(x)) and got == fn(x)


def test_class_mro_and_grad_stored_on_a_graph_tensor():
    def fn(x):
        y = x + 10
        y.grad = x
        y.foo = 42
        return y, [c.__name__ for c in type(y).__mro__]

    x = torch.ones(3)
    (y, names), (_, ref_names) = _check_pair(fn, x)
    assert y.grad is x and y.foo == 42 and names == ref_names


def _check_pair(fn, *args):
    got = fj.compile(fn, backend="eager", fullgraph=True)(*args)
    expected = fn(*args)
    torch.testing.assert_close(got[0], expected[0])
    return got, expected


def _scaled_add(self, y):
    return torch.add(self, y) * 3


def _scaled_sub(self, y):
    return torch.sub(self, y) * 3


def test_python_method_set_on_tensor_is_inlined_and_guarded():
    """`torch.Tensor.f = f` (a library monkeypatching tensors): inlined into one graph as eager
    runs it, guarded by identity so rebinding it recompiles; the tensor input bound to the
    method's `self` must not clash with the generated forward's own `self`."""
    torch.Tensor.fj_scaled = _scaled_add
    try:

        def fn(x):
            return x.fj_scaled(1).sin() + (x * 2).fj_scaled(2)

        counter = fj.testing.CompileCounter()
        compiled = fj.compile(fn, backend=counter)
        x = torch.randn(4)
        torch.testing.assert_close(compiled(x), fn(x))
        torch.Tensor.fj_scaled = _scaled_sub
        torch.testing.assert_close(compiled(x), fn(x))
        assert counter.frame_count >= 2  # the rebinding recompiled
        bound = fj.compile(_scaled_add, backend=counter)  # L['self'] is a tensor input
        torch.testing.assert_close(bound(x, 1.5), _scaled_add(x, 1.5))
    finally:
        del torch.Tensor.fj_scaled


def test_shape_as_tensor_static_and_symbolic():
    import torch.onnx.operators

    def fn(x):
        return 1 + torch._shape_as_tensor(x)[-1], torch.onnx.operators.shape_as_tensor(x)

    compiled = fj.compile(fn, backend=fj.testing.CompileCounter(), fullgraph=True)
    for shape in [(6,), (7, 4), (8,), (9,)]:  # (the third call makes the size symbolic)
        x = torch.ones(shape)
        torch.testing.assert_close(compiled(x), fn(x))
    assert torch._shape_as_tensor(torch.ones(())).shape == (0,)


def test_isinstance_through_the_metaclass():
    """Legacy storage classes check dtype in their metaclass (a break: eager asks it);
    nn.Parameter / nn.Buffer also accept a tensor flagged _is_param / _is_buffer."""

    def storage_check(x):
        f = bytearray([0x00, 0x01, 0x02, 0x03])
        bools = torch.BoolStorage.from_buffer(f, "big")
        return x + 1, isinstance(bools, torch.BoolStorage), isinstance(bools, torch.FloatStorage)

    x = torch.randn(3)
    got = fj.compile(storage_check, backend="eager")(x)
    assert got[1:] == (True, False)

    def flags(a, b):
        y = a * 2
        return (y, isinstance(a, torch.nn.Parameter), isinstance(b, torch.nn.Buffer),
                isinstance(y, (torch.nn.Parameter, torch.nn.Buffer)))  # fmt: skip

    plain, flagged = torch.randn(2), torch.randn(2)
    flagged._is_buffer = True
    param = torch.nn.Parameter(torch.randn(2))
    compiled = fj.compile(flags, backend="eager", fullgraph=True)
    assert compiled(param, flagged)[1:] == flags(param, flagged)[1:] == (True, True, False)
    assert compiled(plain, plain)[1:] == flags(plain, plain)[1:] == (False, False, False)


def _map_body(x, y):
    return (x + y,)


def _calls_map_impl(xs, y):
    return torch.ops.higher_order.map_impl(_map_body, (xs,), (y,))[0] * 3


def test_higher_order_operator_call_is_a_graph_break():
    # an FX node cannot hold map's Python body: the call runs for real (it was an
    # internal error that sent the whole frame to eager), the rest is compiled; torch.cond
    # is traced (tests/test_control_flow.py)
    fj.reset()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    xs, y = torch.randn(2, 3), torch.randn(3)
    f = fj.compile(_calls_map_impl, backend="eager")
    try:
        torch.testing.assert_close(f(xs, y), _calls_map_impl(xs, y))
    finally:
        unsubscribe()
    reasons = [b.reason for r in records for b in r.graph_breaks]
    assert any("higher-order operator map_impl" in r for r in reasons)
    assert not any(r.skipped_reason for r in records if r.function_name == "_calls_map_impl")


def _zero_rows_or_not(x):
    from torch.fx.experimental.symbolic_shapes import guard_or_false, guard_size_oblivious

    if guard_size_oblivious(x.size(0) == 0):
        return torch.ones(1)
    return x * 2 if guard_or_false(x.size(0) > 2) else x - 1


@pytest.mark.parametrize("dynamic", [None, True])
def test_symbolic_shapes_size_questions_answer_as_eager(dynamic):
    """guard_size_oblivious / guard_or_false of a plain or symbolic size: its truth, guarded."""
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_zero_rows_or_not, backend=counter, fullgraph=True, dynamic=dynamic)
    for n in (0, 2, 5, 6, 2):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), _zero_rows_or_not(x))
    assert counter.frame_count <= 4
