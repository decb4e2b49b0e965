"""The decompiler's opcode groups, over frameeval's canonical (version-neutral) instructions.

No per-version table lives here: how each CPython spells and lays out instructions is
``framejit.frameeval.bytecode``'s business (``fbc.VERSION``), read where a layout still
differs (the NULL of a call above or below the callable).
"""

from __future__ import annotations

from dataclasses import dataclass

from framejit.frameeval import bytecode as fbc

#: Conditional jumps that pop their operand, canonical name -> (test, jumps when).
#: The test is applied to the popped value; the jump is taken when it equals
#: ``jumps_when``.
POP_JUMPS = {
    "POP_JUMP_IF_FALSE": ("truth", False),
    "POP_JUMP_IF_TRUE": ("truth", True),
    "POP_JUMP_IF_NONE": ("none", True),
    "POP_JUMP_IF_NOT_NONE": ("none", False),
}

#: Conditional jumps that keep their operand when they jump (``a and b`` / ``a or b``, 3.11).
KEEP_JUMPS = {"JUMP_IF_FALSE_OR_POP": False, "JUMP_IF_TRUE_OR_POP": True}

#: Instructions after which control never falls through to the next one.
TERMINATORS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"}


@dataclass(frozen=True)
class DecompilerFacts:
    #: instructions with no effect on the decompiled program (TO_BOOL: a jump tests truth anyway)
    ignored: frozenset[str]
    #: a with body's exit call, ``__exit__(None, None, None)``
    with_exit: tuple[str, ...] = ("LOAD_CONST", "LOAD_CONST", "LOAD_CONST", "CALL", "POP_TOP")
    #: a call's NULL is pushed after the callable (3.13), not before it
    null_after_callable: bool = False
    #: comprehensions are separate code objects (until 3.11; PEP 709 inlines them)
    comprehensions_are_functions: bool = True


TABLE = DecompilerFacts(
    ignored=frozenset(
        {
            "NOP",
            "RESUME",
            "CACHE",
            "EXTENDED_ARG",
            "MAKE_CELL",
            "COPY_FREE_VARS",
            "TO_BOOL",
            "END_FOR",
        }
    ),
    null_after_callable=fbc.VERSION.null_after_callable,
    comprehensions_are_functions=fbc.VERSION.comprehensions_are_functions,
)
