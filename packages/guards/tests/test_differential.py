"""Differential oracle: the compiled check_fn agrees with the plain-Python mirror.

Hypothesis draws a traced frame (tensors of various dtypes/shapes/layouts, constants,
containers), builds the guards a capture layer would install for it, then draws a call
frame that keeps or perturbs each value, and compares check_fn with mirror_check.
"""

from __future__ import annotations

import math

import sympy
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from framejit.guards import (
    Guard,
    GuardKind,
    ItemSource,
    LocalSource,
    ShapeExpr,
    ShapeSource,
    compile_guards,
    global_state_guard,
    mirror_check,
)

DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool]
constants = st.one_of(
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True, width=16),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.tuples(st.integers(0, 2), st.sampled_from([0.0, -0.0, math.nan])),
)


@st.composite
def tensors(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    dtype = draw(st.sampled_from(DTYPES))
    t = torch.zeros(shape, dtype=dtype)
    if len(shape) >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)
    if dtype.is_floating_point and draw(st.booleans()):
        t.requires_grad_(True)
    return t


@st.composite
def perturbed_tensor(draw, t):
    choice = draw(st.sampled_from(["same", "equal", "dtype", "shape", "grad", "layout"]))
    if choice == "same":
        return t
    if choice == "equal":
        return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype).requires_grad_(
            t.requires_grad
        )
    if choice == "dtype":
        return torch.zeros(t.size(), dtype=draw(st.sampled_from(DTYPES)))
    if choice == "shape":
        return torch.zeros([s + draw(st.integers(0, 1)) for s in t.size()], dtype=t.dtype)
    if choice == "grad":
        return t.detach().clone().requires_grad_(t.dtype.is_floating_point and not t.requires_grad)
    return t.contiguous() if t.dim() < 2 else t.transpose(0, 1).contiguous().transpose(0, 1)


@st.composite
def cases(draw):
    traced: dict = {}
    guards = [global_state_guard()]
    for i in range(draw(st.integers(1, 4))):
        t = draw(tensors())
        name = f"t{i}"
        traced[name] = t
        dyn = [0] if t.dim() and draw(st.booleans()) else []
        guards.append(Guard(LocalSource(name), GuardKind.TENSOR_MATCH, t, dynamic_dims=dyn))
        if dyn and t.size(0) >= 2 and draw(st.booleans()):
            s = sympy.Symbol("s", integer=True)
            guards.append(
                Guard(
                    None,
                    GuardKind.SHAPE_EXPR,
                    ShapeExpr(sympy.Ge(s, 2), {s: ShapeSource(LocalSource(name), 0)}),
                )
            )
    for i in range(draw(st.integers(0, 3))):
        c = draw(constants)
        traced[f"c{i}"] = c
        guards.append(Guard(LocalSource(f"c{i}"), GuardKind.EQUALS_MATCH, c))
    d = dict.fromkeys(draw(st.lists(st.sampled_from("abc"), unique=True, max_size=3)), 0)
    traced["d"] = d
    guards += [
        Guard(LocalSource("d"), GuardKind.DICT_KEYS, d),
        Guard(LocalSource("d"), GuardKind.TYPE_MATCH, d),
        Guard(LocalSource("d"), GuardKind.LENGTH_CHECK, d),
    ]
    if "a" in d:
        guards.append(Guard(ItemSource(LocalSource("d"), "a"), GuardKind.EQUALS_MATCH, 0))
    names = [n for n in traced if n.startswith("t")]
    if len(names) >= 2:
        guards.append(Guard(None, GuardKind.NO_TENSOR_ALIASING, [LocalSource(n) for n in names]))

    call: dict = {}
    for name, value in traced.items():
        if name.startswith("t"):
            call[name] = draw(perturbed_tensor(value))
        elif name.startswith("c"):
            call[name] = value if draw(st.booleans()) else draw(constants)
        else:
            keys = (
                list(value)
                if draw(st.booleans())
                else draw(st.lists(st.sampled_from("abc"), unique=True, max_size=3))
            )
            call[name] = {k: draw(st.sampled_from([0, 1, "0"])) for k in keys}
    if len(names) >= 2 and draw(st.booleans()):
        call[names[1]] = call[names[0]]
    return guards, traced, call


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_check_fn_agrees_with_mirror(case):
    guards, traced, call = case
    for backend_native in (True, False):
        fn = _compile(guards, backend_native)
        assert fn(traced) is True
        assert mirror_check(guards, traced, {}) is True
        expected = mirror_check(guards, call, {})
        assert fn(call) is expected, fn.failure_reason(call)
        assert (fn.failure_reason(call) is None) is expected


def _compile(guards, use_native):
    from framejit.guards import native

    if use_native:
        return compile_guards(guards, {})
    real = native.load
    native.load = lambda: None
    try:
        return compile_guards(guards, {})
    finally:
        native.load = real
