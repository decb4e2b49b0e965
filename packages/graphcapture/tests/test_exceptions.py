"""Exceptions: what eager raises surfaces unchanged, after the side effects eager did first."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj


def _both(fn, *args):
    """Run eager and compiled; return both exceptions (type, message)."""
    with pytest.raises(Exception) as eager:
        fn(*args)
    compiled = fj.compile(fn, backend="eager")
    with pytest.raises(Exception) as ours:
        compiled(*args)
    return eager.value, ours.value


def matmul_mismatch(a, b):
    c = a + 1
    return c @ b


def zero_division(x):
    y = x * 2
    n = len([])
    return y / (1 // n)


def key_error(x):
    d = {"a": x}
    return d["b"]


def index_error(x):
    xs = [x, x]
    return xs[5]


def raise_value_error(x):
    if x.dim() == 1:
        raise ValueError(f"expected 2-d input, got {x.dim()}-d")
    return x


def bool_of_multi_element(a, b):
    return max(a, b)


def attribute_error(x):
    return x.no_such_attribute


def assertion_failure(x):
    assert x.shape[0] == 3, "wrong length"
    return x


def cat_dtype_error(x):
    return torch.cat([x, torch.zeros(2, 3)], dim=2)


CASES = [
    (matmul_mismatch, (torch.randn(2, 3), torch.randn(4, 5))),
    (zero_division, (torch.randn(3),)),
    (key_error, (torch.randn(3),)),
    (index_error, (torch.randn(3),)),
    (raise_value_error, (torch.randn(3),)),
    (bool_of_multi_element, (torch.randn(3), torch.randn(3))),
    (attribute_error, (torch.randn(3),)),
    (assertion_failure, (torch.randn(4),)),
    (cat_dtype_error, (torch.randn(2, 3),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_same_exception_as_eager(fn, args):
    eager, ours = _both(fn, *args)
    assert type(ours) is type(eager)
    assert str(ours) == str(eager)


LOG = []


def side_effect_then_error(x, out):
    out.append("before")
    LOG.append(len(out))
    y = x @ x  # 1-d @ 1-d is fine; 2x3 @ 2x3 is not
    out.append("after")
    return y


def test_side_effects_before_an_exception_happen():
    LOG.clear()
    out_eager: list = []
    with pytest.raises(RuntimeError) as eager:
        side_effect_then_error(torch.randn(2, 3), out_eager)
    compiled = fj.compile(side_effect_then_error, backend="eager")
    out: list = []
    with pytest.raises(RuntimeError) as ours:
        compiled(torch.randn(2, 3), out)
    assert str(ours.value) == str(eager.value)
    assert out == out_eager == ["before"]
    assert LOG == [1, 1]


def test_exception_in_nested_compiled_call():
    inner = fj.compile(matmul_mismatch, backend="eager")

    def outer(a, b):
        return inner(a, b) * 2

    compiled = fj.compile(outer, backend="eager")
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        compiled(torch.randn(2, 3), torch.randn(4, 5))


def test_internal_error_falls_back_to_eager(monkeypatch, caplog):
    from framejit.graphcapture import symbolic_convert

    monkeypatch.setattr(fj.config, "raise_internal_errors", False)

    def broken(self, inst):
        raise KeyError("framejit bug")

    monkeypatch.setattr(symbolic_convert.InstructionTranslatorBase, "BINARY_OP", broken)
    monkeypatch.setattr(
        symbolic_convert.InstructionTranslator,
        "dispatch",
        {**symbolic_convert.InstructionTranslator.dispatch, "BINARY_OP": broken},
    )

    def fn(x):
        return x + 1

    compiled = fj.compile(fn, backend="eager")
    x = torch.randn(3)
    with caplog.at_level("WARNING", logger="framejit.dynamo"):
        torch.testing.assert_close(compiled(x), x + 1)
    assert "internal error while capturing fn" in caplog.text
    assert "framejit bug" in caplog.text


def test_backend_error_falls_back_with_a_warning():
    def failing_backend(gm, example_inputs):
        raise NotImplementedError("backend cannot do this")

    compiled = fj.compile(lambda x: x.sin() + 1, backend=failing_backend)
    x = torch.randn(3)
    with pytest.warns(RuntimeWarning, match="backend cannot do this"):
        torch.testing.assert_close(compiled(x), x.sin() + 1)


def test_backend_error_reraised_when_configured(monkeypatch):
    monkeypatch.setattr(fj.config, "raise_backend_errors", True)

    def failing_backend(gm, example_inputs):
        raise NotImplementedError("backend cannot do this")

    compiled = fj.compile(lambda x: x.sin() + 1, backend=failing_backend)
    with pytest.raises(fj.BackendCompilerFailed, match="backend cannot do this"):
        compiled(torch.randn(3))
