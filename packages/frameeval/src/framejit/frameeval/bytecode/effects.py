"""Stack effects of canonical instructions as (values popped, values pushed), and stack depths.

`pops_pushes` is what a graph break needs (how many operands an instruction consumes,
how many results it leaves); `stack_effect` is their difference and agrees with
`dis.stack_effect` on the real instructions (the differential tests check every
instruction of the stdlib).  `jump=True` is the effect along the jump edge, with the
compiler's conventions (3.12+'s FOR_ITER jumps to END_FOR with the values still counted).
"""

from __future__ import annotations

from .decode import Code, Inst
from .versions import POP_JUMPS, VERSION, VersionFacts

_FIXED: dict[str, tuple[int, int]] = {
    **dict.fromkeys(
        (
            "NOP",
            "RESUME",
            "MAKE_CELL",
            "COPY_FREE_VARS",
            "KW_NAMES",
            "JUMP",
            "JUMP_NO_INTERRUPT",
            "SETUP_ANNOTATIONS",
            "DELETE_FAST",
            "DELETE_DEREF",
            "DELETE_GLOBAL",
            "DELETE_NAME",
            "RETURN_CONST",
        ),
        (0, 0),
    ),
    **dict.fromkeys(
        (
            "LOAD_CONST",
            "LOAD_FAST",
            "LOAD_FAST_CHECK",
            "LOAD_FAST_AND_CLEAR",
            "LOAD_DEREF",
            "LOAD_CLASSDEREF",
            "LOAD_CLOSURE",
            "LOAD_NAME",
            "LOAD_LOCALS",
            "LOAD_ASSERTION_ERROR",
            "LOAD_BUILD_CLASS",
            "PUSH_NULL",
            "RETURN_GENERATOR",
        ),
        (0, 1),
    ),
    **dict.fromkeys(
        (
            "POP_TOP",
            "STORE_FAST",
            "STORE_DEREF",
            "STORE_GLOBAL",
            "STORE_NAME",
            "STORE_FAST_MAYBE_NULL",
            "DELETE_ATTR",
            "RETURN_VALUE",
            "POP_EXCEPT",
            "PRINT_EXPR",
            "IMPORT_STAR",
            "EXIT_INIT_CHECK",
            "INTERPRETER_EXIT",
            "LIST_APPEND",
            "SET_ADD",
            "LIST_EXTEND",
            "SET_UPDATE",
            "DICT_UPDATE",
            "DICT_MERGE",
            *POP_JUMPS,
        ),
        (1, 0),
    ),
    **dict.fromkeys(
        (
            "UNARY_NEGATIVE",
            "UNARY_POSITIVE",
            "UNARY_NOT",
            "UNARY_INVERT",
            "TO_BOOL",
            "GET_ITER",
            "GET_YIELD_FROM_ITER",
            "GET_AWAITABLE",
            "GET_AITER",
            "LIST_TO_TUPLE",
            "LOAD_ATTR",
            "YIELD_VALUE",
            "CALL_INTRINSIC_1",
            "ASYNC_GEN_WRAP",
            "LOAD_FROM_DICT_OR_GLOBALS",
            "LOAD_FROM_DICT_OR_DEREF",
            "CONVERT_VALUE",
            "FORMAT_SIMPLE",
        ),
        (1, 1),
    ),
    **dict.fromkeys(
        (
            "BINARY_OP",
            "BINARY_SUBSCR",
            "COMPARE_OP",
            "IS_OP",
            "CONTAINS_OP",
            "IMPORT_NAME",
            "CALL_INTRINSIC_2",
            "FORMAT_WITH_SPEC",
            "SET_FUNCTION_ATTRIBUTE",
            "END_SEND",
            "PREP_RERAISE_STAR",
        ),
        (2, 1),
    ),
    **dict.fromkeys(("GET_LEN", "GET_ANEXT", "IMPORT_FROM", "PUSH_EXC_INFO"), (1, 2)),
    **dict.fromkeys(("MATCH_MAPPING", "MATCH_SEQUENCE", "LOAD_METHOD"), (1, 2)),
    **dict.fromkeys(("BEFORE_WITH", "BEFORE_ASYNC_WITH"), (1, 2)),
    **dict.fromkeys(("CHECK_EXC_MATCH", "CHECK_EG_MATCH", "COPY_DICT_WITHOUT_KEYS"), (2, 2)),
    "STORE_FAST_LOAD_FAST": (1, 1),
    "LOAD_FAST_LOAD_FAST": (0, 2),
    "STORE_FAST_STORE_FAST": (2, 0),
    "STORE_ATTR": (2, 0),
    "STORE_SUBSCR": (3, 0),
    "DELETE_SUBSCR": (2, 0),
    "BINARY_SLICE": (3, 1),
    "STORE_SLICE": (4, 0),
    "MAP_ADD": (2, 0),
    "MATCH_CLASS": (3, 1),
    "MATCH_KEYS": (2, 3),
    "WITH_EXCEPT_START": (4, 5),
    "CLEANUP_THROW": (3, 2),
    "END_ASYNC_FOR": (2, 0),
}


