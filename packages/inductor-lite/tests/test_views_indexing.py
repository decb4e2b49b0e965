"""Views as index remappings, data movement (cat, pad), gathers, factories, and the graph
shapes a backend must handle: outputs that alias inputs or each other, Python scalars
among the inputs, non-tensor outputs, 0-dim tensors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from framejit.inductor_lite import compile_fx


def views(x):
    y = x * 2  # an unrealized value: views of it are index maps
    return [
        x.permute(2, 0, 1) + 1, y.transpose(0, 1) - 1, x[:, 1:3] * 3, y[1] + 1, y[:, :, ::2] + 0,
        x.unsqueeze(1).expand(4, 2, 5, 6) + y.unsqueeze(1), x.reshape(4, 30) + 1,
        y.reshape(20, 6) + 1, y.view(4, 5, 2, 3).sum(-1), x.flatten() + 1, y.mT + 1,
        x[..., -1] + 1, y.squeeze(0) + 1, x.narrow(1, 2, 3).exp(), y.diagonal(0, 1, 2) + 1,
        x.unfold(2, 2, 2) + 1, x.select(2, -1) + x[:, :, 0],
    ]  # fmt: skip


@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
def test_views(check, layout):
    x = torch.randn(4, 5, 6)
    if layout == "permuted":
        x = torch.randn(6, 4, 5).permute(1, 2, 0)
    check(views, [x])


def data_movement(x, y, i):
    return [
        torch.cat([x, y], 0), torch.cat([x, y * 2, x[:1]], 0), torch.cat([x, x.exp()], 1),
        F.pad(x, (1, 2)), F.pad(x, (1, 1, 2, 0), value=-3.0), F.pad(x, (-1, 1)),
        torch.arange(7), torch.arange(2, 11, 3), torch.arange(0.5, 3.0, 0.25, dtype=torch.float64),
        torch.full((2, 3), 1.5) + x[:2, :3], torch.zeros(3, dtype=torch.int64) + i[:3],
        torch.ones(2, 2) * 3, torch.cat([i, i + 1]),
    ]  # fmt: skip


def test_data_movement(check):
    check(data_movement, [torch.randn(3, 5), torch.randn(2, 5), torch.arange(6)])


def gathers(weight, idx, x, index2d):
    return [
        F.embedding(idx, weight), weight[idx], weight[:, idx[:2]], x.gather(1, index2d),
        weight[idx.view(2, 3)] * 2, torch.index_select(weight, 0, idx), weight[-1],
        weight[idx - 5],
    ]  # fmt: skip


def test_gathers(check):
    weight = torch.randn(10, 4)
    idx = torch.tensor([0, 3, 9, 3, 1, 2])
    x = torch.randn(3, 5)
    index2d = torch.randint(0, 5, (3, 2))
    check(gathers, [weight, idx, x, index2d])


def test_out_of_range_index_raises_like_eager():
    def fn(weight, idx):
        return F.embedding(idx, weight) * 2

    weight, good = torch.randn(10, 4), torch.tensor([1, 2])
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [weight, good])
    torch.testing.assert_close(compiled(weight, good), fn(weight, good))
    bad = torch.tensor([1, 10])
    with pytest.raises(IndexError):
        fn(weight, bad)
    with pytest.raises(IndexError):
        compiled(weight, bad)


def test_outputs_alias_inputs_and_each_other():
    def fn(x):
        y = x + 1
        return x, x.t(), x[0], y, y.t(), y.view(-1), y[1:]

    x = torch.randn(3, 4)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    got, expected = compiled(x), fn(x)
    torch.testing.assert_close(got, expected)
    for g, e in zip(got, expected, strict=True):
        assert g.stride() == e.stride() and g.shape == e.shape
    assert got[0] is x
    assert got[1].data_ptr() == x.data_ptr() and got[2].data_ptr() == x.data_ptr()
    assert got[4].untyped_storage().data_ptr() == got[3].untyped_storage().data_ptr()
    assert got[6].data_ptr() == got[3].data_ptr() + 4 * got[3].element_size()


def test_scalar_inputs_and_non_tensor_outputs():
    def fn(x, scale: float, shift: int, flag: bool):
        out = x * scale + shift
        return {"out": out, "n": 3, "pair": (out.sum(), None), "flag": flag}

    x = torch.randn(5)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, 2.5, 3, True])
    got = compiled(x, 2.5, 3, True)
    torch.testing.assert_close(got, fn(x, 2.5, 3, True))
    # a different scalar value is not what was compiled: the graph reruns eagerly, correctly
    torch.testing.assert_close(compiled(x, 4.0, 1, False), fn(x, 4.0, 1, False))


def test_zero_dim_tensors(check):
    def fn(a, b):
        return a * b + 1, (a > b), torch.where(a > 0, a, b).exp(), a.to(torch.int64)

    check(fn, [torch.tensor(1.5), torch.tensor(-2.0)])


def test_inputs_with_other_layouts_still_correct():
    def fn(x):
        return (x * 2).sum(0)

    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(4, 6)])
    for other in (torch.randn(6, 4).t(), torch.randn(3, 6), torch.randn(4, 6, dtype=torch.float64)):
        torch.testing.assert_close(compiled(other), fn(other))
