"""Real model code through capture and both backends, compared with eager (forward and backward)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from framejit import graphcapture as fj

BACKENDS = ["eager", "inductor-lite"]


class MLP(nn.Module):
    def __init__(self, d_in=32, d_hidden=64, d_out=10):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_hidden), nn.GELU()
        )
        self.head = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return torch.log_softmax(self.head(self.layers(x)), dim=-1)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc(x.mean(dim=(2, 3)))


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.proj(y)


MODELS = {
    "mlp": (MLP, lambda: torch.randn(8, 32)),
    "cnn": (SmallCNN, lambda: torch.randn(2, 3, 16, 16)),
    "attention": (Attention, lambda: torch.randn(2, 6, 32)),
    "transformer_layer": (
        lambda: nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True),
        lambda: torch.randn(2, 5, 32),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_inference_matches_eager(name, backend):
    make_model, make_input = MODELS[name]
    model = make_model().eval()
    compiled = fj.compile(model, backend=backend)
    with torch.no_grad():
        for _ in range(3):
            x = make_input()
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["mlp", "attention"])
def test_training_step_matches_eager(name, backend):
    make_model, make_input = MODELS[name]
    model = make_model()
    reference = copy.deepcopy(model)
    compiled = fj.compile(model, backend=backend)
    x = make_input()
    compiled(x).sum().backward()
    reference(x).sum().backward()
    for (pname, p), (_, r) in zip(
        model.named_parameters(), reference.named_parameters(), strict=True
    ):
        torch.testing.assert_close(p.grad, r.grad, rtol=1e-4, atol=1e-5, msg=pname)


def test_compiled_module_behaves_like_the_module():
    model = MLP()
    compiled = fj.compile(model, backend="eager")
    assert compiled.state_dict().keys() == model.state_dict().keys()
    assert len(list(compiled.parameters())) == len(list(model.parameters()))
    compiled.eval()
    assert not model.training
    assert compiled.head is model.head
