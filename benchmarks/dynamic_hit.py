"""Hit-path cost of a dynamic-shape cache entry: framejit static vs dynamic vs torch.compile.

Each function is compiled four ways with the "eager" backend (so the time is the frame hook,
the guards and the call of the graph, not kernels): framejit with `dynamic=False` (a static
entry: sizes in the tensor guard) and `dynamic=True` (symbolic sizes: SymInt arguments and
shape guards such as ``L['x'].size()[0] == L['y'].size()[0]``), and torch.compile the same
two ways.  After a warm-up call each compiled function is timed on the same inputs, in
interleaved rounds, best of each, and the script prints us per call and the ratios

    framejit dynamic / framejit static     (issue 11 asks for at most 1.2)
    framejit dynamic / torch dynamic
    torch dynamic / torch static           (the peer's own cost of dynamism)
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import torch
import torch._dynamo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from tools.results import record  # noqa: E402

from framejit import frameeval as fe  # noqa: E402
from framejit import graphcapture as fj  # noqa: E402


def pointwise(x, y):
    return x * 2 + y


def reshaped(x, y):
    n = x.size(0)
    return (x + y).view(n * 2, -1).sum(0)


def branchy(x, y):
    if x.size(0) > 4:
        return x.sum(0) + y[0]
    return x - y


FUNCTIONS = [pointwise, reshaped, branchy]


def _fresh_copy(fn):
    """The same function with its own code object (each compiler gets a clean cache)."""
    code = fn.__code__.replace()
    return type(fn)(code, fn.__globals__, fn.__name__)


def _time(call, args, number: int, rounds: int) -> list[float]:
    return [timeit.timeit(lambda: call(*args), number=number) / number for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    x, y = torch.randn(8, 4), torch.randn(8, 4)
    print(f"{'function':<10} {'fj static':>10} {'fj dyn':>10} {'th static':>10} {'th dyn':>10}"
          f"   {'fj dyn/static':>13} {'fj/th dyn':>10} {'th dyn/static':>13}")  # fmt: skip
    for fn in FUNCTIONS:
        variants = {
            "fj static": fj.compile(_fresh_copy(fn), backend="eager", dynamic=False),
            "fj dyn": fj.compile(_fresh_copy(fn), backend="eager", dynamic=True),
            "th static": torch.compile(_fresh_copy(fn), backend="eager", dynamic=False),
            "th dyn": torch.compile(_fresh_copy(fn), backend="eager", dynamic=True),
        }
        for call in variants.values():
            torch.testing.assert_close(call(x, y), fn(x, y))
            call(x, y)
        best = dict.fromkeys(variants, float("inf"))
        for _ in range(opts.rounds):
            for name, call in variants.items():
                best[name] = min(best[name], *_time(call, (x, y), opts.number, 1))
        us = {k: v * 1e6 for k, v in best.items()}
        fj_ratio = us["fj dyn"] / us["fj static"]
        cross = us["fj dyn"] / us["th dyn"]
        th_ratio = us["th dyn"] / us["th static"]
        print(f"{fn.__name__:<10} {us['fj static']:>10.2f} {us['fj dyn']:>10.2f} "
              f"{us['th static']:>10.2f} {us['th dyn']:>10.2f}   {fj_ratio:>13.2f} "
              f"{cross:>10.2f} {th_ratio:>13.2f}")  # fmt: skip
        record(f"{fn.__name__} dynamic hit", "us per call", us["fj dyn"], us["th dyn"], "us")
        record(f"{fn.__name__} static hit", "us per call", us["fj static"], us["th static"], "us")
    fe.reset()


if __name__ == "__main__":
    main()
