"""Real models through graphcapture and inductor-lite, eval and training, against eager:
outputs, gradients, parameters after SGD steps and buffers (BatchNorm running stats and
`num_batches_tracked`, which must count each batch exactly once)."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from framejit import graphcapture as fj


class GPT(nn.Module):
    """A GPT-style model: token and position embeddings, causal attention (masked_fill +
    softmax, or scaled_dot_product_attention), layer_norm, GELU MLP, tied head."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2, seq=16, sdpa=False):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                {
                    "ln1": nn.LayerNorm(width),
                    "qkv": nn.Linear(width, 3 * width),
                    "proj": nn.Linear(width, width),
                    "ln2": nn.LayerNorm(width),
                    "fc": nn.Linear(width, 4 * width),
                    "out": nn.Linear(4 * width, width),
                }
            )
            for _ in range(layers)
        )
        self.ln_f = nn.LayerNorm(width)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))

    def attend(self, q, k, v):
        if self.sdpa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = q.shape[-2]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(self.mask[:t, :t], float("-inf"))
        return scores.softmax(-1) @ v

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            y = self.attend(q, k, v).transpose(1, 2).reshape(b, t, -1)
            x = x + blk["proj"](y)
            x = x + blk["out"](F.gelu(blk["fc"](blk["ln2"](x))))
        return self.ln_f(x) @ self.tok.weight.t()


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 16, 3, stride=2), nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = F.silu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.mean(dim=(2, 3)))


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out)


def _tokens():
    return torch.randint(0, 50, (2, 16))


MODELS = {
    "lstm": (LSTMTagger, lambda: torch.randn(3, 4, 8)),
    "transformer_layer": (
        lambda: nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True),
        lambda: torch.randn(2, 6, 32),
    ),
    "gpt": (GPT, _tokens),
    "gpt_sdpa": (lambda: GPT(sdpa=True), _tokens),
    "conv_net": (ConvNet, lambda: torch.randn(4, 3, 12, 12)),
}
TOL = {"rtol": 1e-4, "atol": 1e-5}


@pytest.fixture
def graphs():
    """Every graph inductor-lite compiled during the test."""
    seen = []
    unsubscribe = fj.events.subscribe(lambda record: seen.extend(record.graphs))
    yield seen
    unsubscribe()


def _kernels(graphs) -> int:
    return sum(getattr(g.compiled, "kernel_count", 0) for g in graphs)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_eval_matches_eager(name, graphs):
    make_model, make_input = MODELS[name]
    model = make_model().eval()
    compiled = fj.compile(model, backend="inductor-lite")
    with torch.no_grad():
        for _ in range(3):
            x = make_input()
            torch.testing.assert_close(compiled(x), model(x), **TOL)
    if name != "transformer_layer":  # its eval fast path is one fused ATen kernel
        assert _kernels(graphs) >= 1


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_steps_match_eager(name, graphs):
    make_model, make_input = MODELS[name]
    model = make_model().train()
    reference = copy.deepcopy(model)
    compiled = fj.compile(model, backend="inductor-lite")
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (model, reference)]
    for _ in range(3):
        x = make_input()
        got, expected = compiled(x), reference(x)
        torch.testing.assert_close(got, expected, **TOL)
        got.square().mean().backward()
        expected.square().mean().backward()
        for (pname, p), (_, r) in zip(
            model.named_parameters(), reference.named_parameters(), strict=True
        ):
            torch.testing.assert_close(p.grad, r.grad, **TOL, msg=pname)
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad()
    for (pname, p), (_, r) in zip(
        model.named_parameters(), reference.named_parameters(), strict=True
    ):
        torch.testing.assert_close(p, r, **TOL, msg=pname)
    for (bname, b), (_, r) in zip(model.named_buffers(), reference.named_buffers(), strict=True):
        torch.testing.assert_close(b, r, **TOL, msg=bname)
    parts = [p.role for g in graphs for p in getattr(g.compiled, "parts", [])]
    # the LSTM too: traced as its cell math, not as mkldnn's inference-only kernel
    assert "forward" in parts and "backward" in parts, parts
    assert _kernels(graphs) >= 1


def test_batchnorm_counts_each_batch_once():
    """The regression: a BatchNorm in training mode once counted a batch twice."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    reference = copy.deepcopy(model)
    compiled = fj.compile(model, backend="inductor-lite")
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8)
        compiled(x).sum().backward()
        reference(x).sum().backward()
    assert int(model[1].num_batches_tracked) == 3 == int(reference[1].num_batches_tracked)
    torch.testing.assert_close(model[1].running_mean, reference[1].running_mean)
    torch.testing.assert_close(model[1].running_var, reference[1].running_var)
    with torch.no_grad():
        for _ in range(2):
            compiled(torch.randn(2, 3, 8, 8))
            reference(torch.randn(2, 3, 8, 8))
    assert int(model[1].num_batches_tracked) == 5 == int(reference[1].num_batches_tracked)


def test_in_place_updates_of_inputs_and_buffers_happen_once():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
            self.register_buffer("total", torch.zeros(4))

        def forward(self, x):
            self.steps += 1
            self.total.add_(x.sum(0))
            x.mul_(2)
            return x.relu() + self.total

    model, reference = Counter(), Counter()
    compiled = fj.compile(model, backend="inductor-lite")
    for _ in range(3):
        x = torch.randn(3, 4)
        y = x.clone()
        torch.testing.assert_close(compiled(x), reference(y))
        torch.testing.assert_close(x, y)
    assert int(model.steps) == 3
    torch.testing.assert_close(model.total, reference.total)
