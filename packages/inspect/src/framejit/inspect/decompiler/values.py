"""What lives on the symbolic stack besides plain ``ast`` expressions.

The decompiler's stack holds ``ast.expr`` nodes for Python values.  Values the
interpreter keeps on its stack that are not expressions of the source program
(the NULL of a call, a loop's iterator, a context manager's ``__exit__``, the
exception in a handler, a module being imported from) are the markers below.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field


class Marker:
    """A stack entry that is not a source expression."""

    def as_expr(self) -> ast.expr:
        return ast.Name(id=f"__{type(self).__name__.lower()}")


class Null(Marker):
    """The NULL pushed before a callable (PUSH_NULL, LOAD_GLOBAL's low bit, LOAD_METHOD)."""


@dataclass
class Iterator(Marker):
    """``iter(expr)`` as produced by GET_ITER; a for loop consumes it."""

    expr: ast.expr

    def as_expr(self) -> ast.expr:
        return self.expr


@dataclass
class WithExit(Marker):
    """The bound ``__exit__`` that BEFORE_WITH leaves under the body of a ``with``."""

    ctx: ast.expr
    depth: int = 0  # stack depth under it when the with began


class ExceptionValue(Marker):
    """The exception object inside an ``except``/``finally`` handler."""


@dataclass
class CodeConst(Marker):
    code: types.CodeType


@dataclass
class FunctionValue(Marker):
    """A function made by MAKE_FUNCTION, rendered as ``def``/``lambda``/comprehension when used."""

    code: types.CodeType
    defaults: list[ast.expr] = field(default_factory=list)
    kwdefaults: dict[str, ast.expr] = field(default_factory=dict)
    annotations: dict[str, ast.expr] = field(default_factory=dict)


@dataclass
class ImportedModule(Marker):
    """IMPORT_NAME with a from-list: IMPORT_FROM reads names off it, POP_TOP ends the statement."""

    module: str
    level: int
    names: list[ast.alias] = field(default_factory=list)


@dataclass
class ImportedName(Marker):
    source: ImportedModule
    name: str


@dataclass
class PlainImport(Marker):
    """IMPORT_NAME without a from-list (``import a.b`` or ``import a.b as c``)."""

    module: str
    level: int
    attrs: list[str] = field(default_factory=list)  # IMPORT_FROM chain of ``import a.b as c``

    def as_expr(self) -> ast.expr:
        return ast.Call(ast.Name("__import__"), [ast.Constant(self.module)], [])


@dataclass
class BuildClass(Marker):
    """LOAD_BUILD_CLASS: a class statement is being made."""


@dataclass
class InPlace(Marker):
    """``target op= value`` waiting for its store."""

    target: ast.expr
    op: ast.operator
    value: ast.expr

    def as_expr(self) -> ast.expr:
        return ast.BinOp(self.target, self.op, self.value)


@dataclass
class CompareChain(Marker):
    """``a < b`` of a chained comparison whose middle operand stays on the stack."""

    compare: ast.Compare


def assertion_error_name() -> ast.Name:
    """LOAD_ASSERTION_ERROR; the mark lets the cleanup pass turn ``if``/``raise`` into ``assert``.

    (Marks are attributes, not ``ast`` subclasses: ``ast.unparse`` dispatches on the class name.)
    """
    node = ast.Name(id="AssertionError", ctx=ast.Load())
    node.assertion_error = True  # type: ignore[attr-defined]
    return node


def is_assertion_error(node: object) -> bool:
    return getattr(node, "assertion_error", False)


def chain_name(name: str, statement: ast.Assign) -> ast.Name:
    """The name a chained assignment stored first (``a = b = f()`` reads back ``a``)."""
    node = ast.Name(id=name, ctx=ast.Load())
    node.chain_statement = statement  # type: ignore[attr-defined]
    return node


def chain_statement(node: object) -> ast.Assign | None:
    return getattr(node, "chain_statement", None)


class Comment:
    """A statement that renders as ``pass  # text`` (keeps blocks valid Python)."""

    def __init__(self, text: str) -> None:
        self.text = " ".join(text.split())

    def __repr__(self) -> str:
        return f"pass  # {self.text}"


def comment(text: str) -> ast.stmt:
    return ast.Expr(ast.Constant(Comment(text)))


@dataclass
class WithStart(Marker):
    """Flat marker statement; the cleanup pass folds WithStart..WithEnd into ``with``."""

    ctx: ast.expr
    target: ast.expr | None
    is_async: bool = False


@dataclass
class WithEnd(Marker):
    early: bool  # the with is left by return/break/continue right after


def marker_stmt(marker: Marker) -> ast.stmt:
    node = ast.Expr(ast.Constant(None))
    node.marker = marker  # type: ignore[attr-defined]
    return node


def stmt_marker(stmt: ast.stmt) -> Marker | None:
    return getattr(stmt, "marker", None)


def to_expr(value: object) -> ast.expr:
    """Any stack entry as an expression (markers degrade to readable placeholders)."""
    if isinstance(value, Marker):
        return value.as_expr()
    return value  # type: ignore[return-value]


def constant(value: object) -> ast.expr:
    """A constant as an expression that unparses to valid source."""
    if isinstance(value, tuple):
        return ast.Tuple([constant(v) for v in value], ast.Load())
    if isinstance(value, frozenset):
        if not value:
            return ast.Call(ast.Name("frozenset"), [], [])
        return ast.Call(ast.Name("frozenset"), [ast.Set([constant(v) for v in value])], [])
    if isinstance(value, types.CodeType):
        return ast.Name(f"__code_{value.co_name.strip('<>')}")
    if type(value) in _LITERALS:
        return ast.Constant(value)
    return ast.Name(object_name(value))


_LITERALS = (type(None), bool, int, float, complex, str, bytes, type(...))


def object_name(value: object) -> str:
    """A readable name for a non-literal constant (framejit loads objects as constants)."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if (isinstance(name, str) and name.isidentifier()) or (
        isinstance(name, str) and all(part.isidentifier() for part in name.split("."))
    ):
        module = getattr(value, "__module__", None)
        if module in (None, "builtins") or not isinstance(module, str):
            return name
        return f"{module}.{name}"
    return f"__{type(value).__name__}_constant"
