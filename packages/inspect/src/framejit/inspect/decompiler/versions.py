"""Per-Python-version bytecode differences for the decompiler: the one place they live.

The decompiler works on *canonical* opcode names.  Each supported interpreter
version maps its own opcode names onto those canonical names here, so that the
handlers in ``symbolic.py`` and ``control.py`` are written once.  Adding a
version means adding a table below (and, where an instruction really is new,
one handler), never sprinkling version checks through the handlers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

#: Conditional jumps that pop their operand, canonical name -> (test, jumps when).
#: The test is applied to the popped value; the jump is taken when it equals
#: ``jumps_when``.
POP_JUMPS = {
    "POP_JUMP_IF_FALSE": ("truth", False),
    "POP_JUMP_IF_TRUE": ("truth", True),
    "POP_JUMP_IF_NONE": ("none", True),
    "POP_JUMP_IF_NOT_NONE": ("none", False),
}

#: Conditional jumps that keep their operand when they jump (``a and b`` / ``a or b``).
KEEP_JUMPS = {"JUMP_IF_FALSE_OR_POP": False, "JUMP_IF_TRUE_OR_POP": True}

#: Instructions after which control never falls through to the next one.
TERMINATORS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP"}


@dataclass(frozen=True)
class VersionTable:
    """How one interpreter version spells the canonical instructions."""

    version: tuple[int, int]
    renames: dict[str, str] = field(default_factory=dict)
    #: instructions with no effect on the decompiled program
    ignored: frozenset[str] = frozenset()
    #: LOAD_GLOBAL's low oparg bit means "also push NULL"
    load_global_pushes_null: bool = True
    #: LOAD_ATTR's low oparg bit means "method load" (3.12+)
    load_attr_method_bit: bool = False
    #: a CALL is preceded by PRECALL (3.11 only)
    has_precall: bool = False
    #: comprehensions are separate code objects (False from 3.12, PEP 709 inlines them)
    comprehensions_are_functions: bool = True
    #: raw opnames of a with body's exit call (``__exit__(None, None, None)``)
    with_exit: tuple[str, ...] = ("LOAD_CONST", "LOAD_CONST", "LOAD_CONST", "CALL", "POP_TOP")


_COMMON_IGNORED = frozenset(
    {"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS"}
)

TABLES = {
    (3, 11): VersionTable(
        version=(3, 11),
        renames={
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
            "LOAD_CLASSDEREF": "LOAD_DEREF",
        },
        ignored=_COMMON_IGNORED | {"PRECALL"},
        has_precall=True,
        with_exit=("LOAD_CONST", "LOAD_CONST", "LOAD_CONST", "PRECALL", "CALL", "POP_TOP"),
    ),
    # 3.12 and 3.13 share the canonical names; the instructions they add
    # (RETURN_CONST, END_FOR, BINARY_SLICE, LOAD_FAST_AND_CLEAR for inlined
    # comprehensions, CALL_INTRINSIC_1, ...) need handlers of their own before
    # these tables are switched on in SUPPORTED.
    (3, 12): VersionTable(
        version=(3, 12),
        renames={
            "JUMP_FORWARD": "JUMP",
            "JUMP_BACKWARD": "JUMP",
            "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
            "LOAD_FAST_CHECK": "LOAD_FAST",
            "LOAD_CLASSDEREF": "LOAD_DEREF",
        },
        ignored=_COMMON_IGNORED | {"END_FOR"},
        load_attr_method_bit=True,
        comprehensions_are_functions=False,
    ),
    (3, 13): VersionTable(
        version=(3, 13),
        renames={
            "JUMP_FORWARD": "JUMP",
            "JUMP_BACKWARD": "JUMP",
            "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
            "LOAD_FAST_CHECK": "LOAD_FAST",
        },
        ignored=_COMMON_IGNORED | {"END_FOR", "TO_BOOL"},
        load_attr_method_bit=True,
        comprehensions_are_functions=False,
    ),
}

#: Versions whose handlers are complete; others decompile on a best-effort basis.
SUPPORTED = {(3, 11)}

CURRENT = TABLES.get(sys.version_info[:2], TABLES[(3, 11)])
