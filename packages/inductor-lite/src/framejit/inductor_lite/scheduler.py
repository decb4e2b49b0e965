"""Scheduling and fusion: group computed buffers into kernels that share an outer loop.

A `FusedGroup` runs one parallel loop over its outer ranges; inside, each node runs its own
inner loop nest (pointwise) or reduction loop for that outer index.  A node joins the current
group when its ranges start with the group's outer ranges and every value it reads from the
group was produced for the same outer index (checked on the sympy load indices), so softmax
and layer_norm become one kernel and pointwise chains one loop.  Externs end a group.

A column group (`FusedGroup.columns`) is the other shape of kernel: sums over the leading
dims (bias and weight grads) with the pointwise nodes they read at the same element; the
reduced rows are the parallel outer loop, the kept dims the vectorized inner loop, and each
thread keeps partial sums that are added in thread order at the end (deterministic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

from .config import config
from .ir import Buffer, ComputedBuffer, ExternBuffer, ExternCall, ReductionBody, index_symbols
from .loop_body import LoopBody
from .sizes import (
    canonical,
    free_size_symbols,
    hint,
    hint_prod,
    is_symbolic,
    known_lt,
    known_nonneg,
)


@dataclass(eq=False)
class NodeLoops:
    """One computed buffer's loop variables inside its group."""

    buffer: ComputedBuffer
    index: list[sympy.Expr]  # the body's index, one entry per dim (0 for size-1 dims)
    inner_ranges: tuple[int, ...]  # pointwise dims inside the outer loop
    reduction_ranges: tuple[int, ...]
    rindex: list[sympy.Symbol]
    store_index: sympy.Expr
    loads: list[tuple[str, sympy.Expr]]
    op_count: int
    symbol_ranges: dict[sympy.Symbol, int]
    loop: LoopBody  # the buffer's body over this group's loop variables

    @property
    def is_reduction(self) -> bool:
        return isinstance(self.buffer.body, ReductionBody)


@dataclass(eq=False)
class FusedGroup:
    name: str
    outer: tuple[int, ...]
    nodes: list[NodeLoops] = field(default_factory=list)
    # buffers that must be written to memory (read outside the group or at another index)
    stored: set[str] = field(default_factory=set)
    # consecutive pointwise nodes sharing one inner loop nest (a reduction is a nest alone)
    nests: list[list[NodeLoops]] = field(default_factory=list)
    # buffers only this group reads, held per outer index in a small per-thread array
    block_local: set[str] = field(default_factory=set)
    # a column group: (reduced leading ranges, kept trailing ranges); None: a row group
    columns: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    # stored buffer -> the dead extern result whose memory it is written into (in_place)
    in_place: dict[str, str] = field(default_factory=dict)

    @property
    def buffer_names(self) -> set[str]:
        return {n.buffer.name for n in self.nodes}

    def work(self) -> int:
        """Elements computed, at the example sizes (a heuristic)."""
        per_outer = max(
            (hint_prod(n.inner_ranges) * hint_prod(n.reduction_ranges) for n in self.nodes),
            default=1,
        )
        return hint_prod(self.outer) * per_outer


Step = FusedGroup | ExternCall
LOCAL_BLOCK_LIMIT = 16384  # elements of a per-thread block-local array

OUTER = index_symbols("x", 8)
INNER = index_symbols("y", 8)
RED = index_symbols("r", 8)


def squeeze(size: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for n in size if n != 1)


