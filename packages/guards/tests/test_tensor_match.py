"""TENSOR_MATCH: passes on the traced tensor, fails on each property that changes."""

from __future__ import annotations

import pytest
import torch
from guard_helpers import fails, passes

from framejit.guards import Guard, GuardKind, LocalSource, TensorSpec

A = LocalSource("a")


class MyTensor(torch.Tensor):
    pass


def guard(t, **kw):
    return [Guard(A, GuardKind.TENSOR_MATCH, t, **kw)]


def test_same_tensor_and_equal_tensor_pass(tensor_backend):
    t = torch.randn(3, 4)
    passes(guard(t), {"a": t})
    passes(guard(t), {"a": torch.zeros(3, 4)})


CHANGES = {
    "dtype": (
        lambda: torch.randn(3, 4),
        lambda: torch.randn(3, 4, dtype=torch.float64),
        "dtype mismatch. expected torch.float32, actual torch.float64",
    ),
    "size": (
        lambda: torch.randn(3, 4),
        lambda: torch.randn(3, 5),
        "size mismatch at index 1. expected 4, actual 5",
    ),
    "ndim": (
        lambda: torch.randn(3, 4),
        lambda: torch.randn(3, 4, 1),
        "rank mismatch. expected 2, actual 3",
    ),
    "stride": (
        lambda: torch.randn(4, 4),
        lambda: torch.randn(4, 4).t(),
        "stride mismatch at index 0. expected 4, actual 1",
    ),
    "requires_grad": (
        lambda: torch.randn(3),
        lambda: torch.randn(3, requires_grad=True),
        "requires_grad mismatch",
    ),
    "subclass": (
        lambda: torch.randn(3),
        lambda: torch.randn(3).as_subclass(MyTensor),
        "Python class mismatch. expected Tensor, actual MyTensor",
    ),
    "subclass_to_base": (
        lambda: torch.randn(3).as_subclass(MyTensor),
        lambda: torch.randn(3),
        "Python class mismatch",
    ),
    "device": (
        lambda: torch.randn(3),
        lambda: torch.empty(3, device="meta"),
        "dispatch key set mismatch",
    ),
    "inference": (lambda: torch.randn(3), lambda: _inference_tensor(), "dispatch key set mismatch"),
    "conj_bit": (
        lambda: torch.randn(3, dtype=torch.cfloat),
        lambda: torch.randn(3, dtype=torch.cfloat).conj(),
        "dispatch key set mismatch",
    ),
    "not_a_tensor": (lambda: torch.randn(3), lambda: [1.0, 2.0, 3.0], "Python class mismatch"),
    "sparse": (
        lambda: torch.randn(2, 2),
        lambda: torch.randn(2, 2).to_sparse(),
        "dispatch key set mismatch",
    ),
}


def _inference_tensor():
    with torch.inference_mode():
        return torch.randn(3)


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_fails(tensor_backend, change):
    make_traced, make_new, detail = CHANGES[change]
    traced = make_traced()
    passes(guard(traced), {"a": traced})
    reason = fails(guard(traced), {"a": make_new()})
    assert reason.startswith("tensor 'L['a']' ")
    assert detail in reason


def test_failure_reason_reads_like_dynamo(tensor_backend):
    traced = torch.randn(10)
    reason = fails(guard(traced), {"a": traced.double()})
    assert reason == "tensor 'L['a']' dtype mismatch. expected torch.float32, actual torch.float64"


def test_device_difference_is_reported_when_keys_agree():
    spec = TensorSpec.capture(torch.randn(3))
    other = TensorSpec(
        spec.pytype, spec.dispatch_keys, spec.dtype, torch.device("cpu", 0), False, (3,), (1,)
    )
    assert "device mismatch" in other.mismatch(torch.randn(3), "L['a']")


def test_thread_local_exclude_is_applied(tensor_backend):
    traced = torch.randn(3)
    outside = guard(traced)
    passes(outside, {"a": traced})
    with torch._C._ExcludeDispatchKeyGuard(
        torch._C.DispatchKeySet(torch._C.DispatchKey.ADInplaceOrView)
    ):
        reason = fails(outside, {"a": traced})
        assert "dispatch key set mismatch" in reason
        # traced under the same thread-local state: passes there, fails outside
        inside = guard(traced)
        passes(inside, {"a": traced})
    fails(inside, {"a": traced})


def test_autocast_changes_thread_local_include(tensor_backend):
    traced = torch.randn(3)
    g = guard(traced)
    with torch.autocast("cpu"):
        fails(g, {"a": traced})


def test_dynamic_dims_are_left_out(tensor_backend):
    traced = torch.randn(4, 5, 6)
    g = guard(traced, dynamic_dims=[0])
    spec = g[0].expected
    assert spec.sizes == (None, 5, 6) and spec.strides == (30, 6, 1)
    passes(g, {"a": torch.randn(9, 5, 6)})
    fails(g, {"a": torch.randn(9, 5, 7)})
    g2 = guard(traced, dynamic_dims=[2])
    assert g2[0].expected.sizes == (4, 5, None) and g2[0].expected.strides == (None, None, 1)
    passes(g2, {"a": torch.randn(4, 5, 11)})
    fails(g2, {"a": torch.randn(4, 5, 11).transpose(0, 1).contiguous().transpose(0, 1)})
    fails(g2, {"a": torch.randn(4, 5, 11, 1)})


def test_dynamic_dim_of_a_transposed_tensor():
    traced = torch.randn(6, 4).t()  # sizes (4, 6), strides (1, 4)
    spec = TensorSpec.capture(traced, dynamic_dims=[0])
    assert spec.sizes == (None, 6) and spec.strides == (1, None)


def test_non_dense_layout_keeps_its_strides():
    traced = torch.randn(8, 6)[:, ::2]  # sizes (8, 3), strides (6, 2)
    spec = TensorSpec.capture(traced, dynamic_dims=[0])
    assert spec.sizes == (None, 3) and spec.strides == (6, 2)


def test_bad_dynamic_dim():
    with pytest.raises(ValueError, match="out of range"):
        TensorSpec.capture(torch.randn(3), dynamic_dims=[2])


def test_not_a_tensor_is_refused():
    with pytest.raises(TypeError, match=r"TENSOR_MATCH needs a torch\.Tensor"):
        Guard(A, GuardKind.TENSOR_MATCH, [1, 2])


def test_spec_snapshot_survives_mutation(tensor_backend):
    traced = torch.randn(3)
    g = guard(traced)
    traced.resize_(5)
    fails(g, {"a": traced})
    passes(g, {"a": torch.randn(3)})


def test_parameter_and_requires_grad_true(tensor_backend):
    p = torch.nn.Parameter(torch.randn(3))
    passes(guard(p), {"a": p})
    reason = fails(guard(p), {"a": torch.randn(3, requires_grad=True)})
    assert "Python class mismatch. expected Parameter, actual Tensor" in reason


def test_many_tensors_one_batched_call(tensor_backend):
    ts = [torch.randn(i + 1) for i in range(20)]
    guards = [Guard(LocalSource(f"t{i}"), GuardKind.TENSOR_MATCH, t) for i, t in enumerate(ts)]
    L = {f"t{i}": t for i, t in enumerate(ts)}
    passes(guards, L)
    bad = dict(L, t13=torch.randn(14, dtype=torch.float16))
    reason = fails(guards, bad)
    assert reason.startswith("tensor 'L['t13']' dtype mismatch")
