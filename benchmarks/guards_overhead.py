"""Guard evaluation cost on the hit path: framejit.guards vs torch.compile, same functions.

For the seed's toy_example and for functions of 1, 4, 16 and 64 tensor arguments this
compiles the function once with torch.compile (so TorchDynamo installs its guards) and
builds the guard set framejit's capture layer installs for the same frame (as
framejit.graphcapture emits it): global state, ids of the globals read, a "not marked
dynamic" ``hasattr(L['x'], '_framejit_dynamic_dims') == False`` per tensor, one tensor
match per tensor, and no-aliasing between the tensors.  It then times one guard
evaluation on the same locals dict, interleaving the two in rounds (best of each):

    framejit: check_fn(L)                     (what frameeval calls on every call)
    torch:    cache_entry.guard_manager.root.check(L)   (TorchDynamo's C++ RootGuardManager)

and prints ns per evaluation and the ratio framejit/torch (below 1.0: framejit faster).
"""

from __future__ import annotations

import argparse
import logging
import sys
import timeit
from pathlib import Path

import torch
import torch._dynamo
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packages" / "guards" / "src"))  # when run from a checkout

from tools.results import record  # noqa: E402
from tools.seed import toy_example  # noqa: E402

from framejit.guards import (  # noqa: E402
    AttrSource,
    GlobalSource,
    Guard,
    GuardKind,
    LocalSource,
    compile_guards,
    global_state_guard,
    native,
)


def make_sum_fn(n: int):
    args = ", ".join(f"x{i}" for i in range(n))
    body = " + ".join(f"x{i}" for i in range(n))
    scope: dict = {}
    exec(f"def sum_{n}({args}):\n    return ({body}) * 2\n", scope)
    fn = scope[f"sum_{n}"]
    fn.__globals__["torch"] = torch
    return fn


def framejit_guards(L: dict, globals_read: list[tuple[str, ...]]) -> list[Guard]:
    """The guard set framejit's capture layer installs for a frame with these locals."""
    guards = [global_state_guard()]
    for path in globals_read:
        src = GlobalSource(path[0])
        value = torch if path[0] == "torch" else None
        for attr in path[1:]:
            src, value = AttrSource(src, attr), getattr(value, attr)
        guards.append(Guard(src, GuardKind.ID_MATCH, value))
    tensor_sources = []
    for name, value in L.items():
        src = LocalSource(name)
        guards.append(Guard(AttrSource(src, "_framejit_dynamic_dims"), GuardKind.HASATTR, False))
        guards.append(Guard(src, GuardKind.TENSOR_MATCH, value))
        tensor_sources.append(src)
    if len(tensor_sources) > 1:
        guards.append(Guard(None, GuardKind.NO_TENSOR_ALIASING, tensor_sources))
    return guards


def torch_guard(fn, args):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    compiled(*args)
    entries = _debug_get_cache_entry_list(fn.__code__)
    assert len(entries) == 1, f"expected one cache entry, got {len(entries)}"
    return entries[0].guard_manager


def ns_per_call(fns: list, L: dict, rounds: int = 15) -> list[float]:
    """Best ns per call of each fn, timed in interleaved rounds (fair on a busy machine)."""
    timers = [timeit.Timer(lambda fn=fn: fn(L)) for fn in fns]
    numbers = [max(1, t.autorange()[0] // 4) for t in timers]  # ~50 ms per round each
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (t, n) in enumerate(zip(timers, numbers, strict=True)):
            best[i] = min(best[i], t.timeit(n) / n * 1e9)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 4, 16, 64])
    args = parser.parse_args()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    native_module = native.load(wait=True)
    print(
        f"framejit native helper: {'yes' if native_module else 'no (' + str(native.unavailable_reason()) + ')'}"
    )

    cases = [
        (
            "toy_example",
            toy_example,
            [torch.randn(10), torch.randn(10)],
            [("torch",), ("torch", "abs")],
        )
    ]
    for n in args.sizes:
        cases.append((f"{n} tensor args", make_sum_fn(n), [torch.randn(8) for _ in range(n)], []))

    rows = []
    for label, fn, fn_args, globals_read in cases:
        names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        L = dict(zip(names, fn_args, strict=True))
        manager = torch_guard(fn, fn_args)
        torch_check = manager.root.check
        check_fn = compile_guards(framejit_guards(L, globals_read), fn.__globals__)
        assert torch_check(L) and check_fn(L), (label, check_fn.failure_reason(L))
        fj, th = ns_per_call([check_fn, torch_check], L)
        rows.append((label, len(check_fn.code_parts), len(manager.code_parts), fj, th))

    print()
    print(
        f"{'function':<18} {'fj parts':>8} {'torch parts':>11} {'framejit ns':>12} {'torch ns':>10} {'fj/torch':>9}"
    )
    for label, fj_parts, th_parts, fj, th in rows:
        print(f"{label:<18} {fj_parts:>8} {th_parts:>11} {fj:>12.0f} {th:>10.0f} {fj / th:>9.2f}")
        record(label, "guard check", fj, th, "ns")


if __name__ == "__main__":
    main()
