"""What the capture layer knows about canonical instructions beyond the bytecode layer.

Version facts live in `framejit.frameeval.bytecode` (its `VERSION` row); this module holds
only interpreter-level tables: BINARY_OP/COMPARE_OP operators, and which instructions a
graph break may re-run on their own.
"""

from __future__ import annotations

import operator

from framejit.frameeval import bytecode as fbc

# BINARY_OP's argument (NB_* of Include/opcode.h) -> operator
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

# Conditional jumps a graph break turns into a real test with two resume functions.
CONDITIONAL_JUMPS = {
    "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE",
    "JUMP_IF_FALSE_OR_POP",  # 3.11: `a and b` / `a or b`; the value stays on the jump path
    "JUMP_IF_TRUE_OR_POP",
}

# Instructions that are never a sensible point to stop and resume.
UNBREAKABLE = {"FOR_ITER", "RETURN_VALUE", "RESUME", "NOP", "KW_NAMES", "PUSH_NULL", "TO_BOOL"}

# Instructions after which no resume function is needed (the frame ends there).
TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS"}

# Instructions a graph break may re-run alone, with their operands rebuilt on the stack.
RERUNNABLE = {
    "BINARY_OP",
    "COMPARE_OP",
    "BINARY_SUBSCR",
    "CONTAINS_OP",
    "IS_OP",
    "STORE_SUBSCR",
    "DELETE_SUBSCR",
    "STORE_ATTR",
    "LOAD_ATTR",
    "UNARY_NEGATIVE",
    "UNARY_POSITIVE",
    "UNARY_NOT",
    "UNARY_INVERT",
    "GET_ITER",
    "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE",
    "IMPORT_NAME",
    "RETURN_VALUE",
    "CALL",
    "CALL_KW",
    "CALL_FUNCTION_EX",
    "FORMAT_VALUE",
    "FORMAT_SIMPLE",
    "FORMAT_WITH_SPEC",
    "CONVERT_VALUE",
    "BUILD_STRING",
    "UNPACK_SEQUENCE",
    "RAISE_VARARGS",
    "LIST_TO_TUPLE",
    "LOAD_BUILD_CLASS",  # a class statement: the class is then built by a re-run CALL
    # a context manager the trace does not model is entered for real: the resume function
    # gets its __exit__ and runs the block inside the original's exception table
    "BEFORE_WITH",
}


def break_stack_effect(inst: fbc.Inst) -> tuple[int, int] | None:
    """(values consumed, values produced) of an instruction a graph break may re-run; None: not one."""
    if inst.opname in CONDITIONAL_JUMPS:
        return (1, 0)  # the tested value; what each path keeps is the break's business
    if inst.opname not in RERUNNABLE:
        return None
    return fbc.pops_pushes(inst)
