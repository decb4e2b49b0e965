"""Canonical instructions back to a code object of the running CPython.

Items are `Inst` (jumps name their target item in `.jump`), `Label`, and the exception
table's pseudo-instructions `TryBegin(handler, depth, lasti)` / `TryEnd()`.  The emitter
re-spells each canonical instruction for this version (PRECALL before CALL on 3.11, jump
direction, LOAD_ATTR's method bit, ...) and hands the result to the `bytecode` library,
which encodes arguments, caches, the line and exception tables and the stack size.
`bytecode` is imported here only: decoding and analysis need nothing outside the stdlib.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass, field

from .decode import Code, Inst
from .versions import VERSION, VersionFacts


class Label:
    """A jump target in generated code."""

    __slots__ = ("__weakref__",)


@dataclass(eq=False)
class TryBegin:
    """Start of an exception-table range: exceptions raised until `TryEnd` go to `handler`."""

    handler: object  # an Inst or a Label
    depth: int
    lasti: bool = False


@dataclass(eq=False)
class TryEnd:
    pass


def inst(opname: str, argval: object = None, *, arg: int | None = None, **kw) -> Inst:
    """A new canonical instruction: `inst("LOAD_FAST", "x")`, `inst("CALL", arg=2)`,
    `inst("POP_JUMP_IF_FALSE", jump=label)`, `inst("LOAD_GLOBAL", "f", push_null=True)`."""
    if arg is None and isinstance(argval, int) and opname in _INT_ARG:
        arg, argval = argval, argval
    return Inst(opname, arg, argval, **kw)


_INT_ARG = {
    "CALL",
    "CALL_KW",
    "CALL_FUNCTION_EX",
    "BUILD_TUPLE",
    "BUILD_LIST",
    "BUILD_MAP",
    "BUILD_SET",
    "BUILD_SLICE",
    "BUILD_STRING",
    "BUILD_CONST_KEY_MAP",
    "COPY",
    "SWAP",
    "UNPACK_SEQUENCE",
    "UNPACK_EX",
    "BINARY_OP",
    "COMPARE_OP",
    "IS_OP",
    "CONTAINS_OP",
    "MAKE_FUNCTION",
    "SET_FUNCTION_ATTRIBUTE",
    "RAISE_VARARGS",
    "RERAISE",
    "LIST_APPEND",
    "LIST_EXTEND",
    "SET_ADD",
    "MAP_ADD",
    "DICT_UPDATE",
    "DICT_MERGE",
    "FORMAT_VALUE",
    "CONVERT_VALUE",
    "RESUME",
    "COPY_FREE_VARS",
    "CALL_INTRINSIC_1",
    "CALL_INTRINSIC_2",
}


@dataclass
class Body:
    """Fresh, editable copies of a decoded code object's instructions."""

    items: list  # Inst copies, TryBegin/TryEnd
    insts: list[Inst]  # the copy of code.insts[i] at i

    def prefix_end(self) -> int:
        """Position in `items` after the RESUME that ends the entry prefix."""
        for pos, item in enumerate(self.items):
            if isinstance(item, Inst) and item.opname == "RESUME":
                return pos + 1
        return 0


def body(code: Code) -> Body:
    """The instructions of `code` as emitter items: jumps reference items, the
    exception table becomes TryBegin/TryEnd around each range."""
    copies = [
        Inst(
            i.opname,
            i.arg,
            i.argval,
            i.offset,
            i.lineno,
            i.index,
            None,
            i.realname,
            i.push_null,
            i.positions,
            None,
            i.starts_line,
        )
        for i in code.insts
    ]
    for i, c in zip(code.insts, copies, strict=True):
        if i.target is not None:
            c.jump = copies[i.target] if i.target < len(copies) else _end_label(copies)
    starts: dict[int, list] = {}
    ends: dict[int, list] = {}
    for e in code.exception_entries:
        if e.start >= e.end:
            continue
        handler = copies[e.target]
        starts.setdefault(e.start, []).append(TryBegin(handler, e.depth, e.lasti))
        ends.setdefault(e.end, []).append(TryEnd())
    items: list = []
    for index, c in enumerate(copies):
        items.extend(ends.pop(index, ()))
        items.extend(starts.pop(index, ()))
        items.append(c)
    for rest in ends.values():
        items.extend(rest)
    return Body(items, copies)