def node_loops(buffer: ComputedBuffer, outer_len: int) -> NodeLoops:
    body = buffer.body
    index: list[sympy.Expr] = []
    inner: list[int] = []
    ranges: dict[sympy.Symbol, int] = {}
    position = 0
    for n in body.ranges:
        if n == 1:
            index.append(sympy.Integer(0))
            continue
        if position < outer_len:
            symbol = OUTER[position]
        else:
            symbol = INNER[position - outer_len]
            inner.append(n)
        ranges[symbol] = n
        index.append(symbol)
        position += 1
    reduction_ranges = tuple(body.reduction_ranges) if isinstance(body, ReductionBody) else ()
    rindex = RED[: len(reduction_ranges)]
    for symbol, n in zip(rindex, reduction_ranges, strict=True):
        ranges[symbol] = n
    # the body's variables renamed to this group's loop variables (reduction ones are shared)
    mapping = {
        old: new
        for old, new in zip(body.loop.index, index, strict=True)
        if old.is_Symbol and old != new
    }
    loop = body.loop.substitute(mapping)
    store = sum(
        (i * s for i, n, s in zip(index, buffer.size, buffer.stride, strict=True) if n != 1),
        sympy.Integer(0),
    )
    return NodeLoops(
        buffer, index, tuple(inner), reduction_ranges, list(rindex), sympy.expand(store),
        loop.loads(), loop.op_count, ranges, loop,
    )  # fmt: skip


def _linear_bounds(expr: sympy.Expr, ranges: dict[sympy.Symbol, Any]) -> tuple[Any, Any] | None:
    """Min and max of an expression linear in the loop variables over their ranges (size
    symbols may appear in coefficients and ranges), or None."""
    loop_symbols = sorted(expr.free_symbols & set(ranges), key=str)
    if free_size_symbols(expr) | set(loop_symbols) != expr.free_symbols:
        return None
    if not loop_symbols:
        return expr, expr
    try:
        poly = sympy.Poly(expr, *loop_symbols)
    except sympy.PolynomialError:
        return None
    if poly.total_degree() > 1:
        return None
    low = high = poly.coeff_monomial(1)
    for symbol in loop_symbols:
        coeff = poly.coeff_monomial(symbol)
        span = coeff * (ranges[symbol] - 1)
        if known_nonneg(coeff):
            high += span
        elif known_nonneg(-coeff):
            low += span
        else:
            return None
    return canonical(low), canonical(high)


def outer_part(expr: sympy.Expr, outer: list[sympy.Symbol]) -> tuple[list[sympy.Expr], sympy.Expr]:
    coeffs = [expr.coeff(symbol) for symbol in outer]
    rest = sympy.expand(
        expr - sum((c * s for c, s in zip(coeffs, outer, strict=True)), sympy.Integer(0))
    )
    return coeffs, rest


def same_outer_read(
    reader: NodeLoops, producer: NodeLoops, load: sympy.Expr, outer_len: int
) -> bool:
    """Does `load` (in reader) touch only what producer wrote for the same outer index?"""
    buffer = producer.buffer
    if not buffer.is_contiguous():
        return False
    outer = OUTER[:outer_len]
    load_coeffs, load_rest = outer_part(load, outer)
    store_coeffs, _ = outer_part(producer.store_index, outer)
    if load_coeffs != store_coeffs or load_rest.free_symbols & set(outer):
        return False
    block = canonical(math.prod(producer.inner_ranges))
    bounds = _linear_bounds(load_rest, reader.symbol_ranges)
    return bounds is not None and known_nonneg(bounds[0]) and known_lt(bounds[1], block)


def _fits(group: FusedGroup, buffer: ComputedBuffer) -> tuple[int, ...] | None:
    """The group's outer ranges if buffer joins it, or None."""
    shape = squeeze(buffer.body.ranges)
    reductions = [n for n in group.nodes if n.is_reduction]
    if isinstance(buffer.body, ReductionBody):
        candidate = shape
        if group.outer[: len(candidate)] != candidate or (reductions and candidate != group.outer):
            return None
    elif reductions:
        candidate = group.outer
        if shape[: len(candidate)] != candidate:
            return None
    else:
        common = 0
        while common < min(len(shape), len(group.outer)) and shape[common] == group.outer[common]:
            common += 1
        candidate = group.outer[:common]
    # (symbolic outer ranges count as many: the example size may be far below the sizes
    # the kernel serves, and a symbol's threads are decided per call)
    if not is_symbolic(candidate) and hint_prod(candidate) < 64:
        # few outer iterations: big pointwise work would run on one thread
        big_node = (
            not isinstance(buffer.body, ReductionBody)
            and hint(buffer.numel) >= config.parallel_min_work
        )
        shrinks = candidate != group.outer and group.work() >= config.parallel_min_work
        if big_node or shrinks:
            return None
    return candidate


