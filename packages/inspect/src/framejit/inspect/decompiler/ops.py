"""Opcode handlers for expressions and simple statements: one method per canonical opcode.

Families that differ only in the ``ast`` node they build are table-driven
(``BINARY_OPERATORS``, ``UNARY_OPERATORS``, ``COMPARE_OPERATORS``) and the
handlers that share a body are aliases (``STORE_NAME = STORE_FAST``).
"""

from __future__ import annotations

import ast
import dis

from .engine import Block, SandboxAbort, Unsupported
from .values import (
    BuildClass,
    CodeConst,
    CompareChain,
    ExceptionValue,
    FunctionValue,
    ImportedModule,
    ImportedName,
    InPlace,
    Iterator,
    Marker,
    Null,
    PlainImport,
    WithEnd,
    WithExit,
    WithStart,
    assertion_error_name,
    chain_name,
    chain_statement,
    constant,
    marker_stmt,
)

_OPERATOR_NODES = {
    "+": ast.Add, "&": ast.BitAnd, "//": ast.FloorDiv, "<<": ast.LShift, "@": ast.MatMult,
    "*": ast.Mult, "%": ast.Mod, "|": ast.BitOr, "**": ast.Pow, ">>": ast.RShift,
    "-": ast.Sub, "/": ast.Div, "^": ast.BitXor,
}  # fmt: skip
#: BINARY_OP's oparg -> (operator node, in place?)
BINARY_OPERATORS = {
    index: (_OPERATOR_NODES[symbol.rstrip("=")], symbol.endswith("="))
    for index, (_, symbol) in enumerate(getattr(dis, "_nb_ops", []))
}
UNARY_OPERATORS = {
    "UNARY_NEGATIVE": ast.USub, "UNARY_POSITIVE": ast.UAdd,
    "UNARY_INVERT": ast.Invert, "UNARY_NOT": ast.Not,
}  # fmt: skip
COMPARE_OPERATORS = {
    "<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE,
}  # fmt: skip
CONVERSIONS = {0: -1, 1: ord("s"), 2: ord("r"), 3: ord("a")}


class Slot(Marker):
    """A value about to be stored; the stores that follow fill in its target.

    Used for ``for`` targets, ``with ... as`` targets and tuple unpacking, so that
    ``a, (b, c.d) = ...`` comes back as one assignment.
    """

    def __init__(self) -> None:
        self.target: ast.expr | None = None
        self.children: list[Slot] | None = None
        self.starred: int | None = None

    def complete(self) -> bool:
        if self.children is not None:
            return all(c.complete() for c in self.children)
        return self.target is not None

    def build(self) -> ast.expr:
        if self.children is not None:
            elts = [c.build() for c in self.children]
            if self.starred is not None:
                elts[self.starred] = ast.Starred(elts[self.starred], ast.Store())
            return ast.Tuple(elts, ast.Store())
        assert self.target is not None
        return self.target

    def as_expr(self) -> ast.expr:
        raise SandboxAbort("slot used as a value")


def _store_ctx(node: ast.expr) -> ast.expr:
    node = _copy(node)
    node.ctx = ast.Store()  # type: ignore[attr-defined]
    return node


def _del_ctx(node: ast.expr) -> ast.expr:
    node = _copy(node)
    node.ctx = ast.Del()  # type: ignore[attr-defined]
    return node


def _copy(node: ast.expr) -> ast.expr:
    fields = {name: getattr(node, name) for name in node._fields if hasattr(node, name)}
    return type(node)(**fields)


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


