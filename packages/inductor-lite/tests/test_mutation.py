"""Mutation and aliasing through AOTAutograd: in-place ops on intermediates, inputs and
buffers are functionalized and written back exactly once; outputs that are views of inputs
stay views of them; training-mode BatchNorm counts each batch once (the regression)."""

from __future__ import annotations

import copy

import torch
import torch.fx
import torch.nn as nn

from framejit.inductor_lite import compile_fx


def test_in_place_on_intermediates(check):
    def fn(x):
        y = x * 2
        y.add_(1).relu_()
        y[0].mul_(3)
        return y.sigmoid()

    check(fn, [torch.randn(4, 6)])


def test_input_mutation_is_written_back_once():
    def fn(x, y):
        x.mul_(2).add_(1)
        y[:, 1].zero_()
        return x + y

    compiled = compile_fx(torch.fx.symbolic_trace(fn), [torch.randn(3, 4), torch.randn(3, 4)])
    assert compiled.kernel_count >= 1 and not compiled.fallback_reasons
    for _ in range(3):
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        x2, y2 = x.clone(), y.clone()
        torch.testing.assert_close(compiled(x, y), fn(x2, y2))
        torch.testing.assert_close((x, y), (x2, y2))


def test_views_of_inputs_stay_views():
    def fn(x):
        return x.t(), x[1:], x.view(-1), x * 2

    x = torch.randn(4, 5)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    t, tail, flat, doubled = compiled(x)
    for view in (t, tail, flat):
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    torch.testing.assert_close((t, tail, flat, doubled), fn(x))
    flat.zero_()  # writes through the view reach the input, as in eager
    assert bool((x == 0).all())


def _bn_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())


def test_batchnorm_training_counts_each_batch_once():
    model = _bn_model()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 3, 8, 8)
    compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8)
        compiled(x).sum().backward()
        reference(x).sum().backward()
    assert int(model[1].num_batches_tracked) == 3
    for (name, b), (_, r) in zip(model.named_buffers(), reference.named_buffers(), strict=True):
        torch.testing.assert_close(b, r, msg=name)
    for (name, p), (_, r) in zip(
        model.named_parameters(), reference.named_parameters(), strict=True
    ):
        torch.testing.assert_close(p.grad, r.grad, rtol=1e-4, atol=1e-5, msg=name)
    roles = [part.role for part in compiled.parts]
    assert roles == ["forward", "backward"], roles
    assert "# ======== backward ========" in compiled.source_code


def test_batchnorm_under_no_grad_updates_stats_once():
    model = _bn_model()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
        for _ in range(3):
            torch.testing.assert_close(compiled(x), reference(x))
    assert int(model[1].num_batches_tracked) == 3 == int(reference[1].num_batches_tracked)
    torch.testing.assert_close(model[1].running_var, reference[1].running_var)