def _end_label(copies):
    raise ValueError("jump past the last instruction")


# ------------------------------------------------------------------------- per-version spelling


def _spell(item: Inst, facts: VersionFacts) -> list[tuple[str, object]]:
    """(real opcode name, canonical instruction it stands for) for one canonical instruction."""
    name = item.opname
    if name == "CALL" and facts.has_precall:
        return [("PRECALL", item), ("CALL", item)]
    if name == "LOAD_METHOD" and facts.load_attr_method_bit:
        return [("LOAD_ATTR", item)]
    if name == "LOAD_CLOSURE" and facts.load_closure_is_load_fast:
        return [("LOAD_FAST", item)]
    if name in ("UNARY_POSITIVE", "LIST_TO_TUPLE") and name not in dis.opmap:
        return [("CALL_INTRINSIC_1", item)]
    return [(name, item)]


_INTRINSIC_CODES = {"UNARY_POSITIVE": 5, "LIST_TO_TUPLE": 6}


@dataclass
class _Assembler:
    template: types.CodeType
    facts: VersionFacts
    labels: dict[int, object] = field(default_factory=dict)

    def var(self, name: str):
        from bytecode import CellVar, FreeVar

        if name in self.template.co_freevars:
            return FreeVar(name)
        return CellVar(name)

    def label_for(self, item) -> object:
        from bytecode import Label as BLabel

        found = self.labels.get(id(item))
        if found is None:
            found = self.labels[id(item)] = BLabel()
        return found

    def location(self, item: Inst) -> dict:
        from bytecode.instr import InstrLocation

        if item.positions is not None:
            p = item.positions
            if p.lineno is None:
                return {"location": InstrLocation(None, None, None, None)}
            return {
                "location": InstrLocation(p.lineno, p.end_lineno, p.col_offset, p.end_col_offset)
            }
        if item.lineno is not None:
            return {"lineno": item.lineno}
        return {}

    def arg(self, real: str, item: Inst, backward: bool):
        import bytecode as b

        canonical = item.opname
        if real in ("LOAD_CONST", "KW_NAMES", "RETURN_CONST"):
            return item.argval
        if real == "LOAD_GLOBAL":
            return (item.push_null, item.argval)
        if real == "LOAD_ATTR" and self.facts.load_attr_method_bit:
            return (canonical == "LOAD_METHOD", item.argval)
        if real == "LOAD_SUPER_ATTR":
            return (bool(item.arg & 1), bool(item.arg & 2), item.argval)
        if real in _HASNAME:
            return item.argval
        if real == "LOAD_FAST" and canonical == "LOAD_CLOSURE":
            if (
                item.argval in self.template.co_varnames
                and item.argval in self.template.co_cellvars
            ):
                return item.argval  # a captured argument: its own slot holds the cell
            return self.var(item.argval)
        if real in _HASLOCAL:
            return item.argval
        if real in _HASFREE:
            return self.var(item.argval)
        if real == "COMPARE_OP":
            return b.Compare(item.arg if self.facts.version >= (3, 13) else item.arg & 15)
        if real == "BINARY_OP":
            return b.BinaryOp(item.arg)
        if real == "CALL_INTRINSIC_1":
            return b.Intrinsic1Op(_INTRINSIC_CODES.get(canonical, item.arg))
        if real == "CALL_INTRINSIC_2":
            return b.Intrinsic2Op(item.arg)
        if real == "CONVERT_VALUE":
            from bytecode.instr import FormatValue

            return FormatValue(item.arg)
        return item.arg


_HASNAME = {dis.opname[o] for o in dis.hasname}
_HASLOCAL = {dis.opname[o] for o in dis.haslocal}
_HASFREE = {dis.opname[o] for o in dis.hasfree}
_NOARG = {
    n
    for n, o in dis.opmap.items()
    if (o not in dis.hasarg if hasattr(dis, "hasarg") else o < dis.HAVE_ARGUMENT)
}


def _jump_name(canonical: str, backward: bool, facts: VersionFacts) -> str:
    if canonical in ("JUMP", "JUMP_NO_INTERRUPT"):
        if not backward:
            return "JUMP_FORWARD"
        return "JUMP_BACKWARD" if canonical == "JUMP" else "JUMP_BACKWARD_NO_INTERRUPT"
    if canonical.startswith("POP_JUMP_IF_"):
        if facts.backward_cond_jumps:
            way = "BACKWARD" if backward else "FORWARD"
            return canonical.replace("POP_JUMP_IF_", f"POP_JUMP_{way}_IF_")
        if backward:
            raise ValueError(f"{canonical} cannot jump backward on {facts.version}")
    return canonical


