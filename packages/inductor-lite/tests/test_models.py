"""Whole small models through compile_fx, against eager: the seed's toy_example, an MLP
(symbolic_trace of nn modules), a transformer block (make_fx), and training graphs,
which must keep their gradients."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

from framejit.inductor_lite import compile_fx


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    return x, b.sum() < 0


def test_seed_toy_example(check):
    for _ in range(3):
        a, b = torch.randn(10), torch.randn(10)
        compiled, _, _ = check(toy_example, [a, b])
    assert "kernel0" in compiled.source_code and "def call" in compiled.source_code


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4)
    )


def test_mlp_inference(check):
    model = mlp().eval()
    x = torch.randn(8, 16)
    with torch.no_grad():
        compiled, _, _ = check(None, [x], gm=torch.fx.symbolic_trace(model), lowered=False)
    assert compiled.kernel_count >= 1
    # matmuls stay in ATen; everything else is lowered
    assert all("addmm" in r or " mm" in r for r in compiled.fallback_reasons), (
        compiled.fallback_reasons
    )
    # weights are live references: an in-place update is seen by the compiled graph
    with torch.no_grad():
        model[0].weight.mul_(0.5)
        torch.testing.assert_close(compiled(x), model(x))


def test_training_graph_keeps_gradients():
    model = mlp()
    x = torch.randn(8, 16, requires_grad=True)
    compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
    out = compiled(x)
    assert out.grad_fn is not None
    out.sum().backward()
    expected_grad = x.grad.clone()
    x.grad = None
    model(x).sum().backward()
    torch.testing.assert_close(expected_grad, x.grad)


def test_params_requiring_grad_fall_back_in_grad_mode():
    model = mlp()
    x = torch.randn(4, 16)
    with torch.no_grad():
        compiled = compile_fx(torch.fx.symbolic_trace(model), [x])
    out = compiled(x)  # grad mode on, parameters require grad: autograd must still work
    assert out.requires_grad
    out.sum().backward()
    assert model[0].weight.grad is not None


class Block(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        attn = self.dropout(F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1))
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_transformer_block(dtype):
    torch.manual_seed(0)
    block = Block().eval().to(dtype)
    x = torch.randn(2, 8, 32, dtype=dtype)
    with torch.no_grad():
        gm = make_fx(block)(x)
        compiled = compile_fx(gm, [x])
        got = compiled(x)
        expected = block(x)
    tol = {"atol": 3e-2, "rtol": 3e-2} if dtype == torch.bfloat16 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(got, expected, **tol)
    assert compiled.kernel_count >= 3


def test_symbolic_trace_of_transformer_block():
    torch.manual_seed(0)
    block = Block().eval()
    x = torch.randn(2, 8, 32)

    class Traceable(Block):
        def forward(self, x):  # symbolic_trace cannot unpack x.shape: sizes are fixed here
            q, k, v = self.qkv(self.ln1(x)).split(32, dim=-1)
            q, k, v = (z.view(2, 8, 4, 8).transpose(1, 2) for z in (q, k, v))
            attn = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
            x = x + self.proj((attn @ v).transpose(1, 2).reshape(2, 8, 32))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    traceable = Traceable().eval()
    traceable.load_state_dict(block.state_dict())
    with torch.no_grad():
        gm = torch.fx.symbolic_trace(traceable)
        compiled = compile_fx(gm, [x])
        torch.testing.assert_close(compiled(x), gm(x))
    assert compiled.kernel_count >= 3


def test_lstm_extern_with_undefined_outputs():
    """ATen's LSTM kernel returns None for outputs that are undefined under no_grad (the
    workspace); the wrapper must not touch results nobody reads."""
    torch.manual_seed(0)
    lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True).eval()
    x = torch.randn(3, 5, 8)
    with torch.no_grad():
        gm = make_fx(lstm)(x)
        compiled = compile_fx(gm, [x])
        torch.testing.assert_close(compiled(x), lstm(x))


def _epilogue(a, b):
    m = a @ b
    return torch.sigmoid(m) * m


def _returned(a, b):
    m = a @ b
    return m, torch.sigmoid(m)


def _transposed(a, b):
    m = a @ b
    return torch.sigmoid(m) + m.t()


@pytest.mark.parametrize(
    "fn,in_place", [(_epilogue, True), (_returned, False), (_transposed, False)]
)
def test_epilogue_writes_into_its_matmul_result(check, fn, in_place):
    """A pointwise epilogue stores into its matmul's result when nothing else reads it and
    it reads the result only at the element it writes; not when the result is returned or
    read at another element (a transpose)."""
    a, b = torch.randn(48, 32), torch.randn(32, 48)
    compiled, _, _ = check(fn, [a, b], lowered=False)
    assert ("= extern0_out0\n" in compiled.wrapper_source) == in_place, compiled.source_code
