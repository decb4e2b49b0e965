"""Shape relations over dynamic sizes: a sympy expression whose symbols are Sources.

``ShapeExpr(sympy.Eq(s0, s1), {s0: ShapeSource(L_x, 0), s1: ShapeSource(L_y, 0)})``
renders ``L['x'].size()[0] == L['y'].size()[0]``; ``sympy.Le(2, s0)`` renders
``2 <= L['x'].size()[0]``.  This is the form ShapeEnv guards take next round (its
symbols mapped to the sources of the sizes they stand for).

Rendering is a small printer over an allow-list of node types (integers, symbols,
+, *, integer powers, floor division, modulo, min/max, comparisons, and/or/not);
anything else raises TypeError instead of printing something unvetted.  The mirror
evaluates the same relation with sympy itself (``evaluate``), an oracle independent of
the printed Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sympy
from torch.utils._sympy.functions import FloorDiv, Mod, PythonMod

from .source import Source

_RELATIONS = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.Lt: "<",
    sympy.Le: "<=",
    sympy.Gt: ">",
    sympy.Ge: ">=",
}


@dataclass(frozen=True)
class ShapeExpr:
    expr: sympy.Basic
    sources: tuple[tuple[sympy.Symbol, Source], ...]

    def __init__(self, expr: Any, sources: Mapping[sympy.Symbol, Source]):
        expr = sympy.sympify(expr)
        missing = expr.free_symbols - set(sources)
        if missing:
            raise ValueError(f"shape expression {expr} has symbols without a source: {missing}")
        for sym, src in sources.items():
            if not isinstance(src, Source):
                raise TypeError(f"source for {sym} must be a Source, got {type(src).__name__}")
        used = tuple(sorted(((s, sources[s]) for s in expr.free_symbols), key=lambda p: p[0].name))
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "sources", used)
        self.render()  # refuse unsupported nodes now, not at compile time

    def source_map(self) -> dict[sympy.Symbol, Source]:
        return dict(self.sources)

    def render(self, names: Mapping[Source, str] | None = None) -> str:
        """The Python condition; `names` spells some sources differently (the compiled check
        reads each size once into a local variable: ``___size0_1`` for ``L['x'].size()[1]``)."""
        spelled = {sym: (names or {}).get(src) or src.name() for sym, src in self.sources}
        return _render(self.expr, spelled, top=True)

    def evaluate(self, L: dict[str, Any], G: dict[str, Any]) -> bool:
        values = {sym: sympy.Integer(int(src.get(L, G))) for sym, src in self.sources}
        return bool(self.expr.xreplace(values))

    def helpers(self) -> tuple[str, ...]:
        out: list[str] = []
        for _, src in self.sources:
            out += [h for h in src.all_helpers() if h not in out]
        return tuple(out)


def _render(e: Any, names: dict, top: bool = False) -> str:
    def r(x: Any) -> str:
        return _render(x, names)

    def wrap(s: str) -> str:
        return s if top else f"({s})"

    if isinstance(e, sympy.Symbol):
        return names[e]
    if e is sympy.true or e is sympy.false:
        return str(bool(e))
    if isinstance(e, sympy.Integer):
        return str(int(e))
    for cls, op in _RELATIONS.items():
        if type(e) is cls:
            return wrap(f"{r(e.lhs)} {op} {r(e.rhs)}")
    if isinstance(e, sympy.Add):
        return wrap(" + ".join(r(a) for a in e.args))
    if isinstance(e, sympy.Mul):
        return wrap(" * ".join(r(a) for a in e.args))
    if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and e.exp >= 0:
        return wrap(f"{r(e.base)} ** {int(e.exp)}")
    if isinstance(e, FloorDiv):
        return wrap(f"{r(e.args[0])} // {r(e.args[1])}")
    if isinstance(e, (Mod, PythonMod, sympy.Mod)):
        return wrap(f"{r(e.args[0])} % {r(e.args[1])}")
    if isinstance(e, (sympy.Max, sympy.Min)):
        fn = "max" if isinstance(e, sympy.Max) else "min"
        return f"{fn}({', '.join(r(a) for a in e.args)})"
    if isinstance(e, sympy.And):
        return wrap(" and ".join(r(a) for a in e.args))
    if isinstance(e, sympy.Or):
        return wrap(" or ".join(r(a) for a in e.args))
    if isinstance(e, sympy.Not):
        return wrap(f"not {r(e.args[0])}")
    raise TypeError(
        f"unsupported node {type(e).__name__} in shape guard {e}; supported: integers, "
        "symbols, + * ** (integer powers), //, %, min, max, comparisons, and/or/not"
    )
