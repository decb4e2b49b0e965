"""Dynamic shapes: symbolic FakeTensors for the frame's inputs, and the ShapeEnv's facts as guards.

One `ShapeTracker` per OutputGraph owns the ShapeEnv side of a trace:
- `fake_input(tensor, source, dims)`: the input's FakeTensor, with a fresh symbol (a SymInt
  whose Source renders ``L['x'].size()[0]``) for every dim in `dims` (see dim_policy.py for
  which dims).  Strides of a dense layout become the matching products of sizes; any other
  layout keeps the tensor static (over-specialising recompiles, it is never wrong).
- `shape_guards()`: what the trace assumed about those symbols, as guards-package SHAPE_EXPR
  guards: symbols shared by several sizes (``L['x'].size()[0] == L['y'].size()[0]``), sizes
  the trace equated or specialised, every branch the trace took on a size
  (``L['x'].size()[0] > 4``) and each symbol's range (``2 <= L['x'].size()[0]``).
- `int_input(value, source)`: a symbol for an int argument of the frame (``L['n']``); its
  guards are the same facts, over the argument itself.
- `check_marked()`: a dim the user marked dynamic that the code forced to a constant is an
  error (ConstraintViolationError naming the user line), as torch's constraint violation is.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
from torch._guards import GuardSource
from torch._guards import Source as TorchSource
from torch.fx.experimental.symbolic_shapes import (
    ConstraintViolationError as TorchConstraintViolation,
)
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    RelaxedUnspecConstraint,
    ShapeEnv,
    StrictMinMaxConstraint,
)
from torch.utils._sympy.value_ranges import ValueRanges

from framejit.guards import Guard, GuardKind, ShapeExpr, ShapeSource

from .exc import ConstraintViolationError
from .sources import source_name


@dataclass(frozen=True)
class SizeSource(TorchSource):
    """A framejit Source seen by the ShapeEnv (symbol names, its own messages)."""

    fj: Any

    @property
    def _name_template(self) -> str:
        return source_name(self.fj)

    @property
    def guard_source(self) -> GuardSource:
        return GuardSource.LOCAL


@dataclass(frozen=True)
class DimSpec:
    """How one dim of an input is traced: as a symbol, and whether the user asked for it."""

    marked: bool = False  # fj.mark_dynamic: forcing it to a constant is an error
    min: int | None = None
    max: int | None = None
    duck: bool = False  # dynamic=True: equal sizes share a symbol (torch's duck shaping)


@dataclass
class ShapeTracker:
    shape_env: ShapeEnv = field(
        default_factory=lambda: ShapeEnv(
            allow_scalar_outputs=False, allow_dynamic_output_shape_ops=False
        )
    )
    # every size symbol of an input, with the sizes it stands for (first: its name in guards)
    sources: dict[sympy.Symbol, list[Any]] = field(default_factory=dict)
    marked: dict[sympy.Symbol, Any] = field(default_factory=dict)  # symbol -> its source
    hints: dict[sympy.Symbol, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ inputs
    def fake_input(self, fake_mode, tensor: torch.Tensor, source, dims: dict[int, DimSpec]):
        """A FakeTensor with symbolic sizes for `dims`, or None (trace it static)."""
        if not dims or tensor.layout != torch.strided:
            return None
        env = self.shape_env
        sizes: list[Any] = []
        for d, value in enumerate(tensor.shape):
            spec = dims.get(d)
            if spec is None:
                sizes.append(int(value))
                continue
            size_source = ShapeSource(source, d)
            if spec.marked and (spec.min is not None or spec.max is not None):
                lower = 0 if spec.min is None else spec.min
                upper = sys.maxsize - 1 if spec.max is None else spec.max
                constraint = StrictMinMaxConstraint(
                    vr=ValueRanges(lower=lower, upper=upper), warn_only=False
                )
            elif spec.marked:
                constraint = RelaxedUnspecConstraint(warn_only=False)
            else:
                constraint = None
            try:
                expr = env.create_symbol(
                    int(value),
                    SizeSource(size_source),
                    dynamic_dim=DimDynamic.DUCK if spec.duck else DimDynamic.DYNAMIC,
                    constraint_dim=constraint,
                )
            except TorchConstraintViolation as e:
                raise ConstraintViolationError(
                    f"{source_name(size_source)} is {int(value)}, outside the range it was "
                    f"marked dynamic with (fj.mark_dynamic min={spec.min}, max={spec.max}): {e}"
                ) from None
            if isinstance(expr, sympy.Integer):  # sizes 0 and 1 stay specialised, marked or
                sizes.append(int(value))  # not (as torch.compile does)
                continue
            self.sources.setdefault(expr, []).append(size_source)
            self.hints[expr] = int(value)
            if spec.marked:
                self.marked.setdefault(expr, size_source)
            sizes.append(
                env.create_symintnode(expr, hint=int(value), source=SizeSource(size_source))
            )
        if all(isinstance(s, int) for s in sizes):
            return None
        strides = _symbolic_strides(tensor, sizes)
        if strides is None:
            return None  # a layout that is not a permutation of a dense one: stays static
        with fake_mode:
            fake = torch.empty_strided(
                sizes, strides, dtype=tensor.dtype, device=tensor.device
            ).requires_grad_(tensor.requires_grad)
        # the backend's own fakification (AOTAutograd) finds this fake for the real tensor
        fake_mode.fake_tensor_converter.set_tensor_memo(tensor, fake)
        return fake

    def int_input(self, value: int, source) -> torch.SymInt:
        """A symbol for the int argument at `source` (unspecified: any value, 0 and 1 too)."""
        env = self.shape_env
        expr = env.create_unspecified_symbol(
            value, SizeSource(source), dynamic_dim=DimDynamic.DYNAMIC
        )
        self.sources.setdefault(expr, []).append(source)
        self.hints[expr] = value
        return env.create_symintnode(expr, hint=value, source=SizeSource(source))

    @staticmethod
    def symbolic_dims(fake: torch.Tensor) -> frozenset[int]:
        return frozenset(d for d, s in enumerate(fake.shape) if isinstance(s, torch.SymInt))

    # ------------------------------------------------------------------ checks
    def check_marked(self) -> None:
        """Raise if the trace so far forced a marked-dynamic dim to a constant."""
        env = self.shape_env
        for sym, src in self.marked.items():
            value = env.replace(sym)
            vr = env.var_to_range.get(sym)
            if isinstance(value, sympy.Integer) or (vr is not None and vr.is_singleton()):
                const = int(value) if isinstance(value, sympy.Integer) else int(vr.lower)
                raise ConstraintViolationError(
                    f"{source_name(src)} was marked dynamic (fj.mark_dynamic) but the code "
                    f"specialised it to the constant {const} at {_user_origin()}. Remove the "
                    "mark, or change the code so it does not depend on the exact size."
                )

    # ------------------------------------------------------------------ guards
    def shape_guards(self) -> list[Guard]:
        if not self.sources:
            return []
        env = self.shape_env
        names = {sym: srcs[0] for sym, srcs in self.sources.items()}
        exprs: list[Any] = []
        aliases: dict[sympy.Symbol, Any] = {}
        for sym, srcs in self.sources.items():
            for other in srcs[1:]:  # one symbol for several equal sizes (duck shaping)
                alias = sympy.Symbol(f"alias{len(aliases)}", integer=True)
                aliases[alias] = other
                exprs.append(sympy.Eq(sym, alias))
        names = {**names, **aliases}
        for sym in self.sources:
            value = env.replace(sym)
            if value != sym:
                exprs.append(sympy.Eq(sym, value))
        for guard in env.guards:
            expr = env.simplify(guard.expr)  # replacements and known divisibility applied
            if expr is not sympy.true:
                exprs.append(expr)
        for sym in self.sources:
            if env.replace(sym) != sym:
                continue
            vr = env.var_to_range.get(sym)
            if vr is None:
                continue
            if isinstance(vr.lower, sympy.Integer):
                exprs.append(sympy.Le(int(vr.lower), sym, evaluate=False))
            if isinstance(vr.upper, sympy.Integer) and int(vr.upper) < sys.maxsize - 1:
                exprs.append(sympy.Le(sym, int(vr.upper), evaluate=False))
        out: list[Guard] = []
        seen: set[str] = set()
        for expr in exprs:
            guard = self._guard(expr, names)
            for g in guard:
                key = g.value.render()
                if key not in seen:
                    seen.add(key)
                    out.append(g)
        return out

    def _guard(self, expr, names) -> list[Guard]:
        try:
            return [Guard(None, GuardKind.SHAPE_EXPR, ShapeExpr(expr, names))]
        except (TypeError, ValueError):
            # not printable: pin every size it mentions to its traced value (sound, static)
            return [
                Guard(None, GuardKind.SHAPE_EXPR, ShapeExpr(sympy.Eq(s, self.hints[s]), names))
                for s in sorted(expr.free_symbols & set(self.hints), key=str)
            ]


def _symbolic_strides(tensor: torch.Tensor, sizes: list[Any]) -> list[Any] | None:
    """Strides as products of the (symbolic) sizes, for a permutation of a dense layout.

    Walks the dims innermost first, as the guards' TENSOR_MATCH does (tensor_spec), so a
    stride is symbolic exactly when the guard leaves it to the dense-layout check."""
    shape = tuple(int(s) for s in tensor.shape)
    stride = tuple(int(s) for s in tensor.stride())
    order = sorted(range(len(shape)), key=lambda d: (stride[d], shape[d]))
    expected = 1
    symbolic: Any = 1
    out: list[Any] = list(stride)
    inner_dynamic = False
    for d in order:
        if stride[d] != expected and shape[d] != 1:
            return None
        if inner_dynamic and stride[d] == expected:
            out[d] = symbolic
        expected *= shape[d]
        symbolic = symbolic * sizes[d]
        inner_dynamic = inner_dynamic or isinstance(sizes[d], torch.SymInt)
    return out


def _user_origin() -> str:
    """file:line of the user code being traced (the innermost translator on the stack)."""
    from .symbolic_convert import InstructionTranslatorBase

    frame = sys._getframe(1)
    while frame is not None:
        tx = frame.f_locals.get("self")
        if isinstance(tx, InstructionTranslatorBase):
            origin = tx.origin()
            filename, _, rest = origin.rpartition(":")
            line = _source_line(filename, rest.split(" ")[0])
            return f"{origin}: {line}" if line else origin
        frame = frame.f_back
    return "an unknown line"


def _source_line(filename: str, lineno: str) -> str:
    import linecache

    try:
        return linecache.getline(filename, int(lineno)).strip()
    except ValueError:
        return ""
