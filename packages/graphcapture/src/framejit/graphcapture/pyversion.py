"""Every CPython-version difference of the capture layer, in one place.

The interpreter dispatches on *handler names*; `HANDLER_ALIASES` maps the opcode names of
the running version onto them, and the `emit_*` helpers produce the version's calling and
jumping sequences for generated code.  Adding 3.12/3.13 means filling in these tables.
"""

from __future__ import annotations

import operator
import sys

from bytecode import Instr

PY = sys.version_info[:2]
PY311 = PY == (3, 11)
PY312_PLUS = PY >= (3, 12)

# opcode name of this version -> interpreter handler name
HANDLER_ALIASES: dict[str, str] = {
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "JUMP_ABSOLUTE": "JUMP",
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_FAST_AND_CLEAR": "LOAD_FAST",
}

# Conditional jumps: handler name -> (pops the value?, jump when) ; used by the break codegen too.
CONDITIONAL_JUMPS = {
    "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE",
    "JUMP_IF_FALSE_OR_POP",
    "JUMP_IF_TRUE_OR_POP",
}

# BINARY_OP's argument (NB_* of Include/opcode.h) -> (operator, in-place?)
BINARY_OPS = {
    0: operator.add,
    1: operator.and_,
    2: operator.floordiv,
    3: operator.lshift,
    4: operator.matmul,
    5: operator.mul,
    6: operator.mod,
    7: operator.or_,
    8: operator.pow,
    9: operator.rshift,
    10: operator.sub,
    11: operator.truediv,
    12: operator.xor,
    13: operator.iadd,
    14: operator.iand,
    15: operator.ifloordiv,
    16: operator.ilshift,
    17: operator.imatmul,
    18: operator.imul,
    19: operator.imod,
    20: operator.ior,
    21: operator.ipow,
    22: operator.irshift,
    23: operator.isub,
    24: operator.itruediv,
    25: operator.ixor,
}

COMPARE_OPS = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}


def load_global_pushes_null(arg: int) -> bool:
    return bool(arg & 1)


def emit_call(nargs: int, lineno: int | None = None) -> list[Instr]:
    """Call the callable below `nargs` arguments (with NULL or self beneath it)."""
    kw = {} if lineno is None else {"lineno": lineno}
    if PY311:
        return [Instr("PRECALL", nargs, **kw), Instr("CALL", nargs, **kw)]
    return [Instr("CALL", nargs, **kw)]


def emit_load_global(name: str, push_null: bool, lineno: int | None = None) -> Instr:
    kw = {} if lineno is None else {"lineno": lineno}
    return Instr("LOAD_GLOBAL", (push_null, name), **kw)


def emit_jump_if(truthy: bool, label, lineno: int | None = None) -> Instr:
    """Pop the top of stack and jump forward to `label` when bool(it) == truthy."""
    kw = {} if lineno is None else {"lineno": lineno}
    if PY311:
        name = "POP_JUMP_FORWARD_IF_TRUE" if truthy else "POP_JUMP_FORWARD_IF_FALSE"
    else:
        name = "POP_JUMP_IF_TRUE" if truthy else "POP_JUMP_IF_FALSE"
    return Instr(name, label, **kw)


def emit_jump_forward(label) -> Instr:
    return Instr("JUMP_FORWARD", label)


# Instructions making up the prefix every 3.11+ code object starts with.
PREFIX_OPCODES = {"COPY_FREE_VARS", "MAKE_CELL", "RESUME"}

# Instructions that are never a sensible point to stop and resume.
UNBREAKABLE = {"FOR_ITER", "RETURN_VALUE", "RESUME", "NOP", "PRECALL", "KW_NAMES", "PUSH_NULL"}


def break_stack_effect(name: str, arg: int | None) -> tuple[int, int] | None:
    """(values consumed, values produced) of an instruction a graph break may re-run; None: not one."""
    fixed = _BREAK_EFFECTS.get(name)
    if fixed is not None:
        return fixed
    if name == "CALL":
        return (arg + 2, 1)
    if name == "CALL_FUNCTION_EX":
        return (3 + (arg & 1), 1)
    if name == "FORMAT_VALUE":
        return (2 if arg & 4 else 1, 1)
    if name == "BUILD_STRING":
        return (arg, 1)
    if name == "UNPACK_SEQUENCE":
        return (1, arg)
    if name == "RAISE_VARARGS":
        return (arg, 0)
    return None


_BREAK_EFFECTS = {
    "BINARY_OP": (2, 1),
    "COMPARE_OP": (2, 1),
    "BINARY_SUBSCR": (2, 1),
    "CONTAINS_OP": (2, 1),
    "IS_OP": (2, 1),
    "STORE_SUBSCR": (3, 0),
    "DELETE_SUBSCR": (2, 0),
    "STORE_ATTR": (2, 0),
    "LOAD_ATTR": (1, 1),
    "UNARY_NEGATIVE": (1, 1),
    "UNARY_POSITIVE": (1, 1),
    "UNARY_NOT": (1, 1),
    "UNARY_INVERT": (1, 1),
    "GET_ITER": (1, 1),
    "POP_JUMP_IF_FALSE": (1, 0),
    "POP_JUMP_IF_TRUE": (1, 0),
    "POP_JUMP_IF_NONE": (1, 0),
    "POP_JUMP_IF_NOT_NONE": (1, 0),
    "IMPORT_NAME": (2, 1),
    "RETURN_VALUE": (1, 0),
}

# Instructions after which no resume function is needed (the frame ends there).
TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS"}
