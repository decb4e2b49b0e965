"""C++ code generation for CPU: one function per fused group, OpenMP over the outer loop,
inner loops the compiler vectorizes, all kernels of a graph in one shared object."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import sympy
import torch

from ..config import config
from ..ir import Buffer
from ..scheduler import INNER, LOCAL_BLOCK_LIMIT, OUTER, FusedGroup, NodeLoops, outer_part
from ..sizes import ExprPrinter, canonical, hint_prod, is_symbolic
from .common import GeneratedKernels, KernelSpec, used_size_symbols
from .cpp_prelude import PRELUDE

C_TYPES = {
    torch.float32: "float",
    torch.float64: "double",
    torch.bfloat16: "float",  # reduced floats: computed as float, stored as uint16_t bits
    torch.float16: "float",
    torch.int64: "int64_t",
    torch.int32: "int32_t",
    torch.int16: "int16_t",
    torch.int8: "int8_t",
    torch.uint8: "uint8_t",
    torch.bool: "bool",
}
STORAGE_TYPES = {**C_TYPES, torch.bfloat16: "uint16_t", torch.float16: "uint16_t"}
FLOATS = {torch.float32, torch.float64, torch.bfloat16, torch.float16}


@dataclass(frozen=True)
class ReducedFloat:
    """How a reduced float is loaded, stored and rounded (helpers in cpp_prelude)."""

    load: str
    store: str
    round: str


REDUCED = {
    torch.bfloat16: ReducedFloat("fj_bf16_to_float", "fj_float_to_bf16", "fj_round_bf16"),
    torch.float16: ReducedFloat("fj_half_to_float", "fj_float_to_half", "fj_round_half"),
}

UNARY = {
    "abs": "fj_abs({0})",
    "neg": "(-{0})",
    "exp": "fj_exp({0})",
    "exp2": "fj_exp2({0})",
    "expm1": "fj_expm1({0})",
    "log": "fj_log({0})",
    "log2": "fj_log2({0})",
    "log10": "fj_log10({0})",
    "log1p": "fj_log1p({0})",
    "sqrt": "fj_sqrt({0})",
    "rsqrt": "(1 / fj_sqrt({0}))",
    "sin": "fj_sin({0})",
    "cos": "fj_cos({0})",
    "tan": "fj_tan({0})",
    "tanh": "fj_tanh({0})",
    "sinh": "fj_sinh({0})",
    "cosh": "fj_cosh({0})",
    "asin": "fj_asin({0})",
    "acos": "fj_acos({0})",
    "atan": "fj_atan({0})",
    "asinh": "fj_asinh({0})",
    "acosh": "fj_acosh({0})",
    "atanh": "fj_atanh({0})",
    "erf": "fj_erf({0})",
    "erfc": "fj_erfc({0})",
    "sigmoid": "fj_sigmoid({0})",
    "silu": "fj_silu({0})",
    "relu": "fj_relu({0})",
    "gelu_erf": "fj_gelu_erf({0})",
    "gelu_tanh": "fj_gelu_tanh({0})",
    "reciprocal": "(1 / {0})",
    "floor": "fj_floor({0})",
    "ceil": "fj_ceil({0})",
    "round": "fj_nearbyint({0})",
    "trunc": "fj_trunc({0})",
}
BINARY = {
    "add": "({0} + {1})",
    "sub": "({0} - {1})",
    "mul": "({0} * {1})",
    "truediv": "({0} / {1})",
    "maximum": "fj_maximum({0}, {1})",
    "minimum": "fj_minimum({0}, {1})",
    "clamp_min": "fj_clamp_min({0}, {1})",
    "clamp_max": "fj_clamp_max({0}, {1})",
    "atan2": "fj_atan2({0}, {1})",
    "fmod": "fj_fmod({0}, {1})",
    "remainder": "fj_remainder({0}, {1})",
    "pow": "fj_pow({0}, {1})",
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
    "logical_and": "({0} && {1})",
    "logical_or": "({0} || {1})",
    "logical_xor": "({0} != {1})",
    "logical_not": "(!{0})",
    "isnan": "({0} != {0})",
    "isinf": "fj_isinf({0})",
}
SUM_BLOCK = 4096
COLUMN_FLUSH = 256  # rows a column kernel adds into its float partials before flushing
OMP_REDUCE = {"sum": "+", "prod": "*", "max": "max", "min": "min", "any": "|", "all": "&"}


class CppPrinter(ExprPrinter):
    """Index expressions as int64 C++."""

    def integer(self, value: int) -> str:
        return f"{value}LL" if abs(value) > 2**31 - 1 else str(value)

    def min_max(self, which: str, args: list[str]) -> str:
        return functools.reduce(lambda a, b: f"fj_{which}<int64_t>({a}, {b})", args)


cexpr = CppPrinter()


def literal(value: Any, dtype: torch.dtype) -> str:
    ctype = C_TYPES[dtype]
    if dtype == torch.bool:
        return "true" if value else "false"
    if dtype in FLOATS:
        value = float(value)
        if math.isnan(value):
            return f"std::numeric_limits<{ctype}>::quiet_NaN()"
        if math.isinf(value):
            sign = "-" if value < 0 else ""
            return f"{sign}std::numeric_limits<{ctype}>::infinity()"
        text = f"static_cast<{ctype}>({value.hex()})"
        return f"{REDUCED[dtype].round}({text})" if dtype in REDUCED else text
    value = int(value)
    if value == -(2**63):
        return f"static_cast<{ctype}>(-9223372036854775807LL - 1)"
    return f"static_cast<{ctype}>({value}LL)"


@dataclass
class CppValue:
    expr: str
    dtype: torch.dtype

    def __str__(self) -> str:
        return self.expr


class CppKernelOps:
    """The ops handler that writes C++ statements for one loop body."""

    def __init__(self, kernel: CppKernel, lines: list[str]) -> None:
        self.kernel = kernel
        self.lines = lines
        self.cse: dict[str, CppValue] = {}

    def _temp(self, expr: str, dtype: torch.dtype) -> CppValue:
        known = self.cse.get(expr)
        if known is not None and known.dtype == dtype:
            return known
        name = self.kernel.new_var()
        self.lines.append(f"const {C_TYPES[dtype]} {name} = {expr};")
        value = CppValue(name, dtype)
        self.cse[expr] = value
        return value

    def load(self, name: str, index: sympy.Expr) -> CppValue:
        index = sympy.expand(index)
        local = self.kernel.locals.get((name, index))
        if local is not None:
            return local
        buffer = self.kernel.buffers[name]
        pointer, index = self.kernel.address(name, index, write=False)
        expr = f"{pointer}[{cexpr(index)}]"
        if buffer.dtype in REDUCED:
            expr = f"{REDUCED[buffer.dtype].load}({expr})"
        return self._temp(expr, buffer.dtype)

    def constant(self, value: Any, dtype: torch.dtype) -> CppValue:
        return CppValue(literal(value, dtype), dtype)

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> CppValue:
        return self._temp(f"static_cast<{C_TYPES[dtype]}>({cexpr(expr)})", dtype)

    def to_dtype(self, value: CppValue, dtype: torch.dtype) -> CppValue:
        if value.dtype == dtype:
            return value
        if dtype in REDUCED:
            return self._temp(f"{REDUCED[dtype].round}(static_cast<float>({value}))", dtype)
        if value.dtype in REDUCED and dtype == torch.float32:
            return CppValue(value.expr, dtype)
        if dtype == torch.bool:
            return self._temp(f"({value} != 0)", dtype)
        if value.dtype in FLOATS and dtype not in FLOATS:
            return self._temp(f"fj_float_to_int<{C_TYPES[dtype]}>({value})", dtype)
        return self._temp(f"static_cast<{C_TYPES[dtype]}>({value})", dtype)

    def where(self, cond: CppValue, a: CppValue, b: CppValue) -> CppValue:
        return self._temp(f"({cond} ? {a} : {b})", a.dtype)

    def bitwise_not(self, a: CppValue) -> CppValue:
        return self._temp(f"(!{a})" if a.dtype == torch.bool else f"(~{a})", a.dtype)

    def indirect_index(self, value: CppValue, size: int, allow_negative: bool) -> sympy.Symbol:
        name = self.kernel.new_var("ind")
        size = cexpr(size)
        self.kernel.checks_bounds = True
        self.lines.append(f"int64_t {name} = static_cast<int64_t>({value});")
        if allow_negative:
            self.lines.append(f"if ({name} < 0) {name} += {size};")
        self.lines.append(
            f"if (__builtin_expect({name} < 0 || {name} >= {size}, 0)) {{ fj_flag(err); {name} = 0; }}"
        )
        return sympy.Symbol(name, integer=True)

    def __getattr__(self, name: str) -> Callable[..., CppValue]:
        if name in UNARY:
            return lambda a: self._temp(UNARY[name].format(a), a.dtype)
        if name in BINARY:
            return lambda a, b: self._temp(BINARY[name].format(a, b), a.dtype)
        if name in PREDICATES:
            return lambda *args: self._temp(PREDICATES[name].format(*args), torch.bool)
        raise AttributeError(f"C++ codegen has no op {name!r}")


class CppKernel:
    """One fused group rendered as one C++ function."""

    def __init__(self, group: FusedGroup, buffers: dict[str, Buffer]) -> None:
        self.group = group
        self.buffers = buffers
        self.params: dict[str, bool] = {}  # buffer name -> written
        self.locals: dict[tuple[str, sympy.Expr], CppValue] = {}
        self.checks_bounds = False
        self._counter = 0
        self._in_place = {donor: receiver for receiver, donor in group.in_place.items()}

    def new_var(self, prefix: str = "t") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def pointer(self, name: str, write: bool) -> str:
        # an extern result whose memory a stored buffer takes (in place) is read through
        # that buffer's pointer: one restrict pointer for the shared memory
        name = self._in_place.get(name, name)
        self.params[name] = self.params.get(name, False) or write
        return f"p_{name}"

    def address(self, name: str, index: sympy.Expr, write: bool) -> tuple[str, sympy.Expr]:
        """Pointer and index: a global buffer, or the block-local array of this outer index."""
        if name in self.group.block_local:
            _, inner = outer_part(index, OUTER[: len(self.group.outer)])
            return f"l_{name}", inner
        return self.pointer(name, write), index

    # ------------------------------------------------------------------ rendering

    def render(self) -> tuple[str, KernelSpec]:
        body = self._column_body() if self.group.columns is not None else self._row_body()
        return self._function(body)

    def _row_body(self) -> list[str]:
        group = self.group
        body: list[str] = []
        parallel_outer = group.work() >= config.parallel_min_work and hint_prod(group.outer) >= 16
        # symbolic sizes: whether to run threads is decided per call (OpenMP's if clause)
        outer_if = _runtime_parallel_condition(group)
        if outer_if:
            parallel_outer = True
        pure_pointwise = all(not n.inner_ranges and not n.is_reduction for n in group.nodes)
        outer_loops = list(zip(OUTER, group.outer, strict=False))
        depth = len(outer_loops)
        inner_body: list[str] = []
        for node in group.nodes:
            if node.buffer.name in group.block_local:
                ctype = STORAGE_TYPES[node.buffer.dtype]
                block = canonical(math.prod(node.inner_ranges))
                name = node.buffer.name
                if is_symbolic(block):
                    # rows up to LOCAL_BLOCK_LIMIT in a stack array (as for static sizes),
                    # longer ones in a growing per-thread array reused by every row
                    inner_body.append(f"alignas(64) {ctype} s_{name}[{LOCAL_BLOCK_LIMIT}];")
                    inner_body.append(f"{ctype}* __restrict__ l_{name} = s_{name};")
                    inner_body.append(f"if ({cexpr(block)} > {LOCAL_BLOCK_LIMIT}) {{")
                    inner_body.append(f"  static thread_local fj_vec<{ctype}> v_{name};")
                    inner_body.append(f"  v_{name}.resize({cexpr(block)});")
                    inner_body.append(f"  l_{name} = v_{name}.data();")
                    inner_body.append("}")
                else:
                    inner_body.append(f"alignas(64) {ctype} l_{name}[{block}];")
        for nest in group.nests:
            if nest[0].is_reduction:
                # symbolic: rows run threads only without an outer loop (a parallel region
                # per row would cost more than it gains); the outer loop's are per call
                inner = (not group.outer) if outer_if else not parallel_outer
                self._reduction(nest[0], inner_body, parallel=inner)
            else:
                self._pointwise_nest(nest, inner_body)
        for position, (symbol, size) in enumerate(outer_loops):
            if position == 0 and parallel_outer:
                if pure_pointwise and depth == 1:
                    body.append(f"#pragma omp parallel for simd{_if(outer_if)}")
                else:
                    collapse = depth - 1 if pure_pointwise else depth
                    body.append(
                        f"#pragma omp parallel for collapse({max(collapse, 1)}){_if(outer_if)}"
                    )
            elif pure_pointwise and position == depth - 1 and depth > 1:
                body.append("#pragma omp simd")
            body.append(f"for (int64_t {symbol} = 0; {symbol} < {cexpr(size)}; ++{symbol}) {{")
        body.extend(inner_body)
        body.extend("}" for _ in outer_loops)
        return body

    def _column_body(self) -> list[str]:
        """Sums over the leading dims: each thread runs a share of the rows, adding every
        row's values into float partials of the kept elements (flushed into double totals
        every COLUMN_FLUSH rows); the totals of the threads are added in thread order."""
        group = self.group
        kept = group.nodes[0].inner_ranges
        width = math.prod(kept)
        symbols = INNER[: len(kept)]
        flat = cexpr(sum((y * s for y, s in zip(symbols, _strides(kept), strict=True)), 0))
        sums = [n for n in group.nodes if n.is_reduction]
        parallel = group.work() >= config.parallel_min_work and math.prod(group.outer) >= 16
        out = ["int fj_nt = 1;", "#ifdef _OPENMP"]
        if parallel:
            out.append("fj_nt = omp_get_max_threads();")
        out.append("#endif")
        names = {}
        for node in sums:
            total, part = self.new_var("tot"), self.new_var("part")
            names[node.buffer.name] = (total, part, C_TYPES[node.buffer.body.value_dtype])
            out.append(
                f"fj_vec<double> {total}_v(static_cast<int64_t>(fj_nt) * {width}, 0.0); "
                f"double* __restrict__ {total} = {total}_v.data();"
            )
        out.append("#pragma omp parallel num_threads(fj_nt)")
        out.append("{")
        out.append("int fj_t = 0;")
        out.append("#ifdef _OPENMP")
        out.append("fj_t = omp_get_thread_num();")
        out.append("#endif")
        for _, part, ptype in names.values():
            out.append(
                f"fj_vec<{ptype}> {part}_v({width}, 0); {ptype}* __restrict__ {part} = {part}_v.data();"
            )
        out.append("int64_t fj_rows = 0;")
        flush = [f"for (int64_t fj_k = 0; fj_k < {width}; ++fj_k) {{"]
        for total, part, _ in names.values():
            flush.append(f"{total}[fj_t * {width} + fj_k] += {part}[fj_k]; {part}[fj_k] = 0;")
        flush.append("}")
        depth = len(group.outer)
        out.append(f"#pragma omp for collapse({max(depth, 1)}) schedule(static)")
        loops = list(zip(OUTER, group.outer, strict=False)) or [(sympy.Symbol("fj_row"), 1)]
        for symbol, size in loops:
            out.append(f"for (int64_t {symbol} = 0; {symbol} < {size}; ++{symbol}) {{")
        lines: list[str] = []
        handler = CppKernelOps(self, lines)
        saved = dict(self.locals)
        for node in group.nodes:
            value = node.loop.run(handler)
            if node.is_reduction:
                _, part, ptype = names[node.buffer.name]
                value = handler.to_dtype(value, node.buffer.body.value_dtype)
                lines.append(f"{part}[{flat}] += {value};")
            else:
                self._store(node, value, lines)
        self.locals = saved
        for position, (symbol, size) in enumerate(zip(symbols, kept, strict=True)):
            if position == len(kept) - 1:
                out.append("#pragma omp simd")
            out.append(f"for (int64_t {symbol} = 0; {symbol} < {size}; ++{symbol}) {{")
        out.extend(lines)
        out.extend("}" for _ in kept)
        out.append(f"if (++fj_rows == {COLUMN_FLUSH}) {{")
        out.extend(flush)
        out.append("fj_rows = 0;")
        out.append("}")
        out.extend("}" for _ in loops)
        out.extend(flush)
        out.append("}")
        lines = []
        for node in sums:
            total, _, _ = names[node.buffer.name]
            acc = self.new_var("acc")
            lines.append(f"double {acc} = 0;")
            lines.append(
                f"for (int fj_u = 0; fj_u < fj_nt; ++fj_u) {acc} += {total}[fj_u * {width} + {flat}];"
            )
            result = CppValue(acc, torch.float64)
            self._store(node, CppKernelOps(self, lines).to_dtype(result, node.buffer.dtype), lines)
        for symbol, size in zip(symbols, kept, strict=True):
            out.append(f"for (int64_t {symbol} = 0; {symbol} < {size}; ++{symbol}) {{")
        out.extend(lines)
        out.extend("}" for _ in kept)
        return out

    def _function(self, body: list[str]) -> tuple[str, KernelSpec]:
        group = self.group
        params = []
        for name, written in self.params.items():
            ctype = STORAGE_TYPES[self.buffers[name].dtype]
            const = "" if written else "const "
            params.append(f"{const}{ctype}* __restrict__ p_{name}")
        # the size symbols the body reads are arguments: one kernel serves every size
        size_args = used_size_symbols("\n".join(body))
        size_params = [f"const int64_t {s}" for s in size_args]
        name = group.name
        lines = [
            f"static void {name}_impl({', '.join([*params, *size_params, 'int* __restrict__ err'])}) {{"
        ]
        lines.extend("  " + line for line in body)
        lines.append("}")
        raw = ", ".join(
            [*(f"uintptr_t a{i}" for i in range(len(params))), *(f"int64_t {s}" for s in size_args)]
        )
        casts = ", ".join(
            [
                *(
                    f"reinterpret_cast<{'' if w else 'const '}{STORAGE_TYPES[self.buffers[n].dtype]}*>(a{i})"
                    for i, (n, w) in enumerate(self.params.items())
                ),
                *size_args,
            ]
        )
        lines.append(f'extern "C" int {name}({raw or "void"}) {{')
        lines.append("  int err = 0;")
        lines.append(f"  {name}_impl({casts + ', ' if casts else ''}&err);")
        lines.append("  return err;")
        lines.append("}")
        spec = KernelSpec(name, list(self.params), self.checks_bounds, sizes=size_args)
        return "\n".join(lines), spec

    def _store(self, node: NodeLoops, value: CppValue, lines: list[str]) -> None:
        buffer = node.buffer
        handler = CppKernelOps(self, lines)
        value = handler.to_dtype(value, buffer.dtype)
        self.locals[(buffer.name, node.store_index)] = value
        if buffer.name in self.group.stored or buffer.name in self.group.block_local:
            pointer, index = self.address(buffer.name, node.store_index, write=True)
            reduced = REDUCED.get(buffer.dtype)
            expr = f"{reduced.store}({value})" if reduced else str(value)
            lines.append(f"{pointer}[{cexpr(index)}] = {expr};")

    def _pointwise_nest(self, nest: list[NodeLoops], out: list[str]) -> None:
        ranges = nest[0].inner_ranges
        symbols = INNER[: len(ranges)]
        lines: list[str] = []
        handler = CppKernelOps(self, lines)
        saved = dict(self.locals)
        for node in nest:
            value = node.loop.run(handler)
            self._store(node, value, lines)
        self.locals = saved  # nest-local values die with the nest
        for position, (symbol, size) in enumerate(zip(symbols, ranges, strict=True)):
            if position == len(ranges) - 1:
                out.append("#pragma omp simd")
            out.append(f"for (int64_t {symbol} = 0; {symbol} < {cexpr(size)}; ++{symbol}) {{")
        out.extend(lines)
        out.extend("}" for _ in ranges)

    def _reduction(self, node: NodeLoops, out: list[str], parallel: bool) -> None:
        condition = ""  # symbolic sizes: when the threads run, decided per call
        body = node.buffer.body
        kind = body.reduction_type
        value_dtype = body.value_dtype
        vtype = C_TYPES[value_dtype]
        acc = self.new_var("acc")
        nan = self.new_var("nan")
        is_float = value_dtype in FLOATS
        if kind == "sum":
            acc_dtype = torch.float64 if is_float else torch.int64
        elif kind in ("any", "all"):
            acc_dtype = torch.int32
        elif kind in ("argmax", "argmin"):
            acc_dtype = value_dtype
        else:
            acc_dtype = value_dtype
        atype = C_TYPES[acc_dtype]
        init = {
            "sum": "0",
            "prod": "1",
            "any": "0",
            "all": "1",
            "max": f"std::numeric_limits<{atype}>::lowest()"
            if not is_float
            else f"-std::numeric_limits<{atype}>::infinity()",
            "min": f"std::numeric_limits<{atype}>::max()"
            if not is_float
            else f"std::numeric_limits<{atype}>::infinity()",
            "argmax": "0",
            "argmin": "0",
        }[kind]
        out.append(f"{atype} {acc} = {init};")
        track_nan = kind in ("max", "min") and is_float
        if track_nan:
            out.append(f"int {nan} = 0;")
        best = self.new_var("idx")
        if kind in ("argmax", "argmin"):
            out.append(f"int64_t {best} = -1;")
        lines: list[str] = []
        handler = CppKernelOps(self, lines)
        value = node.loop.run(handler)
        value = handler.to_dtype(value, value_dtype)
        if kind == "sum":
            lines.append(f"{acc} += static_cast<{atype}>({value});")
        elif kind == "prod":
            lines.append(f"{acc} *= {value};")
        elif kind == "max":
            lines.append(f"{acc} = {value} > {acc} ? {value} : {acc};")
        elif kind == "min":
            lines.append(f"{acc} = {value} < {acc} ? {value} : {acc};")
        elif kind == "any":
            lines.append(f"{acc} |= static_cast<int>({value} != 0);")
        elif kind == "all":
            lines.append(f"{acc} &= static_cast<int>({value} != 0);")
        else:
            linear = cexpr(
                sum(
                    (
                        r * s
                        for r, s in zip(node.rindex, _strides(node.reduction_ranges), strict=True)
                    ),
                    sympy.Integer(0),
                )
            )
            better = "fj_arg_better_max" if kind == "argmax" else "fj_arg_better_min"
            lines.append(
                f"if ({best} < 0 || {better}<{vtype}>({value}, {acc})) {{ {acc} = {value}; {best} = {linear}; }}"
            )
        if track_nan:
            lines.append(f"{nan} |= static_cast<int>({value} != {value});")
        clauses = ""
        if kind in OMP_REDUCE:
            clauses = f"reduction({OMP_REDUCE[kind]}:{acc})"
            if track_nan:
                clauses += f" reduction(|:{nan})"
        ranges = node.reduction_ranges
        big = hint_prod(ranges) >= config.parallel_min_work
        if is_symbolic(ranges):
            big = True
            count = cexpr(canonical(math.prod(ranges)))
            condition = " && ".join(
                c for c in (condition, f"{count} >= {config.parallel_min_work}") if c
            )
        # float sums: a float partial per innermost run (vectorizes like eager's), at most
        # SUM_BLOCK long, added into a double total, which keeps long sums accurate
        blocked = kind == "sum" and value_dtype == torch.float32 and bool(ranges)
        if blocked:
            part = self.new_var("part")
            lines = [
                line.replace(f"{acc} += static_cast<double>(", f"{part} += (") for line in lines
            ]
        headers: list[tuple[str, str]] = []  # (pragma or "", loop header)
        for position, (symbol, size) in enumerate(zip(node.rindex, ranges, strict=True)):
            last = position == len(ranges) - 1
            pragma = ""
            if position == 0 and parallel and big and clauses and not (blocked and last):
                pragma = (
                    f"#pragma omp parallel for{' simd' if last else ''} {clauses}{_if(condition)}"
                )
            elif last and clauses:
                pragma = f"#pragma omp simd {clauses if not blocked else f'reduction(+:{part})'}"
            size = cexpr(size) if is_symbolic(size) else size
            header = f"for (int64_t {symbol} = 0; {symbol} < {size}; ++{symbol}) {{"
            if blocked and last:
                chunk = self.new_var("rc")
                if isinstance(size, str) or size > SUM_BLOCK:  # symbolic: may be long
                    outer_pragma = (
                        f"#pragma omp parallel for {clauses}{_if(condition)}"
                        if position == 0 and parallel and big
                        else ""
                    )
                    headers.append(
                        (
                            outer_pragma,
                            f"for (int64_t {chunk} = 0; {chunk} < {size}; {chunk} += {SUM_BLOCK}) {{",
                        )
                    )
                    header = f"for (int64_t {symbol} = {chunk}; {symbol} < fj_min<int64_t>({chunk} + {SUM_BLOCK}, {size}); ++{symbol}) {{"
                else:
                    headers.append(("", "{"))
                headers.append(("", f"float {part} = 0;"))
            headers.append((pragma, header))
        for pragma, header in headers:
            if pragma:
                out.append(pragma)
            out.append(header)
        out.extend(lines)
        if blocked:
            out.append("}")
            out.append(f"{acc} += {part};")
            out.append("}")
            out.extend("}" for _ in ranges[:-1])
        else:
            out.extend("}" for _ in ranges)
        if track_nan:
            out.append(f"if ({nan}) {acc} = std::numeric_limits<{atype}>::quiet_NaN();")
        if kind in ("argmax", "argmin"):
            result = CppValue(best, torch.int64)
        elif kind in ("any", "all"):
            result = CppValue(f"({acc} != 0)", torch.bool)
        else:
            result = CppValue(acc, acc_dtype)
        self._store(node, CppKernelOps(self, out).to_dtype(result, node.buffer.dtype), out)


def _if(condition: str) -> str:
    return f" if(parallel: {condition})" if condition else ""


def _runtime_parallel_condition(group: FusedGroup) -> str:
    """For a group over symbolic sizes, the C++ condition under which its outer loop runs
    threads (the static rule, evaluated per call); "" for static groups."""
    if not is_symbolic(group.outer) and not any(
        is_symbolic(n.inner_ranges) or is_symbolic(n.reduction_ranges) for n in group.nodes
    ):
        return ""
    widest = max(
        group.nodes, key=lambda n: hint_prod(n.inner_ranges) * hint_prod(n.reduction_ranges)
    )
    outer = canonical(math.prod(group.outer))
    work = canonical(outer * math.prod(widest.inner_ranges) * math.prod(widest.reduction_ranges))
    return f"{cexpr(work)} >= {config.parallel_min_work} && {cexpr(outer)} >= 16"


def _strides(ranges: tuple[int, ...]) -> list[int]:
    strides, running = [], 1
    for n in reversed(ranges):
        strides.append(running)
        running *= n
    return list(reversed(strides))


class CppCodegen:
    name = "cpp"
    column_reductions = True
    in_place = True

    def generate(self, groups: list[FusedGroup], buffers: dict[str, Buffer]) -> GeneratedKernels:
        from ..cpp_builder import mvec_available

        parts = [f"#define FJ_HAVE_MVEC {int(mvec_available())}", PRELUDE]
        generated = GeneratedKernels("cpp", "")
        for group in groups:
            source, spec = CppKernel(group, buffers).render()
            parts.append(source)
            generated.kernels[spec.name] = spec
        generated.source = "\n\n".join(parts)
        return generated

    def render(self, groups: list[FusedGroup], buffers: dict[str, Buffer]) -> str:
        """The kernels alone, without the prelude (which depends on the machine)."""
        return "\n\n".join(CppKernel(g, buffers).render()[0] for g in groups) + "\n"

    def load(self, generated: GeneratedKernels) -> Future[dict[str, Callable[..., int]]]:
        from ..cpp_builder import load_async

        return load_async(generated)
