"""The loop IR as data: a loop body is a small SSA list of `Op`s over sympy indices.

Lowerings still write bodies as Python functions over `ops.*` (the lowering DSL); when a
value is realized into a buffer its function is traced once into a `LoopBody`: loads,
stores' values, index expressions, casts, masks (`where`), math and indirect indices, each
an `Op` whose arguments are earlier ops (`Ref`), sympy expressions or constants.  Bodies are
frozen, hashable, comparable and printable; the scheduler reads their loads, and every code
generator renders one by replaying it through its own `ops` handler (`LoopBody.run`), so
both languages render the same IR.  Duplicate calls are merged (hash-consing), except
indirect indices, each of which checks bounds where it stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy
import torch

from .ops import use_handler

# ops whose result is a bool whatever their inputs
PREDICATE_OPS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf"}
    | {"logical_and", "logical_or", "logical_xor", "logical_not"}
)
# ops whose last argument is the result dtype
DTYPE_OPS = frozenset(("constant", "index_expr", "to_dtype"))


@dataclass(frozen=True)
class Ref:
    """The value of an earlier op of the same body, by position."""

    position: int

    def __str__(self) -> str:
        return f"%{self.position}"


@dataclass(frozen=True)
class Op:
    name: str  # load, constant, index_expr, to_dtype, where, indirect_index, exp, add, ...
    args: tuple[Any, ...]  # Ref | sympy.Expr | str (buffer name) | scalar | torch.dtype
    dtype: torch.dtype | None  # the value's dtype; None for indirect_index (an index)
    # indirect_index: the symbol later index expressions use for its result
    symbol: sympy.Symbol | None = None

    def refs(self) -> list[int]:
        return [a.position for a in self.args if isinstance(a, Ref)]

    def __str__(self) -> str:
        args = ", ".join(_show(a) for a in self.args)
        kind = f" -> {self.symbol}" if self.symbol is not None else f" : {_show(self.dtype)}"
        return f"{self.name}({args}){kind}"


def _show(value: Any) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return str(value)


@dataclass(frozen=True)
class LoopBody:
    """One body: `index` (and `rindex` for reductions) are its loop variables (0 for size-1
    dims); `result` is the op whose value is stored (or reduced)."""

    index: tuple[sympy.Expr, ...]
    rindex: tuple[sympy.Symbol, ...]
    ops: tuple[Op, ...]
    result: int

    def loads(self) -> list[tuple[str, sympy.Expr]]:
        return [(op.args[0], op.args[1]) for op in self.ops if op.name == "load"]

    @property
    def op_count(self) -> int:
        return sum(op.name != "load" for op in self.ops)

    def substitute(self, mapping: Mapping[sympy.Symbol, sympy.Expr]) -> LoopBody:
        """The same body over other loop variables."""
        if not mapping:
            return self
        ops = tuple(
            Op(op.name, tuple(_subs(a, mapping) for a in op.args), op.dtype, op.symbol)
            for op in self.ops
        )
        index = tuple(_subs(i, mapping) for i in self.index)
        return LoopBody(index, self.rindex, ops, self.result)

    def run(self, handler: Any) -> Any:
        """Replay the body through an `ops` handler; returns the handler's result value."""
        values: list[Any] = []
        renamed: dict[sympy.Symbol, sympy.Expr] = {}
        for op in self.ops:
            args = [
                values[a.position] if isinstance(a, Ref) else _subs(a, renamed) for a in op.args
            ]
            value = getattr(handler, op.name)(*args)
            if op.symbol is not None:
                renamed[op.symbol] = value
            values.append(value)
        return values[self.result]

    def __str__(self) -> str:
        head = f"body over {list(self.index)}" + (f", {list(self.rindex)}" if self.rindex else "")
        lines = [head] + [f"  %{i} = {op}" for i, op in enumerate(self.ops)]
        lines.append(f"  result %{self.result}")
        return "\n".join(lines)


def _subs(value: Any, mapping: Mapping[sympy.Symbol, sympy.Expr]) -> Any:
    if mapping and isinstance(value, sympy.Basic):
        return sympy.expand(value.xreplace(mapping))
    return value


class BodyTracer:
    """An `ops` handler that records calls as `Op`s instead of running them."""

    def __init__(self, dtype_of: Callable[[str], torch.dtype]) -> None:
        self.dtype_of = dtype_of
        self.ops: list[Op] = []
        self.positions: dict[Op, int] = {}

    def _emit(self, op: Op, merge: bool = True) -> Ref:
        if merge and op in self.positions:
            return Ref(self.positions[op])
        self.ops.append(op)
        self.positions.setdefault(op, len(self.ops) - 1)
        return Ref(len(self.ops) - 1)

    def _dtype(self, value: Any) -> torch.dtype | None:
        return self.ops[value.position].dtype if isinstance(value, Ref) else None

    def load(self, name: str, index: sympy.Expr) -> Ref:
        return self._emit(Op("load", (name, sympy.expand(index)), self.dtype_of(name)))

    def to_dtype(self, value: Ref, dtype: torch.dtype) -> Ref:
        if self._dtype(value) == dtype:
            return value  # a no-op in every generator
        return self._emit(Op("to_dtype", (value, dtype), dtype))

    def indirect_index(self, value: Ref, size: int, allow_negative: bool) -> sympy.Symbol:
        symbol = sympy.Symbol(f"tind{len(self.ops)}", integer=True)
        self._emit(Op("indirect_index", (value, size, allow_negative), None, symbol), False)
        return symbol

    def __getattr__(self, name: str) -> Callable[..., Ref]:
        def record(*args: Any) -> Ref:
            args = tuple(sympy.expand(a) if isinstance(a, sympy.Basic) else a for a in args)
            if name in PREDICATE_OPS:
                dtype = torch.bool
            elif name in DTYPE_OPS:
                dtype = args[-1]
            elif name == "where":
                dtype = self._dtype(args[1])
            else:
                dtype = next((self._dtype(a) for a in args if isinstance(a, Ref)), None)
            return self._emit(Op(name, args, dtype))

        record.__name__ = name
        return record


def _symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _index_for(ranges: Sequence[int]) -> list[sympy.Expr]:
    """x0, x1, ... over the dims that are not 1 (those index at 0)."""
    index: list[sympy.Expr] = []
    for n in ranges:
        index.append(sympy.Integer(0) if n == 1 else _symbol(f"x{sum(i != 0 for i in index)}"))
    return index


def trace(
    fn: Callable[..., Any],
    ranges: Sequence[int],
    dtype_of: Callable[[str], torch.dtype],
    reduction_ranges: Sequence[int] | None = None,
    value_dtype: torch.dtype | None = None,
) -> LoopBody:
    """Trace a lowering's body function into a `LoopBody` over canonical variables: `x<k>`
    for the dims that are not 1 and `r<k>` for reduced dims, the variables of a kernel that
    loops over all of them (the scheduler's names, so such a kernel renames nothing)."""
    index = _index_for(ranges)
    tracer = BodyTracer(dtype_of)
    with use_handler(tracer):
        if reduction_ranges is None:
            result = fn(index)
            rindex: list[sympy.Symbol] = []
        else:
            rindex = [_symbol(f"r{i}") for i in range(len(reduction_ranges))]
            result = fn(index, rindex)
            if value_dtype is not None:
                result = tracer.to_dtype(result, value_dtype)
    if not isinstance(result, Ref):
        raise TypeError(f"a loop body returned {type(result).__name__}, not an op")
    return LoopBody(tuple(index), tuple(rindex), tuple(tracer.ops), result.position)
