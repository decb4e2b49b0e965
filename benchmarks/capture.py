"""Capture cost, framejit vs torch.compile(backend="eager"), side by side in one process.

Cold: the first call (trace + guards + code generation; the "eager" backend compiles
nothing), best of 3 fresh models.  Hit: per-call time once compiled (model included),
median of 7 loops.  Eager: the plain model, for reference.  Times are this process's CPU
time (time.process_time, one intra-op thread), so other load on a shared machine does not skew the ratios;
the cold wall-clock time is printed too.  Ratios are framejit / torch (lower is better):
the goals are cold <= 0.5x and hit <= 1.0x.  Runs on CPython 3.11, 3.12 and 3.13 (the
header names the interpreter).
"""

from __future__ import annotations

import gc
import platform
import statistics
import time

import torch
from tools.results import record
from tools.seed import toy_example
from torch import nn

from framejit import graphcapture as fj


def _mlp():
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
    )


def _encoder():
    return nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)


WORKLOADS = {
    "toy_example": (lambda: toy_example, lambda: (torch.randn(10), torch.randn(10))),
    "mlp_3_layer": (_mlp, lambda: (torch.randn(8, 64),)),
    "transformer_encoder_layer": (_encoder, lambda: (torch.randn(2, 16, 64),)),
}


def _cold(compile_fn, reset, make_model, inputs) -> tuple[float, float]:
    """(cpu seconds, wall seconds) of the first call, best of 3 fresh models."""
    best_cpu = best_wall = float("inf")
    for _ in range(3):
        reset()
        gc.collect()
        compiled = compile_fn(make_model())
        wall, cpu = time.perf_counter(), time.process_time()
        compiled(*inputs)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def _hit(fn, inputs, repeat: int = 7, number: int = 300) -> float:
    for _ in range(20):
        fn(*inputs)
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn(*inputs)
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def _framejit(model):
    return fj.compile(model, backend="eager")


def _torch(model):
    return torch.compile(model, backend="eager")


def main() -> None:
    import torch._dynamo

    torch.manual_seed(0)
    torch.set_num_threads(1)  # CPU time == wall time of the one compute thread
    rows = []
    for name, (make_model, make_inputs) in WORKLOADS.items():
        inputs = make_inputs()
        # warm both stacks once so imports and lazy initialisation do not count
        _framejit(make_model())(*inputs)
        _torch(make_model())(*inputs)
        cold_fj = _cold(_framejit, fj.reset, make_model, inputs)
        cold_torch = _cold(_torch, torch._dynamo.reset, make_model, inputs)
        fj.reset()
        torch._dynamo.reset()
        model = make_model()
        compiled_fj = _framejit(model)
        compiled_torch = _torch(model)
        with torch.no_grad():
            hit_eager = _hit(model, inputs)
            hit_fj = _hit(compiled_fj, inputs)
            hit_torch = _hit(compiled_torch, inputs)
        rows.append((name, cold_fj, cold_torch, hit_eager, hit_fj, hit_torch))

    header = (
        f"{'workload':<26} {'cold fj ms':>10} {'cold torch ms':>13} {'ratio':>5} {'(wall ms fj/torch)':>19}  "
        f"{'eager us':>8} {'hit fj us':>9} {'hit torch us':>12} {'ratio':>5}"
    )
    print(
        f"framejit vs torch.compile(backend='eager') on CPython {platform.python_version()}, "
        f"torch {torch.__version__}; CPU time of this process"
    )
    print(header)
    print("-" * len(header))
    for name, (cfj, wfj), (ctorch, wtorch), heager, hfj, htorch in rows:
        wall = f"{wfj * 1e3:.0f}/{wtorch * 1e3:.0f}"
        print(
            f"{name:<26} {cfj * 1e3:>10.1f} {ctorch * 1e3:>13.1f} {cfj / ctorch:>5.2f} {wall:>19}  "
            f"{heager * 1e6:>8.1f} {hfj * 1e6:>9.1f} {htorch * 1e6:>12.1f} {hfj / htorch:>5.2f}"
        )
        record(name, "cold capture", cfj * 1e3, ctorch * 1e3, "ms cpu")
        record(name, "cache hit", hfj * 1e6, htorch * 1e6, "us cpu")


if __name__ == "__main__":
    main()
