"""The Triton path on the CPU: kernels run under Triton's interpreter (TRITON_INTERPRET=1,
set by inductor-lite while it defines its kernels), checked against eager.  Every lowered op
(the graphs of the C++ tests), fused softmax / layer_norm / RMSNorm / GELU / SwiGLU /
cross-entropy, masked tails (sizes 1, odd, primes), strided and transposed inputs, looped
reductions, 2-D tiles, gathers with out-of-range indices, autotuning.  Sizes stay small:
the interpreter runs programs one after another in numpy."""

from __future__ import annotations

import pytest

pytest.importorskip("triton", exc_type=ImportError)  # absent or broken: skip

import torch
import torch.fx
import torch.nn.functional as F
from test_pointwise import (
    BOOL_OPS,
    FLOAT_BINARY,
    INT_OPS,
    _reference_at_non_finite,
    binary_graph,
    bool_graph,
    int_graph,
    make,
    unary_graph,
)
from test_reductions import float_reductions, int_reductions, normalizations
from test_views_indexing import data_movement, views

from framejit.inductor_lite import compile_fx
from framejit.inductor_lite.config import config


def run(fn, args, *, gm=None, lowered=True, **tol):
    gm = gm if gm is not None else torch.fx.symbolic_trace(fn)
    compiled = compile_fx(gm, list(args), codegen="triton")
    expected = gm(*args)
    got = compiled(*args)
    torch.testing.assert_close(got, expected, equal_nan=True, **tol)
    if lowered:
        assert compiled.kernel_count >= 1
        assert "@triton.jit" in compiled.source_code
        assert not compiled.fallback_reasons, compiled.fallback_reasons
    return compiled


@pytest.fixture
def looped(monkeypatch):
    """Rows longer than 8 elements loop over blocks instead of fitting one."""
    monkeypatch.setattr(config, "triton_persistent_max", 8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape,layout", [((5, 7), "contiguous"), ((13, 3), "transposed"), ((1,), "contiguous")])  # fmt: skip
def test_float_unary(dtype, shape, layout):
    x = make(shape, dtype, layout)
    gm = torch.fx.symbolic_trace(unary_graph)
    compiled = compile_fx(gm, [x], codegen="triton")
    got = compiled(x)
    expected = _reference_at_non_finite(x, gm(x))
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(got, expected, equal_nan=True, **tol)
    assert compiled.kernel_count >= 1 and not compiled.fallback_reasons


@pytest.mark.parametrize(
    "shapes", [((5, 7), (5, 7), "contiguous"), ((6, 4), (6, 4), "sliced"), ((5, 7), (7,), "contiguous"), ((), (), "contiguous")], ids=str
)  # fmt: skip
def test_float_binary(shapes):
    a = make(shapes[0], torch.float32, shapes[2])
    b = make(shapes[1], torch.float32, shapes[2]) + 0.5
    assert len(FLOAT_BINARY) > 20
    run(binary_graph, [a, b])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_int_ops(dtype):
    a = make((3, 5), dtype, "contiguous")
    b = make((3, 5), dtype, "contiguous")
    assert len(INT_OPS) > 20
    run(int_graph, [a, b])


def test_bool_ops():
    a, b = make((7, 3), torch.bool, "contiguous"), make((7, 3), torch.bool, "contiguous")
    assert len(BOOL_OPS) > 10
    run(bool_graph, [a, b])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_float_reductions(dtype):
    x = torch.randn(3, 5, 6).to(dtype)
    x.view(-1)[7] = float("nan")
    run(float_reductions, [x])


def test_float_reductions_looped_and_noncontiguous(looped):
    x = torch.randn(6, 5, 11).permute(2, 1, 0)
    x[1, 2, 3] = float("nan")
    x[0, 0, 0] = float("inf")
    run(float_reductions, [x])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_int_reductions(dtype):
    run(int_reductions, [torch.randint(-4, 5, (4, 7), dtype=dtype)])


def test_int_reductions_looped(looped):
    run(int_reductions, [torch.randint(-4, 5, (3, 19), dtype=torch.int64)])


def test_argmax_ties_and_nan(looped):
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0] * 5, [float("nan"), 2.0, float("nan"), 1.0] * 5])
    x[0, 13] = 3.0
    for kernel_layout in (x, x.t().contiguous().t()):
        run(lambda x: [x.argmax(1), x.argmin(1), x.argmax(0), x.amax(1)], [kernel_layout])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_normalizations(dtype):
    x = (torch.randn(6, 33) * 3).to(dtype)
    w, b = torch.randn(33).to(dtype), torch.randn(33).to(dtype)
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    run(normalizations, [x, w, b], **tol)


