"""Triton code generation: one `@triton.jit` kernel per fused group, rendered from the same
scheduled groups and `LoopBody`s as the C++ path.

A kernel is a tile over two axes: x, the group's outer index (one program per XBLOCK of
it), and r, the elements of each node's inner loop or reduction (the fast axis of the tile).
Pure pointwise groups are 1-D tiles over x, or 2-D (rows x last dim) when a load is
transposed.  Reductions are persistent (one RBLOCK covers the row, values stay in
registers across the group's nodes) when the row fits a block, and looped otherwise (each
node its own loop over r, intermediates through memory).  Every load and store is masked;
the grid is computed by the Python wrapper; launch configs come from triton_runtime.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

from ..config import config
from ..ir import Buffer
from ..scheduler import INNER, OUTER, RED, FusedGroup, NodeLoops, node_loops
from ..sizes import ExprPrinter, canonical, hint, is_symbolic, max1
from .common import GeneratedKernels, KernelSpec, used_size_symbols


class TritonCodegenUnavailable(NotImplementedError):
    """Triton is not installed (the `framejit-inductor-lite[gpu]` extra)."""


TL_DTYPES = {
    torch.float32: "tl.float32",
    torch.float64: "tl.float64",
    torch.bfloat16: "tl.bfloat16",
    torch.float16: "tl.float16",
    torch.int64: "tl.int64",
    torch.int32: "tl.int32",
    torch.int16: "tl.int16",
    torch.int8: "tl.int8",
    torch.uint8: "tl.uint8",
    torch.bool: "tl.int1",
}
ROUND_BF16 = ".to(tl.bfloat16).to(tl.float32)"  # a bf16 value is a float32 rounded to bf16
FLOATS = {torch.float32, torch.float64, torch.bfloat16, torch.float16}

UNARY = {
    "abs": "tl.abs({0})",
    "neg": "(-{0})",
    "exp": "tl.exp({0})",
    "exp2": "tl.exp2({0})",
    "expm1": "libdevice.expm1({0})",
    "log": "tl.log({0})",
    "log2": "tl.log2({0})",
    "log10": "libdevice.log10({0})",
    "log1p": "libdevice.log1p({0})",
    "sqrt": "tl.sqrt_rn({0})",
    "rsqrt": "(1 / tl.sqrt_rn({0}))",
    "sin": "tl.sin({0})",
    "cos": "tl.cos({0})",
    "tan": "libdevice.tan({0})",
    "tanh": "libdevice.tanh({0})",
    "sinh": "libdevice.sinh({0})",
    "cosh": "libdevice.cosh({0})",
    "asin": "libdevice.asin({0})",
    "acos": "libdevice.acos({0})",
    "atan": "libdevice.atan({0})",
    "asinh": "libdevice.asinh({0})",
    "acosh": "libdevice.acosh({0})",
    "atanh": "libdevice.atanh({0})",
    "erf": "tl.erf({0})",
    "erfc": "libdevice.erfc({0})",
    "sigmoid": "fj_sigmoid({0})",
    "silu": "fj_silu({0})",
    "relu": "fj_relu({0})",
    "gelu_erf": "fj_gelu_erf({0})",
    "gelu_tanh": "fj_gelu_tanh({0})",
    "reciprocal": "(1 / {0})",
    "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})",
    "round": "libdevice.nearbyint({0})",
    "trunc": "libdevice.trunc({0})",
}


def unary(name: str, dtype: torch.dtype) -> str:
    if dtype != torch.float32:  # sqrt_rn (correctly rounded) is float32-only
        return UNARY[name].replace("tl.sqrt_rn(", "tl.sqrt(")
    return UNARY[name]


BINARY = {
    "add": "({0} + {1})",
    "sub": "({0} - {1})",
    "mul": "({0} * {1})",
    "truediv": "({0} / {1})",
    "maximum": "fj_maximum({0}, {1})",
    "minimum": "fj_minimum({0}, {1})",
    "clamp_min": "fj_clamp_min({0}, {1})",
    "clamp_max": "fj_clamp_max({0}, {1})",
    "atan2": "libdevice.atan2({0}, {1})",
    "fmod": "libdevice.fmod({0}, {1})",
    "remainder": "fj_remainder({0}, {1})",
    "pow": "libdevice.pow({0}, {1})",
    "bitwise_and": "({0} & {1})",
    "bitwise_or": "({0} | {1})",
    "bitwise_xor": "({0} ^ {1})",
}
PREDICATES = {
    "eq": "({0} == {1})",
    "ne": "({0} != {1})",
    "lt": "({0} < {1})",
    "le": "({0} <= {1})",
    "gt": "({0} > {1})",
    "ge": "({0} >= {1})",
    "logical_and": "({0} & {1})",
    "logical_or": "({0} | {1})",
    "logical_xor": "({0} != {1})",
    "logical_not": "({0} == 0)",
    "isnan": "({0} != {0})",
    "isinf": "(tl.abs({0}) == float('inf'))",
}

# Shared by every generated module: nan-exact helpers, as the C++ prelude has them.
PRELUDE = """import triton
import triton.language as tl