def _legal(group: FusedGroup, loops: NodeLoops, outer: tuple[int, ...]) -> bool:
    members = {n.buffer.name: n for n in group.nodes}
    for name, expr in loops.loads:
        producer = members.get(name)
        if producer is not None and not same_outer_read(loops, producer, expr, len(outer)):
            return False
    return True


def _relayout(group: FusedGroup, outer: tuple[int, ...]) -> FusedGroup:
    regrouped = FusedGroup(group.name, outer)
    regrouped.nodes = [node_loops(n.buffer, len(outer)) for n in group.nodes]
    return regrouped


Split = tuple[tuple[int, ...], tuple[int, ...]]


def column_split(buffer: ComputedBuffer) -> Split | None:
    """(reduced leading ranges, kept trailing ranges) of a column reduction, else None."""
    body = buffer.body
    if not isinstance(body, ReductionBody) or not body.columns:
        return None
    return tuple(body.reduction_ranges), tuple(body.ranges[len(body.ranges) - body.columns :])


def _column_rows(prefix: tuple[int, ...], rows: tuple[int, ...]) -> list[sympy.Expr] | None:
    """The index of each dim of `prefix` (a node's leading, summed-over dims) over the outer
    loop variables of a column group whose rows are `rows`: the same dims, or all of them
    flattened into one (a bias grad sums a (b, t, w) value viewed as (b * t, w)); None else."""
    outer = iter(OUTER)
    variables = [sympy.Integer(0) if n == 1 else next(outer) for n in rows]
    if squeeze(prefix) == squeeze(rows):
        own = iter(v for v, n in zip(variables, rows, strict=True) if n != 1)
        return [sympy.Integer(0) if n == 1 else next(own) for n in prefix]
    if len(squeeze(prefix)) == 1 and math.prod(prefix) == math.prod(rows):
        flat = sum(
            (v * s for v, s in zip(variables, _contiguous(rows), strict=True)), sympy.Integer(0)
        )
        return [sympy.Integer(0) if n == 1 else flat for n in prefix]
    return None


def _contiguous(size: tuple[int, ...]) -> list[int]:
    strides, running = [], 1
    for n in reversed(size):
        strides.append(running)
        running *= n
    return strides[::-1]


def column_loops(buffer: ComputedBuffer, split: Split) -> NodeLoops | None:
    """A node of a column group: the reduced (leading) dims are the outer loop variables,
    the kept ones the inner; a column reduction reads its rows at the outer variables.
    None when the node's shape does not split that way."""
    body = buffer.body
    prefix, kept = split
    own_split = column_split(buffer)
    if own_split is not None:
        own_prefix, own_kept = own_split
    elif isinstance(body, ReductionBody) or len(body.ranges) < len(kept):
        return None
    else:
        cut = len(body.ranges) - len(kept)
        own_prefix, own_kept = tuple(body.ranges[:cut]), tuple(body.ranges[cut:])
    rows = _column_rows(own_prefix, prefix)
    if own_kept != kept or rows is None:
        return None
    inner = iter(INNER)
    columns = [sympy.Integer(0) if n == 1 else next(inner) for n in kept]
    mapping: dict[sympy.Symbol, sympy.Expr] = {}
    if own_split is not None:
        index = [sympy.Integer(0)] * (len(body.ranges) - len(kept)) + columns
        mapping.update(zip(body.loop.rindex, rows, strict=True))
    else:
        index = rows + columns
    mapping.update(
        (old, new) for old, new in zip(body.loop.index, index, strict=True) if old.is_Symbol
    )
    loop = body.loop.substitute({k: v for k, v in mapping.items() if k != v})
    outer = iter(OUTER)
    ranges = {next(outer): n for n in prefix if n != 1}
    ranges.update((c, n) for c, n in zip(columns, kept, strict=True) if n != 1)
    store = sum(
        (i * st for i, n, st in zip(index, buffer.size, buffer.stride, strict=True) if n != 1),
        sympy.Integer(0),
    )
    return NodeLoops(
        buffer, index, squeeze(kept), (), [], sympy.expand(store), loop.loads(), loop.op_count,
        ranges, loop,
    )  # fmt: skip


