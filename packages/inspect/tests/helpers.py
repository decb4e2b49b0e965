"""Test helpers: run decompiled source, compare behaviour, and hand-made framejit-style code."""

from __future__ import annotations

import copy
import dis
import sys
import types

from framejit.inspect import decompile


def recompile(fn: types.FunctionType, source: str | None = None) -> types.FunctionType:
    """Decompile ``fn`` and build a function from the source, in ``fn``'s globals."""
    source = source if source is not None else decompile(fn)
    namespace = dict(fn.__globals__)
    exec(compile(source, f"<decompiled {fn.__name__}>", "exec"), namespace)
    new = namespace[fn.__code__.co_name]
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def outcome(fn, args):
    """What calling ``fn`` does: ('ok', result) or ('raises', exception type)."""
    try:
        result = fn(*copy.deepcopy(args))
        if isinstance(result, types.GeneratorType):
            result = list(result)
        return ("ok", result)
    except Exception as exc:
        return ("raises", type(exc))


def normalized(code: types.CodeType) -> list[tuple]:
    """Instructions without positions, for comparing recompiled bytecode with the original."""
    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in ("NOP", "RESUME", "EXTENDED_ARG", "CACHE"):
            continue
        if isinstance(ins.argval, types.CodeType):
            out.append((ins.opname, tuple(normalized(ins.argval))))
        elif "JUMP" in ins.opname or ins.opname in ("FOR_ITER", "SEND"):
            out.append((ins.opname,))
        else:
            out.append((ins.opname, repr(ins.argval)))
    return out


def patch(code: types.CodeType, at: int, opname: str, arg: int = 0) -> types.CodeType:
    """Overwrite the 2-byte instruction at byte offset ``at`` (framejit-style bytecode surgery)."""
    raw = bytearray(code.co_code)
    raw[at] = dis.opmap[opname]
    raw[at + 1] = arg
    return code.replace(co_code=bytes(raw))


def jump_forward(code: types.CodeType, at: int, target: int) -> types.CodeType:
    """Make the instruction at ``at`` a JUMP_FORWARD to byte offset ``target``."""
    return patch(code, at, "JUMP_FORWARD", (target - at - 2) // 2)


def offset_of(code: types.CodeType, opname: str, argval=None, nth: int = 0) -> int:
    matches = [
        i.offset
        for i in dis.get_instructions(code)
        if i.opname == opname and (argval is None or i.argval == argval)
    ]
    if len(matches) <= nth and sys.version_info >= (3, 13):
        import pytest

        # the hand-patched framejit-style code assumes single stores; 3.13 fuses them
        # (STORE_FAST_STORE_FAST): graphcapture's real rewritten code is tested on 3.13 instead
        pytest.skip(f"no single {opname} {argval!r} to patch on this interpreter")
    return matches[nth]