from framejit.inductor_lite.codegen.triton_math import fj_libdevice

libdevice = fj_libdevice()


@triton.jit
def fj_maximum(a, b):
    return tl.where((a != a) | (b != b), a + b, tl.where(a < b, b, a))


@triton.jit
def fj_minimum(a, b):
    return tl.where((a != a) | (b != b), a + b, tl.where(b < a, b, a))


@triton.jit
def fj_clamp_min(x, lo):
    return tl.where(x < lo, lo, x)


@triton.jit
def fj_clamp_max(x, hi):
    return tl.where(hi < x, hi, x)


@triton.jit
def fj_relu(x):
    return tl.where(x < 0, 0, x)


@triton.jit
def fj_sigmoid(x):
    return 1 / (1 + tl.exp(-x))


@triton.jit
def fj_silu(x):
    return x / (1 + tl.exp(-x))


@triton.jit
def fj_gelu_erf(x):
    return 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))


@triton.jit
def fj_gelu_tanh(x):
    return 0.5 * x * (1 + libdevice.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@triton.jit
def fj_remainder(a, b):
    m = libdevice.fmod(a, b)
    return tl.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)
"""


class TritonPrinter(ExprPrinter):
    """Index expressions as Triton (int32 or int64 tensors)."""

    def min_max(self, which: str, args: list[str]) -> str:
        return functools.reduce(lambda a, b: f"tl.{which}imum({a}, {b})", args)


texpr = TritonPrinter()


def literal(value: Any, dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "1" if value else "0"
    if dtype in FLOATS:
        value = float(value)
        if math.isnan(value) or math.isinf(value):
            return f"float('{value}')"
        return repr(value)
    value = int(value)
    return "(-9223372036854775807 - 1)" if value == -(2**63) else str(value)


def next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


Z = [sympy.Symbol(f"z{i}", integer=True, nonnegative=True) for i in range(8)]  # the r axis


@dataclass
class TValue:
    expr: str
    dtype: torch.dtype
    axes: frozenset[str]  # "x", "r": which tile axes the value varies along

    def __str__(self) -> str:
        return self.expr


@dataclass
class NodePlan:
    """How one node sits in the tile."""

    node: NodeLoops
    loop: Any  # LoopBody over x and z symbols
    rranges: tuple[int, ...]
    store_key: tuple[Any, ...]
    barrier: bool = False  # reads what this kernel wrote to memory: synchronize first


@dataclass
class Tiling:
    """Language-independent shape of a block kernel: x over the group's outer ranges, r over
    the widest node's inner or reduction elements."""

    outer: tuple[int, ...]
    nodes: list[NodeLoops]
    two_d: bool
    rnumel: int
    persistent: bool

    @property
    def xnumel(self) -> Any:
        return canonical(math.prod(self.outer))


