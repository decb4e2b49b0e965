"""Cleanup passes over the decompiled statements, run once per function body.

- ``fold_with``: BEFORE_WITH and the exit call left flat ``WithStart``/``WithEnd``
  markers; fold the statements between them into a ``with`` block.
- ``recover_asserts``: ``if not c: raise AssertionError(m)`` built from
  LOAD_ASSERTION_ERROR becomes ``assert c, m``.
- ``drop_implicit_return``: the ``return None`` every function ends with.
"""

from __future__ import annotations

import ast

from .conditions import negate
from .values import WithEnd, WithStart, is_assertion_error, stmt_marker

_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers")
_EXITS = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def _children_lists(node: ast.AST):
    for name in _BODY_FIELDS:
        value = getattr(node, name, None)
        if (
            isinstance(value, list)
            and value
            and isinstance(value[0], (ast.stmt, ast.ExceptHandler))
        ):
            yield name, value


def _rewrite_nested(stmt: ast.AST, rewrite) -> None:
    """Replace each statement list inside ``stmt`` (handler bodies too) with ``rewrite`` of
    it, bottom-up passes' first step; a body left empty becomes ``pass``."""
    for name, body in _children_lists(stmt):
        if name == "handlers":
            for handler in body:
                handler.body = rewrite(handler.body) or [ast.Pass()]
        else:
            setattr(stmt, name, rewrite(body) or ([ast.Pass()] if name == "body" else []))


def fold_with(statements: list[ast.stmt]) -> list[ast.stmt]:
    for stmt in statements:
        _rewrite_nested(stmt, fold_with)
    result: list[ast.stmt] = []
    frames: list[tuple[WithStart, list[ast.stmt]]] = []
    awaiting: ast.With | ast.AsyncWith | None = (
        None  # left early: the exit statement that follows belongs inside
    )
    for stmt in statements:
        marker = stmt_marker(stmt)
        current = frames[-1][1] if frames else result
        if isinstance(marker, WithStart):
            awaiting = None
            frames.append((marker, []))
            continue
        if isinstance(marker, WithEnd):
            if not frames:
                continue  # the exit of an enclosing with, taken by return/break/continue
            start, body = frames.pop()
            item = ast.withitem(start.ctx, start.target)
            node = (ast.AsyncWith if start.is_async else ast.With)([item], body or [ast.Pass()])
            parent = frames[-1][1] if frames else result
            parent.append(node)
            if marker.early:
                awaiting = awaiting or node
            continue
        if awaiting is not None and isinstance(stmt, _EXITS):
            if len(awaiting.body) == 1 and isinstance(awaiting.body[0], ast.Pass):
                awaiting.body = []
            awaiting.body.append(stmt)
            awaiting = None
            continue
        awaiting = None
        current.append(stmt)
    while frames:  # a with left only through return/raise: its body runs to the end
        start, body = frames.pop()
        kind = ast.AsyncWith if start.is_async else ast.With
        node = kind([ast.withitem(start.ctx, start.target)], body or [ast.Pass()])
        (frames[-1][1] if frames else result).append(node)
    return _merge_nested_with(result)


def _merge_nested_with(statements: list[ast.stmt]) -> list[ast.stmt]:
    for stmt in statements:
        if (
            isinstance(stmt, (ast.With, ast.AsyncWith))
            and len(stmt.body) == 1
            and type(stmt.body[0]) is type(stmt)
        ):
            inner = stmt.body[0]
            stmt.items = [*stmt.items, *inner.items]
            stmt.body = inner.body
    return statements


def merge_try_finally(statements: list[ast.stmt]) -> list[ast.stmt]:
    """``try: (try: ... except: ...) finally: ...`` is one statement in the source."""
    for stmt in statements:
        _rewrite_nested(stmt, merge_try_finally)
    for k, stmt in enumerate(statements):
        if (
            isinstance(stmt, ast.Try)
            and stmt.finalbody
            and not stmt.handlers
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], (ast.Try, ast.TryStar))
            and stmt.body[0].handlers
            and not stmt.body[0].finalbody
        ):
            inner = stmt.body[0]
            statements[k] = type(inner)(inner.body, inner.handlers, inner.orelse, stmt.finalbody)
    return statements


def while_tests(statements: list[ast.stmt]) -> list[ast.stmt]:
    """``while True: if not c: break ...`` is ``while c: ...``."""
    for stmt in statements:
        _rewrite_nested(stmt, while_tests)
        if (
            isinstance(stmt, ast.While)
            and isinstance(stmt.test, ast.Constant)
            and stmt.test.value is True
            and not stmt.orelse
            and len(stmt.body) > 1
            and isinstance(stmt.body[0], ast.If)
            and not stmt.body[0].orelse
            and len(stmt.body[0].body) == 1
            and isinstance(stmt.body[0].body[0], ast.Break)
        ):
            stmt.test = negate(stmt.body[0].test)
            stmt.body = stmt.body[1:]
    return statements


def recover_asserts(statements: list[ast.stmt]) -> list[ast.stmt]:
    result = []
    for stmt in statements:
        _rewrite_nested(stmt, recover_asserts)
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Raise)
            and stmt.body[0].cause is None
        ):
            exc = stmt.body[0].exc
            if is_assertion_error(exc):
                result.append(ast.Assert(negate(stmt.test), None))
                continue
            if isinstance(exc, ast.Call) and is_assertion_error(exc.func) and len(exc.args) == 1:
                result.append(ast.Assert(negate(stmt.test), exc.args[0]))
                continue
        result.append(stmt)
    return result


def drop_implicit_return(statements: list[ast.stmt]) -> list[ast.stmt]:
    if (
        statements
        and isinstance(statements[-1], ast.Return)
        and (statements[-1].value is None or _is_none(statements[-1].value))
    ):
        statements = statements[:-1]
    return statements


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def run_all(statements: list[ast.stmt], *, keep_final_return: bool = False) -> list[ast.stmt]:
    statements = fold_with(statements)
    statements = recover_asserts(statements)
    statements = merge_try_finally(statements)
    statements = while_tests(statements)
    if not keep_final_return:
        statements = drop_implicit_return(statements)
    return statements
