"""Resume functions: the rest of a frame after a graph break, as a new code object.

`__resume_at_<offset>_<n>(stack values..., live locals...)` is a copy of the original
code with a prologue that pushes the saved stack (NULLs recreated) and jumps to
`offset`.  Being a new function, its first call is intercepted and captured again.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass

from bytecode import Instr, Label

from .bytecode_cache import original_bytecode
from .pyversion import emit_call


@dataclass
class ResumeFunction:
    name: str
    code: types.CodeType
    stack_args: int  # how many stack values it takes (NULLs excluded)
    live_locals: tuple[str, ...]
    # zero-argument super() reads the frame's first local: that local is passed first
    # (before the stack values), the others after them
    first_local: str | None = None


_cache: dict[tuple, ResumeFunction] = {}


def clear_cache() -> None:
    _cache.clear()


def stack_arg_name(i: int) -> str:
    return f"___stack{i}"


# How each saved stack slot comes back in the resume function's prologue.
NULL = "null"  # recreated with PUSH_NULL (3.11+ call protocol)
VALUE = "value"  # passed as an argument
ITERATOR = "iter"  # a for-loop iterator, passed as a tuple of what it has left


def make_resume_function(
    code: types.CodeType,
    offset: int,
    stack_kinds: tuple[str, ...],
    live_locals: tuple[str, ...],
    new_name,
) -> ResumeFunction:
    first_local = _super_self(code, live_locals)
    if first_local is not None:
        live_locals = tuple(n for n in live_locals if n != first_local)
    key = (code, offset, stack_kinds, live_locals, first_local)
    found = _cache.get(key)
    if found is not None:
        return found
    original = original_bytecode(code)
    target = original.position_of_offset[offset]
    label = Label()
    items = original.items
    prologue: list = []
    arg_names: list[str] = [first_local] if first_local is not None else []
    for kind in stack_kinds:
        if kind == NULL:
            prologue.append(Instr("PUSH_NULL"))
            continue
        name = stack_arg_name(len(arg_names) - (first_local is not None))
        arg_names.append(name)
        if kind == ITERATOR:
            prologue.extend(
                [Instr("PUSH_NULL"), Instr("LOAD_CONST", iter), Instr("LOAD_FAST", name)]
            )
            prologue.extend(emit_call(1))
        else:
            prologue.append(Instr("LOAD_FAST", name))
    stack_args = len(arg_names) - (first_local is not None)
    arg_names.extend(live_locals)
    prologue.append(Instr("JUMP_FORWARD", label))
    prefix_end = original.prefix_end
    new_items = [*items[:prefix_end], *prologue, *items[prefix_end:target], label, *items[target:]]
    name = new_name(offset)
    bc = original.new_bytecode(new_items)
    bc.argnames = arg_names
    bc.argcount = len(arg_names)
    bc.posonlyargcount = 0
    bc.kwonlyargcount = 0
    bc.flags &= ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    bc.name = name
    bc.qualname = name
    bc.docstring = None
    result = ResumeFunction(name, bc.to_code(), stack_args, live_locals, first_local)
    _cache[key] = result
    return result


def _super_self(code: types.CodeType, live_locals: tuple[str, ...]) -> str | None:
    """The first local, when the code may call zero-argument super() (it closes over
    `__class__`) and the local is live: super() finds `self` in the frame's first slot."""
    if "__class__" not in code.co_freevars or not code.co_argcount:
        return None
    first = code.co_varnames[0]
    return first if first in live_locals else None