def test_normalizations_looped(looped):
    x, w, b = torch.randn(5, 37) * 3, torch.randn(37), torch.randn(37)
    run(normalizations, [x, w, b])


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def swiglu(a, b):
    return F.silu(a) * b


def gelu_block(x):
    return F.gelu(x), F.gelu(x, approximate="tanh")


def cross_entropy(logits, target):
    return F.cross_entropy(logits, target), F.cross_entropy(logits, target, reduction="none")


@pytest.mark.parametrize("n", [1, 2, 7, 31, 127])
def test_fused_patterns_masked_tails(n):
    x, w = torch.randn(3, n), torch.randn(n)
    compiled = run(lambda x: torch.softmax(x, -1), [x])
    assert compiled.kernel_count == 1
    run(lambda x, w: F.layer_norm(x, (n,), w, w + 1), [x, w])
    run(rms_norm, [x, w])
    run(swiglu, [x, x.flip(0)])
    run(gelu_block, [x])
    run(cross_entropy, [x, torch.randint(0, n, (3,))])


def test_fused_patterns_looped(looped):
    x, w = torch.randn(4, 29), torch.randn(29)
    run(lambda x: torch.softmax(x, -1), [x])
    run(rms_norm, [x, w])
    run(cross_entropy, [x, torch.randint(0, 29, (4,))])


def test_strided_and_transposed_inputs():
    base = torch.randn(12, 9)
    transposed = base.t()
    sliced = base[::2, 1::3]
    run(lambda a: torch.softmax(a, -1) * 2, [transposed])
    run(lambda a: a.sum(0) + a.amax(1).sum(), [sliced])
    compiled = run(lambda a: torch.exp(a.t()) + 1, [torch.randn(13, 6)])
    assert "RBLOCK" in compiled.kernel_source  # a transposed load gets a 2-D tile


@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
def test_views(layout):
    x = torch.randn(4, 5, 6)
    if layout == "permuted":
        x = torch.randn(6, 4, 5).permute(1, 2, 0)
    run(views, [x])


def test_data_movement_and_gathers():
    x, y, i = torch.randn(3, 4), torch.randn(2, 4), torch.arange(5)
    run(data_movement, [x, y, i])
    w, idx = torch.randn(10, 8), torch.tensor([[1, 9, 0], [3, 3, 2]])
    cols = torch.tensor([[7, 0], [2, 2], [5, 1]])
    run(
        lambda w, idx, cols: [F.embedding(idx, w) * 2, w[idx[0]], torch.gather(w[:3], 1, cols)],
        [w, idx, cols],
    )


def test_out_of_range_index_raises_like_eager():
    w = torch.randn(10, 8)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda w, i: F.embedding(i, w)), [w, torch.tensor([1, 2])], codegen="triton")  # fmt: skip
    with pytest.raises(IndexError):
        compiled(w, torch.tensor([1, 12]))
    torch.testing.assert_close(compiled(w, torch.tensor([4, 2])), w[[4, 2]])


def test_mlp_with_externs():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    x = torch.randn(5, 8)
    with torch.no_grad():
        compiled = run(None, [x], gm=torch.fx.symbolic_trace(model.eval()), lowered=False)
    assert compiled.kernel_count >= 1
    assert all("addmm" in r or " mm" in r for r in compiled.fallback_reasons)


