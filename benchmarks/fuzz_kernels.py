"""Generated tensor programs through framejit's backends, each against eager.

    python benchmarks/fuzz_kernels.py [--seeds 0:300] [--backends inductor-lite,eager]
        [--minimise] [--show N] [--torch]

Each seed is one program of integration-tests/kernel_programs.py (broadcasting, dtypes and
promotion, views, indexing, in-place ops, reductions, matmul, cat, special values).  Prints
ok / mismatch / crash per backend (and for torch.compile with --torch, as the yardstick),
then the failures (with --minimise: shrunk to their smallest failing program).
"""

from __future__ import annotations

import argparse
import collections
import logging
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration-tests"))

import kernel_programs as kp


def _seeds(spec: str) -> range:
    lo, _, hi = spec.partition(":")
    return range(int(lo), int(hi)) if hi else range(int(lo))


def _torch_check(prog):
    """kp.check with torch.compile (inductor) as the compiler: the yardstick."""
    import torch

    try:
        want, want_in = kp._run(prog.function(), prog.make_inputs())
    except Exception as e:
        return kp.Verdict("invalid", repr(e))
    torch._dynamo.reset()
    try:
        got, got_in = kp._run(
            torch.compile(prog.function(), backend="inductor"), prog.make_inputs()
        )
    except Exception as e:
        return kp.Verdict("crash", repr(e)[:200])
    for g, w in zip(got + got_in, want + want_in, strict=False):
        msg = kp._compare(g, w)
        if msg:
            return kp.Verdict("mismatch", msg)
    return kp.Verdict("ok")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:300")
    ap.add_argument("--backends", default="inductor-lite,eager")
    ap.add_argument("--minimise", action="store_true")
    ap.add_argument("--torch", action="store_true", help="also run torch.compile (inductor)")
    ap.add_argument("--show", type=int, default=20, help="failures listed per backend")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.getLogger("framejit").setLevel(logging.CRITICAL)
    logging.getLogger("torch._dynamo").setLevel(logging.CRITICAL)
    checks = {b: (lambda p, b=b: kp.check(p, b)) for b in args.backends.split(",")}
    if args.torch:
        checks["torch.compile"] = _torch_check
    seeds = _seeds(args.seeds)
    table = {c: collections.Counter() for c in checks}
    seconds = collections.Counter()
    failures = {c: [] for c in checks}
    for seed in seeds:
        prog = kp.generate(seed)
        for c, check in checks.items():
            t0 = time.perf_counter()
            v = check(prog)
            seconds[c] += time.perf_counter() - t0
            table[c][v.status] += 1
            if v.status in ("mismatch", "crash"):
                failures[c].append((seed, v))
    print(f"{len(seeds)} programs (seeds {args.seeds})")
    print(f"{'backend':<14} {'ok':>5} {'mismatch':>9} {'crash':>6} {'invalid':>8} {'s':>7}")
    for c in checks:
        t = table[c]
        print(
            f"{c:<14} {t['ok']:>5} {t['mismatch']:>9} {t['crash']:>6} {t['invalid']:>8}"
            f" {seconds[c]:>7.1f}"
        )
    for c, check in checks.items():
        for seed, v in failures[c][: args.show]:
            print(f"\n[{c}] seed {seed} {v.status}: {v.detail.strip().splitlines()[-1][:300]}")
            prog = kp.generate(seed)
            if args.minimise:
                prog = kp.minimise(prog, lambda p, s=v.status, k=check: k(p).status == s)
            print("    inputs:", [(tuple(s), str(d), sp) for s, d, sp in prog.inputs])
            print("    " + prog.source().replace("\n", "\n    "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
