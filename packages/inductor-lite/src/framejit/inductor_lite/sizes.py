"""Symbolic sizes: the free size symbols of a graph (`ks0`, `ks1`, ...), their example values
(hints), the facts the IR may assume about them, and their spelling in the wrapper.

A static size is a Python int everywhere; a dynamic one is a sympy expression over `ks<k>`
symbols, renamed from the capture's ShapeEnv symbols when the graph's inputs are read.
Kernels and the wrapper take the symbols' values as arguments, so one kernel serves every
size.  Decisions come in two kinds:
- heuristics (parallelize? block sizes?) read the example value: `hint(v)`;
- correctness never does: it is decided for every value the symbols may take
  (`known_nonneg`, integers >= 2: the capture specializes 0 and 1), or the IR takes the path
  that is right for all of them (a looped reduction, a memory buffer, an extern).
The wrapper checks at each call that the inputs have the sizes the symbols say and that
every symbol is >= 2; anything else runs the graph eagerly.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

MIN_SIZE = 2  # the least value a size symbol takes (0 and 1 are specialized by the capture)

Size = int | sympy.Expr


def size_symbol(k: int) -> sympy.Symbol:
    return sympy.Symbol(f"ks{k}", integer=True, positive=True)


def is_static(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, sympy.Basic) and value.is_Integer)


def is_symbolic(values: Any) -> bool:
    """Does a size, or a sequence of them, hold a symbol?"""
    if isinstance(values, (list, tuple)):
        return any(is_symbolic(v) for v in values)
    return isinstance(values, sympy.Basic) and not values.is_Integer


def canonical(value: Any) -> Size:
    """ints stay ints; an expression that folds to an integer becomes an int."""
    if isinstance(value, sympy.Basic):
        value = sympy.expand(value)
        if value.is_Integer:
            return int(value)
        return value
    return int(value)


@dataclass
class SizeEnv:
    """The size symbols of one graph: where each comes from in the capture's ShapeEnv."""

    shape_env: Any = None
    to_ks: dict[sympy.Symbol, sympy.Symbol] = field(default_factory=dict)
    hints: dict[sympy.Symbol, int] = field(default_factory=dict)

    def symbol_for(self, symbol: sympy.Symbol, hint: int) -> sympy.Symbol:
        known = self.to_ks.get(symbol)
        if known is None:
            known = self.to_ks[symbol] = size_symbol(len(self.to_ks))
            self.hints[known] = hint
        return known

    def expr(self, value: Any) -> Size:
        """A torch size (int or SymInt) in ks symbols."""
        if isinstance(value, torch.SymInt):
            node = value.node
            raw = node.expr
            if self.shape_env is None:
                self.shape_env = node.shape_env
            raw = node.shape_env.replace(raw)
            if raw.is_Integer:
                return int(raw)
            mapping = {}
            for symbol in raw.free_symbols:
                env = node.shape_env
                hint = getattr(env, "backed_var_to_val", None) or env.var_to_val
                hint = hint.get(symbol)
                if hint is None:
                    raise SymbolicUnsupported(f"size symbol {symbol} has no example value")
                mapping[symbol] = self.symbol_for(symbol, int(hint))
            return canonical(raw.xreplace(mapping))
        if isinstance(value, sympy.Basic):
            return canonical(value)
        return int(value)

    def exprs(self, values: Sequence[Any]) -> tuple[Size, ...]:
        return tuple(self.expr(v) for v in values)

    def conditions_since(self, start: int) -> list[Any]:
        """The ShapeEnv's guards from position `start` on, over this graph's symbols (guards
        over symbols it does not take are checked where those are)."""
        if self.shape_env is None:
            return []
        found = []
        for guard in self.shape_env.guards[start:]:
            expr = self.shape_env.replace(guard.expr)
            if expr is sympy.true or not expr.free_symbols <= set(self.to_ks):
                continue
            found.append(expr.xreplace(self.to_ks))
        return found

    def symint(self, value: Size) -> Any:
        """A SymInt (or int) of the capture's ShapeEnv for a ks expression: for fake tensors."""
        if is_static(value):
            return int(value)
        back = {ks: symbol for symbol, ks in self.to_ks.items()}
        raw = value.xreplace(back)
        return self.shape_env.create_symintnode(raw, hint=hint(value, self.hints))


class SymbolicUnsupported(Exception):
    """A symbolic size this pipeline does not handle: the graph part runs op by op."""


_hints: contextvars.ContextVar[dict[sympy.Symbol, int] | None] = contextvars.ContextVar(
    "framejit_inductor_lite_size_hints", default=None
)


@contextlib.contextmanager
def using(env: SizeEnv) -> Iterator[None]:
    """Heuristics read this graph's example sizes while it is scheduled and generated."""
    token = _hints.set(env.hints)
    try:
        yield
    finally:
        _hints.reset(token)


def hint(value: Any, hints: dict[sympy.Symbol, int] | None = None) -> int:
    """The example value of a size: for heuristics only, never for correctness."""
    if isinstance(value, sympy.Basic):
        if value.is_Integer:
            return int(value)
        return int(value.xreplace(hints if hints is not None else (_hints.get() or {})))
    return int(value)


