"""One version-neutral bytecode layer for CPython 3.11-3.13 (torch-free, stdlib-only to decode).

Decode a code object into canonical instructions, analyse it, and emit code objects
back for the running interpreter::

    from framejit.frameeval import bytecode as fbc

    code = fbc.decode(fn.__code__)          # cached per code object (identity, weak)
    for ins in code.insts:                  # fbc.Inst: opname (canonical), arg, argval,
        ...                                 #   offset, lineno, index, target (an index)
    code.exception_entries                  # ExceptionEntry(start, end, target, depth, lasti), indices
    code.handler_for(i); code.live_locals_at(i); code.stack_depth_at(i)
    fbc.pops_pushes(ins) -> (popped, pushed); fbc.stack_effect(ins, jump=None)
    fbc.VERSION                             # the per-version facts (fbc.versions.TABLE)

    body = fbc.body(code)                   # editable copies: jumps as `.jump` item references,
    items = [fbc.inst("LOAD_FAST", "x"), fbc.inst("JUMP", jump=body.insts[7]), *body.items]
    new = fbc.assemble(items, fn.__code__, argnames=("x",), name="__resume_at_30_1")

Canonical instructions (what interpreters dispatch on): one spelling per jump (`JUMP`,
`JUMP_NO_INTERRUPT`, `POP_JUMP_IF_{TRUE,FALSE,NONE,NOT_NONE}`), `LOAD_METHOD` for every
method load (3.12+'s LOAD_ATTR bit), `LOAD_GLOBAL` / `LOAD_SUPER_ATTR` with `push_null`,
no PRECALL (the emitter adds it on 3.11), superinstructions split (LOAD_FAST_LOAD_FAST
-> LOAD_FAST, LOAD_FAST), RETURN_CONST -> LOAD_CONST, RETURN_VALUE, BINARY_SLICE /
STORE_SLICE -> BUILD_SLICE 2 + BINARY_SUBSCR / STORE_SUBSCR, 3.13's LOAD_FAST of a cell
-> LOAD_CLOSURE, CALL_INTRINSIC_1's UNARY_POSITIVE and LIST_TO_TUPLE by those names,
COMPARE_OP's arg = index into `COMPARE_OPS` (+16: 3.13's bool cast), argval the operator.
Version-new instructions keep their names (TO_BOOL, CALL_KW, END_FOR, LOAD_FAST_AND_CLEAR,
SET_FUNCTION_ATTRIBUTE, FORMAT_SIMPLE, ...); where layouts differ (NULL above or below
the callable, END_FOR after FOR_ITER) `VERSION` says how.
"""

from __future__ import annotations

from .decode import Code, ExceptionEntry, Inst, decode, exception_table
from .effects import pops_pushes, stack_effect
from .emit import Body, Label, TryBegin, TryEnd, assemble, body, inst, reassemble
from .versions import COMPARE_OPS, POP_JUMPS, SUPPORTED, TABLE, VERSION, VersionFacts

__all__ = [
    "COMPARE_OPS",
    "POP_JUMPS",
    "SUPPORTED",
    "TABLE",
    "VERSION",
    "Body",
    "Code",
    "ExceptionEntry",
    "Inst",
    "Label",
    "TryBegin",
    "TryEnd",
    "VersionFacts",
    "assemble",
    "body",
    "decode",
    "exception_table",
    "inst",
    "pops_pushes",
    "reassemble",
    "stack_effect",
]
