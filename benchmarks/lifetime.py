"""What compiled code costs in memory and in first-call latency: framejit vs torch.compile.

Each measurement runs in a fresh child process per compiler (RSS and "first compile" only
mean something in a clean process), both with backend "eager", and the rows print side by
side with the ratio framejit/torch:

    dropped models   RSS growth over N compiled-and-dropped ~10 MB models (1600x1600 Linear)
    hit path         RSS growth over N hit-path calls of a compiled function
    first compile    wall time of the first call of the seed's toy_example, compile included,
                     with an empty cache directory (FRAMEJIT_CACHE_DIR / TORCHINDUCTOR_CACHE_DIR
                     fresh temp dirs; framejit's native guard helper starts building then);
                     torch._dynamo's import (both pay it) is done before and printed apart

    python benchmarks/lifetime.py [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

from tools.caches import cache_env
from tools.results import record


def _rss_kib() -> int:
    """RSS after a collection, freed heap pages handed back (glibc's malloc_trim), so the
    figure is what is still alive, not which arena held a freed block."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _compiler(which: str):
    import torch

    if which == "framejit":
        from framejit import graphcapture as fj

        return fj.compile
    return lambda fn: torch.compile(fn, backend="eager")


def dropped_models(which: str, n: int) -> dict:
    import torch

    compile_ = _compiler(which)

    class Big(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.utils.skip_init(torch.nn.Linear, 1600, 1600)
            with torch.no_grad():
                self.lin.weight.fill_(1e-3)
                self.lin.bias.fill_(0.5)

        def forward(self, x):
            return torch.relu(self.lin(x)) - 1

    x = torch.ones(2, 1600)
    with torch.no_grad():
        expected = Big()(x)

    def one():
        model = Big()
        torch.testing.assert_close(compile_(model)(x), expected)

    for _ in range(3):
        one()
    gc.collect()
    before, start = _rss_kib(), time.perf_counter()
    for _ in range(n):
        one()
    gc.collect()
    return {"kib": _rss_kib() - before, "s": time.perf_counter() - start}


def hit_path(which: str, n: int) -> dict:
    import torch

    def f(x):
        return x + 1

    compiled = _compiler(which)(f)
    x = torch.ones(2)
    for _ in range(20_000):
        compiled(x)
    gc.collect()
    before, start = _rss_kib(), time.perf_counter()
    for _ in range(n):
        compiled(x)
    gc.collect()
    return {"kib": _rss_kib() - before, "s": time.perf_counter() - start}


def first_compile(which: str, n: int) -> dict:
    import torch

    compile_ = _compiler(which)
    # Imports stay outside the timed region: torch.compile imports torch._dynamo, and so does
    # framejit's first FakeTensorMode() (torch/_subclasses/fake_tensor.py imports
    # torch._dynamo.config): several seconds on a loaded machine, either way.
    import_start = time.perf_counter()
    import torch._dynamo
    import torch._subclasses.fake_tensor
    import torch.fx.experimental.symbolic_shapes

    imports = time.perf_counter() - import_start

    from tools.seed import toy_example

    a, b = torch.randn(10), torch.randn(10)
    start = time.perf_counter()
    out = compile_(toy_example)(a, b)
    elapsed = time.perf_counter() - start
    torch.testing.assert_close(out, toy_example(a, b))
    result = {"s": elapsed, "imports_s": imports}
    if which == "framejit":
        from framejit.guards import native

        result["helper_building"] = native.building()  # still building: nobody waited
    return result


SCENARIOS = {"dropped": dropped_models, "hits": hit_path, "first": first_compile}


def _child(scenario: str, which: str, n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="fj-lifetime-") as cache:
        env = dict(os.environ, **cache_env(cache))
        out = subprocess.run(
            [sys.executable, __file__, "--child", scenario, which, str(n)],
            env=env, capture_output=True, text=True, check=True, cwd=os.path.dirname(__file__),
        )  # fmt: skip
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer models and calls")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        scenario, which, n = args.child
        print(json.dumps(SCENARIOS[scenario](which, int(n))))
        return
    import torch  # noqa: F401  (the results file names its version; not importable at exit)

    n_models, n_calls = (20, 100_000) if args.quick else (100, 1_000_000)
    rows = [
        ("dropped", f"{n_models} dropped ~10 MB models", n_models, "kib", "RSS growth", "KiB"),
        ("hits", f"{n_calls:,} hit-path calls", n_calls, "kib", "RSS growth", "KiB"),
        ("first", "first compile, empty cache dir", 1, "s", "wall time", "s"),
    ]
    print(f"{'':40} {'metric':12} {'framejit':>10} {'torch':>10} {'fj/torch':>9}")
    for scenario, label, n, key, metric, unit in rows:
        ours, theirs = _child(scenario, "framejit", n), _child(scenario, "torch", n)
        ratio = ours[key] / theirs[key] if theirs[key] else float("nan")
        print(f"{label:40} {metric:12} {ours[key]:10.3f} {theirs[key]:10.3f} {ratio:9.2f}")
        if "imports_s" in ours:
            print(f"{'':40} (imports before it, untimed: framejit {ours['imports_s']:.2f} s, "
                  f"torch {theirs['imports_s']:.2f} s)")  # fmt: skip
        if "helper_building" in ours:
            print(f"{'':40} (framejit's guard helper still building after the call: "
                  f"{ours['helper_building']})")  # fmt: skip
        if key == "kib":
            print(f"{'':40} {'time':12} {ours['s']:10.2f} {theirs['s']:10.2f} (s)")
        record(label, metric, ours[key], theirs[key], unit)


if __name__ == "__main__":
    main()