def to_bytecode(items: list, template: types.CodeType, facts: VersionFacts = VERSION) -> list:
    """`bytecode`-library items for the canonical `items` (no metadata)."""
    from bytecode import Instr
    from bytecode import TryBegin as BTryBegin
    from bytecode import TryEnd as BTryEnd

    asm = _Assembler(template, facts)
    position = {id(item): pos for pos, item in enumerate(items)}
    targets = {id(item.jump) for item in items if isinstance(item, Inst) and item.jump is not None}
    targets |= {id(item.handler) for item in items if isinstance(item, TryBegin)}
    out: list = []
    open_try = None
    for pos, item in enumerate(items):
        if id(item) in targets:
            out.append(asm.label_for(item))
        if isinstance(item, Label):
            continue
        if isinstance(item, TryBegin):
            open_try = BTryBegin(asm.label_for(item.handler), item.lasti, item.depth)
            out.append(open_try)
            continue
        if isinstance(item, TryEnd):
            if open_try is not None:
                out.append(BTryEnd(open_try))
                open_try = None
            continue
        loc = asm.location(item)
        for real, source in _spell(item, facts):
            if source is None:
                out.append(Instr(real, **loc))
                continue
            if item.jump is not None:
                backward = position[id(item.jump)] <= pos
                real = _jump_name(item.opname, backward, facts)
                out.append(Instr(real, asm.label_for(item.jump), **loc))
                continue
            if real in _NOARG:
                out.append(Instr(real, **loc))
                continue
            out.append(Instr(real, asm.arg(real, item, False), **loc))
    if open_try is not None:
        out.append(BTryEnd(open_try))
    return out


_CODE_ATTRS = (
    "argcount",
    "posonlyargcount",
    "kwonlyargcount",
    "flags",
    "name",
    "qualname",
    "filename",
)


def assemble(
    items: list,
    template: types.CodeType,
    *,
    argnames: tuple[str, ...] | None = None,
    name: str | None = None,
    flags: int | None = None,
    facts: VersionFacts = VERSION,
    **attrs,
) -> types.CodeType:
    """A code object running `items`, with `template`'s metadata (names, cells, flags, file)
    except what is overridden.  `argnames` replaces the arguments: they become plain
    positional ones (no *args/**kwargs)."""
    import bytecode as b

    bc = b.Bytecode(to_bytecode(items, template, facts))
    bc.argcount = template.co_argcount
    bc.posonlyargcount = template.co_posonlyargcount
    bc.kwonlyargcount = template.co_kwonlyargcount
    bc.flags = template.co_flags
    bc.name = template.co_name
    bc.qualname = template.co_qualname
    bc.filename = template.co_filename
    bc.first_lineno = template.co_firstlineno
    nargs = template.co_argcount + template.co_kwonlyargcount
    nargs += bool(template.co_flags & 0x04) + bool(template.co_flags & 0x08)
    bc.argnames = list(template.co_varnames[:nargs])
    bc.cellvars = list(template.co_cellvars)
    bc.freevars = list(template.co_freevars)
    consts = template.co_consts
    bc.docstring = consts[0] if consts and isinstance(consts[0], str) else b.UNSET
    if argnames is not None:
        bc.argnames = list(argnames)
        bc.argcount = len(argnames)
        bc.posonlyargcount = 0
        bc.kwonlyargcount = 0
        bc.flags &= ~(0x04 | 0x08)
    if name is not None:
        bc.name = name
        bc.qualname = name
    if flags is not None:
        bc.flags = flags
    for key, value in attrs.items():
        if key not in _CODE_ATTRS and key not in ("docstring", "first_lineno"):
            raise TypeError(f"unknown code attribute {key!r}")
        setattr(bc, key, value)
    return bc.to_code(compute_exception_stack_depths=False)


def reassemble(code: types.CodeType) -> types.CodeType:
    """Decode and emit again: the identity transform (the differential tests' subject)."""
    from .decode import _decode

    return assemble(body(_decode(code, VERSION)).items, code)


def decoded_body(code: Code) -> Body:
    return body(code)