def test_autotune_is_cached_per_shape(monkeypatch, tmp_path):
    monkeypatch.setenv("FRAMEJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(config, "triton_autotune", True)
    x = torch.randn(37, 21)
    run(lambda x: torch.softmax(x, -1), [x])
    tuned = list(tmp_path.glob("*.tune.json"))
    assert len(tuned) == 1 and list(tmp_path.glob("*.triton.py"))
    run(lambda x: torch.softmax(x, -1), [x])  # a fresh compile reads the cached choice
    assert list(tmp_path.glob("*.tune.json")) == tuned


def test_default_codegen_picks_by_device():
    x = torch.randn(4, 4)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: x + 1), [x])
    assert "@triton.jit" not in compiled.source_code  # CPU tensors: C++ unless asked
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: x + 1), [x], codegen="triton")
    assert "@triton.jit" in compiled.source_code and "grid=_grid_kernel0" in compiled.source_code


def test_a_failing_kernel_runs_the_graph_eagerly(monkeypatch):
    from framejit.inductor_lite.codegen import triton_runtime

    monkeypatch.setattr(config, "strict", False)
    x = torch.randn(5, 3)
    compiled = compile_fx(torch.fx.symbolic_trace(lambda x: x.exp() + 1), [x], codegen="triton")

    def broken(*args, **kwargs):
        raise RuntimeError("simulated Triton compile error")

    monkeypatch.setattr(triton_runtime.Launcher, "_launch", broken)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), x.exp() + 1)


def test_mixed_device_graph_falls_back_per_op():
    """CUDA graphs are lowered for Triton; ops on another device stay in ATen, with reasons.
    Rendered from fake CUDA tensors, so no GPU is needed."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from framejit.inductor_lite.compile_fx import lower_parts, render_kernels
    from framejit.inductor_lite.wrapper import WrapperBuilder

    def fn(x, y):
        return torch.softmax(x * 2, -1), y + 1, x.cpu() * 3

    with FakeTensorMode():
        x, y = torch.empty(4, 9, device="cuda"), torch.empty(3)
    gm = torch.fx.symbolic_trace(fn)
    (part,) = lower_parts(gm, [x, y], "triton")
    aten, graph, steps, groups = part.aten_graph, part.graph, part.steps, part.groups
    assert graph.device.type == "cuda"
    reasons = " | ".join(graph.fallback_reasons)
    assert "aten.add.Tensor: tensor on cpu, kernels run on cuda" in reasons
    assert "aten._to_copy.default: tensor on cpu" in reasons
    assert len(groups) == 1  # the softmax
    source = render_kernels(gm, [x, y], "triton")
    assert "tl.reduce" in source
    from framejit.inductor_lite.codegen import get_codegen

    generated = get_codegen("triton").generate(groups, graph.buffers)
    wrapper = WrapperBuilder(graph, steps, generated, aten.out_spec).build()
    assert "arg0.device != " in wrapper and "device=" in wrapper


def test_gpt_block():
    """The GPT-style block of benchmarks/triton_gpu.py, small: matmuls and attention stay in
    ATen, layer norms, GELU, residuals and the causal mask are Triton kernels."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[3] / "benchmarks"))
    from triton_gpu import Block

    torch.manual_seed(0)
    block = Block(32, 4).eval()
    x = torch.randn(2, 8, 32)
    with torch.no_grad():
        compiled = run(None, [x], gm=torch.fx.symbolic_trace(block), lowered=False)
    assert compiled.kernel_count >= 4
    assert all("stays in ATen" in reason for reason in compiled.fallback_reasons)


def test_empty_and_scalar_reductions():
    def fn(e, s):
        return [e.sum(0), e.sum(), e.mean(1), torch.any(e, 0), torch.all(e), e.prod(), s.sum(),
                s.amax(), s.mean(), s.argmax(), torch.softmax(s, 0)]  # fmt: skip

    run(fn, [torch.randn(0, 4), torch.tensor(2.5)])


def test_training_graph_forward_and_backward():
    """Through AOTAutograd: the forward and the backward graphs get Triton kernels."""

    def fn(x, w):
        return F.layer_norm(torch.tanh(x) * w, (w.shape[0],)).sum()

    x, w = torch.randn(6, 13, requires_grad=True), torch.randn(13, requires_grad=True)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, w], codegen="triton")
    out = compiled(x, w)
    out.backward()
    grads = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    expected = fn(x, w)
    expected.backward()
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(grads, (x.grad, w.grad))
    assert "@triton.jit" in compiled.source_code