def _column_member(group: FusedGroup, buffer: ComputedBuffer) -> NodeLoops | None:
    """buffer's loops in column group `group` if it may join: a pointwise node over the
    group's whole shape or a column reduction of the same split (its rows may be the
    group's flattened), reading members only at the element they computed (never a member
    reduction: its sum is done after the loop)."""
    split = group.columns
    assert split is not None
    loops = column_loops(buffer, split)
    if loops is None:
        return None
    members = {n.buffer.name: n for n in group.nodes}
    for name, expr in loops.loads:
        producer = members.get(name)
        if producer is not None and (
            producer.is_reduction or sympy.expand(expr - producer.store_index) != 0
        ):
            return None
    return loops


def _as_columns(group: FusedGroup, split: Split) -> FusedGroup | None:
    """A row group of pointwise nodes as a column group for split: over split's rows, or
    over the group's own leading dims when split's rows are those flattened."""
    kept = split[1]
    first = tuple(group.nodes[0].buffer.body.ranges)
    own = (first[: len(first) - len(kept)], kept) if len(first) >= len(kept) else split
    for choice in sorted({split, own}, key=lambda c: -len(squeeze(c[0]))):
        candidate = FusedGroup(group.name, squeeze(choice[0]), columns=choice)
        for node in group.nodes:
            loops = None if node.is_reduction else _column_member(candidate, node.buffer)
            if loops is None:
                break
            candidate.nodes.append(loops)
        else:
            return candidate
    return None


def hoist_column_sums(
    steps: list[ComputedBuffer | ExternCall],
) -> list[ComputedBuffer | ExternCall]:
    """A column sum (a bias or weight grad) moves up past the ATen calls it does not read,
    to run beside the computed values before them: it may then join their kernel (one pass
    over the rows instead of two), as inductor's scheduler fuses across externs."""
    result: list[ComputedBuffer | ExternCall] = []
    for step in steps:
        position = len(result)
        if isinstance(step, ComputedBuffer) and column_split(step) is not None:
            reads = {name for name, _ in step.body.loop.loads()}
            while position > 0 and _passable(result[position - 1], reads):
                position -= 1
            if position == 0 or not isinstance(result[position - 1], ComputedBuffer):
                position = len(result)  # nothing to join: keep the graph's order
        result.insert(position, step)
    return result


def _passable(step: ComputedBuffer | ExternCall, reads: set[str]) -> bool:
    """An extern a computation may move before: a pure ATen op whose results it does not read."""
    op = step.op if isinstance(step, ExternCall) else None
    return (
        isinstance(op, torch._ops.OpOverload)
        and not op._schema.is_mutable
        and not reads & {b.name for b in step.outputs}
    )


