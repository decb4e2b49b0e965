"""Dynamic shapes end to end: graphcapture's symbolic graphs through inductor-lite's kernels
over symbolic sizes.  Over 20 sizes a function compiles at most twice (automatic dynamic: a
static first compile, then one symbolic) and its kernels once per compile; every call matches
eager and none runs the graph eagerly inside the backend."""

from __future__ import annotations

import importlib
import warnings

import torch

from framejit import graphcapture as fj
from framejit.inductor_lite import cpp_builder

inductor_compile = importlib.import_module("framejit.inductor_lite.compile_fx")

LENGTHS = [5, 3, 7, 11, 13, 17, 19, 23, 29, 31, 2, 37, 41, 43, 47, 53, 64, 97, 128, 200]


class Attention(torch.nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q = q.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y)


def _builds() -> int:
    return cpp_builder.stats.compiles + cpp_builder.stats.disk_hits


def _run_lengths(fn, compiled, make_inputs, *, atol=1e-5, rtol=1e-5):
    """(graphs captured, C++ builds, eager runs inside the backend) over LENGTHS."""
    graphs = []
    listener = fj.events.subscribe(lambda record: graphs.extend(record.graphs))
    builds, eager = _builds(), inductor_compile.stats.eager_runs
    try:
        for n in LENGTHS:
            inputs = make_inputs(n)
            torch.testing.assert_close(compiled(*inputs), fn(*inputs), atol=atol, rtol=rtol)
    finally:
        listener()  # unsubscribe
    return len(graphs), _builds() - builds, inductor_compile.stats.eager_runs - eager


def test_pointwise_softmax_dynamic_true_compiles_kernels_once():
    def fn(x, y):
        return torch.softmax(x * 2 + y, -1).sum(0)

    compiled = fj.compile(fn, backend="inductor-lite", dynamic=True)
    graphs, builds, eager = _run_lengths(
        fn, compiled, lambda n: (torch.randn(n, n + 1), torch.randn(n + 1))
    )
    assert graphs == 1
    assert builds == 1  # one C++ build for all 20 sizes
    assert eager == 0


def test_attention_block_over_20_sequence_lengths():
    """The backend adds no compiles to the capture's: as many graphs as with the eager
    backend, each built once, and none of the 20 calls runs eagerly inside the backend."""
    model = Attention().eval()
    counts = {}
    with torch.no_grad():
        for backend in ("eager", "inductor-lite"):
            fj.reset()
            compiled = fj.compile(model, backend=backend, dynamic=True)
            counts[backend] = _run_lengths(model, compiled, lambda n: (torch.randn(2, n, 16),))
    graphs, builds, eager = counts["inductor-lite"]
    assert graphs == counts["eager"][0]
    assert builds <= graphs
    assert eager == 0


def test_size_outputs_are_this_calls_sizes():
    """A graph that returns sizes (`len(y)`, arithmetic on shapes) gives each call's values
    as Python numbers, as eager does, not the symbols the kernels were traced with."""

    def fn(x):
        y = x * 2
        return y + 1, len(y), y.shape[0] * y.shape[1] + 1, y.shape[1] > 3

    compiled = fj.compile(fn, backend="inductor-lite", dynamic=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graphs, _, eager = _run_lengths(fn, compiled, lambda n: (torch.randn(n, n % 5 + 2),))
    assert graphs == 1
    assert eager == 0
    # evaluating the sizes runs no third-party Python that the frame hook would capture
    assert not [w for w in caught if "framejit" in str(w.message)], [str(w.message) for w in caught]
    for n in (6, 9):
        x = torch.randn(n, 4)
        got, want = compiled(x), fn(x)
        assert [type(v) for v in got] == [type(v) for v in want]
        assert got[1:] == want[1:]
