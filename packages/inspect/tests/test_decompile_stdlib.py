"""The decompiler over standard-library functions: never raises, always valid Python.

Every code object (nested ones included) of the modules below is decompiled and
the source compiled again; the top-level functions' recompiled bytecode is also
compared with the original's, and the fraction that matches exactly is printed.
"""

from __future__ import annotations

import ast
import importlib
import types

import pytest
from helpers import normalized

from framejit.inspect import decompile
from framejit.inspect.decompiler import decompile_ast

MODULES = [
    "textwrap", "json.decoder", "json.encoder", "string", "colorsys", "heapq", "bisect",
    "fnmatch", "shlex", "difflib", "base64", "calendar", "fractions", "statistics", "glob",
    "posixpath", "configparser", "csv", "dataclasses", "functools", "gettext", "pprint",
    "random", "shutil", "tempfile", "tokenize", "urllib.parse", "pickle", "traceback",
    "argparse", "contextlib", "copy", "enum", "queue", "sched", "graphlib", "reprlib",
]  # fmt: skip


def _functions():
    found = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for obj in vars(module).values():
            members = [obj]
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                members += list(vars(obj).values())
            for member in members:
                member = getattr(member, "__func__", member)
                if isinstance(member, property):
                    member = member.fget
                code = getattr(member, "__code__", None)
                if (
                    isinstance(code, types.CodeType)
                    and getattr(member, "__module__", None) == module.__name__
                ):
                    found.setdefault(code, member)
    return list(found.values())


def _all_code(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_code(const)


FUNCTIONS = _functions()


def test_the_corpus_is_large():
    assert len(FUNCTIONS) > 1000


def test_every_code_object_decompiles_to_valid_python():
    failures = []
    count = 0
    for fn in FUNCTIONS:
        for code in _all_code(fn.__code__):
            count += 1
            source = decompile(code)
            try:
                compile(source, "<decompiled>", "exec")
            except SyntaxError as exc:
                failures.append(f"{code.co_filename}:{code.co_firstlineno} {code.co_name}: {exc}")
    print(f"{count} code objects decompiled")
    assert not failures, "\n".join(failures[:20])


def test_most_functions_round_trip_to_the_same_bytecode():
    exact = recovered = 0
    for fn in FUNCTIONS:
        try:
            source = compile(ast.unparse(decompile_ast(fn)), "<decompiled>", "exec")
        except Exception:
            continue
        recovered += 1
        new = next(c for c in source.co_consts if isinstance(c, types.CodeType))
        exact += normalized(new) == normalized(fn.__code__)
    total = len(FUNCTIONS)
    print(
        f"stdlib: {recovered}/{total} recovered without pseudo-code, {exact}/{total} identical bytecode ({exact / total:.1%})"
    )
    assert recovered / total > 0.97
    assert exact / total > 0.7


@pytest.mark.parametrize(
    "name", ["heapq._siftdown", "colorsys.rgb_to_hsv", "fnmatch.translate", "textwrap.dedent"]
)
def test_selected_functions_behave_the_same_after_a_round_trip(name):
    from helpers import outcome, recompile

    module, _, attr = name.rpartition(".")
    fn = getattr(importlib.import_module(module), attr)
    samples = {
        "heapq._siftdown": [([5, 3, 8, 1], 0, 3), ([1, 2, 3, 0], 0, 3)],
        "colorsys.rgb_to_hsv": [([1, 3, 5], 4), ([], 1)],
        "fnmatch.translate": [("*.py",), ("[!a-c]?x[",), ("a[b",)],
        "textwrap.dedent": [("    a\n      b\n",), ("\tx\n  y",), ("",)],
    }[name]
    new = recompile(fn)
    for args in samples:
        assert outcome(new, args) == outcome(fn, args)