class ExpressionOps:
    """Handlers that build expressions on the stack or emit simple statements."""

    # ------------------------------------------------------------ loads
    def LOAD_CONST(self, ins, blk: Block):
        if (ins.argval is None and (skipped := self._with_exit(ins, blk)) is not None) or (
            ins.argval is None and (skipped := self._except_name_cleanup(ins, blk)) is not None
        ):
            return skipped
        if hasattr(ins.argval, "co_code"):
            blk.stack.append(CodeConst(ins.argval))
        else:
            blk.stack.append(constant(ins.argval))
        return None

    def LOAD_FAST(self, ins, blk: Block):
        blk.stack.append(ast.Name(self.local_name(ins.argval)))

    LOAD_NAME = LOAD_CLOSURE = LOAD_FAST_CHECK = LOAD_FAST

    def LOAD_DEREF(self, ins, blk: Block):
        blk.stack.append(ast.Name(ins.argval))

    LOAD_CLASSDEREF = LOAD_DEREF

    def push_callable(self, value: ast.expr, null: bool, blk: Block) -> None:
        """A callable with the NULL (or ``self`` slot) of a call, in this version's order."""
        if null and not self.bc.table.null_after_callable:
            blk.stack.append(Null())
        blk.stack.append(value)
        if null and self.bc.table.null_after_callable:
            blk.stack.append(Null())

    def LOAD_GLOBAL(self, ins, blk: Block):
        self.push_callable(ast.Name(ins.argval), ins.push_null, blk)

    def LOAD_ATTR(self, ins, blk: Block):
        obj = self.pop(blk)
        blk.stack.append(ast.Attribute(obj, ins.argval))

    def LOAD_METHOD(self, ins, blk: Block):
        obj = self.pop(blk)
        self.push_callable(ast.Attribute(obj, ins.argval), True, blk)

    def LOAD_ASSERTION_ERROR(self, ins, blk: Block):
        blk.stack.append(assertion_error_name())

    def LOAD_BUILD_CLASS(self, ins, blk: Block):
        blk.stack.append(BuildClass())

    def PUSH_NULL(self, ins, blk: Block):
        blk.stack.append(Null())

    RETURN_GENERATOR = PUSH_NULL

    def local_name(self, name: str) -> str:
        return "__iterable" if name == ".0" else name

    # ------------------------------------------------------------ stack shuffles
    def POP_TOP(self, ins, blk: Block):
        value = self.pop_raw(blk)
        if isinstance(value, ImportedModule):
            names = value.names or [ast.alias("*")]
            blk.emit(ast.ImportFrom(value.module or None, names, value.level))
        elif isinstance(value, Slot):
            value.target = ast.Name("_")  # ``with x:`` without ``as``; read by BEFORE_WITH
            value.children = None
            value.discarded = True  # type: ignore[attr-defined]
        elif isinstance(value, Marker) and not isinstance(value, (PlainImport, InPlace)):
            return None  # NULLs, iterators (break), exception values, exit functions
        else:
            expr = self.expr(value, blk)
            if not isinstance(expr, ast.Constant) or isinstance(expr.value, str):
                blk.emit(ast.Expr(expr))
        return None

    def COPY(self, ins, blk: Block):
        if len(blk.stack) < ins.arg:
            raise Unsupported("COPY below the stack")
        blk.stack.append(blk.stack[-ins.arg])

    def SWAP(self, ins, blk: Block):
        nxt = self.next_ins(ins.index)
        if ins.arg == 2 and nxt is not None and nxt.opname == "COPY" and nxt.arg == 2:
            cmp = self.next_ins(nxt.index)
            if cmp is not None and cmp.opname in {"COMPARE_OP", "IS_OP", "CONTAINS_OP"}:
                return self._compare_chain_link(cmp, blk)
        if len(blk.stack) < ins.arg:
            raise Unsupported("SWAP below the stack")
        blk.stack[-1], blk.stack[-ins.arg] = blk.stack[-ins.arg], blk.stack[-1]
        return None

    # ------------------------------------------------------------ operators
    def BINARY_OP(self, ins, blk: Block):
        right = self.pop(blk)
        left = self.pop(blk)
        node, inplace = BINARY_OPERATORS[ins.arg]
        if inplace:
            blk.stack.append(InPlace(left, node(), right))
        else:
            blk.stack.append(ast.BinOp(left, node(), right))

    def UNARY_NEGATIVE(self, ins, blk: Block):
        operand = self.pop(blk)
        blk.stack.append(ast.UnaryOp(UNARY_OPERATORS[ins.opname](), operand))

    UNARY_POSITIVE = UNARY_INVERT = UNARY_NOT = UNARY_NEGATIVE

    def _comparison_op(self, ins) -> ast.cmpop:
        if ins.opname == "IS_OP":
            return ast.IsNot() if ins.arg else ast.Is()
        if ins.opname == "CONTAINS_OP":
            return ast.NotIn() if ins.arg else ast.In()
        return COMPARE_OPERATORS[str(ins.argval).replace("bool(", "").rstrip(")")]()

    def COMPARE_OP(self, ins, blk: Block):
        right = self.pop(blk)
        left = self.pop_raw(blk)
        op = self._comparison_op(ins)
        if isinstance(left, CompareChain):
            cmp = left.compare
            blk.stack.append(ast.Compare(cmp.left, [*cmp.ops, op], [*cmp.comparators, right]))
        else:
            blk.stack.append(ast.Compare(self.expr(left, blk), [op], [right]))

    IS_OP = CONTAINS_OP = COMPARE_OP

    def _compare_chain_link(self, cmp_ins, blk: Block):
        """``a < b`` inside ``a < b < c``: SWAP 2; COPY 2; COMPARE_OP; jump-if-false to cleanup."""
        right = self.pop(blk)
        left = self.pop_raw(blk)
        op = self._comparison_op(cmp_ins)
        if isinstance(left, CompareChain):
            compare = ast.Compare(
                left.compare.left, [*left.compare.ops, op], [*left.compare.comparators, right]
            )
        else:
            compare = ast.Compare(self.expr(left, blk), [op], [right])
        jump = self.next_ins(cmp_ins.index)
        if jump is None or jump.opname not in {"JUMP_IF_FALSE_OR_POP", "POP_JUMP_IF_FALSE"}:
            raise Unsupported("unrecognised chained comparison")
        blk.stack.append(CompareChain(compare))
        return jump.index + 1

    def BINARY_SUBSCR(self, ins, blk: Block):
        index = self.pop(blk)
        container = self.pop(blk)
        blk.stack.append(ast.Subscript(container, index))

    def BUILD_SLICE(self, ins, blk: Block):
        parts = self.popn(blk, ins.arg)
        lower, upper = (None if _is_none(p) else p for p in parts[:2])
        step = None if len(parts) < 3 or _is_none(parts[2]) else parts[2]
        blk.stack.append(ast.Slice(lower, upper, step))

    def GET_LEN(self, ins, blk: Block):
        blk.stack.append(ast.Call(ast.Name("len"), [self.expr(blk.stack[-1], blk)], []))

    # ------------------------------------------------------------ containers
    def BUILD_TUPLE(self, ins, blk: Block):
        blk.stack.append(ast.Tuple(self.popn(blk, ins.arg), ast.Load()))

    def BUILD_LIST(self, ins, blk: Block):
        blk.stack.append(ast.List(self.popn(blk, ins.arg), ast.Load()))

    def BUILD_SET(self, ins, blk: Block):
        items = self.popn(blk, ins.arg)
        blk.stack.append(ast.Set(items) if items else ast.Call(ast.Name("set"), [], []))

    def BUILD_MAP(self, ins, blk: Block):
        items = self.popn(blk, 2 * ins.arg)
        blk.stack.append(ast.Dict(items[0::2], items[1::2]))

    def BUILD_CONST_KEY_MAP(self, ins, blk: Block):
        keys = self.pop(blk)
        values = self.popn(blk, ins.arg)
        key_nodes = keys.elts if isinstance(keys, ast.Tuple) else [keys]
        blk.stack.append(ast.Dict(list(key_nodes), values))

    def LIST_EXTEND(self, ins, blk: Block):
        iterable = self.pop(blk)
        target = blk.stack[-ins.arg]
        extra = (
            iterable.elts
            if isinstance(iterable, ast.Tuple)
            else [ast.Starred(iterable, ast.Load())]
        )
        if isinstance(target, (ast.List, ast.Set)):
            target.elts.extend(extra)
        else:
            raise Unsupported("extend of a non-literal")

    def SET_UPDATE(self, ins, blk: Block):
        iterable = self.pop(blk)
        target = blk.stack[-ins.arg]
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "frozenset"
        ):
            extra = iterable.args[0].elts if iterable.args else []
        else:
            extra = [ast.Starred(iterable, ast.Load())]
        if isinstance(target, ast.Call):  # set() placeholder of an empty BUILD_SET
            target = ast.Set([])
            blk.stack[-ins.arg] = target
        target.elts.extend(extra)

    def DICT_UPDATE(self, ins, blk: Block):
        mapping = self.pop(blk)
        target = blk.stack[-ins.arg]
        if not isinstance(target, ast.Dict):
            raise Unsupported("dict update of a non-literal")
        target.keys.append(None)
        target.values.append(mapping)

    DICT_MERGE = DICT_UPDATE

    def LIST_TO_TUPLE(self, ins, blk: Block):
        value = self.pop(blk)
        elts = value.elts if isinstance(value, ast.List) else [ast.Starred(value, ast.Load())]
        blk.stack.append(ast.Tuple(elts, ast.Load()))

    def LIST_APPEND(self, ins, blk: Block):
        value = self.pop(blk)
        target = blk.stack[-ins.arg]
        if isinstance(target, ast.List) and not self.is_comprehension:
            target.elts.append(value)
        else:
            blk.emit(self.comprehension_element("list", [value]))

    def SET_ADD(self, ins, blk: Block):
        value = self.pop(blk)
        blk.emit(self.comprehension_element("set", [value]))

    def MAP_ADD(self, ins, blk: Block):
        value = self.pop(blk)
        key = self.pop(blk)
        blk.emit(self.comprehension_element("dict", [key, value]))

    # ------------------------------------------------------------ strings
    def FORMAT_VALUE(self, ins, blk: Block):
        spec = self.pop(blk) if ins.arg & 4 else None
        value = self.pop(blk)
        if spec is not None and not isinstance(spec, ast.JoinedStr):
            spec = ast.JoinedStr([spec])
        formatted = ast.FormattedValue(value, CONVERSIONS[ins.arg & 3], spec)
        blk.stack.append(ast.JoinedStr([formatted]))

    def BUILD_STRING(self, ins, blk: Block):
        values: list[ast.expr] = []
        for part in self.popn(blk, ins.arg):
            values.extend(part.values if isinstance(part, ast.JoinedStr) else [part])
        blk.stack.append(ast.JoinedStr(values))

    # ------------------------------------------------------------ calls
    def KW_NAMES(self, ins, blk: Block):
        self.kw_names = tuple(self.code.co_consts[ins.arg])

    def CALL(self, ins, blk: Block):
        kw_names, self.kw_names = self.kw_names, ()
        raw_args = [self.pop_raw(blk) for _ in range(ins.arg)]
        raw_args.reverse()
        second = self.pop_raw(blk)
        first = self.pop_raw(blk)
        if isinstance(first, Null):
            func, args = second, raw_args
        elif isinstance(second, Null):  # 3.13: the NULL sits above the callable
            func, args = first, raw_args
        else:
            func, args = first, [second, *raw_args]
        n_kw = len(kw_names)
        positional = args[: len(args) - n_kw] if n_kw else args
        keywords = [
            ast.keyword(name, self.expr(v, blk))
            for name, v in zip(kw_names, args[len(args) - n_kw :], strict=True)
        ]
        blk.stack.append(self.make_call(func, positional, keywords, blk))

    def CALL_FUNCTION_EX(self, ins, blk: Block):
        kwargs = self.pop(blk) if ins.arg & 1 else None
        args = self.pop(blk)
        func = self.pop_raw(blk)
        if isinstance(func, Null):  # 3.13: the NULL sits above the callable
            func = self.pop_raw(blk)
        elif blk.stack and isinstance(blk.stack[-1], Null):
            blk.stack.pop()
        positional = (
            list(args.elts) if isinstance(args, ast.Tuple) else [ast.Starred(args, ast.Load())]
        )
        keywords = []
        if kwargs is not None:
            if isinstance(kwargs, ast.Dict):
                for key, value in zip(kwargs.keys, kwargs.values, strict=True):
                    name = (
                        key.value
                        if isinstance(key, ast.Constant) and isinstance(key.value, str)
                        else None
                    )
                    keywords.append(ast.keyword(name, value))
            else:
                keywords.append(ast.keyword(None, kwargs))
        blk.stack.append(self.make_call(func, positional, keywords, blk))

    def make_call(self, func, args: list, keywords: list[ast.keyword], blk: Block):
        """A call; calls of MAKE_FUNCTION/LOAD_BUILD_CLASS results become definitions later."""
        if (
            isinstance(func, FunctionValue)
            and len(args) == 1
            and not keywords
            and self.is_comprehension_code(func.code)
        ):
            return self.comprehension(func, self.expr(args[0], blk), blk)
        if isinstance(func, BuildClass):
            return self.class_value(args, keywords, blk)
        if len(args) == 1 and not keywords and self.is_definition(args[0]):
            return self.decorated(self.expr(func, blk), args[0])
        return ast.Call(self.expr(func, blk), [self.expr(a, blk) for a in args], keywords)

    # ------------------------------------------------------------ functions
    def MAKE_FUNCTION(self, ins, blk: Block):
        code = self.pop_raw(blk)
        if not isinstance(code, CodeConst):
            raise Unsupported("MAKE_FUNCTION without a code constant")
        fn = FunctionValue(code.code)
        for flag in (8, 4, 2, 1):  # until 3.12 the flags say what lies under the code
            if (ins.arg or 0) & flag:
                self.function_attribute(fn, flag, self.pop_raw(blk), blk)
        blk.stack.append(fn)

    def function_attribute(self, fn: FunctionValue, flag: int, value, blk: Block) -> None:
        """Closure (8), annotations (4), keyword defaults (2) or defaults (1) of ``fn``."""
        if flag == 8:
            return  # closure cells: the nested def reads them by name
        value = self.expr(value, blk)
        if flag == 4 and isinstance(value, ast.Tuple):
            elts = value.elts
            for k in range(0, len(elts) - 1, 2):
                if isinstance(elts[k], ast.Constant):
                    fn.annotations[elts[k].value] = elts[k + 1]
        elif flag == 2 and isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant):
                    fn.kwdefaults[key.value] = item
        elif flag == 1:
            fn.defaults = list(value.elts) if isinstance(value, ast.Tuple) else [ast.Starred(value)]

    # ------------------------------------------------------------ stores
    def STORE_FAST(self, ins, blk: Block):
        multi = self._multiple_assignment(ins, blk)
        if multi is not None:
            return multi
        self._declare(ins)
        self.store(ast.Name(self.local_name(ins.argval), ast.Store()), ins, blk)
        return None

    STORE_NAME = STORE_GLOBAL = STORE_DEREF = STORE_FAST

    def _declare(self, ins) -> None:
        """``global``/``nonlocal`` declarations the function body needs for this store."""
        if ins.opname == "STORE_GLOBAL" and self.code.co_name != "<module>":
            self.declared_global.add(ins.argval)
        if ins.opname == "STORE_DEREF" and ins.argval in self.code.co_freevars:
            self.declared_nonlocal.add(ins.argval)

    def _multiple_assignment(self, ins, blk: Block) -> int | None:
        """``x, y = f(), g()``: the values are pushed in order and stored in reverse.

        Emitting one assignment per store would evaluate ``g()`` before ``f()``.
        """
        simple = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}
        stores = [ins]
        while (nxt := self.next_ins(stores[-1].index)) is not None and nxt.opname in simple:
            stores.append(nxt)
        count = len(stores)
        if count < 2 or (len(blk.stack) - blk.floor < count and blk.sandbox):
            return None
        values = blk.stack[-count:] if len(blk.stack) >= count else []
        if len(values) != count or not all(isinstance(v, ast.expr) for v in values):
            return None
        if len({id(v) for v in values}) != count:
            return None  # ``a = b = f()`` (COPY): a chained assignment
        if any(
            chain_statement(v) is not None or any(e is v for e in blk.stack[:-count])
            for v in values
        ):
            return None
        names = {s.argval for s in stores}
        reads_targets = any(
            isinstance(n, ast.Name) and n.id in names for v in values for n in ast.walk(v)
        )
        if not reads_targets and not any(_has_effects(v) for v in values):
            return None  # plain values: one assignment per store reads as well and is exact
        del blk.stack[-count:]
        for store in stores:
            self._declare(store)
        targets = [ast.Name(self.local_name(s.argval), ast.Store()) for s in reversed(stores)]
        blk.emit(ast.Assign([ast.Tuple(targets, ast.Store())], ast.Tuple(list(values), ast.Load())))
        return stores[-1].index + 1

    def STORE_ATTR(self, ins, blk: Block):
        obj = self.pop(blk)
        self.store(ast.Attribute(obj, ins.argval, ast.Store()), ins, blk)

    def STORE_SUBSCR(self, ins, blk: Block):
        index = self.pop(blk)
        container = self.pop(blk)
        self.store(ast.Subscript(container, index, ast.Store()), ins, blk)

    def store(self, target: ast.expr, ins, blk: Block) -> None:
        value = self.pop_raw(blk)
        if isinstance(value, Slot):
            value.target = target
            return
        if isinstance(value, InPlace) and _same(_store_ctx(value.target), target):
            self.protect_stack(target, blk)
            blk.emit(ast.AugAssign(target, value.op, value.value))
            return
        if isinstance(value, PlainImport):
            blk.emit(self.import_statement(value, target))
            return
        if isinstance(value, ImportedName):
            asname = target.id if isinstance(target, ast.Name) and target.id != value.name else None
            value.source.names.append(ast.alias(value.name, asname))
            return
        if isinstance(target, ast.Name) and self.is_definition(value):
            definition = self.definition(value, target.id, blk)
            if definition is not None:
                blk.emit(definition)
                return
        chained = chain_statement(value)
        if chained is not None and blk.out and blk.out[-1] is chained:
            chained.targets.append(target)
            return
        expr = self.expr(value, blk)
        shared = any(entry is value for entry in blk.stack)
        if shared and not self._store_follows(ins.index) and isinstance(target, ast.Name):
            # ``(x := value)``: the value stays on the stack
            walrus = ast.NamedExpr(ast.Name(target.id, ast.Store()), expr)
            blk.stack[:] = [walrus if entry is value else entry for entry in blk.stack]
            return
        statement = ast.Assign([target], expr)
        self.protect_stack(target, blk, keep=value)
        blk.emit(statement)
        if shared:
            name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
            alias = chain_name(name, statement)
            blk.stack[:] = [alias if entry is value else entry for entry in blk.stack]

    def protect_stack(self, target: ast.expr, blk: Block, keep=None) -> None:
        """Values still on the stack were computed before this store: if the store could
        change what their expression reads (``a, b = b, a - 1``), name them first."""
        if isinstance(target, ast.Name):

            def affected(node: ast.AST) -> bool:
                return isinstance(node, ast.Name) and node.id == target.id
        elif isinstance(target, ast.Attribute):

            def affected(node: ast.AST) -> bool:
                return isinstance(node, ast.Attribute) and node.attr == target.attr
        else:

            def affected(node: ast.AST) -> bool:
                return isinstance(node, ast.Subscript)

        for position, entry in enumerate(blk.stack):
            if (
                entry is keep
                or not isinstance(entry, ast.expr)
                or chain_statement(entry) is not None
            ):
                continue
            if any(affected(node) for node in ast.walk(entry)):
                temp = self.shared.temp()
                blk.emit(ast.Assign([ast.Name(temp, ast.Store())], entry))
                blk.stack[position] = ast.Name(temp)

    def _store_follows(self, i: int) -> bool:
        nxt = self.next_ins(i)
        if nxt is None:
            return False
        if nxt.opname.startswith("STORE_") or nxt.opname in {"UNPACK_SEQUENCE", "UNPACK_EX"}:
            return True
        after = self.next_ins(nxt.index)
        return (
            nxt.opname.startswith("LOAD_")
            and after is not None
            and after.opname in {"STORE_ATTR", "STORE_SUBSCR"}
        )

    def UNPACK_SEQUENCE(self, ins, blk: Block):
        value = self.pop_raw(blk)
        count = (
            ins.arg if ins.opname == "UNPACK_SEQUENCE" else (ins.arg & 0xFF) + 1 + (ins.arg >> 8)
        )
        starred = (ins.arg & 0xFF) if ins.opname == "UNPACK_EX" else None
        if isinstance(value, Slot):
            value.children = [Slot() for _ in range(count)]
            value.starred = starred
            blk.stack.extend(reversed(value.children))
            return None
        expr = self.expr(value, blk)
        root = Slot()
        root.children = [Slot() for _ in range(count)]
        root.starred = starred
        trial = self.run_until_complete(
            ins.index + 1, blk, root, list(blk.stack) + list(reversed(root.children))
        )
        if trial is not None:
            end, stack = trial
            blk.stack[:] = stack
            blk.emit(ast.Assign([root.build()], expr))
            return end
        # the items are used as values (framejit's ``__temp_1[0]``): name the sequence once
        temp = self.shared.temp()
        blk.emit(ast.Assign([ast.Name(temp, ast.Store())], expr))
        if starred is not None:
            raise Unsupported("starred unpacking used as values")
        blk.stack.extend(
            ast.Subscript(ast.Name(temp), ast.Constant(k)) for k in reversed(range(count))
        )
        return None

    UNPACK_EX = UNPACK_SEQUENCE

    def run_until_complete(self, start: int, blk: Block, slot: Slot, stack: list):
        """Run the stores after ``start`` until ``slot`` has all its targets; None if they are not stores."""
        trial = type(blk)(
            stack=list(stack), stop=blk.stop, loops=blk.loops, reach=blk.reach, sandbox=True
        )
        trial.floor = 0
        i = start
        try:
            while not slot.complete():
                if i >= blk.stop:
                    return None
                ins = self.ins[i]
                if ins.is_jump or ins.opname in {"RETURN_VALUE", "CALL", "FOR_ITER"}:
                    return None
                nxt = self.dispatch(ins, trial)
                i = i + 1 if nxt is None else nxt
        except (SandboxAbort, Unsupported, IndexError, AttributeError):
            return None
        if trial.out:
            return None
        return i, trial.stack

    # ------------------------------------------------------------ deletes
    def DELETE_FAST(self, ins, blk: Block):
        blk.emit(ast.Delete([ast.Name(self.local_name(ins.argval), ast.Del())]))

    DELETE_NAME = DELETE_FAST

    def DELETE_GLOBAL(self, ins, blk: Block):
        if self.code.co_name != "<module>":
            self.declared_global.add(ins.argval)
        self.DELETE_FAST(ins, blk)

    def DELETE_DEREF(self, ins, blk: Block):
        if ins.argval in self.code.co_freevars:
            self.declared_nonlocal.add(ins.argval)
        blk.emit(ast.Delete([ast.Name(ins.argval, ast.Del())]))

    def DELETE_ATTR(self, ins, blk: Block):
        obj = self.pop(blk)
        blk.emit(ast.Delete([ast.Attribute(obj, ins.argval, ast.Del())]))

    def DELETE_SUBSCR(self, ins, blk: Block):
        index = self.pop(blk)
        container = self.pop(blk)
        blk.emit(ast.Delete([ast.Subscript(container, index, ast.Del())]))

    # ------------------------------------------------------------ imports
    def IMPORT_NAME(self, ins, blk: Block):
        fromlist = self.pop(blk)
        level = self.pop(blk)
        level_value = level.value if isinstance(level, ast.Constant) else 0
        if isinstance(fromlist, ast.Constant) and fromlist.value is None:
            blk.stack.append(PlainImport(ins.argval, level_value))
        else:
            blk.stack.append(ImportedModule(ins.argval, level_value))

    def IMPORT_FROM(self, ins, blk: Block):
        source = blk.stack[-1]
        if isinstance(source, PlainImport):  # ``import a.b as c``
            source.attrs.append(ins.argval)
            blk.stack.append(source)
            return
        if not isinstance(source, ImportedModule):
            raise Unsupported("IMPORT_FROM without IMPORT_NAME")
        blk.stack.append(ImportedName(source, ins.argval))

    def IMPORT_STAR(self, ins, blk: Block):
        source = self.pop_raw(blk)
        module = source.module if isinstance(source, (ImportedModule, PlainImport)) else "?"
        level = source.level if isinstance(source, (ImportedModule, PlainImport)) else 0
        blk.emit(ast.ImportFrom(module or None, [ast.alias("*")], level))

    def import_statement(self, value: PlainImport, target: ast.expr) -> ast.stmt:
        name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
        if value.level:
            return ast.ImportFrom(None, [ast.alias(value.module, name)], value.level)
        if value.attrs or name != value.module.split(".")[0]:
            return ast.Import([ast.alias(value.module, name)])
        return ast.Import([ast.alias(value.module)])

    # ------------------------------------------------------------ simple statements
    def RETURN_VALUE(self, ins, blk: Block):
        blk.emit(ast.Return(self.pop(blk)))
        return blk.stop if self._ends_block(ins.index, blk) else None

    def RAISE_VARARGS(self, ins, blk: Block):
        cause = self.pop(blk) if ins.arg >= 2 else None
        exc = self.pop(blk) if ins.arg >= 1 else None
        blk.emit(ast.Raise(exc, cause))
        return blk.stop if self._ends_block(ins.index, blk) else None

    def RERAISE(self, ins, blk: Block):
        # compiler-made (end of a finally/with/except handler): not a source statement
        return blk.stop if self._ends_block(ins.index, blk) else None

    def _ends_block(self, i: int, blk: Block) -> bool:
        """After a terminator, the rest of the block is dead unless a jump lands in it.

        Duplicated ``return`` blocks right after a terminator are dead too: the tests that
        jump to them were folded into the structure already (see ``Bytecode.same_exit``).
        """
        j = i + 1
        while j + 1 < blk.stop and j in self.bc.exit_blocks:
            j += 2
        if j >= blk.stop:
            return True
        return not any(k in self.jump_targets for k in range(i + 1, blk.stop))

    def PRINT_EXPR(self, ins, blk: Block):
        blk.emit(ast.Expr(self.pop(blk)))

    def SETUP_ANNOTATIONS(self, ins, blk: Block):
        return None

    # ------------------------------------------------------------ generators
    def YIELD_VALUE(self, ins, blk: Block):
        value = self.pop(blk)
        blk.stack.append(ast.Yield(None if _is_none(value) else value))

    def GET_YIELD_FROM_ITER(self, ins, blk: Block):
        return None  # the iterable stays; SEND turns it into ``yield from``

    def GET_AWAITABLE(self, ins, blk: Block):
        blk.stack.append(ast.Await(self.pop(blk)))

    def SEND(self, ins, blk: Block):
        self.pop(blk)  # the value sent first (None)
        source = self.pop(blk)
        blk.stack.append(source if isinstance(source, ast.Await) else ast.YieldFrom(source))
        return ins.target

    def ASYNC_GEN_WRAP(self, ins, blk: Block):
        return None

    # ------------------------------------------------------------ iteration and handlers
    def GET_ITER(self, ins, blk: Block):
        blk.stack.append(Iterator(self.pop(blk)))

    def PUSH_EXC_INFO(self, ins, blk: Block):
        blk.stack.append(ExceptionValue())

    def POP_EXCEPT(self, ins, blk: Block):
        if blk.stack and isinstance(blk.stack[-1], ExceptionValue):
            blk.stack.pop()

    def CHECK_EXC_MATCH(self, ins, blk: Block):
        exc_type = self.pop(blk)
        blk.stack.append(ast.Call(ast.Name("isinstance"), [ast.Name("__exception"), exc_type], []))

    def _except_name_cleanup(self, ins, blk: Block):
        """``e = None; del e`` that ends ``except E as e:`` is not source."""
        store = self.next_ins(ins.index)
        delete = self.next_ins(store.index) if store else None
        if (
            store is not None
            and delete is not None
            and store.opname in {"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"}
            and delete.opname.startswith("DELETE_")
            and delete.argval == store.argval
        ):
            return delete.index + 1
        return None

    # ------------------------------------------------------------ with
    def BEFORE_WITH(self, ins, blk: Block):
        ctx = self.pop(blk)
        slot = Slot()
        is_async = ins.opname == "BEFORE_ASYNC_WITH"
        start = self._past_await(ins.index + 1) if is_async else ins.index + 1
        if start is None:
            raise Unsupported("async with without its await")
        blk.stack.append(WithExit(ctx, len(blk.stack)))
        trial = self.run_until_complete(start, blk, slot, [*blk.stack, slot])
        if trial is None:
            raise Unsupported("with statement target")
        end, stack = trial
        blk.stack[:] = stack
        target = None if getattr(slot, "discarded", False) else slot.build()
        blk.emit(marker_stmt(WithStart(ctx, target, is_async)))
        return end

    BEFORE_ASYNC_WITH = BEFORE_WITH

    def _past_await(self, i: int) -> int | None:
        """Where the awaited value is ready: ``GET_AWAITABLE; LOAD_CONST None; SEND`` loop at
        ``i`` (3.12+: and END_SEND); None if there is no such loop."""
        names = [x.opname for x in self.ins[i : i + 3]]
        if names != ["GET_AWAITABLE", "LOAD_CONST", "SEND"] or self.ins[i + 2].target is None:
            return None
        after = self.ins[i + 2].target
        return after + 1 if self.ins[after].opname == "END_SEND" else after

    def _with_exit(self, ins, blk: Block):
        """``None, None, None; CALL 2; POP_TOP``: a with body's exit (normal or by return/break)."""
        pattern = self.bc.table.with_exit
        names = [i.opname for i in self.ins[ins.index : ins.index + len(pattern)]]
        past = ins.index + len(pattern)
        if tuple(names[:-1]) == pattern[:-1] and names[-1] == "GET_AWAITABLE":
            # ``async with``: the exit call is awaited, then its result popped
            ready = self._past_await(ins.index + len(pattern) - 1)
            if ready is None or self.ins[ready].opname != "POP_TOP":
                return None
            names[-1], past = "POP_TOP", ready + 1
        if tuple(names) != pattern or not all(
            i.argval is None for i in self.ins[ins.index : ins.index + 3]
        ):
            return None
        for depth in range(len(blk.stack) - 1, -1, -1):
            if isinstance(blk.stack[depth], WithExit):
                exit_marker = blk.stack.pop(depth)
                early = len(blk.stack) > exit_marker.depth
                blk.emit(marker_stmt(WithEnd(early)))
                return past
        return None


def _has_effects(node: ast.expr) -> bool:
    """Whether evaluating ``node`` may run code (calls, attribute and item access, yields)."""
    kinds = (
        ast.Call,
        ast.Attribute,
        ast.Subscript,
        ast.Await,
        ast.Yield,
        ast.YieldFrom,
        ast.NamedExpr,
        ast.BinOp,
    )
    return any(isinstance(n, kinds) for n in ast.walk(node))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
