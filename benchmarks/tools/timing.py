"""CPU time per call of implementations run side by side, and the bytes a call moves.

``time_per_call`` interleaves the implementations round by round, so load spikes on a
shared machine hit every implementation alike, and keeps each one's best round: the run
the other load left alone.  (GPU timing, with CUDA events, stays in ``triton_gpu.py``.)
"""

from __future__ import annotations

import time


def time_per_call(impls, args, budget_s: float, rounds: int = 5, warmup: int = 1) -> list[float]:
    """Best seconds per call of each callable over ``rounds`` interleaved rounds.

    Each callable runs ``warmup`` times, then once more, timed, to size its rounds so that
    all its rounds together take about ``budget_s``.
    """
    iterations = []
    for fn in impls:
        for _ in range(warmup):
            fn(*args)
        start = time.perf_counter()
        fn(*args)
        once = max(time.perf_counter() - start, 1e-6)
        iterations.append(max(1, int(budget_s / rounds / once)))
    best = [float("inf")] * len(impls)
    for _ in range(rounds):
        for position, fn in enumerate(impls):
            start = time.perf_counter()
            for _ in range(iterations[position]):
                fn(*args)
            elapsed = (time.perf_counter() - start) / iterations[position]
            best[position] = min(best[position], elapsed)
    return best


def traffic_bytes(args, out) -> int:
    """Ideal memory traffic of one call: the tensor inputs read once, the outputs written once."""
    import torch

    outs = out if isinstance(out, (tuple, list)) else [out]
    return sum(t.numel() * t.element_size() for t in [*args, *outs] if isinstance(t, torch.Tensor))
