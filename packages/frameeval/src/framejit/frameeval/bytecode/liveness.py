"""Live local variables at each canonical instruction (backward dataflow over all edges).

A graph break passes the resume function only the locals the rest of the frame may read.
Exception edges count: a handler may read what its protected range left behind.
"""

from __future__ import annotations

from .decode import Code, Inst
from .effects import falls_through

_READS = {"LOAD_FAST", "LOAD_FAST_CHECK"}
_WRITES = {"STORE_FAST", "STORE_FAST_MAYBE_NULL"}


def uses_defs(inst: Inst) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(locals read, locals written) by one canonical instruction."""
    if inst.opname in _READS:
        return (inst.argval,), ()
    if inst.opname in _WRITES:
        return (), (inst.argval,)
    # LOAD_FAST_AND_CLEAR saves the outer value around a comprehension; `del x` needs x
    # bound (UnboundLocalError otherwise), so it reads as well as clears
    if inst.opname in ("LOAD_FAST_AND_CLEAR", "DELETE_FAST"):
        return (inst.argval,), (inst.argval,)
    return (), ()


def live_locals(code: Code) -> list[frozenset[str]]:
    insts = code.insts
    n = len(insts)
    succs: list[list[int]] = []
    for inst in insts:
        out: list[int] = []
        if falls_through(inst) and inst.index + 1 < n:
            out.append(inst.index + 1)
        if inst.target is not None:
            out.append(inst.target)
        entry = code.handler_for(inst.index)
        if entry is not None:
            out.append(entry.target)
        succs.append(out)
    effects = [uses_defs(inst) for inst in insts]
    live_in: list[frozenset[str]] = [frozenset()] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            live_out: set[str] = set()
            for s in succs[i]:
                if s < n:
                    live_out |= live_in[s]
            uses, defs = effects[i]
            new = frozenset((live_out - set(defs)) | set(uses))
            if new != live_in[i]:
                live_in[i] = new
                changed = True
    return live_in