def _popcount(n: int) -> int:
    return bin(n).count("1")


def _arg_dependent(inst: Inst, facts: VersionFacts, jump: bool) -> tuple[int, int] | None:
    name = inst.opname
    a = inst.arg or 0
    if name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return (a, 1)
    if name == "BUILD_MAP":
        return (2 * a, 1)
    if name == "BUILD_CONST_KEY_MAP":
        return (a + 1, 1)
    if name == "COPY":
        return (a, a + 1)
    if name == "SWAP":
        return (a, a)
    if name == "UNPACK_SEQUENCE":
        return (1, a)
    if name == "UNPACK_EX":
        return (1, (a & 0xFF) + (a >> 8) + 1)
    if name == "LOAD_GLOBAL":
        return (0, 1 + inst.push_null)
    if name == "LOAD_SUPER_ATTR":
        return (3, 1 + inst.push_null)
    if name == "CALL":
        return (a + 2, 1)
    if name == "CALL_KW":
        return (a + 3, 1)
    if name == "CALL_FUNCTION_EX":
        return (3 + (a & 1), 1)
    if name == "MAKE_FUNCTION":
        return (1 + (_popcount(a & 0xF) if facts.make_function_flags else 0), 1)
    if name == "FORMAT_VALUE":
        return (2 if a & 4 else 1, 1)
    if name == "RAISE_VARARGS":
        return (a, 0)
    if name == "RERAISE":
        return (1 + a, a)  # re-pushes nothing really: with oparg the lasti below is consumed
    if name == "END_FOR":
        return (facts.end_for_pops, 0)
    if name == "FOR_ITER":
        if not jump:
            return (1, 2)
        return (1, 0) if facts.for_iter_exit_skip == 0 else (1, 2)
    if name == "SEND":
        return (2, 2) if not jump else (2, 2 if facts.version >= (3, 12) else 1)
    if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
        return (1, 1) if jump else (1, 0)
    return None


def pops_pushes(inst: Inst, jump: bool = False, facts: VersionFacts = VERSION) -> tuple[int, int]:
    """(values consumed, values produced) of a canonical instruction."""
    fixed = facts.effects.get(inst.opname) or _FIXED.get(inst.opname)
    if fixed is not None:
        return fixed
    found = _arg_dependent(inst, facts, jump)
    if found is None:
        raise KeyError(f"no stack effect known for {inst.opname}")
    return found


def stack_effect(inst: Inst, jump: bool | None = None, facts: VersionFacts = VERSION) -> int:
    """Net stack effect, like `dis.stack_effect` (jump=None: the larger of both edges)."""
    if jump is None:
        return max(stack_effect(inst, False, facts), stack_effect(inst, True, facts))
    pops, pushes = pops_pushes(inst, jump, facts)
    return pushes - pops


_NO_FALLTHROUGH = {"JUMP", "JUMP_NO_INTERRUPT", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}


def falls_through(inst: Inst) -> bool:
    return inst.opname not in _NO_FALLTHROUGH


def successors(code: Code, index: int) -> list[tuple[int, int]]:
    """(successor index, stack depth change along that edge) excluding exception edges."""
    inst = code.insts[index]
    out = []
    if falls_through(inst) and index + 1 < len(code.insts):
        out.append((index + 1, stack_effect(inst, False, code.facts)))
    if inst.target is not None:
        out.append((inst.target, stack_effect(inst, True, code.facts)))
    return out


def stack_depths(code: Code) -> list[int | None]:
    """Depth before each instruction, from entry and from exception handlers."""
    depths: list[int | None] = [None] * len(code.insts)
    work: list[tuple[int, int]] = [(0, 0)] if code.insts else []
    handler_depth = {e.target: e.depth + e.lasti + 1 for e in code.exception_entries}
    while work:
        index, depth = work.pop()
        if index >= len(depths) or depths[index] is not None:
            continue
        depths[index] = depth
        entry = code.handler_for(index)
        if entry is not None:
            work.append((entry.target, handler_depth[entry.target]))
        for succ, delta in successors(code, index):
            work.append((succ, depth + delta))
    return depths
