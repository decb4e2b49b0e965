"""Marked pseudo-code for what the decompiler cannot rebuild: it never makes code vanish.

A function (or comprehension) that cannot be recovered keeps its place: a ``def`` with
the original signature whose body is a string starting with ``PSEUDO_MARK``, holding the
reason, the bytecode listing and every nested code object decompiled on its own, then
``raise NotImplementedError``.  Tests find unrecovered code by ``PSEUDO_MARK``.

``lost_names`` is the safety net behind that promise: a rebuilt function whose source
lacks a name one of its instructions uses is not shown as source at all.
"""

from __future__ import annotations

import ast
import dis
import io
import re
import types

PSEUDO_MARK = "framejit pseudo-code:"


def listing(code: types.CodeType) -> list[str]:
    out = io.StringIO()
    dis.dis(code, file=out, depth=0)
    return [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]


def message(code: types.CodeType, reason: str) -> str:
    return " ".join(f"framejit.inspect could not decompile {code.co_name}: {reason}".split())


def pseudo_lines(code: types.CodeType) -> list[str]:
    """The bytecode of ``code`` and each nested code object decompiled on its own."""
    from . import decompile

    lines = ["bytecode:", *listing(code)]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines.append(f"nested code object {const.co_name} (line {const.co_firstlineno}):")
            lines += [f"    {line}" for line in decompile(const).splitlines()]
    return lines


def pseudo_body(code: types.CodeType, reason: str) -> list[ast.stmt]:
    """A function body standing for ``code``: the marked pseudo-code, then a raise."""
    text = "\n".join([f"{PSEUDO_MARK} {message(code, reason)}", *pseudo_lines(code)])
    raise_ = ast.Raise(
        ast.Call(ast.Name("NotImplementedError"), [ast.Constant(message(code, reason))], []), None
    )
    return [ast.Expr(ast.Constant(text)), raise_]


def pseudo_source(code: types.CodeType, reason: str, header: str) -> str:
    """A whole function as pseudo-code with ``#`` comments (the top-level fallback)."""
    body = [
        f"pass  # {PSEUDO_MARK} {message(code, reason)}",
        *(f"# {line}" for line in pseudo_lines(code)),
        f"raise NotImplementedError({message(code, reason)!r})",
    ]
    return "\n".join([header, *(f"    {line}" for line in body)]) + "\n"


# Instructions whose argument is a name the source spells out.
NAME_OPS = frozenset(
    {
        "LOAD_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
        "LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "IMPORT_NAME", "IMPORT_FROM",
        "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF",
        "LOAD_FAST_CHECK", "LOAD_SUPER_ATTR", "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_FROM_DICT_OR_DEREF", "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",
        "STORE_FAST_STORE_FAST", "LOAD_CLASSDEREF",
    }
)  # fmt: skip
# names the compiler adds itself (zero-argument super, class-body bookkeeping)
IMPLICIT_NAMES = frozenset(
    {"__class__", "__module__", "__qualname__", "__classcell__", "__doc__", "__name__"}
)


def referenced_names(code: types.CodeType) -> set[str]:
    """Every name a reachable instruction of ``code`` (or of a nested code object it
    creates) uses; a resume function's unreachable copy of the original body does not count."""
    from .bytecode import _reachable, read

    bc = read(code)
    reach = set(bc.normal_reachable)
    changed = True
    while changed:  # handlers of reachable ranges, and what they reach
        changed = False
        for entry in bc.exceptions:
            if entry.target not in reach and reach & set(range(entry.start, entry.end)):
                reach |= _reachable(bc.instrs, entry.target)
                changed = True
    names: set[str] = set()
    for i in sorted(reach):
        ins = bc.instrs[i]
        if ins.opname in NAME_OPS:
            values = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            for value in values:
                if isinstance(value, str):
                    names.update(value.split("."))
        elif ins.opname == "LOAD_CONST" and isinstance(ins.argval, types.CodeType):
            names |= referenced_names(ins.argval)
    return {n for n in names if n.isidentifier() and n not in IMPLICIT_NAMES}


def lost_names(code: types.CodeType, source: str) -> list[str]:
    """Names the bytecode uses that ``source`` never mentions: code went missing."""
    return sorted(referenced_names(code) - set(re.findall(r"\w+", source)))
