"""Marked pseudo-code for what the decompiler cannot rebuild: it never makes code vanish.

A function (or comprehension) that cannot be recovered keeps its place: a ``def`` with
the original signature whose body is a string starting with ``PSEUDO_MARK``, holding the
reason, the bytecode listing and every nested code object decompiled on its own, then
``raise NotImplementedError``.  Tests find unrecovered code by ``PSEUDO_MARK``.
"""

from __future__ import annotations

import ast
import dis
import io
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
