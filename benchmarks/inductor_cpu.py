"""inductor-lite vs eager vs torch.compile(backend="inductor") on CPU, side by side.

Each case is a small function traced with torch.fx.symbolic_trace for inductor-lite and
compiled as-is by torch.compile.  Both compilers start cold: fresh FRAMEJIT_CACHE_DIR and
TORCHINDUCTOR_CACHE_DIR.  Prints time per call, speedups, achieved GB/s (ideal traffic:
inputs read once, outputs written once) and cold compile times.

    python benchmarks/inductor_cpu.py [--quick]
"""

from __future__ import annotations

import sys
import time

from tools.caches import fresh_caches

_CACHE_ROOT = fresh_caches()

import torch  # noqa: E402
import torch.fx  # noqa: E402
from tools.results import record  # noqa: E402
from tools.timing import time_per_call, traffic_bytes  # noqa: E402

from framejit.inductor_lite import compile_fx  # noqa: E402


def pointwise_chain(x):
    return torch.relu(x * 2 + 1).sigmoid() * x


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * w + b


def full_sum(x):
    return x.sum()


CASES = [pointwise_chain, gelu_tanh, softmax, layer_norm, full_sum]
SIZES = [(4096, 256), (16384, 1024)]


def make_inputs(fn, size):
    x = torch.randn(size)
    if fn is layer_norm:
        return [x, torch.randn(size[-1]), torch.randn(size[-1])]
    return [x]


def main() -> None:
    quick = "--quick" in sys.argv
    budget = 0.15 if quick else 0.6
    torch.manual_seed(0)
    header = (
        f"{'case':<16}{'size':>14}{'eager ms':>10}{'inductor':>10}{'lite ms':>10}"
        f"{'vs eager':>10}{'vs ind.':>9}{'GB/s':>8}{'cc lite s':>11}{'cc ind. s':>11}{'cc ratio':>10}"
    )
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, caches in {_CACHE_ROOT}")
    print(header)
    print("-" * len(header))
    for size in SIZES:
        for fn in CASES:
            args = make_inputs(fn, size)
            expected = fn(*args)

            start = time.perf_counter()
            lite = compile_fx(torch.fx.symbolic_trace(fn), args)
            got = lite(*args)
            lite_compile = time.perf_counter() - start

            torch._dynamo.reset()
            inductor = torch.compile(fn, backend="inductor", dynamic=False)
            start = time.perf_counter()
            ref = inductor(*args)
            inductor_compile = time.perf_counter() - start

            tol = {"atol": 1e-3, "rtol": 1e-3} if fn is full_sum else {}
            torch.testing.assert_close(got, expected, **tol)
            torch.testing.assert_close(ref, expected, **tol)

            eager_t, inductor_t, lite_t = time_per_call(
                [fn, inductor, lite], args, budget, rounds=5, warmup=2
            )
            gbs = traffic_bytes(args, got) / lite_t / 1e9
            print(
                f"{fn.__name__:<16}{tuple(size)!s:>14}{eager_t * 1e3:>10.3f}{inductor_t * 1e3:>10.3f}"
                f"{lite_t * 1e3:>10.3f}{eager_t / lite_t:>9.2f}x{lite_t / inductor_t:>8.2f}x{gbs:>8.1f}"
                f"{lite_compile:>11.2f}{inductor_compile:>11.2f}{lite_compile / inductor_compile:>9.2f}x"
            )
            row = f"{fn.__name__} {tuple(size)}"
            record(row, "run vs inductor", lite_t * 1e3, inductor_t * 1e3, "ms")
            record(row, "cold compile", lite_compile, inductor_compile, "s")
    print("vs eager: eager time / lite time (higher is better); vs ind.: lite time / inductor time")
    print("(lower is better); cc: cold compile, first call included, both caches empty.")


if __name__ == "__main__":
    main()
