"""Resume functions: the rest of a frame after a graph break, as a new code object.

`__resume_at_<offset>_<n>(stack values..., live locals...)` is a copy of the original
code (through the bytecode layer) with a prologue that pushes the saved stack (NULLs
recreated) and jumps to the instruction at `index`; `offset` in its name is that
instruction's offset in the original code, which differs between CPython versions.
Being a new function, its first call is intercepted and captured again.  Resume functions
are always copies of the original code (a break inside a resume function maps back to the
original's instruction), cached per (instruction, stack kinds, live locals): paths that
join after a data-dependent branch share one resume function and its compiled code, as in
TorchDynamo.
"""

from __future__ import annotations

import types
import weakref
from dataclasses import dataclass

from framejit.frameeval import bytecode as fbc

from .code_keyed import CodeKeyed


@dataclass
class ResumeFunction:
    name: str
    code: types.CodeType
    stack_args: int  # how many stack values it takes (NULLs excluded)
    live_locals: tuple[str, ...]
    # zero-argument super() reads the frame's first local: that local is passed first
    # (before the stack values), the others after them
    first_local: str | None = None
    shift: int = 0  # canonical index in `code` = index in the original + shift
    # called as fn(None, ...) (a method-style [fn, self] pair, no NULL on the stack)
    leading_dummy: bool = False

    def lasti_of(self, index: int) -> int:
        """The frame's `lasti` (code units) at the copy of the original's instruction `index`."""
        return fbc.decode(self.code).insts[index + self.shift].offset // 2


# per resumed code (by identity, weakly): (index, stack kinds, live locals, first local) -> fn
_cache: CodeKeyed[dict[tuple, ResumeFunction]] = CodeKeyed()


# resume code -> (weakly, the original code it copies; its shift): a break in a resume
# function resumes in a copy of the original, so paths that join share one function
_origin: CodeKeyed[tuple[weakref.ref, int]] = CodeKeyed()


def clear_cache() -> None:
    _cache.clear()
    _origin.clear()


def to_original(code: types.CodeType, index: int) -> tuple[types.CodeType, int]:
    """(the original code, the index there) of instruction `index` of `code`."""
    found = _origin.get(code)
    if found is not None:
        original = found[0]()
        if original is not None:
            return original, index - found[1]
    return code, index


def stack_arg_name(i: int) -> str:
    return f"___stack{i}"


def is_internal_local(name: str) -> bool:
    """A resume function's own argument (a saved stack slot, the dummy self), not the user's."""
    return name.startswith("___")


# How each saved stack slot comes back in the resume function's prologue.
NULL = "null"  # recreated with PUSH_NULL (3.11+ call protocol)
VALUE = "value"  # passed as an argument
ITERATOR = "iter"  # a for-loop iterator, passed as a tuple of what it has left


def _prologue_iter(name: str) -> list[fbc.Inst]:
    """iter(<name>), for a saved for-loop iterator."""
    load_iter = fbc.inst("LOAD_CONST", iter)
    null = fbc.inst("PUSH_NULL")
    pair = [load_iter, null] if fbc.VERSION.null_after_callable else [null, load_iter]
    return [*pair, fbc.inst("LOAD_FAST", name), fbc.inst("CALL", 1)]


def make_resume_function(
    code: types.CodeType,
    index: int,
    stack_kinds: tuple[str, ...],
    live_locals: tuple[str, ...],
    new_name,
    leading_dummy: bool = False,
) -> ResumeFunction:
    code, index = to_original(code, index)
    first_local = _super_self(code, live_locals)
    if first_local is not None:
        live_locals = tuple(n for n in live_locals if n != first_local)
    key = (index, stack_kinds, live_locals, first_local, leading_dummy)
    found = _cache.setdefault(code, dict).get(key)
    if found is not None:
        return found
    decoded = fbc.decode(code)
    body = fbc.body(decoded)
    prologue: list = []
    # method-style call: the pair's self slot is the first local when super() needs it
    arg_names: list[str] = ["___self"] if leading_dummy and first_local is None else []
    if first_local is not None:
        arg_names.append(first_local)
    fixed = len(arg_names)
    for kind in stack_kinds:
        if kind == NULL:
            prologue.append(fbc.inst("PUSH_NULL"))
            continue
        name = stack_arg_name(len(arg_names) - fixed)
        arg_names.append(name)
        if kind == ITERATOR:
            prologue.extend(_prologue_iter(name))
        else:
            prologue.append(fbc.inst("LOAD_FAST", name))
    stack_args = len(arg_names) - fixed
    arg_names.extend(live_locals)
    entry = decoded.handler_for(index)
    if entry is not None:
        # the jump lands inside a try/with range: the prologue's stack is that range's, as
        # the bytecode assembler must see to size the handler (it counts from a TryBegin)
        prologue.append(fbc.TryBegin(body.insts[entry.target], entry.depth, entry.lasti))
    prologue.append(fbc.inst("JUMP", jump=body.insts[index]))
    if entry is not None:
        prologue.append(fbc.TryEnd())
    at = body.prefix_end()
    name = new_name(decoded.insts[index].offset)
    new = fbc.assemble(
        [*body.items[:at], *prologue, *body.items[at:]],
        code,
        argnames=tuple(arg_names),
        name=name,
        docstring=None,
    )
    shift = sum(1 for item in prologue if not isinstance(item, (fbc.TryBegin, fbc.TryEnd)))
    result = ResumeFunction(name, new, stack_args, live_locals, first_local, shift, leading_dummy)
    _cache.setdefault(code, dict)[key] = result
    _origin[new] = (weakref.ref(code), shift)
    return result


def _super_self(code: types.CodeType, live_locals: tuple[str, ...]) -> str | None:
    """The first local, when the code may call zero-argument super() (it closes over
    `__class__`) and the local is live: super() finds `self` in the frame's first slot."""
    if "__class__" not in code.co_freevars or not code.co_argcount:
        return None
    first = code.co_varnames[0]
    return first if first in live_locals else None
