"""Run a standard-library test module, then again with every Python function of the module
it tests replaced by its decompiled-and-recompiled code; print both results as JSON.

Usage: python stdlib_suite.py TEST_MODULE MODULE   (run in a subprocess: it patches the module)
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import sys
import types
import unittest

from framejit.inspect.decompiler import decompile_ast


def _functions(module):
    seen = {}
    for obj in list(vars(module).values()):
        members = [obj]
        if isinstance(obj, type) and obj.__module__ == module.__name__:
            members += list(vars(obj).values())
        for member in members:
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, property):
                members += [f for f in (member.fget, member.fset, member.fdel) if f is not None]
                continue
            code = getattr(member, "__code__", None)
            if (
                isinstance(code, types.CodeType)
                and getattr(member, "__module__", None) == module.__name__
            ):
                seen[id(member)] = member
    return list(seen.values())


def swap(module) -> tuple[int, list[str]]:
    swapped, kept = 0, []
    for fn in _functions(module):
        try:
            source = ast.unparse(decompile_ast(fn))
            new = next(
                c
                for c in compile(source, fn.__code__.co_filename, "exec").co_consts
                if isinstance(c, types.CodeType)
            )
            if new.co_name.startswith("__enclosing_"):
                new = next(c for c in new.co_consts if isinstance(c, types.CodeType))
            fn.__code__ = new
            swapped += 1
        except Exception:
            kept.append(fn.__qualname__)
    return swapped, kept


def run_tests(name: str) -> dict:
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    problems = [
        f"{test}: {trace.strip().splitlines()[-1]}"
        for test, trace in result.failures + result.errors
    ]
    return {"run": result.testsRun, "problems": problems}


def main() -> None:
    test_module, module_name = sys.argv[1], sys.argv[2]
    baseline = run_tests(test_module)
    swapped, kept = swap(importlib.import_module(module_name))
    patched = run_tests(test_module)
    print(json.dumps({"baseline": baseline, "patched": patched, "swapped": swapped, "kept": kept}))


if __name__ == "__main__":
    main()
