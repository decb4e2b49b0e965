"""Stateful generated programs: framejit beside torch.compile, each against eager.

    python benchmarks/fuzz_stateful.py [--seeds 0:1000] [--backend eager|inductor-lite]
        [--compilers framejit,torch] [--minimise] [--show N]

Each seed is one program of integration-tests/stateful_programs.py (state changed between
calls).  Prints a table of ok / mismatch / crash and graphs / recompiles per compiler, then
the failures (with --minimise: shrunk to their smallest failing program, source printed).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration-tests"))

import stateful_programs as sp


def _seeds(spec: str) -> range:
    lo, _, hi = spec.partition(":")
    return range(int(lo), int(hi)) if hi else range(int(lo))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:200")
    ap.add_argument("--backend", default="eager")
    ap.add_argument("--compilers", default="framejit,torch")
    ap.add_argument("--minimise", action="store_true")
    ap.add_argument("--show", type=int, default=20, help="failures listed per compiler")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.backend == "inductor-lite":
        from framejit import graphcapture as fj

        if "inductor-lite" not in fj.list_backends():
            from framejit.inductor_lite import compile_fx

            fj.register_backend("inductor-lite", compile_fx)
    import logging

    logging.getLogger("torch._dynamo").setLevel(logging.CRITICAL)
    compilers = args.compilers.split(",")
    seeds = _seeds(args.seeds)
    table = {c: collections.Counter() for c in compilers}
    failures = {c: [] for c in compilers}
    seconds = collections.Counter()
    for seed in seeds:
        program = sp.generate(seed)
        for c in compilers:
            t0 = time.perf_counter()
            v = sp.check(program, c, args.backend)
            seconds[c] += time.perf_counter() - t0
            table[c][v.status] += 1
            table[c]["graphs"] += v.graphs
            table[c]["recompiles"] += v.recompiles
            if v.status != "ok":
                failures[c].append((seed, v))
    print(f"{len(seeds)} programs (seeds {args.seeds}), backend {args.backend}")
    print(
        f"{'compiler':<10} {'ok':>6} {'mismatch':>9} {'crash':>6} {'graphs':>7} {'recompiles':>11} {'s':>7}"
    )
    for c in compilers:
        t = table[c]
        # torch's counters give no per-program recompile count here: not shown
        recompiles = t["recompiles"] if c == "framejit" else "-"
        print(
            f"{c:<10} {t['ok']:>6} {t['mismatch']:>9} {t['crash']:>6} {t['graphs']:>7}"
            f" {recompiles:>11} {seconds[c]:>7.1f}"
        )
    if "framejit" in table and "torch" in table:
        ratio = seconds["framejit"] / max(seconds["torch"], 1e-9)
        print(f"time framejit/torch.compile (compile + calls + eager reference): {ratio:.2f}x")
    for c in compilers:
        for seed, v in failures[c][: args.show]:
            print(f"\n[{c}] seed {seed} {v.status} at call {v.call}: {v.detail}")
            print("   ", sp.generate(seed).describe())
            if args.minimise:
                small = sp.minimise(
                    sp.generate(seed), lambda p, c=c: sp.check(p, c, args.backend).status != "ok"
                )
                print(
                    "    minimal:",
                    small.describe(),
                    "entry",
                    small.entry,
                    "override",
                    small.call_override,
                )
                print(
                    "    calls:",
                    [(k.mutation, k.batch, k.dtype, k.requires_grad) for k in small.calls],
                )
                print(sp.check(small, c, args.backend))
                if c == "framejit":
                    tb = sp.exception_detail(small, c, args.backend)
                    if tb:
                        print("    " + "\n    ".join(tb.splitlines()[-6:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
