"""Reductions and the normalizations built on them, against eager: every reduction type,
over several dims, keepdim both ways, nan inputs, 0-size and 0-dim inputs, and the fusion
of softmax / layer_norm into one kernel."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

DIMS = [0, 1, -1, (0, 2), None]


def float_reductions(x):
    out = []
    for dim in DIMS:
        if dim is None:
            out += [x.sum(), x.mean(), x.amax(), x.amin(), x.prod(), x.argmax(), x.argmin()]
            out += [x.var(), x.std(), x.var(correction=0), torch.any(x > 0), torch.all(x > -1)]
            continue
        for keepdim in (False, True):
            out += [x.sum(dim, keepdim=keepdim), x.mean(dim, keepdim=keepdim)]
            out += [x.amax(dim, keepdim=keepdim), x.amin(dim, keepdim=keepdim)]
            out += [x.var(dim, keepdim=keepdim), x.std(dim, keepdim=keepdim)]
            out += [torch.any(x > 0.5, dim, keepdim=keepdim) if isinstance(dim, int) else x.sum()]
            if isinstance(dim, int):
                out += [x.argmax(dim, keepdim=keepdim), x.argmin(dim, keepdim=keepdim)]
                out += [x.prod(dim, keepdim=keepdim), torch.all(x < 1, dim, keepdim=keepdim)]
    return out


def test_var_mean_stays_in_aten(check):
    x = torch.randn(3, 5, 6)
    x[0, 0, 0] = float("inf")
    compiled, _, _ = check(
        lambda x: [torch.var_mean(x, dim=-1), torch.var_mean(x, dim=1, keepdim=True), x.var(1)],
        [x],
        lowered=False,
    )
    assert any("var_mean" in reason for reason in compiled.fallback_reasons)


def int_reductions(x):
    return [
        x.sum(), x.sum(1), x.sum(-1, keepdim=True), x.amax(0), x.amin(-1), x.argmax(1),
        x.argmin(), x.prod(0), torch.any(x, 1), torch.all(x), x.sum(dtype=torch.float32),
    ]  # fmt: skip


def normalizations(x, w, b):
    shape = (x.shape[-1],)
    return [
        torch.softmax(x, -1), torch.softmax(x, 0), torch.log_softmax(x, -1),
        torch.log_softmax(x, 1), F.layer_norm(x, shape, w, b), F.layer_norm(x, shape),
        F.layer_norm(x, x.shape[-2:]),
    ]  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_float_reductions(check, dtype):
    x = torch.randn(3, 5, 6).to(dtype)
    check(float_reductions, [x])


def test_float_reductions_with_nan_and_noncontiguous(check):
    x = torch.randn(6, 5, 3).permute(2, 1, 0)
    x[1, 2, 3] = float("nan")
    x[0, 0, 0] = float("inf")
    check(float_reductions, [x])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_int_reductions(check, dtype):
    x = torch.randint(-4, 5, (4, 7), dtype=dtype)
    check(int_reductions, [x])


def test_bool_reductions(check):
    def fn(x):
        return [x.sum(), x.sum(0), torch.any(x, 1), torch.all(x, 0), torch.any(x), x.prod()]

    check(fn, [torch.randn(4, 6) > 0])


def test_empty_and_scalar_reductions(check):
    def fn(e, s):
        return [e.sum(0), e.sum(), e.mean(1), torch.any(e, 0), torch.all(e), e.prod(), s.sum(),
                s.amax(), s.mean(), s.argmax(), torch.softmax(s, 0)]  # fmt: skip

    check(fn, [torch.randn(0, 4), torch.tensor(2.5)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_normalizations(check, dtype):
    x = (torch.randn(6, 33) * 3).to(dtype)
    w, b = torch.randn(33).to(dtype), torch.randn(33).to(dtype)
    # reduced-precision log_softmax: eager's vectorised kernel differs by a few float ulps
    # before rounding; where the result is near 0 (cancellation) that is several bf16 ulps
    tol = {"atol": 8e-3, "rtol": 1.6e-2} if dtype in (torch.float16, torch.bfloat16) else {}
    check(normalizations, [x, w, b], **tol)


def test_softmax_and_layer_norm_fuse_into_one_kernel(check):
    x, w, b = torch.randn(64, 128), torch.randn(128), torch.randn(128)

    def softmax(x):
        e = torch.exp(x - x.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    def layer_norm(x, w, b):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * w + b

    for fn, args in [(softmax, [x]), (layer_norm, [x, w, b]), (torch.softmax, [x, -1])]:
        gm = torch.fx.symbolic_trace(fn) if fn is not torch.softmax else None
        if gm is None:
            gm = torch.fx.symbolic_trace(lambda x: torch.softmax(x, -1))
            args = [x]
        compiled, _, _ = check(None, args, gm=gm)
        assert compiled.kernel_count == 1
        # intermediates (row max, sums, the mean) stay in registers: only the result is allocated
        assert compiled.wrapper_source.count("_empty(") == 1, compiled.wrapper_source


def test_large_parallel_reductions(check):
    x = torch.randn(300, 700)
    compiled, _, _ = check(
        lambda x: [x.sum(), x.amax(), x.mean(0), x.sum(1), torch.any(x > 4)],
        [x],
        atol=1e-3,
        rtol=1e-4,
        lowered=False,
    )
    assert compiled.kernel_count >= 1
    # the mean along the outer dim is a column kernel (rows in parallel, partial sums)
    assert compiled.fallback_reasons == []
    assert "omp_get_thread_num" in compiled.kernel_source


def test_column_sums_fuse_with_their_producers(check):
    """Sums over the leading dims (a training step's bias and weight grads) are one column
    kernel with the pointwise values they read; keepdim, 3-d prefixes and float64 too; a
    reduction of a middle dim keeping the last stays in ATen (its reads would be strided)."""
    x, w = torch.randn(600, 48), torch.randn(48)

    def grads(x, w):
        g = torch.sigmoid(x * w) * x
        return g, g.sum(0), (g * x).sum(0, keepdim=True)

    compiled, _, _ = check(grads, [x, w], atol=1e-4, rtol=1e-5)
    assert compiled.kernel_count == 1 and compiled.fallback_reasons == []
    y = torch.randn(2, 300, 32, dtype=torch.float64)
    compiled, _, _ = check(lambda y: (y.exp().sum([0, 1]), y.sum(1)), [y], lowered=False)
    assert [r.split(":")[0] for r in compiled.fallback_reasons] == ["aten.sum.dim_IntList"]


def test_column_sums_join_producers_across_atens_and_flattened_rows(check):
    """A bias grad sums a (b, t, w) value viewed as (b * t, w), after a matmul that reads
    the same value: the sum moves up past the matmul and joins its producer's kernel, its
    rows the producer's leading dims flattened (a training step's MLP backward)."""
    x, w = torch.randn(4, 80, 32), torch.randn(32, 8)

    def grads(x, w):
        g = torch.tanh(x) * x
        return g.view(320, 32) @ w, g.view(320, 32).sum(0), g.sum([0, 1])

    compiled, _, _ = check(grads, [x, w], atol=1e-4, rtol=1e-5, lowered=False)
    assert compiled.kernel_count == 1, compiled.source_code
    assert [r.split(" ")[0] for r in compiled.fallback_reasons] == ["aten.mm.default"]
