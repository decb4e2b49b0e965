"""SHAPE_EXPR: relations over dynamic sizes render as Python and agree with sympy."""

from __future__ import annotations

import pytest
import sympy
import torch
from guard_helpers import fails, passes
from torch.utils._sympy.functions import FloorDiv, Mod

from framejit.guards import Guard, GuardKind, LocalSource, ShapeExpr, ShapeSource, StrideSource

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
X, Y = LocalSource("x"), LocalSource("y")
SOURCES = {s0: ShapeSource(X, 0), s1: ShapeSource(Y, 0)}


def shape_guard(expr):
    return [Guard(None, GuardKind.SHAPE_EXPR, ShapeExpr(expr, SOURCES))]


def frame(n, m):
    return {"x": torch.randn(n, 3), "y": torch.randn(m)}


@pytest.mark.parametrize(
    "expr,text,ok,bad",
    [
        (sympy.Eq(s0, s1), "L['x'].size()[0] == L['y'].size()[0]", (5, 5), (5, 6)),
        (sympy.Le(2, s0), "2 <= L['x'].size()[0]", (2, 1), (1, 1)),
        (sympy.Ne(s0, s1), "L['x'].size()[0] != L['y'].size()[0]", (5, 6), (5, 5)),
        (sympy.Lt(s0, 2 * s1 + 1), None, (5, 3), (5, 1)),
        (sympy.Eq(FloorDiv(s0, 2), s1), None, (7, 3), (7, 4)),
        (sympy.Eq(Mod(s0, 4), 0), None, (8, 1), (6, 1)),
        (sympy.Eq(sympy.Max(s0, s1), 9), None, (9, 2), (8, 2)),
        (sympy.And(sympy.Ge(s0, 2), sympy.Le(s0, 10)), None, (4, 1), (11, 1)),
        (sympy.Eq(s0**2, s1), None, (3, 9), (3, 8)),
    ],
)
def test_relations(expr, text, ok, bad):
    g = shape_guard(expr)
    if text is not None:
        assert g[0].expected.render() == text
    passes(g, frame(*ok))
    reason = fails(g, frame(*bad))
    assert "actual: L['x'].size()[0] = " in reason


def test_stride_symbols():
    st = sympy.Symbol("st", integer=True)
    g = [
        Guard(
            None,
            GuardKind.SHAPE_EXPR,
            ShapeExpr(sympy.Eq(st, s0), {st: StrideSource(Y, 0), s0: ShapeSource(Y, 1)}),
        )
    ]
    passes(g, {"y": torch.randn(4, 6)})
    fails(g, {"y": torch.randn(6, 4).t()})


def test_unsupported_nodes_and_missing_sources_are_refused():
    with pytest.raises(TypeError, match="unsupported node"):
        ShapeExpr(sympy.Eq(sympy.Function("f")(s0), s1), SOURCES)
    with pytest.raises(TypeError, match="unsupported node"):
        ShapeExpr(sympy.Eq(s0 / 3, s1), SOURCES)
    with pytest.raises(ValueError, match="without a source"):
        ShapeExpr(sympy.Eq(s0, sympy.Symbol("s9")), SOURCES)


def test_shape_guard_with_dynamic_tensor_guard():
    x = torch.randn(5, 3)
    guards = [
        Guard(X, GuardKind.TENSOR_MATCH, x, dynamic_dims=[0]),
        Guard(Y, GuardKind.TENSOR_MATCH, torch.randn(5), dynamic_dims=[0]),
        *shape_guard(sympy.Eq(s0, s1)),
        *shape_guard(sympy.Ge(s0, 2)),
    ]
    passes(guards, frame(5, 5))
    passes(guards, frame(9, 9))
    fails(guards, frame(9, 8))
    fails(guards, frame(1, 1))
