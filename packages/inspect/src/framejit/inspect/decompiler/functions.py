"""Nested code objects: ``def``, ``lambda``, ``class`` and comprehensions.

MAKE_FUNCTION leaves a ``FunctionValue`` on the stack; what it becomes depends on
its use: stored under its own name it is a ``def`` (with the decorators it was
called through), used as a value it is a ``lambda``, called once on an iterator
it is a comprehension whose code object is decompiled and folded back into
``[elt for target in iterable if test]``.
"""

from __future__ import annotations

import ast
import re
import types
from dataclasses import dataclass, field

from .conditions import negate
from .engine import Block, Unsupported
from .pseudo import pseudo_body
from .values import FunctionValue, Marker, comment, constant

COMPREHENSION_KINDS = {
    "<listcomp>": "list",
    "<setcomp>": "set",
    "<dictcomp>": "dict",
    "<genexpr>": "generator",
}
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200


@dataclass
class ClassValue(Marker):
    body: types.CodeType
    name: str
    bases: list[ast.expr] = field(default_factory=list)
    keywords: list[ast.keyword] = field(default_factory=list)


@dataclass
class Decorated(Marker):
    decorator: ast.expr
    inner: Marker


def identifier(name: str) -> str:
    """A code object's name as a valid identifier (``<lambda>`` -> ``_lambda_``)."""
    cleaned = re.sub(r"\W", "_", name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "_" + cleaned
    return cleaned


def signature(
    code: types.CodeType,
    defaults: list[ast.expr] | None = None,
    kwdefaults: dict[str, ast.expr] | None = None,
    annotations: dict[str, ast.expr] | None = None,
) -> ast.arguments:
    """The parameter list of ``code``."""
    annotations = annotations or {}
    kwdefaults = kwdefaults or {}
    names = code.co_varnames

    def arg(name: str) -> ast.arg:
        return ast.arg("__iterable" if name == ".0" else name, annotations.get(name))

    npos, nposonly, nkw = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    kwonly = list(names[npos : npos + nkw])
    index = npos + nkw
    vararg = kwarg = None
    if code.co_flags & CO_VARARGS:
        vararg = arg(names[index])
        index += 1
    if code.co_flags & CO_VARKEYWORDS:
        kwarg = arg(names[index])
    return ast.arguments(
        posonlyargs=[arg(n) for n in names[:nposonly]],
        args=[arg(n) for n in names[nposonly:npos]],
        vararg=vararg,
        kwonlyargs=[arg(n) for n in kwonly],
        kw_defaults=[kwdefaults.get(n) for n in kwonly],
        kwarg=kwarg,
        defaults=list(defaults or []),
    )


class FunctionOps:
    """Definitions and comprehensions (mixed into the decompiler)."""

    is_comprehension = False

    def nested(self, code: types.CodeType, **kwargs):
        return type(self)(code, self.shared, **kwargs)

    # ---------------------------------------------------------------- values
    def expr(self, value, blk: Block) -> ast.expr:
        if isinstance(value, FunctionValue):
            if value.code.co_name == "<lambda>":
                lam = self.lambda_expr(value)
                if lam is not None:
                    return lam
            name = identifier(value.code.co_name)
            blk.emit(self.function_def(value, name, []))
            return ast.Name(name)
        if isinstance(value, Decorated):
            return ast.Call(value.decorator, [self.expr(value.inner, blk)], [])
        if isinstance(value, ClassValue):
            blk.emit(self.class_def(value, value.name, []))
            return ast.Name(value.name)
        return super().expr(value, blk)

    def is_definition(self, value) -> bool:
        return isinstance(value, (FunctionValue, ClassValue, Decorated))

    def decorated(self, decorator: ast.expr, inner) -> Decorated:
        return Decorated(decorator, inner)

    def definition(self, value, name: str, blk: Block) -> ast.stmt | None:
        decorators: list[ast.expr] = []
        while isinstance(value, Decorated):
            decorators.append(value.decorator)
            value = value.inner
        if isinstance(value, ClassValue):
            return self.class_def(value, name, decorators)
        if isinstance(value, FunctionValue):
            if value.code.co_name == "<lambda>" and not decorators:
                return None  # ``f = lambda ...`` stays an assignment
            return self.function_def(value, name, decorators)
        return None

    # ---------------------------------------------------------------- def / lambda
    def nested_body(self, code: types.CodeType) -> list[ast.stmt]:
        """A nested function's body, or marked pseudo-code for it (never dropped)."""
        try:
            return self.nested(code).body_statements()
        except RecursionError:
            return pseudo_body(code, "nesting too deep")
        except Exception as exc:
            return pseudo_body(code, str(exc) if isinstance(exc, Unsupported) else repr(exc))

    def function_def(self, fn: FunctionValue, name: str, decorators: list[ast.expr]) -> ast.stmt:
        body = self.nested_body(fn.code)
        args = signature(fn.code, fn.defaults, fn.kwdefaults, fn.annotations)
        node_type = (
            ast.AsyncFunctionDef
            if fn.code.co_flags & (CO_COROUTINE | CO_ASYNC_GENERATOR)
            else ast.FunctionDef
        )
        return node_type(name, args, body or [ast.Pass()], decorators, fn.annotations.get("return"))

    def lambda_expr(self, fn: FunctionValue) -> ast.expr | None:
        body = self.nested(fn.code).body_statements(keep_final_return=True)
        if fn.code.co_flags & CO_GENERATOR:
            if len(body) == 1 and isinstance(body[0], ast.Expr):
                value = body[0].value
            else:
                return None
        elif len(body) == 1 and isinstance(body[0], ast.Return):
            value = body[0].value or ast.Constant(None)
        else:
            return None
        return ast.Lambda(signature(fn.code, fn.defaults, fn.kwdefaults), value)

    # ---------------------------------------------------------------- class
    def class_value(self, args: list, keywords: list[ast.keyword], blk: Block) -> ClassValue:
        if len(args) < 2 or not isinstance(args[0], FunctionValue):
            raise Unsupported("class statement layout")
        name_node = self.expr(args[1], blk)
        name = name_node.value if isinstance(name_node, ast.Constant) else "_class_"
        return ClassValue(args[0].code, name, [self.expr(a, blk) for a in args[2:]], keywords)

    def class_def(self, value: ClassValue, name: str, decorators: list[ast.expr]) -> ast.stmt:
        body = self.nested(value.body).body_statements()
        cleaned = []
        for stmt in body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                target = stmt.targets[0].id
                if target in {"__module__", "__qualname__", "__classcell__"}:
                    continue
                if target == "__doc__" and isinstance(stmt.value, ast.Constant):
                    cleaned.append(ast.Expr(stmt.value))
                    continue
            if isinstance(stmt, ast.Return):
                continue
            cleaned.append(stmt)
        return ast.ClassDef(name, value.bases, value.keywords, cleaned or [ast.Pass()], decorators)

    # ---------------------------------------------------------------- comprehensions
    def is_comprehension_code(self, code: types.CodeType) -> bool:
        return code.co_name in COMPREHENSION_KINDS

    def comprehension_element(self, kind: str, values: list[ast.expr]) -> ast.stmt:
        node = ast.Expr(values[-1])
        node.element = values  # type: ignore[attr-defined]
        return node

    def comprehension(self, fn: FunctionValue, iterable: ast.expr, blk: Block) -> ast.expr:
        kind = COMPREHENSION_KINDS[fn.code.co_name]
        try:
            inner = self.nested(fn.code, comprehension=True)
            body = inner.body_statements(keep_final_return=True)
        except Unsupported as exc:
            return self._pseudo_comprehension(fn, iterable, str(exc), blk)
        loops = [s for s in body if isinstance(s, ast.For)]
        built = _fold_comprehension(loops[0], kind) if len(loops) == 1 else None
        if built is None:
            return self._pseudo_comprehension(fn, iterable, "an unusual shape", blk)
        generators, element = built
        generators[0].iter = _replace_name(generators[0].iter, "__iterable", iterable)
        if kind == "list":
            return ast.ListComp(element[0], generators)
        if kind == "set":
            return ast.SetComp(element[0], generators)
        if kind == "dict":
            return ast.DictComp(element[0], element[1], generators)
        return ast.GeneratorExp(element[0], generators)

    def _pseudo_comprehension(self, fn, iterable: ast.expr, reason: str, blk: Block) -> ast.expr:
        """A comprehension that cannot be folded: a marked pseudo-code function, called."""
        kind = COMPREHENSION_KINDS[fn.code.co_name]
        name = f"__pseudo_{kind}_comprehension_{fn.code.co_firstlineno}"
        args = ast.arguments([], [ast.arg("__iterable")], None, [], [], None, [])
        blk.emit(ast.FunctionDef(name, args, pseudo_body(fn.code, reason), [], None))
        return ast.Call(ast.Name(name), [iterable], [])


def _replace_name(node: ast.expr, name: str, replacement: ast.expr) -> ast.expr:
    if isinstance(node, ast.Name) and node.id == name:
        return replacement
    for child in ast.walk(node):
        for fname, value in ast.iter_fields(child):
            if isinstance(value, ast.Name) and value.id == name:
                setattr(child, fname, replacement)
    return node


def _without_final_continue(body: list[ast.stmt]) -> list[ast.stmt]:
    """A loop body's last ``continue`` does nothing (3.12+ spell the jump back as one)."""
    body = list(body)
    while len(body) > 1 and isinstance(body[-1], ast.Continue):
        body.pop()
    return body


def _fold_comprehension(loop: ast.For, kind: str):
    """``for``/``if`` nesting around one element statement -> (generators, element)."""
    generators = [ast.comprehension(loop.target, loop.iter, [], 0)]
    body = _without_final_continue(loop.body)
    while True:
        if (
            body
            and isinstance(body[0], ast.If)
            and not body[0].orelse
            and len(body[0].body) == 1
            and isinstance(body[0].body[0], ast.Continue)
        ):
            generators[-1].ifs.append(negate(body[0].test))
            body = body[1:]
            continue
        if len(body) == 1 and isinstance(body[0], ast.If) and not body[0].orelse:
            generators[-1].ifs.append(body[0].test)
            body = _without_final_continue(body[0].body)
            continue
        if len(body) == 1 and isinstance(body[0], ast.For) and not body[0].orelse:
            generators.append(ast.comprehension(body[0].target, body[0].iter, [], 0))
            body = _without_final_continue(body[0].body)
            continue
        break
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    stmt = body[0]
    if kind == "generator":
        if isinstance(stmt.value, ast.Yield) and stmt.value.value is not None:
            return generators, [stmt.value.value]
        return None
    element = getattr(stmt, "element", None)
    return (generators, element) if element else None


__all__ = [
    "COMPREHENSION_KINDS",
    "ClassValue",
    "Decorated",
    "FunctionOps",
    "comment",
    "constant",
    "identifier",
    "signature",
]
