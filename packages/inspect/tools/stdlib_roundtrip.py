"""Measure the decompiler's standard-library round trip on the running interpreter.

Every Python function of the modules ``tests/test_decompile_stdlib.py`` covers is
decompiled and compiled again; it is *recovered* when the source holds no marked
pseudo-code, and *identical* when the recompiled bytecode equals the original (positions
aside).  What is not recovered is grouped by the reason the decompiler gave, so the next
fix goes where the failures cluster.  Needs no torch::

    python packages/inspect/tools/stdlib_roundtrip.py [--json FILE] [--top N]
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import platform
import re
import sys
import types
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from helpers import normalized  # noqa: E402
from test_decompile_stdlib import FUNCTIONS  # noqa: E402

from framejit.inspect.decompiler import PSEUDO_MARK, decompile, decompile_ast  # noqa: E402

_REASON = re.compile(r"could not decompile [^:]+: (.*?)(?:'\)|\"\)|$)", re.MULTILINE)


_GOTO = re.compile(r"goto offset \d+ \(([^)]*)\)")


def _reason(text: str) -> str:
    found = _REASON.search(text) or _GOTO.search(text)
    if found is None:
        return "pseudo-code"
    reason = found.group(1).strip()
    return f"goto: {reason}" if found.re is _GOTO else reason


def measure() -> dict:
    recovered = exact = 0
    reasons: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for fn in FUNCTIONS:
        name = f"{fn.__module__}.{fn.__qualname__}"
        try:
            text = ast.unparse(decompile_ast(fn))
            code = compile(text, "<decompiled>", "exec")
        except Exception:
            text = decompile(fn)  # the marked pseudo-code says why
            reason = _reason(text)
            reasons[reason] += 1
            examples.setdefault(reason, name)
            continue
        if PSEUDO_MARK in text:  # a nested function or comprehension left as pseudo-code
            reason = "nested: " + _reason(text)
            reasons[reason] += 1
            examples.setdefault(reason, name)
            continue
        recovered += 1
        new = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        if new.co_name.startswith("__enclosing_"):
            new = next(c for c in new.co_consts if isinstance(c, types.CodeType))
        exact += normalized(new) == normalized(fn.__code__)
    total = len(FUNCTIONS)
    return {
        "python": platform.python_version(),
        "functions": total,
        "recovered": recovered,
        "identical_bytecode": exact,
        "pseudo_code": total - recovered,
        "recovered_pct": round(100 * recovered / total, 1),
        "identical_pct": round(100 * exact / total, 1),
        "reasons": [
            {"reason": r, "count": n, "example": examples[r]} for r, n in reasons.most_common()
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--top", type=int, default=12, help="reasons to print")
    args = parser.parse_args()
    result = measure()
    print(
        f"Python {result['python']}: {result['recovered']}/{result['functions']} recovered "
        f"({result['recovered_pct']}%), {result['identical_bytecode']} identical bytecode "
        f"({result['identical_pct']}%), {result['pseudo_code']} marked pseudo-code"
    )
    for row in result["reasons"][: args.top]:
        print(f"  {row['count']:4}  {row['reason']}  (e.g. {row['example']})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