def _transposed(node: NodeLoops, depth: int) -> bool:
    """Does a load walk memory along a slower dim than the last one?"""
    for _, expr in node.loads:
        coeffs = [expr.coeff(s) for s in OUTER[:depth]]
        if coeffs[-1] not in (0, 1) and 1 in coeffs[:-1]:
            return True
    return False


def tile(group: FusedGroup) -> Tiling:
    nodes = list(group.nodes)
    outer = group.outer
    flat = all(not n.inner_ranges and not n.is_reduction for n in nodes)
    if flat and len(outer) >= 2 and any(_transposed(n, len(outer)) for n in nodes):
        # rows x last dim, so transposed loads and the stores both walk a tile
        outer = outer[:-1]
        nodes = [node_loops(n.buffer, len(outer)) for n in nodes]
        flat = False
    widths = [canonical(math.prod(n.inner_ranges or n.reduction_ranges)) for n in nodes]
    rnumel = max(widths, key=hint, default=1)
    # a row of symbolic length may be longer than any block: loop over it
    persistent = not is_symbolic(widths) and next_pow2(rnumel) <= config.triton_persistent_max
    return Tiling(outer, nodes, not flat, rnumel, persistent)


class TritonKernelOps:
    """The ops handler writing Triton statements for one node of a kernel."""

    def __init__(self, kernel: TritonKernel, plan: NodePlan | None, lines: list[str]) -> None:
        self.kernel = kernel
        self.plan = plan
        self.lines = lines
        self.cse: dict[str, TValue] = {}

    def _temp(self, expr: str, dtype: torch.dtype, axes: frozenset[str]) -> TValue:
        # persistent kernels are straight-line code: a value computed for an earlier node
        # serves a later one with the same r layout; looped ones scope values to their loop
        cse, key = self.cse, expr
        if self.kernel.tiling.persistent:
            rsig = self.plan.rranges if self.plan is not None and "r" in axes else None
            cse, key = self.kernel.cse, (expr, rsig)
        known = cse.get(key)
        if known is not None:
            return known
        name = self.kernel.new_var()
        self.lines.append(f"{name} = {expr}")
        value = TValue(name, dtype, axes)
        cse[key] = value
        return value

    def _axes(self, *values: Any) -> frozenset[str]:
        axes: frozenset[str] = frozenset()
        for value in values:
            if isinstance(value, TValue):
                axes |= value.axes
        return axes

    def index_axes(self, index: sympy.Expr) -> frozenset[str]:
        axes: set[str] = set()
        for symbol in index.free_symbols:
            axes |= self.kernel.symbol_axes.get(symbol, {"x"})
        return frozenset(axes)

    def load(self, name: str, index: sympy.Expr) -> TValue:
        index = sympy.expand(index)
        local = self.kernel.locals.get(self.kernel.key(name, index, self.plan))
        if local is not None:
            return local
        axes = self.index_axes(index)
        pointer = self.kernel.pointer(name, write=False)
        mask = self.kernel.mask_for(axes)
        masked = f", {mask}, other=0" if mask else ""
        expr = f"tl.load({pointer} + {texpr(index)}{masked})"
        dtype = self.kernel.buffers[name].dtype
        if dtype == torch.bfloat16:
            expr = f"{expr}.to(tl.float32)"  # bf16 values are computed as float32, as in C++
        return self._temp(expr, dtype, axes)

    def constant(self, value: Any, dtype: torch.dtype) -> TValue:
        text = literal(value, dtype)
        if dtype == torch.bfloat16:  # held as float32, rounded to bf16
            return self._temp(f"tl.full([], {text}, tl.float32){ROUND_BF16}", dtype, frozenset())
        return self._temp(f"tl.full([], {text}, {TL_DTYPES[dtype]})", dtype, frozenset())

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> TValue:
        expr = sympy.expand(expr)
        axes = self.index_axes(expr)
        if not expr.free_symbols:
            return self.constant(int(expr), dtype)
        return self._temp(f"({texpr(expr)}).to({TL_DTYPES[dtype]})", dtype, axes)

    def to_dtype(self, value: TValue, dtype: torch.dtype) -> TValue:
        if value.dtype == dtype:
            return value
        if dtype == torch.bool:
            return self._temp(f"({value} != 0)", dtype, value.axes)
        if dtype == torch.bfloat16:
            return self._temp(f"{value}.to(tl.float32){ROUND_BF16}", dtype, value.axes)
        if value.dtype == torch.bfloat16 and dtype == torch.float32:
            return TValue(value.expr, dtype, value.axes)
        return self._temp(f"{value}.to({TL_DTYPES[dtype]})", dtype, value.axes)

    def where(self, cond: TValue, a: TValue, b: TValue) -> TValue:
        return self._temp(f"tl.where({cond}, {a}, {b})", a.dtype, self._axes(cond, a, b))

    def bitwise_not(self, a: TValue) -> TValue:
        expr = f"({a} == 0)" if a.dtype == torch.bool else f"(~{a})"
        return self._temp(expr, a.dtype, a.axes)

    def indirect_index(self, value: TValue, size: int, allow_negative: bool) -> sympy.Symbol:
        size = texpr(size)
        kernel = self.kernel
        name = kernel.new_var("ind")
        kernel.checks_bounds = True
        self.lines.append(f"{name} = {value}.to(tl.int64)")
        if allow_negative:
            self.lines.append(f"{name} = tl.where({name} < 0, {name} + {size}, {name})")
        bad = kernel.new_var("bad")
        mask = kernel.mask_for(value.axes | self.plan_axes())
        condition = f"({name} < 0) | ({name} >= {size})"
        self.lines.append(f"{bad} = ({condition})" + (f" & {mask}" if mask else ""))
        self.lines.append(f"tl.store(err_ptr + {bad}.to(tl.int32) * 0, 1, {bad})")
        self.lines.append(f"{name} = tl.where({bad}, 0, {name})")
        symbol = sympy.Symbol(name, integer=True)
        kernel.symbol_axes[symbol] = set(value.axes | self.plan_axes())
        return symbol

    def plan_axes(self) -> frozenset[str]:
        if self.plan is None or not self.plan.rranges:
            return frozenset({"x"})
        return frozenset({"x", "r"})

    def __getattr__(self, name: str) -> Callable[..., TValue]:
        if name in UNARY:
            return lambda a: self._temp(unary(name, a.dtype).format(a), a.dtype, a.axes)
        if name in BINARY:
            return lambda a, b: self._temp(BINARY[name].format(a, b), a.dtype, self._axes(a, b))
        if name in PREDICATES:
            return lambda *args: self._temp(
                PREDICATES[name].format(*args), torch.bool, self._axes(*args)
            )
        raise AttributeError(f"Triton codegen has no op {name!r}")


