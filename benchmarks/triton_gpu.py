"""inductor-lite's Triton path vs eager vs torch.compile(backend="inductor") on a CUDA GPU.

Runs the workloads of benchmarks/inductor_cpu.py (fp32, and again in bf16) plus a GPT-style
transformer block, all on the GPU, in one process.  Prints time per call, speedups, and
achieved GB/s (ideal traffic: inputs read once, outputs written once) as a fraction of the
device's copy bandwidth, measured first with a large device-to-device copy.

    python benchmarks/triton_gpu.py [--quick]

Without a CUDA device it says so and exits 0 (nothing to measure).
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """A GPT-2 style block: pre-LN attention and MLP with residuals."""

    def __init__(self, dim: int = 768, heads: int = 12) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def gpu_time(fn, args, budget_s: float) -> float:
    """Best of 5 rounds, each timed with CUDA events over enough calls to fill the budget."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn(*args)
    end.record()
    torch.cuda.synchronize()
    once = max(start.elapsed_time(end) / 1e3, 1e-6)
    iterations = max(3, int(budget_s / 5 / once))
    best = float("inf")
    for _ in range(5):
        start.record()
        for _ in range(iterations):
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / iterations)
    return best


def copy_bandwidth() -> float:
    """Bytes/s of a 1 GiB device-to-device copy (read + write)."""
    src = torch.empty(2**28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    seconds = gpu_time(lambda: dst.copy_(src), [], 0.5)
    return 2 * src.numel() * src.element_size() / seconds


def cases(workloads):
    for dtype in (torch.float32, torch.bfloat16):
        for size in workloads.SIZES:
            for fn in workloads.CASES:
                inputs = workloads.make_inputs(fn, size)
                args = [a.to(device="cuda", dtype=dtype) for a in inputs]
                yield fn.__name__, fn, None, args, dtype
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        block = Block().to(device="cuda", dtype=dtype).eval()
        x = torch.randn(8, 512, 768, device="cuda", dtype=dtype)
        yield "gpt_block", block, torch.fx.symbolic_trace(block), [x], dtype


def main() -> int:
    if not torch.cuda.is_available():
        print("triton_gpu.py: no CUDA device here; nothing to measure (the Triton path is")
        print("tested on the CPU under TRITON_INTERPRET=1 in `nox -s inductor_lite`).")
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import inductor_cpu  # the CPU benchmark's workloads (it points the caches elsewhere)
    from tools.caches import fresh_caches
    from tools.timing import traffic_bytes

    root = fresh_caches("fj-gpu-bench-")
    from framejit.inductor_lite import compile_fx

    quick = "--quick" in sys.argv
    budget = 0.1 if quick else 0.5
    torch.manual_seed(0)
    peak = copy_bandwidth()
    name = torch.cuda.get_device_name()
    print(
        f"torch {torch.__version__}, {name}, copy bandwidth {peak / 1e9:.0f} GB/s, caches in {root}"
    )
    header = (
        f"{'case':<16}{'dtype':>6}{'size':>15}{'eager ms':>10}{'inductor':>10}{'lite ms':>10}"
        f"{'vs eager':>10}{'vs ind.':>9}{'GB/s':>8}{'of copy':>9}{'cc lite s':>11}{'cc ind. s':>11}"
    )
    print(header)
    print("-" * len(header))
    with torch.no_grad():
        for label, fn, gm, args, dtype in cases(inductor_cpu):
            expected = fn(*args)
            start = time.perf_counter()
            lite = compile_fx(gm if gm is not None else torch.fx.symbolic_trace(fn), args)
            got = lite(*args)
            torch.cuda.synchronize()
            lite_compile = time.perf_counter() - start
            torch._dynamo.reset()
            inductor = torch.compile(fn, backend="inductor", dynamic=False)
            start = time.perf_counter()
            ref = inductor(*args)
            torch.cuda.synchronize()
            inductor_compile = time.perf_counter() - start
            loose = dtype == torch.bfloat16 or label in ("full_sum", "gpt_block")
            tol = {"atol": 5e-2, "rtol": 5e-2} if loose else {}
            torch.testing.assert_close(got, expected, **tol)
            torch.testing.assert_close(ref, expected, **tol)
            eager_t = gpu_time(fn, args, budget)
            inductor_t = gpu_time(inductor, args, budget)
            lite_t = gpu_time(lite, args, budget)
            gbs = traffic_bytes(args, got) / lite_t
            kind = str(dtype).removeprefix("torch.")
            size = tuple(args[0].shape)
            print(
                f"{label:<16}{kind:>6}{size!s:>15}{eager_t * 1e3:>10.3f}{inductor_t * 1e3:>10.3f}"
                f"{lite_t * 1e3:>10.3f}{eager_t / lite_t:>9.2f}x{lite_t / inductor_t:>8.2f}x"
                f"{gbs / 1e9:>8.0f}{gbs / peak:>8.0%}{lite_compile:>11.2f}{inductor_compile:>11.2f}"
            )
            if getattr(lite, "fallback_reasons", None) and label != "gpt_block":
                print(f"{'':<16}fallbacks: {lite.fallback_reasons}")
    print("vs eager: eager time / lite time (higher is better); vs ind.: lite time / inductor")
    print("time (lower is better); of copy: achieved GB/s over the measured copy bandwidth;")
    print("cc: cold compile, first call included, both caches empty.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
