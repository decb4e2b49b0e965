"""Training steps and a GPT-style eval forward on CPU: eager, framejit + inductor-lite
(graphcapture's fj.compile, backend="inductor-lite") and torch.compile (inductor), side by
side in one process.

A training step is forward + backward + SGD (the optimizer runs eagerly for all three; only
the model is compiled).  Each implementation gets its own copy of the model.  Both
compilers start cold (fresh FRAMEJIT_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR); "cold" is the
first step, compile included.  Timing is built to survive a shared, noisy machine: thread
counts are set explicitly, each step warms up, then rounds interleave the three (rotating
which goes first) and the ratios reported are medians of per-round ratios.

    python benchmarks/training_cpu.py [--quick] [--threads N] [--rounds R]
"""

from __future__ import annotations

import copy
import math
import os
import statistics
import sys
import time

from tools.caches import fresh_caches

_CACHE_ROOT = fresh_caches("fj-bench-train-")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from framejit import graphcapture as fj  # noqa: E402


class PointwiseBlock(nn.Module):
    """Pointwise-heavy: per-feature affine maps, GELU, a sigmoid gate, a residual."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.w1, self.b1 = nn.Parameter(torch.randn(width)), nn.Parameter(torch.zeros(width))
        self.w2, self.b2 = nn.Parameter(torch.randn(width)), nn.Parameter(torch.zeros(width))

    def forward(self, x):
        h = F.gelu(x * self.w1 + self.b1)
        gate = torch.sigmoid(x * self.w2 + self.b2)
        return h * gate + x


class GPT(nn.Module):
    def __init__(self, vocab=1024, width=256, heads=4, layers=4, seq=128):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(seq, width)
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

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            att = scores.masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + blk["proj"](y)
            x = x + blk["out"](F.gelu(blk["fc"](blk["ln2"](x))))
        return self.ln_f(x) @ self.tok.weight.t()


def cases():
    torch.manual_seed(0)
    yield (
        "pointwise train",
        "(4096, 1024)",
        lambda: PointwiseBlock(1024),
        lambda: torch.randn(4096, 1024),
        True,
    )
    yield (
        "mlp train",
        "(512, 512->2048)",
        lambda: nn.Sequential(
            nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512), nn.LayerNorm(512)
        ),
        lambda: torch.randn(512, 512),
        True,
    )
    yield (
        "encoder train",
        "(8, 128, 256)",
        lambda: nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True),
        lambda: torch.randn(8, 128, 256),
        True,
    )
    yield ("gpt eval", "b8 s128 w256", GPT, lambda: torch.randint(0, 1024, (8, 128)), False)


def make_step(model: nn.Module, run, training: bool):
    if not training:

        def infer(x):
            with torch.no_grad():
                return run(x)

        return infer
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step(x):
        loss = run(x).float().square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    return step


def interleaved_times(steps, x, budget_s: float, rounds: int, warmup: int):
    """Per-call time of each step in each round.  A round runs every step for about
    ``budget_s / rounds`` seconds, in an order rotated from round to round, so that load on
    a shared machine hits every implementation alike and no step always runs first.
    Returns ``times[round][step]`` in seconds."""
    iterations = []
    for step in steps:
        for _ in range(warmup):
            step(x)
        start = time.perf_counter()
        step(x)
        once = max(time.perf_counter() - start, 1e-6)
        iterations.append(max(1, int(budget_s / rounds / len(steps) / once)))
    times = []
    for round_ in range(rounds):
        row = [0.0] * len(steps)
        for offset in range(len(steps)):
            position = (round_ + offset) % len(steps)
            start = time.perf_counter()
            for _ in range(iterations[position]):
                steps[position](x)
            row[position] = (time.perf_counter() - start) / iterations[position]
        times.append(row)
    return times


def main() -> None:
    quick = "--quick" in sys.argv
    threads = _arg("--threads", os.cpu_count() or 1)
    rounds = _arg("--rounds", 7 if quick else 15)
    budget = 1.5 if quick else 6.0
    torch.set_num_threads(threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"torch {torch.__version__}; threads {torch.get_num_threads()} (torch, OpenMP, set"
        f" explicitly); {rounds} interleaved rounds of ~{budget / rounds:.2f} s per case;"
        f" load {load:.1f}; caches in {_CACHE_ROOT}"
    )
    header = (
        f"{'case':<16}{'shape':>18}{'eager ms':>10}{'lite ms':>9}{'ind. ms':>9}"
        f"{'eager/lite':>11}{'lite/ind.':>10}{'spread':>8}"
        f"{'cold lite s':>12}{'cold ind. s':>12}{'cold ratio':>11}"
    )
    print(header)
    print("-" * len(header))
    for name, shape, make_model, make_input, training in cases():
        base = make_model().train(training)
        models = [copy.deepcopy(base) for _ in range(3)]
        x = make_input()
        fj.reset()
        torch._dynamo.reset()
        runs = [
            models[0],
            fj.compile(models[1], backend="inductor-lite"),
            torch.compile(models[2], backend="inductor"),
        ]
        steps = [make_step(m, r, training) for m, r in zip(models, runs, strict=True)]
        cold = []
        results = []
        for step in steps:
            start = time.perf_counter()
            results.append(step(x))
            cold.append(time.perf_counter() - start)
        tol = {"rtol": 1e-3, "atol": 1e-3}
        torch.testing.assert_close(results[1], results[0], **tol)
        torch.testing.assert_close(results[2], results[0], **tol)
        times = interleaved_times(steps, x, budget, rounds, warmup=3)
        eager_t, lite_t, ind_t = (statistics.median(r[i] for r in times) for i in range(3))
        speedup = statistics.median(r[0] / r[1] for r in times)
        versus = statistics.median(r[1] / r[2] for r in times)
        # how far the per-round ratio lite/ind. moves: interquartile range over the median
        quartiles = statistics.quantiles([r[1] / r[2] for r in times], n=4)
        spread = (quartiles[2] - quartiles[0]) / versus
        print(
            f"{name:<16}{shape:>18}{eager_t * 1e3:>10.2f}{lite_t * 1e3:>9.2f}{ind_t * 1e3:>9.2f}"
            f"{speedup:>10.2f}x{versus:>9.2f}x{spread:>7.0%} "
            f"{cold[1]:>12.2f}{cold[2]:>12.2f}{cold[1] / cold[2]:>10.2f}x"
        )
    print("Times are medians over rounds; ratios are medians of per-round ratios (each round")
    print("runs the three side by side); spread: interquartile range of lite/ind. over rounds.")
    print("eager/lite: higher is better (goal >= 1.5x training, >= 1.0x eval); lite/ind.: lower")
    print("is better (goal <= 1.2x training, <= 1.1x eval); cold: first step, compile included")
    print("(goal ratio <= 0.25x).")


def _arg(flag: str, default: int) -> int:
    if flag in sys.argv:
        return int(sys.argv[sys.argv.index(flag) + 1])
    return default


if __name__ == "__main__":
    main()