# Reductions go through tl.reduce with tl.standard's combine functions rather than tl.max
# and friends: those are @triton.jit functions, which Triton's interpreter cannot call when
# triton was imported before TRITON_INTERPRET was set; tl.reduce it patches, and it
# recognizes these combine functions (numpy fast paths).
COMBINE = {
    "sum": "_sum_combine",
    "prod": "_prod_combine",
    "max": "_elementwise_max",
    "min": "_elementwise_min",
    "any": "_elementwise_max",
    "all": "_elementwise_min",
}


def row_reduce(kind: str, value: str) -> str:
    """Reduce a [XBLOCK, RBLOCK] tile along r, keeping a [XBLOCK, 1] column."""
    return f"tl.reduce({value}, 1, tl.standard.{COMBINE[kind]})[:, None]"


REDUCE_IDENTITY = {"sum": "0", "prod": "1", "any": "0", "all": "1"}


def _extreme(dtype: torch.dtype, low: bool) -> str:
    if dtype in FLOATS:
        return "float('-inf')" if low else "float('inf')"
    info = torch.iinfo(dtype)
    return f"({info.min + 1} - 1)" if low else str(info.max)


@dataclass
class TritonKernel:
    """One fused group rendered as one Triton kernel."""

    group: FusedGroup
    buffers: dict[str, Buffer]
    params: dict[str, bool] = field(default_factory=dict)  # buffer name -> written
    locals: dict[tuple[Any, ...], TValue] = field(default_factory=dict)
    symbol_axes: dict[sympy.Symbol, set[str]] = field(default_factory=dict)
    cse: dict[tuple[Any, ...], TValue] = field(default_factory=dict)  # persistent kernels
    _header: tuple[int, ...] | None = None  # r layout the persistent code is in now
    checks_bounds: bool = False
    _counter: int = 0

    def __post_init__(self) -> None:
        self.tiling = tile(self.group)
        for symbol in OUTER:
            self.symbol_axes[symbol] = {"x"}
        for symbol in Z:
            self.symbol_axes[symbol] = {"r"}

    def new_var(self, prefix: str = "tmp") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def pointer(self, name: str, write: bool) -> str:
        self.params[name] = self.params.get(name, False) or write
        return f"p_{name}"

    def mask_for(self, axes: frozenset[str] | set[str]) -> str:
        if not self.tiling.two_d:
            return "xmask" if "x" in axes else ""
        if "r" in axes:
            return "xmask & rmask" if "x" in axes else "rmask"
        return "xmask" if "x" in axes else ""

    def key(self, name: str, index: sympy.Expr, plan: NodePlan | None) -> tuple[Any, ...]:
        along_r = bool(index.free_symbols & set(Z))
        return (name, index, plan.rranges if along_r and plan is not None else None)

    # ------------------------------------------------------------------ planning

    def plan(self) -> tuple[list[NodePlan], set[str]]:
        """Each node over x and z symbols, and which group buffers must be in memory
        (read where the reader cannot take the producer's registers)."""
        plans: list[NodePlan] = []
        available: dict[tuple[Any, ...], str] = {}
        written: set[str] = set()
        memory: set[str] = set(self.group.stored)
        members = {n.buffer.name for n in self.tiling.nodes}
        for node in self.tiling.nodes:
            rsymbols = INNER if node.inner_ranges else RED
            rranges = node.inner_ranges or node.reduction_ranges
            mapping = {rsymbols[i]: Z[i] for i in range(len(rranges))}
            loop = node.loop.substitute(mapping)
            store = sympy.expand(node.store_index.xreplace(mapping))
            plan = NodePlan(node, loop, tuple(rranges), ())
            for name, expr in loop.loads():
                if name not in members:
                    continue
                key = self.key(name, expr, plan)
                hit = key in available and (self.tiling.persistent or key[2] is None)
                if not hit:
                    memory.add(name)
                    plan.barrier = plan.barrier or name in written
            plan.store_key = self.key(node.buffer.name, store, plan)
            available[plan.store_key] = node.buffer.name
            written.add(node.buffer.name)
            plans.append(plan)
        return plans, memory

    # ------------------------------------------------------------------ rendering

    def render(self) -> tuple[str, KernelSpec, dict[str, Any]]:
        tiling = self.tiling
        plans, memory = self.plan()
        self.memory = memory
        body: list[str] = []
        # symbolic sizes may be large: index in int64 (static ones only when they are)
        large = any(is_symbolic(b.numel) or b.numel >= 2**31 for b in self.buffers.values())
        pid = "tl.program_id(0).to(tl.int64)" if large else "tl.program_id(0)"
        xnumel = texpr(tiling.xnumel)
        if tiling.two_d:
            body.append(f"xindex = {pid} * XBLOCK + tl.arange(0, XBLOCK)[:, None]")
            body.append(f"xmask = xindex < {xnumel}")
            body.append("rbase = tl.arange(0, RBLOCK)[None, :]")
        else:
            body.append(f"xindex = {pid} * XBLOCK + tl.arange(0, XBLOCK)")
            body.append(f"xmask = xindex < {xnumel}")
        body.extend(_decompose("x", "xindex", tiling.outer))
        for plan in plans:
            if plan.barrier:
                body.append("tl.debug_barrier()")
            if plan.node.is_reduction:
                self._reduction(plan, body)
            else:
                self._pointwise(plan, body)
        name = self.group.name
        params = [f"p_{n}" for n in self.params]
        # the size symbols the body reads are arguments, never specialized: one kernel
        # (and one Triton compile) serves every size
        sizes = used_size_symbols("\n".join(body))
        params.extend(sizes)
        if self.checks_bounds:
            params.append("err_ptr")
        params.append("XBLOCK: tl.constexpr")
        if tiling.two_d:
            params.append("RBLOCK: tl.constexpr")
        decorator = f"@triton.jit(do_not_specialize={sizes!r})" if sizes else "@triton.jit"
        lines = [decorator, f"def {name}({', '.join(params)}):"]
        lines.extend("    " + line for line in body)
        scratch = [n for n in self.params if n in memory and n not in self.group.stored]
        spec = KernelSpec(name, list(self.params), self.checks_bounds, sizes, scratch=scratch)
        meta = {
            "two_d": tiling.two_d,
            "xnumel": tiling.xnumel,  # the wrapper's grid: an expression over the sizes
            "hint_xnumel": hint(tiling.xnumel),  # the launch heuristic: the example's
            "rnumel": hint(tiling.rnumel) if tiling.two_d else 0,
            "persistent": tiling.persistent,
            "reduction": any(n.is_reduction for n in tiling.nodes),
        }
        return "\n".join(lines), spec, meta

    def _r_header(self, plan: NodePlan, out: list[str], looped: bool) -> list[str]:
        """Opens the r loop of a node (or its persistent block); returns the body's list."""
        target = out
        # 1 for a reduction over no dims (a 0-dim input)
        rnumel = texpr(canonical(math.prod(plan.rranges)))
        if looped:
            out.append(f"for roffset in range(0, {rnumel}, RBLOCK):")
            target = []
            target.append("rindex = roffset + rbase")
        else:
            if self._header == plan.rranges:
                return target
            self._header = plan.rranges
            target.append("rindex = rbase")
        target.append(f"rmask = rindex < {rnumel}")
        target.extend(_decompose("z", "rindex", plan.rranges))
        return target

    def _node_axes(self, plan: NodePlan) -> frozenset[str]:
        return frozenset({"x", "r"}) if plan.rranges else frozenset({"x"})

    def _store(self, plan: NodePlan, value: TValue, lines: list[str], handler: Any) -> None:
        buffer = plan.node.buffer
        value = handler.to_dtype(value, buffer.dtype)
        self.locals[plan.store_key] = value
        if buffer.name in self.memory:
            index = plan.store_key[1]
            axes = self._node_axes(plan) if self.tiling.two_d else frozenset({"x"})
            offset = texpr(index)
            have = handler.index_axes(index)
            for axis, var in (("x", "xindex"), ("r", "rindex")):
                if axis in axes and axis not in have:
                    offset = f"{offset} + 0 * {var}"  # a full-shape pointer for the mask
            pointer = self.pointer(buffer.name, write=True)
            lines.append(f"tl.store({pointer} + {offset}, {value}, {self.mask_for(axes)})")

    def _pointwise(self, plan: NodePlan, out: list[str]) -> None:
        looped = bool(plan.rranges) and not self.tiling.persistent
        lines = self._r_header(plan, out, looped) if plan.rranges else out
        handler = TritonKernelOps(self, plan, lines)
        value = plan.loop.run(handler)
        self._store(plan, value, lines, handler)
        if looped:
            out.extend("    " + line for line in lines)
            self._forget_r()

    def _forget_r(self) -> None:
        self.locals = {k: v for k, v in self.locals.items() if "r" not in v.axes}

    def _reduction(self, plan: NodePlan, out: list[str]) -> None:
        body = plan.node.buffer.body
        kind = body.reduction_type
        vdtype = body.value_dtype
        looped = not self.tiling.persistent
        if kind == "sum":
            acc_dtype = vdtype if vdtype in FLOATS else torch.int64
            if vdtype == torch.bfloat16:
                acc_dtype = torch.float32
        elif kind in ("any", "all"):
            acc_dtype = torch.int32
        else:
            acc_dtype = vdtype
        tacc = TL_DTYPES[acc_dtype]
        acc = self.new_var("acc")
        nan = self.new_var("nan")
        idx = self.new_var("idx")
        is_float = vdtype in FLOATS
        arg = kind in ("argmax", "argmin")
        identity = {
            "max": _extreme(acc_dtype, True),
            "min": _extreme(acc_dtype, False),
            "argmax": _extreme(acc_dtype, True),
            "argmin": _extreme(acc_dtype, False),
        }.get(kind) or REDUCE_IDENTITY[kind]
        big = str(2**31 - 1)
        if looped and arg:
            out.append(f"{acc} = tl.full([XBLOCK, 1], {identity}, {tacc})")
            out.append(f"{idx} = tl.full([XBLOCK, 1], {big}, tl.int32)")
            out.append(f"{nan} = tl.full([XBLOCK, 1], 0, tl.int32)")
        elif looped:
            out.append(f"{acc} = tl.full([XBLOCK, RBLOCK], {identity}, {tacc})")
            if kind in ("max", "min") and is_float:
                out.append(f"{nan} = tl.full([XBLOCK, RBLOCK], 0, tl.int32)")
        lines = self._r_header(plan, out, looped)
        handler = TritonKernelOps(self, plan, lines)
        value = handler.to_dtype(plan.loop.run(handler), vdtype)
        if kind in ("any", "all"):
            value = TValue(f"({value} != 0).to(tl.int32)", acc_dtype, value.axes)
        elif value.dtype != acc_dtype:
            value = TValue(f"{value}.to({tacc})", acc_dtype, value.axes)
        mask = "xmask & rmask"
        masked = self.new_var("v")
        lines.append(f"{masked} = tl.where({mask}, {value}, {identity})")
        combine = {
            "sum": "{a} + {v}",
            "prod": "{a} * {v}",
            "max": "tl.maximum({a}, {v})",
            "min": "tl.minimum({a}, {v})",
            "any": "tl.maximum({a}, {v})",
            "all": "tl.minimum({a}, {v})",
        }
        track_nan = kind in ("max", "min") and is_float
        result = self.new_var("red")
        if arg:
            best = "max" if kind == "argmax" else "min"
            isn = f"({mask}) & ({masked} != {masked})" if is_float else "(rindex < 0)"
            cm, cn, ci = self.new_var("cm"), self.new_var("cn"), self.new_var("ci")
            lines.append(f"{cm} = {row_reduce(best, masked)}")
            lines.append(f"{cn} = {row_reduce('max', f'({isn}).to(tl.int32)')}")
            hit = f"tl.where({cn} != 0, {isn}, ({mask}) & ({masked} == {cm}))"
            lines.append(f"{ci} = {row_reduce('min', f'tl.where({hit}, rindex, {big})')}")
            if looped:
                op = ">" if kind == "argmax" else "<"
                better = self.new_var("better")
                lines.append(
                    f"{better} = ({ci} < {big}) & (({idx} == {big}) | (({cn} != 0) & ({nan} == 0))"
                    f" | (({nan} == 0) & ({cn} == 0) & ({cm} {op} {acc})))"
                )
                lines.append(f"{acc} = tl.where({better}, {cm}, {acc})")
                lines.append(f"{idx} = tl.where({better}, {ci}, {idx})")
                lines.append(f"{nan} = tl.maximum({nan}, {cn})")
                out.extend("    " + line for line in lines)
                out.append(f"{result} = {idx}.to(tl.int64)")
            else:
                lines.append(f"{result} = {ci}.to(tl.int64)")
            reduced = TValue(result, torch.int64, frozenset({"x"}))
        else:
            if looped:
                lines.append(f"{acc} = {combine[kind].format(a=acc, v=masked)}")
                if track_nan:
                    lines.append(
                        f"{nan} = tl.maximum({nan}, (({mask}) & ({masked} != {masked})).to(tl.int32))"
                    )
                out.extend("    " + line for line in lines)
                target, source = out, acc
            else:
                target, source = lines, masked
                if track_nan:
                    target.append(
                        f"{nan} = {row_reduce('max', f'(({mask}) & ({masked} != {masked})).to(tl.int32)')}"
                    )
            target.append(f"{result} = {row_reduce(kind, source)}")
            if track_nan:
                if looped:
                    target.append(f"{nan} = {row_reduce('max', nan)}")
                target.append(f"{result} = tl.where({nan} != 0, float('nan'), {result})")
            if kind in ("any", "all"):
                target.append(f"{result} = {result} != 0")
                reduced = TValue(result, torch.bool, frozenset({"x"}))
            else:
                reduced = TValue(result, acc_dtype, frozenset({"x"}))
        if looped:
            self._forget_r()
        # the reduced value is per row: store it outside the r loop, with the x mask
        row_plan = NodePlan(plan.node, plan.loop, (), plan.store_key)
        self._store(row_plan, reduced, out, TritonKernelOps(self, row_plan, out))


