"""Cost per call of a tiny Python function under framejit.frameeval's PEP 523 hook.

Scenarios: unhooked; hook installed but the thread or the code passes through; a cache hit
with a C check (fe.always_true) and with a Python check on L['a'] (also for a call with a
closure, *args and **kwargs); a miss that calls the callback.  When torch is importable,
torch.compile'd calls (dynamo's hook, backend "eager") run side by side with framejit's.

Timings are ns per call (best of many short runs, loop cost subtracted).  On a loaded shared
machine they are noisy, so --callgrind also reports instructions per call, counted by
valgrind (deterministic): the difference between two runs of different length.

    PYTHONPATH=packages/frameeval/src python3 benchmarks/frameeval_overhead.py [--quick] [--callgrind]
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tools.results import record

from framejit import frameeval as fe


def f(a, b):
    return a


def f_replaced(a, b):
    return a


def make_rich():
    k = 1

    def rich(a, b, *args, c, d=2, **kw):
        return a + k

    def rich_replaced(a, b, *args, c, d=2, **kw):
        return a + k

    return rich, rich_replaced


rich, rich_replaced = make_rich()


def loop_f(n):
    for _ in range(n):
        f(1, 2)


def loop_rich(n):
    for _ in range(n):
        rich(1, 2, 3, c=4, d=5)


def loop_empty(n):
    for _ in range(n):
        pass


for _code in (loop_f, loop_rich, loop_empty):
    fe.skip(_code)


def replace(target, replacement, check) -> Callable:
    def cb(frame, cache):
        if frame.f_code is target.__code__:
            return fe.GuardedCode(check, replacement.__code__)
        return None

    return cb


def skip_f(frame, cache):
    return fe.SKIP_CODE if frame.f_code is f.__code__ else None


def python_check(L):
    return L["a"] == 1


@dataclass
class Scenario:
    name: str
    loop: Callable[[int], None]
    warm: Callable | None = None  # callback that fills the cache during a warm-up call
    measure: object = None  # this thread's setting while measuring
    baseline: str = "unhooked"


SCENARIOS = {
    "unhooked": Scenario("f(1, 2) unhooked", loop_f),
    "other_thread": Scenario("hook installed, this thread has no callback", loop_f),
    "skip_mode": Scenario("hook installed, thread in fe.SKIP mode", loop_f, measure=fe.SKIP),
    "skip_code": Scenario(
        "pass-through: code marked skip (SKIP_CODE)", loop_f, skip_f, fe.RUN_ONLY
    ),
    "hit_c": Scenario(
        "hit, C check (fe.always_true), in place",
        loop_f,
        replace(f, f_replaced, fe.always_true),
        fe.RUN_ONLY,
    ),
    "hit_py": Scenario(
        "hit, Python check L['a'] == 1", loop_f, replace(f, f_replaced, python_check), fe.RUN_ONLY
    ),
    "miss": Scenario(
        "miss: callback returns None each call", loop_f, measure=lambda frame, cache: None
    ),
    "rich": Scenario("rich(1, 2, 3, c=4, d=5) unhooked", loop_rich, baseline="rich"),
    "rich_hit_c": Scenario(
        "rich hit, C check",
        loop_rich,
        replace(rich, rich_replaced, fe.always_true),
        fe.RUN_ONLY,
        "rich",
    ),
    "rich_hit_py": Scenario(
        "rich hit, Python check L['a'] == 1",
        loop_rich,
        replace(rich, rich_replaced, python_check),
        fe.RUN_ONLY,
        "rich",
    ),
}


class OtherThreadCallback:
    """Installs the hook from another thread while this one stays unhooked."""

    def __enter__(self):
        self.ready, self.done = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._worker, daemon=True)
        self.thread.start()
        self.ready.wait()

    def _worker(self):
        fe.set_callback(lambda frame, cache: None)
        self.ready.set()
        self.done.wait()
        fe.set_callback(None)

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def run_scenario(key: str, n: int, repeats: int) -> float:
    """Best ns per call of the scenario's loop (loop cost not subtracted)."""
    sc = SCENARIOS[key]
    fe.reset()
    try:
        if sc.warm is not None:
            with fe.callback(sc.warm):
                sc.loop(10)
        with OtherThreadCallback() if key == "other_thread" else fe.callback(sc.measure):
            return best_ns(sc.loop, n, repeats)
    finally:
        fe.reset()


