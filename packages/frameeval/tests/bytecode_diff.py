"""The differential oracle of the bytecode layer: the interpreter's own compiler and `dis`.

`check(code)` decodes one code object, compares each real instruction's canonical parts'
stack effects with `dis.stack_effect`, re-emits it and checks that the result decodes to
the same canonical instructions, exception table, names and stack size.  It returns a
list of problems (empty: equivalent).  Used by test_bytecode_layer.py and runnable alone:
`python bytecode_diff.py` prints a summary over the whole stdlib.
"""

from __future__ import annotations

import dis
import os
import sys
import sysconfig
import types
import warnings

from framejit.frameeval import bytecode as fbc
from framejit.frameeval.bytecode.decode import _decode, decode_groups
from framejit.frameeval.bytecode.effects import stack_effect

_JUMPS = set(getattr(dis, "hasjump", ())) | set(dis.hasjrel) | set(dis.hasjabs)
# instructions whose oparg is an index (names, consts, locals) or a jump offset: compared by argval
_INDEXED = {dis.opname[o] for o in dis.hasconst + dis.hasname + dis.haslocal + dis.hasfree}
# dis.stack_effect counts RETURN_GENERATOR as 0 on 3.11/3.12 (the compiler adds it after its
# depth pass); at run time the first send's value is pushed after it, which the layer counts.
DIS_DIFFERS = {(3, 11): {"RETURN_GENERATOR": 1}, (3, 12): {"RETURN_GENERATOR": 1}}


def stdlib_files() -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return out


def code_objects(path: str) -> list[types.CodeType]:
    try:
        with open(path, "rb") as fh:
            source = fh.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            top = compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return []  # lib2to3 fixtures, bad encodings: not Python this interpreter compiles
    out, work = [], [top]
    while work:
        code = work.pop()
        out.append(code)
        work.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


def _effect_problems(code: types.CodeType) -> list[str]:
    problems = []
    groups = decode_groups(code)
    carried: list[dis.Instruction] = []  # 3.11's PRECALL: its effect is counted by its CALL
    for ins, parts in groups:
        if ins.opname in ("EXTENDED_ARG", "CACHE"):
            continue
        if not parts:
            carried.append(ins)
            continue
        real = [*carried, ins]
        carried = []
        for jump in (False, True) if ins.opcode in _JUMPS else (False,):
            want = sum(dis.stack_effect(r.opcode, r.arg, jump=jump) for r in real)
            want += DIS_DIFFERS.get(sys.version_info[:2], {}).get(ins.opname, 0)
            # a split instruction's parts follow each other: only the last one jumps
            got = sum(stack_effect(p, jump and p is parts[-1]) for p in parts)
            if want != got:
                problems.append(f"{ins.offset} {ins.opname} jump={jump}: dis {want}, layer {got}")
    return problems


def _signature(code: fbc.Code) -> list[tuple]:
    out = []
    for i in code.insts:
        argval = i.argval
        if i.target is not None:
            argval = None
        elif isinstance(argval, float) and argval != argval:
            argval = "nan"
        arg = None if (i.realname in _INDEXED or i.target is not None) else i.arg
        out.append((i.opname, arg, repr(argval), i.target, i.push_null, i.lineno))
    return out


def check(code: types.CodeType) -> list[str]:
    problems = _effect_problems(code)
    decoded = _decode(code, fbc.VERSION)
    try:
        new = fbc.reassemble(code)
    except Exception as e:  # the report says which code and why
        return [*problems, f"emit failed: {type(e).__name__}: {e}"]
    again = _decode(new, fbc.VERSION)
    a, b = _signature(decoded), _signature(again)
    if a != b:
        first = next(
            (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        got = b[first] if first < len(b) else None
        want = a[first] if first < len(a) else None
        problems.append(f"instruction {first}: {want} became {got}")
    if decoded.exception_entries != again.exception_entries:
        problems.append(
            f"exception table {decoded.exception_entries} became {again.exception_entries}"
        )
    for attr in (
        "co_argcount",
        "co_posonlyargcount",
        "co_kwonlyargcount",
        "co_flags",
        "co_cellvars",
        "co_freevars",
        "co_name",
        "co_qualname",
        "co_firstlineno",
    ):
        if getattr(code, attr) != getattr(new, attr):
            problems.append(f"{attr}: {getattr(code, attr)!r} became {getattr(new, attr)!r}")
    if not set(new.co_varnames) <= set(code.co_varnames):  # names no instruction uses may go
        problems.append(f"co_varnames {code.co_varnames} became {new.co_varnames}")
    if new.co_stacksize < code.co_stacksize:  # only right if the compiler counted dead code
        peak = _peak_depth(again)
        if peak > new.co_stacksize:
            problems.append(f"co_stacksize {code.co_stacksize} became {new.co_stacksize} < {peak}")
    return problems


def _peak_depth(code: fbc.Code) -> int:
    peak = 0
    for inst in code.insts:
        depth = code.stack_depth_at(inst.index)
        if depth is not None:
            peak = max(peak, depth + max(0, stack_effect(inst)), depth)
    return peak


def main() -> None:
    total, bad = 0, 0
    for path in stdlib_files():
        for code in code_objects(path):
            total += 1
            problems = check(code)
            if problems:
                bad += 1
                if bad <= 30:
                    print(f"{path}:{code.co_firstlineno} {code.co_qualname}: {problems[:3]}")
    print(f"{sys.version_info[:2]}: {total} code objects, {bad} with problems")


if __name__ == "__main__":
    main()
