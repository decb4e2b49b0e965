"""The seed walkthrough, end to end: what framejit does to the seed's toy_example.

Step by step, as the seed document shows it for TorchDynamo:
  1. compile toy_example with a custom backend that prints each FX graph it receives;
  2. the guards of the first cache entry (code_parts and the guard's closure variables);
  3. the original and the rewritten bytecode;
  4. the decompiled rewritten code and the generated resume functions;
  5. the same function through the inductor-lite backend, its generated code, and its
     speedup over eager.
Run with `./dev demo` (or `nox -s demo`).
"""

from __future__ import annotations

import dis
import importlib.util
import sys
import time

import torch


def banner(title: str) -> None:
    print()
    print("=" * 78)
    print(title)
    print("=" * 78)


def missing(*modules: str) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def my_compiler(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
    print("my_compiler() called with FX graph:")
    gm.graph.print_tabular()
    return gm.forward  # return a python callable


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def step_capture(fj) -> object:
    banner("1. compile toy_example with a printing backend (graphs as the backend sees them)")
    compiled = fj.compile(toy_example, backend=my_compiler)
    torch.manual_seed(0)
    for _ in range(100):
        a, b = torch.randn(10), torch.randn(10)
        torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    print("100 calls match eager.")
    return compiled


def step_guards(fji, compiled) -> None:
    banner("2. guards of the first cache entry")
    entries = fji.debug_get_cache_entry_list(fji.innermost_fn(compiled))
    guard = entries[0].check_fn
    for part in guard.code_parts:
        print(part)
    print("closure variables:", guard.__code__.co_freevars)


def step_bytecode(fji, compiled) -> None:
    banner("3. ORIGINAL BYTECODE / MODIFIED BYTECODE")
    entries = fji.debug_get_cache_entry_list(fji.innermost_fn(compiled))
    print("ORIGINAL BYTECODE")
    dis.dis(toy_example.__code__)
    print("MODIFIED BYTECODE")
    dis.dis(entries[0].code)

    banner("4. decompiled rewritten code and resume functions")
    print(fji.decompile(entries[0].code))
    module_globals = toy_example.__globals__
    for name in sorted(module_globals):
        if name.startswith("__resume_at_"):
            print(f"source code of {name}:")
            print(fji.decompile(module_globals[name]))
        elif name.startswith("__compiled_fn_"):
            print(f"{name} is {module_globals[name]!r}")


def time_per_call(fn, *args, repeat: int = 50) -> float:
    for _ in range(5):
        fn(*args)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def step_inductor(fj) -> None:
    banner("5. toy_example through inductor-lite: generated code and speedup over eager")
    fj.reset()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    compiled = fj.compile(toy_example, backend="inductor-lite")
    a, b = torch.randn(4096, 1024), torch.randn(4096, 1024)
    torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    torch.testing.assert_close(compiled(a, -b.abs()), toy_example(a, -b.abs()))
    unsubscribe()
    print("results match eager on both branches.")
    for record in records:
        for graph in record.graphs:
            source = getattr(graph.compiled, "source_code", None)
            if source:
                print(f"\n--- generated code of {graph.name} ({record.function_name}) ---")
                print(source)
    eager_s = time_per_call(toy_example, a, b)
    compiled_s = time_per_call(compiled, a, b)
    print(
        f"eager {eager_s * 1e6:9.1f} us/call   inductor-lite {compiled_s * 1e6:9.1f} us/call"
        f"   speedup {eager_s / compiled_s:5.2f}x"
    )


def main() -> int:
    absent = missing("framejit.graphcapture", "framejit.inspect")
    if absent:
        banner("framejit demo")
        print(
            "Not built yet:", ", ".join(absent), "- the walkthrough needs them; nothing is faked."
        )
        return 1
    from framejit import graphcapture as fj
    from framejit import inspect as fji

    compiled = step_capture(fj)
    step_guards(fji, compiled)
    step_bytecode(fji, compiled)
    if missing("framejit.inductor_lite"):
        print("\nframejit.inductor_lite is not installed: step 5 skipped.")
        return 1
    step_inductor(fj)
    return 0


if __name__ == "__main__":
    sys.exit(main())