def _decompose(prefix: str, flat: str, ranges: tuple[int, ...]) -> list[str]:
    """Symbols of each dim (slowest first) from a flat index."""
    lines = []
    for position, size in enumerate(ranges):
        stride = canonical(math.prod(max1(n) for n in ranges[position + 1 :]))
        expr = flat if stride == 1 else f"({flat} // {texpr(stride)})"
        if position > 0:
            expr = f"{expr} % {texpr(size)}"
        lines.append(f"{prefix}{position} = {expr}")
    return lines


class TritonCodegen:
    name = "triton"
    column_reductions = False
    in_place = False

    def __init__(self) -> None:
        try:
            import triton  # noqa: F401
        except ImportError as error:
            raise TritonCodegenUnavailable(
                "inductor-lite: codegen='triton' needs Triton; install framejit-inductor-lite[gpu]"
            ) from error

    def _kernels(self, groups: list[FusedGroup], buffers: dict[str, Buffer]):
        for group in groups:
            yield TritonKernel(group, buffers).render()

    def generate(self, groups: list[FusedGroup], buffers: dict[str, Buffer]) -> GeneratedKernels:
        generated = GeneratedKernels("triton", "")
        parts = [PRELUDE]
        for source, spec, meta in self._kernels(groups, buffers):
            parts.append(source)
            spec.launch = meta
            generated.kernels[spec.name] = spec
        generated.source = "\n\n\n".join(parts) + "\n"
        return generated

    def render(self, groups: list[FusedGroup], buffers: dict[str, Buffer]) -> str:
        return "\n\n\n".join(source for source, _, _ in self._kernels(groups, buffers)) + "\n"

    def load(self, generated: GeneratedKernels) -> Future[dict[str, Callable[..., int]]]:
        from .triton_runtime import load_async

        return load_async(generated, generated.device)