def schedule(
    steps: list[ComputedBuffer | ExternCall], graph_outputs: set[str], extern_reads: set[str]
) -> list[Step]:
    result: list[Step] = []
    current: FusedGroup | None = None
    counter = 0
    steps = hoist_column_sums(steps)

    def close() -> None:
        nonlocal current
        if current is not None:
            result.append(current)
            current = None

    for step in steps:
        if isinstance(step, ExternCall):
            close()
            result.append(step)
            continue
        if current is not None and current.columns is not None:
            loops = _column_member(current, step)
            if loops is not None:
                current.nodes.append(loops)
                continue
            close()
        split = column_split(step)
        if split is not None:
            candidate = _as_columns(current, split) if current is not None else None
            loops = _column_member(candidate, step) if candidate is not None else None
            if candidate is not None and loops is not None:
                candidate.nodes.append(loops)
                current = candidate
                continue
            close()
            current = FusedGroup(f"kernel{counter}", squeeze(split[0]), columns=split)
            loops = column_loops(step, split)
            assert loops is not None  # a column sum always splits by its own split
            current.nodes.append(loops)
            counter += 1
            continue
        if current is not None:
            outer = _fits(current, step)
            if outer is not None:
                candidate = _relayout(current, outer) if outer != current.outer else current
                loops = node_loops(step, len(outer))
                if _legal(candidate, loops, outer) and all(
                    _legal(candidate, n, outer) for n in candidate.nodes
                ):
                    candidate.nodes.append(loops)
                    current = candidate
                    continue
            close()
        outer = squeeze(step.body.ranges)
        current = FusedGroup(f"kernel{counter}", outer, [node_loops(step, len(outer))])
        counter += 1
    close()
    _mark_stored(result, graph_outputs, extern_reads)
    return result


def _mark_stored(steps: list[Step], graph_outputs: set[str], extern_reads: set[str]) -> None:
    """A group keeps a buffer in registers only when every read is local and at its index."""
    group_of: dict[str, FusedGroup] = {}
    for step in steps:
        if isinstance(step, FusedGroup):
            for node in step.nodes:
                group_of[node.buffer.name] = step
    external = set(graph_outputs) | set(extern_reads)
    internal: set[str] = set()  # read inside its own group, but not where it was computed
    for step in steps:
        if not isinstance(step, FusedGroup):
            continue
        build_nests(step)
        for node in step.nodes:
            for name, expr in node.loads:
                owner = group_of.get(name)
                if owner is not step:
                    external.add(name)
                    continue
                producer = next(n for n in step.nodes if n.buffer.name == name)
                if not local_read(step, producer, node, expr):
                    internal.add(name)
    for step in steps:
        if isinstance(step, FusedGroup):
            step.stored = {n for n in step.buffer_names if n in external}
            for node in step.nodes:
                name = node.buffer.name
                if name in internal and name not in external:
                    block = hint_prod(node.inner_ranges)
                    if not node.is_reduction and node.inner_ranges and block <= LOCAL_BLOCK_LIMIT:
                        step.block_local.add(name)  # a per-thread array inside the outer loop
                    else:
                        step.stored.add(name)


def build_nests(group: FusedGroup) -> None:
    """Consecutive pointwise nodes with equal inner ranges share one loop nest, unless one
    reads another's buffer at a different index (that would be a loop-carried dependency).
    A column group is one nest: every node runs per element, its sums accumulate there."""
    if group.columns is not None:
        group.nests = [list(group.nodes)]
        return
    nests: list[list[NodeLoops]] = []
    for node in group.nodes:
        last = nests[-1] if nests else None
        if (
            last is not None
            and not node.is_reduction
            and not last[0].is_reduction
            and last[0].inner_ranges == node.inner_ranges
            and all(
                sympy.expand(expr - producer.store_index) == 0
                for producer in last
                for name, expr in node.loads
                if name == producer.buffer.name
            )
        ):
            last.append(node)
        else:
            nests.append([node])
    group.nests = nests


def same_nest(group: FusedGroup, a: NodeLoops, b: NodeLoops) -> bool:
    return any(a in nest and b in nest for nest in group.nests)


