"""The fixed set of graphs whose generated kernels are committed as goldens (tests/goldens/).

Each case is (name, function, input factory).  Inputs are built from shapes only, so the
rendered source depends on nothing random.  Adding a case adds goldens; changing one of
these changes the goldens, which is the point: a refactor of the IR or a generator shows up
as a diff of the rendered kernels (tinygrad's "process replay").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def pointwise_chain(x):
    return torch.relu(x * 2 + 1).sigmoid() * x


def broadcast_add(x, b):
    return torch.tanh(x + b) - b


def transposed_input(x):
    return torch.exp(x.t()) + 1


def strided_slice(x):
    return x[:, ::2] * x[:, 1::2]


def softmax(x):
    return torch.softmax(x, -1)


def log_softmax_dim0(x):
    return torch.log_softmax(x, 0)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def gelu(x):
    return F.gelu(x), F.gelu(x, approximate="tanh")


def swiglu(a, b):
    return F.silu(a) * b


def cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def reductions(x):
    return x.sum(0), x.amax(-1), x.argmax(-1), x.var(1), x.sum(), torch.any(x > 0, 1)


def where_mask(x, y):
    return torch.where(x > y, x, y * 0.5).masked_fill(x < -1, 0.0)


def int_ops(a, b):
    return (a * 3 + b) & 7, torch.maximum(a, b), a.to(torch.float32) / 2


def bf16_cast(x):
    return (x.to(torch.bfloat16) * 2).to(torch.float32) + x


def cat_pad(x, y):
    return F.pad(torch.cat([x, y], 1), (1, 2))


def gather_rows(w, idx):
    return F.embedding(idx, w) * 2


def affine_gelu_training(x, w, b):
    return F.gelu(x * w + b) * x


def linear_gelu_training(x, w1, b1, w2, b2):
    return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)


def _grad(*shape):
    return torch.ones(shape, requires_grad=True)


def _f(*shape):
    return lambda: torch.ones(shape)


CASES = [
    ("pointwise_chain", pointwise_chain, lambda: [torch.ones(37, 19)]),
    ("broadcast_add", broadcast_add, lambda: [torch.ones(5, 7, 11), torch.ones(11)]),
    ("transposed_input", transposed_input, lambda: [torch.ones(13, 6)]),
    ("strided_slice", strided_slice, lambda: [torch.ones(7, 10)]),
    ("softmax", softmax, lambda: [torch.ones(6, 33)]),
    ("log_softmax_dim0", log_softmax_dim0, lambda: [torch.ones(9, 5)]),
    ("layer_norm", layer_norm, lambda: [torch.ones(4, 3, 31), torch.ones(31), torch.ones(31)]),
    ("rms_norm", rms_norm, lambda: [torch.ones(5, 64), torch.ones(64)]),
    ("gelu", gelu, lambda: [torch.ones(3, 17)]),
    ("swiglu", swiglu, lambda: [torch.ones(4, 24), torch.ones(4, 24)]),
    (
        "cross_entropy",
        cross_entropy,
        lambda: [torch.ones(7, 11), torch.zeros(7, dtype=torch.int64)],
    ),
    ("reductions", reductions, lambda: [torch.ones(6, 29)]),
    ("where_mask", where_mask, lambda: [torch.ones(23), torch.ones(23)]),
    (
        "int_ops",
        int_ops,
        lambda: [torch.ones(3, 5, dtype=torch.int64), torch.ones(3, 5, dtype=torch.int64)],
    ),
    ("bf16_cast", bf16_cast, lambda: [torch.ones(41)]),
    ("cat_pad", cat_pad, lambda: [torch.ones(3, 4), torch.ones(3, 2)]),
    (
        "gather_rows",
        gather_rows,
        lambda: [torch.ones(10, 8), torch.zeros(2, 3, dtype=torch.int64)],
    ),
    # a training graph: forward and backward; the weight and bias grads are column sums
    # (C++: one column kernel with the backward's pointwise values)
    (
        "affine_gelu_training",
        affine_gelu_training,
        lambda: [torch.ones(256, 16), _grad(16), _grad(16)],
    ),
    # an MLP's training graph over (batch, tokens, width): each bias grad sums its rows
    # (batch * tokens, flattened) in the kernel that computes what it sums, across the
    # matmuls between them (C++)
    (
        "linear_gelu_training",
        linear_gelu_training,
        lambda: [torch.ones(4, 64, 16), _grad(32, 16), _grad(32), _grad(16, 32), _grad(16)],
    ),
]
