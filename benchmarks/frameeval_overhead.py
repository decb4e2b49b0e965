"""ns per call of a tiny Python function under framejit.frameeval's PEP 523 hook.

Scenarios: unhooked; hook installed but the thread or the code passes through; a cache hit
with a C check (fe.always_true), with a Python check on L['a'], and with the same check on a
call with closure/*args/**kwargs; a miss that calls the callback.  When torch is importable,
torch._dynamo's hook runs the same function side by side (torch.compile, backend "eager").

    PYTHONPATH=packages/frameeval/src python3 benchmarks/frameeval_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import sys
import threading
import time

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


def loop_f(n, fn=f):
    for _ in range(n):
        fn(1, 2)


def loop_rich(n, fn=rich):
    for _ in range(n):
        fn(1, 2, 3, c=4, d=5)


def loop_empty(n):
    for _ in range(n):
        pass


for _code in (loop_f, loop_rich, loop_empty):
    fe.skip(_code)


def best_ns(loop, n, repeats, fn=None) -> float:
    times = []
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.thread_time_ns()
            loop(n) if fn is None else loop(n, fn)
            times.append(time.thread_time_ns() - start)
    finally:
        gc.enable()
    return min(times) / n


def replace_cb(target, replacement, check):
    def cb(frame, cache):
        if frame.f_code is target.__code__:
            return fe.GuardedCode(check, replacement.__code__)
        return None

    return cb


class Scenario:
    def __init__(self, name, loop, setup=None, fn=None):
        self.name, self.loop, self.setup, self.fn = name, loop, setup, fn

    def run(self, n, repeats, empty):
        fe.reset()
        setting = self.setup() if self.setup else None
        previous = fe.set_callback(setting) if setting is not None else None
        try:
            self.loop(1000) if self.fn is None else self.loop(1000, self.fn)  # warm, fill caches
            if setting is not None and setting is not fe.SKIP and callable(setting):
                fe.set_callback(fe.RUN_ONLY if not getattr(setting, "keep", False) else setting)
            return best_ns(self.loop, n, repeats, self.fn) - empty
        finally:
            fe.set_callback(previous)
            fe.reset()


def keep(cb):
    cb.keep = True
    return cb


def other_thread_callback():
    """Install the hook from another thread; this thread stays unhooked (mode None)."""
    ready, done = threading.Event(), threading.Event()

    def worker():
        fe.set_callback(lambda frame, cache: None)
        ready.set()
        done.wait()
        fe.set_callback(None)

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    ready.wait()
    return t, done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    args = parser.parse_args()
    n, repeats = (20_000, 3) if args.quick else (20_000, 80)

    empty = best_ns(loop_empty, n, repeats)
    rows: list[tuple[str, float]] = []
    base = best_ns(loop_f, n, repeats) - empty
    rows.append(("f(1, 2) unhooked", base))

    t, done = other_thread_callback()
    rows.append(
        ("hook installed, this thread has no callback", best_ns(loop_f, n, repeats) - empty)
    )
    done.set()
    t.join()

    scenarios = [
        Scenario("hook installed, thread in fe.SKIP mode", loop_f, lambda: fe.SKIP),
        Scenario(
            "pass-through: code marked skip (SKIP_CODE)",
            loop_f,
            lambda: keep(lambda frame, cache: fe.SKIP_CODE if frame.f_code is f.__code__ else None),
        ),
        Scenario(
            "hit, C check (fe.always_true), in place",
            loop_f,
            lambda: replace_cb(f, f_replaced, fe.always_true),
        ),
        Scenario(
            "hit, Python check L['a'] == 1",
            loop_f,
            lambda: replace_cb(f, f_replaced, lambda L: L["a"] == 1),
        ),
        Scenario(
            "miss: callback returns None each call",
            loop_f,
            lambda: keep(lambda frame, cache: None),
        ),
    ]
    for sc in scenarios:
        rows.append((sc.name, sc.run(n, repeats, empty)))

    rich_base = best_ns(loop_rich, n, repeats) - empty
    rich_rows = [("rich(1, 2, 3, c=4, d=5) unhooked", rich_base)]
    for name, check in (
        ("C check", fe.always_true),
        ("Python check L['a'] == 1", lambda L: L["a"] == 1),
    ):
        sc = Scenario(
            f"rich hit, {name}",
            loop_rich,
            lambda check=check: replace_cb(rich, rich_replaced, check),
        )
        rich_rows.append((sc.name, sc.run(n, repeats, empty)))

    print(
        f"framejit.frameeval overhead, CPython {sys.version.split()[0]}, best of {repeats} x {n} calls"
    )
    print(f"{'scenario':52} {'ns/call':>8} {'vs unhooked':>12}")
    for name, ns in rows:
        print(f"{name:52} {ns:8.1f} {ns - base:+12.1f}")
    for name, ns in rich_rows:
        print(f"{name:52} {ns:8.1f} {ns - rich_base:+12.1f}")
    torch_rows(n, repeats, empty, dict(rows), base)


def torch_rows(n, repeats, empty, ours, base) -> None:
    try:
        import torch
        import torch._dynamo
    except ImportError:
        print("(torch not importable: no torch._dynamo comparison)")
        return
    # The same tiny function under each hook, called through each one's compiled wrapper.
    compiled = torch.compile(f, backend="eager")
    compiled(1, 2)
    t_torch = best_ns(loop_f, n, repeats, compiled) - empty

    def fj_wrapper(a, b):
        with fe.callback(fe.RUN_ONLY):
            return f(a, b)

    fe.skip(fj_wrapper)
    cb = replace_cb(f, f_replaced, fe.always_true)
    with fe.callback(cb):
        f(1, 2)
    t_ours = best_ns(loop_f, n, repeats, fj_wrapper) - empty
    fe.reset()
    print()
    print(f"{'compiled-function call (wrapper + hook + hit)':52} {'ns/call':>8} {'ratio':>12}")
    print(f"{'torch.compile(f, backend=eager)':52} {t_torch:8.1f} {1.0:12.2f}")
    print(
        f"{'framejit: with fe.callback(RUN_ONLY): f(...)':52} {t_ours:8.1f} {t_ours / t_torch:12.2f}"
    )


if __name__ == "__main__":
    main()