def hint_prod(values: Sequence[Any]) -> int:
    return math.prod(hint(v) for v in values)


def known_nonneg(value: Any) -> bool:
    """Is value >= 0 for every value of its symbols (each >= MIN_SIZE)?  False when unsure."""
    if is_static(value):
        return int(value) >= 0
    shifted = {s: s + MIN_SIZE for s in value.free_symbols if s.name.startswith("ks")}
    if len(shifted) != len(value.free_symbols):
        return False
    expanded = sympy.expand(value.xreplace(shifted))
    # every coefficient of the polynomial in (ks - MIN_SIZE) >= 0: then so is its value
    try:
        poly = sympy.Poly(expanded, *shifted)
    except sympy.PolynomialError:
        return False
    return all(c.is_number and c >= 0 for c in poly.coeffs())


def known_lt(a: Any, b: Any) -> bool:
    return known_nonneg(sympy.sympify(b) - sympy.sympify(a) - 1)


def known_eq(a: Any, b: Any) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return sympy.expand(sympy.sympify(a) - sympy.sympify(b)) == 0


def max1(value: Any) -> Size:
    """max(value, 1) for a size: a symbol is >= MIN_SIZE already."""
    return max(int(value), 1) if is_static(value) else value


def size_key(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(canonical(v) for v in values)


# --------------------------------------------------------------------------- spelling


class ExprPrinter:
    """The one printer of sympy size and index expressions.  A language spells literals and
    min/max its own way (override `integer` and `min_max`); the operators it lacks are left
    out of `OPERATORS` and make the expression unsupported."""

    # extra operators past + and *: floor division, modulo, relations, boolean logic
    OPERATORS = False

    def integer(self, value: int) -> str:
        return str(value)

    def min_max(self, which: str, args: list[str]) -> str:
        return f"{which}({', '.join(args)})"

    def power(self, base: str, exp: int) -> str:
        return "(" + " * ".join([base] * exp) + ")"

    def __call__(self, expr: Any) -> str:
        if isinstance(expr, bool):
            return repr(expr)
        if isinstance(expr, int):
            return self.integer(expr)
        return self.render(sympy.sympify(expr))

    def render(self, e: sympy.Basic) -> str:
        if e.is_Integer:
            return self.integer(int(e))
        if e.is_Symbol:
            return e.name
        if e.is_Add:
            return "(" + " + ".join(self.render(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + " * ".join(self.render(a) for a in e.args) + ")"
        if e.is_Pow and e.exp.is_Integer and int(e.exp) > 0:  # sizes squared: ks1**2
            return self.power(self.render(e.base), int(e.exp))
        if isinstance(e, (sympy.Min, sympy.Max)):
            which = "min" if isinstance(e, sympy.Min) else "max"
            return self.min_max(which, [self.render(a) for a in e.args])
        if self.OPERATORS:
            text = self.operator(e)
            if text is not None:
                return text
        raise SymbolicUnsupported(f"size expression {e} ({type(e).__name__})")

    def operator(self, e: sympy.Basic) -> str | None:
        from torch.utils._sympy.functions import FloorDiv, Mod, PythonMod

        if e is sympy.true or e is sympy.false:
            return repr(bool(e))
        if isinstance(e, FloorDiv):
            return f"({self.render(e.args[0])} // {self.render(e.args[1])})"
        if isinstance(e, (Mod, PythonMod, sympy.Mod)):
            return f"({self.render(e.args[0])} % {self.render(e.args[1])})"
        for kind, op in _RELATIONS.items():
            if isinstance(e, kind):
                return f"({self.render(e.lhs)} {op} {self.render(e.rhs)})"
        for kind, op in ((sympy.And, " and "), (sympy.Or, " or ")):
            if isinstance(e, kind):
                return "(" + op.join(self.render(a) for a in e.args) + ")"
        if isinstance(e, sympy.Not):
            return f"(not {self.render(e.args[0])})"
        return None


class PythonPrinter(ExprPrinter):
    """Sizes and relations between them as Python over the ks variables (the wrapper)."""

    OPERATORS = True

    def power(self, base: str, exp: int) -> str:
        return f"({base} ** {exp})"


_RELATIONS = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.Lt: "<",
    sympy.Le: "<=",
    sympy.Gt: ">",
    sympy.Ge: ">=",
}

pyexpr = PythonPrinter()


def pytuple(values: Sequence[Any]) -> str:
    inner = ", ".join(pyexpr(v) for v in values)
    return f"({inner}{',' if len(values) == 1 else ''})"


def free_size_symbols(values: Any) -> set[sympy.Symbol]:
    found: set[sympy.Symbol] = set()
    if isinstance(values, (list, tuple)):
        for v in values:
            found |= free_size_symbols(v)
    elif isinstance(values, sympy.Basic):
        found |= {s for s in values.free_symbols if s.name.startswith("ks")}
    return found