def best_ns(loop, n: int, repeats: int) -> float:
    times = []
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.thread_time_ns()
            loop(n)
            times.append(time.thread_time_ns() - start)
    finally:
        gc.enable()
    return min(times) / n


def instructions_per_call(key: str, n: int = 20_000) -> float:
    """valgrind-counted instructions per call: two runs differing by n calls."""

    def count(calls: int) -> int:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
             __file__, "--run-one", key, str(calls)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return int(re.search(r"Collected : (\d+)", proc.stderr).group(1))

    return (count(1000 + n) - count(1000)) / n


def print_table(title: str, rows: list[tuple[str, float, float]], unit: str) -> None:
    print(title)
    print(f"{'scenario':48} {unit:>12} {'vs baseline':>12}")
    for name, value, base in rows:
        print(f"{name:48} {value:12.1f} {value - base:+12.1f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer runs (smoke test)")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--run-one", nargs=2, metavar=("SCENARIO", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        key, calls = args.run_one
        run_scenario(key, int(calls), 1)
        return
    n, repeats = (20_000, 3) if args.quick else (20_000, 80)
    empty = best_ns(loop_empty, n, repeats)
    ns = {key: run_scenario(key, n, repeats) - empty for key in SCENARIOS}
    rows = [(sc.name, ns[key], ns[sc.baseline]) for key, sc in SCENARIOS.items()]
    print_table(
        f"framejit.frameeval, CPython {sys.version.split()[0]}: ns per call, best of {repeats} x {n}",
        rows,
        "ns/call",
    )
    if args.callgrind:
        if shutil.which("valgrind") is None:
            print("(valgrind not found: no instruction counts)\n")
        else:
            instr = {key: instructions_per_call(key) for key in SCENARIOS}
            rows = [(sc.name, instr[key], instr[sc.baseline]) for key, sc in SCENARIOS.items()]
            print_table("instructions per call (valgrind, includes the loop)", rows, "instr/call")
    torch_rows(n, repeats, empty)


def torch_rows(n: int, repeats: int, empty: float) -> None:
    try:
        import torch
    except ImportError:
        print("(torch not importable: no torch.compile comparison)")
        return
    # The same tiny function called through each one's compiled wrapper: entering the region,
    # the eval-frame hook, the cache hit, leaving the region.
    compiled = torch.compile(f, backend="eager")
    compiled(1, 2)

    def loop_torch(n):
        for _ in range(n):
            compiled(1, 2)

    def framejit_compiled(a, b):
        with fe.callback(fe.RUN_ONLY):
            return f(a, b)

    def loop_framejit(n):
        for _ in range(n):
            framejit_compiled(1, 2)

    for code in (loop_torch, loop_framejit, framejit_compiled):
        fe.skip(code)
    with fe.callback(replace(f, f_replaced, fe.always_true)):
        f(1, 2)
    t_torch = best_ns(loop_torch, n, repeats) - empty
    t_ours = best_ns(loop_framejit, n, repeats) - empty
    fe.reset()
    print(f"{'compiled call: region + hook + hit':48} {'ns/call':>12} {'ratio':>12}")
    print(f"{'torch.compile(f, backend=eager)(1, 2)':48} {t_torch:12.1f} {1.0:12.2f}")
    print(
        f"{'framejit: with fe.callback(RUN_ONLY): f(1, 2)':48} {t_ours:12.1f} {t_ours / t_torch:12.2f}"
    )
    record("compiled call: region + hook + hit", "call overhead", t_ours, t_torch, "ns")
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