def local_read(group: FusedGroup, producer: NodeLoops, reader: NodeLoops, expr: sympy.Expr) -> bool:
    if sympy.expand(expr - producer.store_index) != 0:
        return False
    if producer.is_reduction:
        # a reduction result is a scalar per outer index: any later node may read it
        return not producer.inner_ranges and reader is not producer
    return same_nest(group, producer, reader)


def assign_in_place(
    steps: list[Step], graph_outputs: set[str], extern_reads: set[str], fresh_ops: set[Any]
) -> None:
    """An epilogue writes into the result of the ATen call before it (a gelu backward into
    its matmul's output, as inductor does): a kernel's stored pointwise buffer takes the
    memory of an extern result that this kernel reads last, only elementwise at the
    buffer's own index, in the buffer's loop nest and not after it.  The result must come
    from an op in `fresh_ops` (new memory, no alias of its inputs), be no graph output and
    have nothing else read it (no extern: its results may be views of what it read).  The
    kernel then reads and writes that memory through one pointer."""
    last = buffer_readers(steps)
    for position, step in enumerate(steps):
        if not isinstance(step, FusedGroup):
            continue
        donors = _donors(steps[:position], step, graph_outputs | extern_reads, last, position)
        taken: set[str] = set()
        for index, node in enumerate(step.nodes):
            buffer = node.buffer
            if node.is_reduction or buffer.name not in step.stored:
                continue
            for name, donor in donors.items():
                if name in taken or donor.call.op not in fresh_ops:
                    continue
                if not (_same_memory(donor, buffer) and _elementwise_before(step, index, name)):
                    continue
                step.in_place[buffer.name] = name
                taken.add(name)
                break


def _same_memory(a: Buffer, b: Buffer) -> bool:
    """Both are laid out alike: one layout, or dense row-major views of one block (a (b*t, w)
    matmul result written as (b, t, w))."""
    if a.dtype != b.dtype:
        return False
    if (a.size, a.stride) == (b.size, b.stride):
        return True
    return (
        not is_symbolic((*a.size, *b.size))
        and math.prod(a.size) == math.prod(b.size)
        and a.is_contiguous()
        and b.is_contiguous()
    )


def _donors(
    before: list[Step], group: FusedGroup, kept: set[str], last: dict[str, int], position: int
) -> dict[str, ExternBuffer]:
    """Extern results the group reads last, that nothing else reads or returns."""
    reads = {name for node in group.nodes for name, _ in node.loads}
    return {
        out.name: out
        for step in before
        if isinstance(step, ExternCall)
        for out in step.outputs
        if out.name in reads and out.name not in kept and last.get(out.name) == position
    }


def _elementwise_before(group: FusedGroup, index: int, name: str) -> bool:
    """Every read of `name` in the group is at node `index`'s store index, by a node of its
    loop nest that runs no later than it."""
    target = group.nodes[index]
    nest = next(n for n in group.nests if target in n)
    for position, node in enumerate(group.nodes):
        for load, expr in node.loads:
            if load != name:
                continue
            if node not in nest or position > index:
                return False
            if sympy.expand(expr - target.store_index) != 0:
                return False
    return True


def buffer_readers(steps: list[Step]) -> dict[str, int]:
    """Index of the last step that reads each buffer (for buffer reuse in the wrapper)."""
    last: dict[str, int] = {}
    for position, step in enumerate(steps):
        names: set[str] = set()
        if isinstance(step, FusedGroup):
            for node in step.nodes:
                names.update(name for name, _ in node.loads)
        else:
            names.update(extern_arg_buffers(step))
        for name in names:
            last[name] = position
    return last


def extern_arg_buffers(call: ExternCall) -> set[str]:
    from .ir import BufferView

    names: set[str] = set()

    def visit(value: object) -> None:
        if isinstance(value, BufferView):
            names.add(value.buffer.name)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    visit(call.args)
    visit(call.kwargs)
    return names


__all__ = ["Buffer", "FusedGroup", "NodeLoops", "Step", "buffer_readers", "schedule"]
