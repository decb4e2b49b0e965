"""Every per-CPython-version bytecode fact, in one table.

The rest of the layer (decode, effects, emit) and its users (graphcapture's interpreter
and codegen, inspect's decompiler) read `VERSION`, the row for the running interpreter,
and never test `sys.version_info` themselves.  Adding an interpreter means adding a row.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

# Conditional jumps of the canonical instruction set (3.12 spelling).
POP_JUMPS = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")

# 3.11 spells each conditional jump twice, by direction; the emitter picks one.
_DIRECTED_311 = {
    f"POP_JUMP_{way}_IF_{cond}": f"POP_JUMP_IF_{cond}"
    for way in ("FORWARD", "BACKWARD")
    for cond in ("FALSE", "TRUE", "NONE", "NOT_NONE")
}

# Which CALL_INTRINSIC_1 functions are plain instructions in the canonical set.
_INTRINSIC_AS_INSTRUCTION = {5: "UNARY_POSITIVE", 6: "LIST_TO_TUPLE"}


@dataclass(frozen=True)
class VersionFacts:
    """How one interpreter version spells and lays out the canonical instructions."""

    version: tuple[int, int]
    # opcode name of this version -> canonical name (1:1 renames)
    renames: dict[str, str] = field(default_factory=dict)
    # a CALL is preceded by PRECALL (3.11): dropped on decode, added on emit
    has_precall: bool = False
    # LOAD_ATTR's low bit means "method load" (3.12+); 3.11 has LOAD_METHOD
    load_attr_method_bit: bool = False
    # NULL goes *above* the callable (3.13: [callable, NULL|self]), not below it
    null_after_callable: bool = False
    # keyword names travel in KW_NAMES (3.11, 3.12) or as a tuple on the stack for CALL_KW (3.13)
    has_kw_names: bool = True
    # conditional jumps need an exact bool (3.13): TO_BOOL before them and UNARY_NOT
    jumps_need_bool: bool = False
    # conditional jumps may go backward (3.11 only; later ones are forward-only)
    backward_cond_jumps: bool = False
    # instructions skipped after an exhausted FOR_ITER's target (END_FOR, and POP_TOP on 3.13)
    for_iter_exit_skip: int = 0
    # MAKE_FUNCTION's oparg carries the defaults/closure flags (until 3.12);
    # 3.13 sets them with SET_FUNCTION_ATTRIBUTE
    make_function_flags: bool = True
    # comprehensions are separate code objects (until 3.11; PEP 709 inlines them)
    comprehensions_are_functions: bool = True
    # the closure tuple is built from LOAD_CLOSURE (until 3.12) or LOAD_FAST of the cell (3.13)
    load_closure_is_load_fast: bool = False
    # pops of END_FOR (3.12: the iterator and the value; 3.13: the value)
    end_for_pops: int = 0
    # instructions split into canonical ones on decode (superinstructions, RETURN_CONST, slices)
    splits: frozenset[str] = frozenset()
    intrinsics: dict[int, str] = field(default_factory=dict)
    # (popped, pushed) where this version differs from effects._FIXED
    effects: dict[str, tuple[int, int]] = field(default_factory=dict)


_COMMON_RENAMES = {
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_NO_INTERRUPT",
}

TABLE: dict[tuple[int, int], VersionFacts] = {
    (3, 11): VersionFacts(
        version=(3, 11),
        renames={**_COMMON_RENAMES, **_DIRECTED_311},
        has_precall=True,
        backward_cond_jumps=True,
    ),
    (3, 12): VersionFacts(
        version=(3, 12),
        renames=dict(_COMMON_RENAMES),
        load_attr_method_bit=True,
        for_iter_exit_skip=1,
        comprehensions_are_functions=False,
        end_for_pops=2,
        splits=frozenset({"RETURN_CONST", "BINARY_SLICE", "STORE_SLICE"}),
        intrinsics=_INTRINSIC_AS_INSTRUCTION,
    ),
    (3, 13): VersionFacts(
        version=(3, 13),
        renames=dict(_COMMON_RENAMES),
        load_attr_method_bit=True,
        null_after_callable=True,
        has_kw_names=False,
        jumps_need_bool=True,
        for_iter_exit_skip=2,
        make_function_flags=False,
        comprehensions_are_functions=False,
        load_closure_is_load_fast=True,
        end_for_pops=1,
        splits=frozenset(
            {
                "RETURN_CONST",
                "BINARY_SLICE",
                "STORE_SLICE",
                "LOAD_FAST_LOAD_FAST",
                "STORE_FAST_LOAD_FAST",
                "STORE_FAST_STORE_FAST",
            }
        ),
        intrinsics=_INTRINSIC_AS_INSTRUCTION,
    ),
}

SUPPORTED = tuple(TABLE)

VERSION: VersionFacts = TABLE.get(sys.version_info[:2])  # type: ignore[assignment]

COMPARE_OPS = ("<", "<=", "==", "!=", ">", ">=")
