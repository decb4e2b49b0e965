"""The symbolic interpreter of CPython bytecode: one handler method per opcode.

`InstructionTranslatorBase` holds the handlers; dispatch is by handler name (version
names of the bytecode layer, `framejit.frameeval.bytecode`), and an opcode without a handler raises `Unsupported`, which
becomes a graph break.  `InstructionTranslator` traces a root frame: an `Unsupported`
there restarts the analysis with orders to stop at that instruction, where `breaks`
generates the graph-break code.  `InliningTranslator` traces a called user function
inside its caller; whatever it cannot handle propagates to the caller's CALL.
"""

from __future__ import annotations

import builtins as _builtins
import contextlib
import importlib.util
import operator
import sys
import threading
import types
from typing import Any

from framejit.frameeval import bytecode as fbc
from framejit.guards import BuiltinSource, GuardKind

from . import opcodes, stack, trace_rules
from .builtin_reads import guard_builtin_read
from .config import config
from .exc import RestartAnalysis, SkipFrame, Unsupported
from .instructions import DecodedCode, Inst, decode
from .readable_graph import name_after_local
from .sources import AttrSource, GlobalSource, LocalSource
from .variables import (
    CellVariable,
    ConstantVariable,
    DictVariable,
    FrameFreeVarCell,
    IteratorVariable,
    ListVariable,
    NestedUserFunctionVariable,
    NullVariable,
    SliceVariable,
    TensorVariable,
    TupleVariable,
    VariableTracker,
    context_managers,
    tensor_asserts,
    wrap,
)
from .variables.autocast import AutocastVariable
from .variables.base import LazyVariable, fold, is_constant_value
from .variables.builtins import (
    BuiltinVariable,
    binary_op,
    contains_op,
    getitem,
    identity_compare,
    unary_op,
)
from .variables.containers import contents_repr, mapping_items
from .variables.exception_objects import ExceptionObjectVariable
from .variables.exceptions import ObservedException, TracedRaise, exception_matches
from .variables.functions import MethodRef
from .variables.generators import GeneratorVariable, stop_iteration_error
from .variables.lazy_iterators import unpack_exactly
from .variables.objects import (
    GradModeVariable,
    NNModuleVariable,
    NullContextVariable,
    PythonModuleVariable,
    UserDefinedObjectVariable,
    WithExitVariable,
    store_generic,
)
from .variables.sets import SetVariable, key_of
from .variables.super_objects import SuperVariable
from .variables.sym_node import SymNodeVariable
from .variables.tensor_stores import store_tensor_attr
from .variables.user_classes import dunder_format, user_iterator_of
from .variables.warnings_models import CatchWarningsVariable

# __setattr__ slots that are object's generic store (BaseException's is its own slot)
# C __setattr__s that store as object.__setattr__ does (threading.local's: into the
# calling thread's dict, where the replay runs)
_GENERIC_SETATTR = (object.__setattr__, BaseException.__setattr__, threading.local.__setattr__)


def _handler_table(cls) -> dict[str, Any]:
    return {name: getattr(cls, name) for name in dir(cls) if name.isupper()}


_ABSENT = object()
_ORIGINAL_BUILTINS = dict(vars(_builtins))  # as framejit found them when imported


class InstructionTranslatorBase:
    def __init__(self, code, f_globals, f_builtins, symbolic_locals, cells, output, parent=None):
        self.code: types.CodeType = code
        self.decoded: DecodedCode = decode(code)
        self.insts: list[Inst] = self.decoded.insts
        self.f_globals = f_globals
        self.f_builtins = f_builtins if isinstance(f_builtins, dict) else vars(f_builtins)
        self.symbolic_locals: dict[str, VariableTracker] = symbolic_locals
        self.cells: dict[str, CellVariable] = cells
        self.output = output
        self.parent = parent
        self.stack: list[VariableTracker] = []
        self.ip = 0
        self.current: Inst | None = None
        self.kw_names: tuple = ()
        self.done = False
        self.return_value: VariableTracker | None = None
        # the exception an except block of this trace is handling (sys.exc_info()[1])
        self.handled: VariableTracker | None = None if parent is None else parent.handled
        self.depth = 0 if parent is None else parent.depth + 1
        self.root = self if parent is None else parent.root

    dispatch: dict[str, Any] = {}

    # ------------------------------------------------------------------ helpers
    def origin(self) -> str:
        lineno = self.current.lineno if self.current is not None else self.code.co_firstlineno
        return f"{self.code.co_filename}:{lineno} in {self.code.co_name}"

    def push(self, vt: VariableTracker) -> None:
        self.stack.append(vt)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> list[VariableTracker]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def step(self) -> None:
        index = self.ip
        inst = self.insts[index]
        self.current = inst
        self.ip += 1
        handler = self.dispatch.get(inst.opname)
        if handler is None:
            raise Unsupported(f"opcode {inst.realname} is not supported")
        root = self.root
        root.instruction_count += 1
        if root.instruction_count > config.max_traced_instructions:
            raise SkipFrame("too many instructions traced (huge unrolled loop?)")
        output = self.output
        caller, output.current_tx = output.current_tx, self
        try:
            handler(self, inst)
        except ObservedException as e:
            e.chain_to(self.handled)
            if not self.catch(e, index):
                raise
        finally:
            output.current_tx = caller

    # ------------------------------------------------------------------ exceptions
    def catch(self, exc: ObservedException, index: int) -> bool:
        """Enter this code's handler for an exception raised at instruction `index`, as
        CPython unwinds: the stack cut to the entry's depth, (lasti,) exc pushed."""
        entry = self.decoded.handler_for(index)
        if entry is None or len(self.stack) < entry.depth:
            return False
        self.entered_handler(index)
        del self.stack[entry.depth :]
        self.kw_names = ()
        if entry.lasti:
            self.push(ConstantVariable(self.insts[index].offset))
        self.push(exc.exc)
        self.ip = entry.target
        return True

    def entered_handler(self, index: int) -> None:
        """A handler of this code runs (the root frame remembers where: see run)."""

    def PUSH_EXC_INFO(self, inst):
        exc = self.pop()
        self.push(self.handled if self.handled is not None else ConstantVariable(None))
        self.handled = exc
        self.push(exc)

    def POP_EXCEPT(self, inst):
        previous = self.pop()
        self.handled = None if self._is_none(previous) else previous

    def CHECK_EXC_MATCH(self, inst):
        spec = self.pop()
        self.push(ConstantVariable(exception_matches(self.stack[-1], spec)))

    def RERAISE(self, inst):
        exc = self.pop()  # (an oparg only says where the lasti sits: CPython peeks it)
        if not isinstance(exc, ExceptionObjectVariable):
            raise Unsupported(f"re-raise of {exc}")
        raise TracedRaise(self, exc, fresh=False)

    def WITH_EXCEPT_START(self, inst):
        # [exit, lasti, previous exception, exception]: the exit says whether to swallow it
        self.push(context_managers.exit_with_exception(self, self.stack[-4], self.stack[-1]))

    def jump(self, inst: Inst) -> None:
        self.ip = inst.target

    def push_callable(self, fn: VariableTracker) -> None:
        """Push `fn` with the NULL that marks it as a plain callable, where this version puts it."""
        if fbc.VERSION.null_after_callable:
            self.push(fn)
            self.push(NullVariable())
        else:
            self.push(NullVariable())
            self.push(fn)

    def global_source(self, name: str):
        """A source that guards can evaluate with the *root* frame's globals."""
        root_globals = self.root.f_globals
        if self.f_globals is root_globals:
            return GlobalSource(name)
        return self.root.module_alias_source(self.f_globals, name)

    # ------------------------------------------------------------------ trivia
    def NOP(self, inst):
        pass

    RESUME = NOP
    COPY_FREE_VARS = NOP
    # 3.13 tests a jump's operand with TO_BOOL first; the jump handlers take any value
    TO_BOOL = NOP

    def MAKE_CELL(self, inst):
        name = inst.argval
        if name not in self.cells:
            value = self.symbolic_locals.pop(name, None)
            if isinstance(value, LazyVariable):
                value = wrap(self, value.value, value.source)
            self.cells[name] = CellVariable(value)

    def POP_TOP(self, inst):
        self.pop()

    def PUSH_NULL(self, inst):
        self.push(NullVariable())

    def COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst):
        self.stack[-1], self.stack[-inst.arg] = self.stack[-inst.arg], self.stack[-1]

    def KW_NAMES(self, inst):
        self.kw_names = inst.argval

    # ------------------------------------------------------------------ loads/stores
    def LOAD_CONST(self, inst):
        value = inst.argval
        if isinstance(value, types.CodeType) or is_constant_value(value):
            self.push(ConstantVariable(value))
        else:  # generated code embeds objects (iter, classes) as constants
            self.push(wrap(self, value, None))

    def LOAD_FAST(self, inst):
        self.push(self.read_local(inst.argval))

    def read_local(self, name: str) -> VariableTracker:
        vt = self.symbolic_locals.get(name)
        if vt is None:
            raise Unsupported(f"UnboundLocalError: local {name!r} read before assignment")
        if isinstance(vt, LazyVariable):
            vt = wrap(self, vt.value, vt.source)
            self.symbolic_locals[name] = vt
        return vt

    LOAD_FAST_CHECK = LOAD_FAST

    def LOAD_FAST_AND_CLEAR(self, inst):
        """An inlined comprehension saves the outer binding (NULL when unbound) and clears it."""
        value = self.symbolic_locals.pop(inst.argval, None)
        self.push(NullVariable() if value is None else value)

    def STORE_FAST(self, inst):
        value = self.pop()
        if isinstance(value, NullVariable):  # restoring an unbound name after a comprehension
            self.symbolic_locals.pop(inst.argval, None)
            return
        if isinstance(value, TensorVariable):
            name_after_local(value.node, inst.argval)
        self.symbolic_locals[inst.argval] = value

    def DELETE_FAST(self, inst):
        if inst.argval not in self.symbolic_locals:
            raise Unsupported(f"UnboundLocalError: del of unbound {inst.argval!r}")
        del self.symbolic_locals[inst.argval]

    def LOAD_GLOBAL(self, inst):
        value = self.load_global(inst.argval)
        if inst.push_null:
            self.push_callable(value)
        else:
            self.push(value)

    def load_global(self, name: str) -> VariableTracker:
        if self.f_globals is self.root.f_globals:
            pending = self.output.side_effects.pending_global(name)
            if pending is not None:
                return pending
        if name in self.f_globals:
            return wrap(self, self.f_globals[name], self.global_source(name))
        if name in self.f_builtins:
            value = self.f_builtins[name]
            guard_builtin_read(self, name, value)
            # a builtin the program replaced (builtins.isinstance = ...) is read through its
            # source: the replacement's closure has one
            patched = _ORIGINAL_BUILTINS.get(name, _ABSENT) is not value
            return wrap(self, value, BuiltinSource(name) if patched else None)
        raise Unsupported(f"NameError: name {name!r} is not defined")

    def STORE_GLOBAL(self, inst):
        value = self.pop()
        if self.f_globals is not self.root.f_globals:
            raise Unsupported("global store in a function of another module")
        self.output.side_effects.store_global(inst.argval, value)

    def LOAD_DEREF(self, inst):
        cell = self.cells.get(inst.argval)
        if cell is None:
            raise Unsupported(f"free variable {inst.argval!r} of the compiled frame")
        self.push(cell.load(self))

    def STORE_DEREF(self, inst):
        value = self.pop()
        cell = self.cells.get(inst.argval)
        if cell is None:
            raise Unsupported(f"store to free variable {inst.argval!r} of the compiled frame")
        if isinstance(value, TensorVariable):
            name_after_local(value.node, inst.argval)
        cell.store(self, value)

    def LOAD_CLOSURE(self, inst):
        cell = self.cells.get(inst.argval)
        if cell is None:
            raise Unsupported(f"closure over {inst.argval!r} of the compiled frame")
        self.push(cell)

    def LOAD_ATTR(self, inst):
        obj = self.pop()
        self.push(obj.var_getattr(self, inst.argval))

    def STORE_ATTR(self, inst):
        obj = self.pop()
        value = self.pop()
        self.store_attr(obj, inst.argval, value)

    def store_attr(self, obj: VariableTracker, name: str, value: VariableTracker) -> None:
        if isinstance(obj, ExceptionObjectVariable):
            self.output.side_effects.writes += 1
            obj.store_attr(name, value)
            return
        if isinstance(obj, UserDefinedObjectVariable):
            setattr_fn = getattr(type(obj.value), "__setattr__", object.__setattr__)
            if setattr_fn not in _GENERIC_SETATTR:
                if not isinstance(setattr_fn, types.FunctionType):
                    raise Unsupported(f"{type(obj.value).__name__}.__setattr__ is not Python")
                from .variables.functions import UserMethodVariable

                UserMethodVariable(setattr_fn, obj).call_function(
                    self, [ConstantVariable(name), value], {}
                )
                return
        if isinstance(obj, UserDefinedObjectVariable):
            store_generic(self, obj, name, value, "setattr")
            return
        if isinstance(obj, NNModuleVariable):
            self.output.side_effects.store_attr(obj, name, value)
            return
        if isinstance(obj, TensorVariable):
            store_tensor_attr(self, obj, name, value)
            return
        if isinstance(obj, NestedUserFunctionVariable):
            obj.store_attr(name, value)
            return
        if isinstance(obj, TupleVariable):
            obj.store_attr(self, name, value)
            return
        raise Unsupported(f"attribute store on {obj}")

    def DELETE_ATTR(self, inst):
        from .variables.attr_delete import delete_attr

        delete_attr(self, self.pop(), inst.argval)

    def LOAD_METHOD(self, inst):
        obj = self.pop()
        self.push_callable(MethodRef(obj, inst.argval))

    def LOAD_SUPER_ATTR(self, inst):
        obj = self.pop()
        cls = self.pop()
        fn = self.pop()
        if not (isinstance(fn, BuiltinVariable) and fn.value is super):
            raise Unsupported("LOAD_SUPER_ATTR with a `super` that is not the builtin")
        attr = SuperVariable(cls.as_python_constant(), obj).var_getattr(self, inst.argval)
        if inst.push_null:
            self.push_callable(attr)
        else:
            self.push(attr)

    def IMPORT_NAME(self, inst):
        fromlist = self.pop().as_python_constant()
        level = self.pop().as_python_constant()
        name = inst.argval
        try:
            absolute = importlib.util.resolve_name(
                "." * level + name, self.f_globals.get("__package__")
            )
        except (ImportError, ValueError):
            raise Unsupported(f"import of {name!r} (level {level}) cannot be resolved") from None
        loaded = sys.modules.get(absolute)
        # only imports that find everything loaded already: no module code runs at trace time
        if loaded is None or any(not hasattr(loaded, f) for f in fromlist or ()):
            raise Unsupported(f"import of {absolute!r} (not already imported)")
        module = __import__(name, self.f_globals, None, fromlist, level)
        if sys.modules.get(module.__name__) is not module:
            raise Unsupported(f"import of {absolute!r}: module not in sys.modules")
        self.push(PythonModuleVariable(module, self.root.module_source(module)))

    def IMPORT_FROM(self, inst):
        module = self.stack[-1]
        self.push(module.var_getattr(self, inst.argval))

    # ------------------------------------------------------------------ calls
    def _callable_and_args(self, nargs: int) -> tuple[VariableTracker, list]:
        """Pop a call's operands: the two slots below the args are [NULL, fn] / [fn, NULL]
        (by version) or [method, self]."""
        args = self.popn(nargs)
        first, second = self.popn(2)
        if isinstance(first, NullVariable):
            return second, args
        if isinstance(second, NullVariable):
            return first, args
        return first, [second, *args]

    def CALL(self, inst):
        fn, args = self._callable_and_args(inst.arg)
        kw_names = self.kw_names
        self.kw_names = ()
        self._finish_call(fn, args, kw_names)

    def CALL_KW(self, inst):
        kw_names = self.pop().as_python_constant()
        fn, args = self._callable_and_args(inst.arg)
        self._finish_call(fn, args, kw_names)

    def _finish_call(self, fn, args, kw_names) -> None:
        kwargs = {}
        if kw_names:
            kwargs = dict(zip(kw_names, args[-len(kw_names) :], strict=True))
            args = args[: -len(kw_names)]
        self.push(self.call_function(fn, args, kwargs))

    def CALL_FUNCTION_EX(self, inst):
        kwargs_vt = self.pop() if inst.arg & 1 else None
        args_vt = self.pop()
        fn, bound = self._callable_and_args(0)
        if bound:
            raise Unsupported("CALL_FUNCTION_EX without NULL")
        args = args_vt.unpack(self)
        kwargs = {}
        if kwargs_vt is not None:
            if not isinstance(kwargs_vt, DictVariable):
                raise Unsupported("**kwargs that is not a dict")
            kwargs = dict(kwargs_vt.items)
            if not all(type(k) is str for k in kwargs):
                raise Unsupported("TypeError: keywords must be strings")
        self.push(self.call_function(fn, args, kwargs))

    def call_function(self, fn: VariableTracker, args: list, kwargs: dict) -> VariableTracker:
        return fn.call_function(self, args, kwargs)

    def inline_user_function(self, fn_vt, args, kwargs) -> VariableTracker:
        if self.depth >= config.max_inline_depth:
            raise Unsupported("inlining too deep (recursion?)")
        if not stack.room_to_inline():
            raise Unsupported(
                "inlining deeper than the interpreter's recursion limit leaves room for"
            )
        code = fn_vt.get_code()
        rule = trace_rules.lookup(code.co_filename, code.co_qualname)
        if not rule.inline:
            raise Unsupported(f"call to {code.co_qualname} ({rule.place}: {rule.why})")
        bound, cells = fn_vt.bind(self, args, kwargs)
        self.output.inlined_calls += 1
        tracer = InliningTranslator(
            code, fn_vt.get_globals(), self.root.f_builtins, bound, cells, self.output, parent=self
        )
        if tracer.decoded.exception_entries:
            self.output.inlined_try = True
        if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generator, coroutine, async gen
            if code.co_flags & 0x20 and not code.co_flags & (0x80 | 0x200):
                tracer.is_generator = True
                gen = GeneratorVariable(tracer, fn_vt, args, kwargs)
                self.output.generators.append(gen)
                return gen
            raise Unsupported("inlining a coroutine/async generator")
        return tracer.run_inline()

    def MAKE_FUNCTION(self, inst):
        code = self.pop().as_python_constant()
        flags = inst.arg if fbc.VERSION.make_function_flags else 0
        closure = self.pop().unpack(self) if flags & 0x08 else []
        if flags & 0x04:
            self.pop()  # annotations
        kwdefaults = dict(self.pop().items) if flags & 0x02 else {}
        defaults = self.pop().unpack(self) if flags & 0x01 else []
        fn = NestedUserFunctionVariable(
            code, self.f_globals, defaults, kwdefaults, closure, code.co_qualname
        )
        fn.has_annotations = bool(flags & 0x04)
        self.push(fn)

    def SET_FUNCTION_ATTRIBUTE(self, inst):
        fn = self.pop()
        value = self.pop()
        if not isinstance(fn, NestedUserFunctionVariable):
            raise Unsupported(f"SET_FUNCTION_ATTRIBUTE on {fn}")
        if inst.arg == 0x08:
            fn.closure = value.unpack(self)
        elif inst.arg == 0x02:
            fn.kwdefaults = dict(value.items)
        elif inst.arg == 0x01:
            fn.defaults = value.unpack(self)
        elif inst.arg == 0x04:  # annotations are dropped, as MAKE_FUNCTION does
            fn.has_annotations = True
        else:
            raise Unsupported(f"SET_FUNCTION_ATTRIBUTE {inst.arg}")
        self.push(fn)

    # ------------------------------------------------------------------ operators
    def BINARY_OP(self, inst):
        b = self.pop()
        a = self.pop()
        op = opcodes.BINARY_OPS[inst.arg]
        self.push(binary_op(self, op, a, b))

    def COMPARE_OP(self, inst):
        b = self.pop()
        a = self.pop()
        self.push(binary_op(self, opcodes.COMPARE_OPS[inst.argval], a, b))

    def IS_OP(self, inst):
        b = self.pop()
        a = self.pop()
        op = operator.is_not if inst.arg else operator.is_
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            self.push(identity_compare(self, op, a, b))
            return
        self.push(binary_op(self, op, a, b))

    def CONTAINS_OP(self, inst):
        container = self.pop()
        needle = self.pop()
        value = contains_op(self, container, needle)
        self.push(ConstantVariable(not value if inst.arg else value))

    def UNARY_NEGATIVE(self, inst):
        self.push(unary_op(self, operator.neg, self.pop()))

    def UNARY_POSITIVE(self, inst):
        self.push(unary_op(self, operator.pos, self.pop()))

    def UNARY_INVERT(self, inst):
        self.push(unary_op(self, operator.invert, self.pop()))

    def UNARY_NOT(self, inst):
        self.push(unary_op(self, operator.not_, self.pop()))

    def BINARY_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        self.push(getitem(self, obj, index))

    def STORE_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        value = self.pop()
        obj.call_method(self, "__setitem__", [index, value], {})

    def DELETE_SUBSCR(self, inst):
        index = self.pop()
        obj = self.pop()
        obj.call_method(self, "__delitem__", [index], {})

    # ------------------------------------------------------------------ building
    def BUILD_TUPLE(self, inst):
        self.push(TupleVariable(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(ListVariable(self.popn(inst.arg)))

    def BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        result = {}
        for k, v in zip(items[::2], items[1::2], strict=True):
            result[key_of(k, self)] = v
        self.push(DictVariable(result))

    def BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop().as_python_constant()
        values = self.popn(inst.arg)
        self.push(DictVariable(dict(zip(keys, values, strict=True))))

    def BUILD_SET(self, inst):
        self.push(SetVariable(self.popn(inst.arg), tx=self))

    def SET_ADD(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "add", [value], {})

    def SET_UPDATE(self, inst):
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "update", [value], {})

    def BUILD_SLICE(self, inst):
        parts = self.popn(inst.arg)
        if len(parts) == 2:
            parts.append(ConstantVariable(None))
        self.push(SliceVariable(*parts))

    def BUILD_STRING(self, inst):
        parts = self.popn(inst.arg)
        self.push(ConstantVariable("".join(p.as_python_constant() for p in parts)))

    def FORMAT_VALUE(self, inst):
        spec = self.pop().as_python_constant() if inst.arg & 0x04 else ""
        value = self.pop()
        conv = inst.arg & 0x03
        if not value.is_python_constant():
            self.push(ConstantVariable(_format_contents(self, value, conv, spec)))
            return
        raw = value.as_python_constant()
        raw = {0: raw, 1: str(raw), 2: repr(raw), 3: ascii(raw)}[conv]
        self.push(ConstantVariable(fold(format, raw, spec)))

    def CONVERT_VALUE(self, inst):
        value = self.pop()
        if not value.is_python_constant():
            self.push(ConstantVariable(_format_contents(self, value, inst.arg, "")))
            return
        convert = {1: str, 2: repr, 3: ascii}[inst.arg]
        self.push(ConstantVariable(fold(convert, value.as_python_constant())))

    def FORMAT_SIMPLE(self, inst):
        value = self.pop()
        if not value.is_python_constant():
            self.push(ConstantVariable(_format_contents(self, value, 0, "")))
            return
        self.push(ConstantVariable(fold(format, value.as_python_constant(), "")))

    def FORMAT_WITH_SPEC(self, inst):
        spec = self.pop().as_python_constant()
        value = self.pop()
        if not value.is_python_constant():
            self.push(ConstantVariable(_format_contents(self, value, 0, spec)))
            return
        self.push(ConstantVariable(fold(format, value.as_python_constant(), spec)))

    def LIST_APPEND(self, inst):
        value = self.pop()
        target = self.stack[-inst.arg]
        target.items.append(value)
        # a list a resume function was handed (a comprehension broken mid-way) is real
        self.output.side_effects.mutated(target)

    def LIST_EXTEND(self, inst):
        value = self.pop()
        target = self.stack[-inst.arg]
        target.items.extend(value.unpack(self))
        self.output.side_effects.mutated(target)

    def LIST_TO_TUPLE(self, inst):
        self.push(TupleVariable(self.pop().unpack(self)))

    def MAP_ADD(self, inst):
        value = self.pop()
        key = self.pop()
        target = self.stack[-inst.arg]
        target.items[target._key(key, self)] = value
        self.output.side_effects.mutated(target)

    def DICT_UPDATE(self, inst):
        other = self.pop()
        target = self.stack[-inst.arg]
        target.items.update(self._mapping_items(other))
        self.output.side_effects.mutated(target)

    def DICT_MERGE(self, inst):
        """`f(**a, **b)`: as DICT_UPDATE, but a key given twice is Python's TypeError."""
        other = self.pop()
        target = self.stack[-inst.arg]
        items = self._mapping_items(other)
        repeated = [k for k in items if k in target.items]
        if repeated:
            raise Unsupported(
                f"TypeError: got multiple values for keyword argument {repeated[0]!r}"
            )
        target.items.update(items)
        self.output.side_effects.mutated(target)

    def _mapping_items(self, other) -> dict:
        items = mapping_items(self, other)
        if items is None:
            raise Unsupported(f"TypeError: {other} is not a mapping")
        return items

    def UNPACK_SEQUENCE(self, inst):
        seq = self.pop()
        items = unpack_exactly(self, seq, inst.arg)
        if items is None:
            items = seq.unpack(self)
        if len(items) != inst.arg:
            raise Unsupported(f"ValueError: unpacking {len(items)} values into {inst.arg}")
        for item in reversed(items):
            self.push(item)

    def UNPACK_EX(self, inst):
        items = self.pop().unpack(self)
        before, after = inst.arg & 0xFF, inst.arg >> 8
        if len(items) < before + after:
            raise Unsupported("ValueError: not enough values to unpack")
        middle = ListVariable(items[before : len(items) - after])
        result = [*items[:before], middle, *items[len(items) - after :]]
        for item in reversed(result):
            self.push(item)

    # ------------------------------------------------------------------ control flow
    def JUMP(self, inst):
        self.jump(inst)

    JUMP_NO_INTERRUPT = JUMP

    def _truth(self, vt: VariableTracker) -> bool:
        return vt.truth(self)

    def POP_JUMP_IF_FALSE(self, inst):
        value = self.stack[-1]
        truth = self._truth(value)
        self.pop()
        if not truth:
            self.jump(inst)

    def POP_JUMP_IF_TRUE(self, inst):
        value = self.stack[-1]
        if tensor_asserts.rewrite(self, value, inst):  # `assert tensor, "message"`
            self.pop()
            self.jump(inst)
            return
        truth = self._truth(value)
        self.pop()
        if truth:
            self.jump(inst)

    def POP_JUMP_IF_NONE(self, inst):
        value = self.stack[-1]
        is_none = self._is_none(value)
        self.pop()
        if is_none:
            self.jump(inst)

    def POP_JUMP_IF_NOT_NONE(self, inst):
        value = self.stack[-1]
        is_none = self._is_none(value)
        self.pop()
        if not is_none:
            self.jump(inst)

    @staticmethod
    def _is_none(vt: VariableTracker) -> bool:
        if isinstance(vt, ConstantVariable):
            return vt.value is None
        return False

    def JUMP_IF_FALSE_OR_POP(self, inst):
        if not self._truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def JUMP_IF_TRUE_OR_POP(self, inst):
        if self._truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def GET_ITER(self, inst):
        obj = self.pop()
        if isinstance(obj, IteratorVariable):
            self.push(obj)
            return
        lazy = user_iterator_of(self, obj)
        if lazy is not None:
            self.push(lazy)
            return
        self.push(IteratorVariable(obj.unpack(self)))

    def FOR_ITER(self, inst):
        it = self.stack[-1]
        if not isinstance(it, IteratorVariable):
            raise Unsupported(f"for loop over {it}")
        item = it.next(self)
        if item is None:  # exhausted: the iterator goes, and so does END_FOR (3.12+)
            self.pop()
            self.ip = inst.target + fbc.VERSION.for_iter_exit_skip
        else:
            self.push(item)

    def GET_YIELD_FROM_ITER(self, inst):
        self.GET_ITER(inst)

    def SEND(self, inst):
        """`yield from it`: the next item, yielded by the YIELD_VALUE that follows; once
        `it` is done, its return value (None for a container's iterator) replaces it
        (3.11) or goes above it for END_SEND (3.12+), at the jump target."""
        sent = self.pop()
        it = self.stack[-1]
        if not isinstance(it, IteratorVariable):
            raise Unsupported(f"yield from {it}")
        if isinstance(it, GeneratorVariable):
            item = it.resume(self, sent)
        elif sent.is_python_constant() and sent.as_python_constant() is None:
            item = it.next(self)
        else:
            raise Unsupported("send() of a value into a delegated iterator")
        if item is not None:
            self.delegate = it
            self.push(item)
            return
        self.delegate = None
        result = getattr(it, "result", None) or ConstantVariable(None)
        if sys.version_info < (3, 12):
            self.pop()
        self.push(result)
        self.jump(inst)

    def CLEANUP_THROW(self, inst):
        """3.12+: an exception thrown into a `yield from`: the delegated iterator's
        StopIteration is the expression's value, anything else goes on up."""
        exc = self.pop()
        self.popn(2)  # the delegated iterator, the last value sent
        if isinstance(exc, ExceptionObjectVariable) and issubclass(exc.cls, StopIteration):
            self.push(ConstantVariable(None))
            self.push(exc.var_getattr(self, "value"))
            return
        raise TracedRaise(self, exc, fresh=False)

    def END_SEND(self, inst):
        value = self.pop()
        self.pop()
        self.push(value)

    def END_FOR(self, inst):
        self.popn(fbc.VERSION.end_for_pops)

    def BEFORE_WITH(self, inst):
        ctx = self.pop()
        if isinstance(ctx, UserDefinedObjectVariable) and type(ctx.value) is contextlib.nullcontext:
            # its type is guarded (an input) or fixed (made by the trace); enter_result is read
            result = ctx.var_getattr(self, "enter_result")
            self.push(WithExitVariable(NullContextVariable()))
            self.push(result)
            return
        if isinstance(ctx, NullContextVariable) and self.insts[self.ip].opname != "POP_TOP":
            raise Unsupported("`with profiler-context as name:` (the object is used)")
        if isinstance(ctx, CatchWarningsVariable):
            ctx.enter(self)
            self.push(WithExitVariable(ctx))
            self.push(ctx.enter_result(bound=self.insts[self.ip].opname != "POP_TOP"))
            return
        if isinstance(ctx, AutocastVariable):
            self.push(WithExitVariable(ctx))
            self.push(ctx.call_method(self, "__enter__", [], {}))  # (autocast's is self)
            return
        if not isinstance(ctx, (GradModeVariable, NullContextVariable)):
            entered = context_managers.enter(self, ctx)
            if entered is None:
                raise Unsupported(f"with-block over {ctx}")
            self.stack.extend(entered)  # the bound __exit__, what __enter__ returned
            return
        self.push(WithExitVariable(ctx))
        ctx.enter(self)
        self.push(ConstantVariable(None))

    def RAISE_VARARGS(self, inst):
        from .variables.exceptions import raise_exception

        if inst.arg == 0:  # bare `raise`: the exception being handled
            if self.handled is None:
                raise Unsupported("bare raise outside a traced except block")
            raise TracedRaise(self, self.handled, fresh=False)
        if inst.arg == 2:
            raise_exception(self, inst, self.stack[-2], cause=self.stack[-1])
        raise_exception(self, inst, self.stack[-1])

    def LOAD_ASSERTION_ERROR(self, inst):
        self.push(BuiltinVariable(AssertionError))

    def CALL_INTRINSIC_1(self, inst):
        """3.12+: the one-argument intrinsics of traced code (their numbers: _INTRINSICS_1)."""
        value = self.pop()
        name = _INTRINSICS_1.get(inst.arg)
        if name == "STOPITERATION_ERROR":  # PEP 479, in a generator's outermost handler
            if isinstance(value, ExceptionObjectVariable) and issubclass(value.cls, StopIteration):
                value = stop_iteration_error(value)
            self.push(value)
        elif name == "UNARY_POSITIVE":
            self.push(unary_op(self, operator.pos, value))
        elif name == "LIST_TO_TUPLE":
            self.push(TupleVariable(value.unpack(self)))
        else:
            raise Unsupported(f"CALL_INTRINSIC_1 {inst.arg}")

    def RETURN_GENERATOR(self, inst):
        self.push(ConstantVariable(None))

    def make_super(self, args) -> VariableTracker:
        if args:
            cls = args[0].as_python_constant()
            obj = args[1]
        else:
            cell = self.cells.get("__class__")
            if cell is None or not self.code.co_argcount:
                raise Unsupported("zero-argument super() outside a method")
            cls = cell.load(self).as_python_constant()
            obj = self.read_local(self.code.co_varnames[0])
        return SuperVariable(cls, obj)


# CPython's INTRINSIC_* numbers for CALL_INTRINSIC_1 (Include/internal/pycore_intrinsics.h)
_INTRINSICS_1 = {3: "STOPITERATION_ERROR", 5: "UNARY_POSITIVE", 6: "LIST_TO_TUPLE"}


def _format_contents(tx, value, conv: int, spec: str) -> str:
    """str()/repr()/format(x, "") of a user object with Python __str__/__repr__, or of a
    container of constants: its repr as it is now (the three agree for list, tuple, dict
    and set); a symbolic int formats as its number, guarded."""
    if isinstance(value, SymNodeVariable):
        raw = value.as_python_constant()
        raw = {0: raw, 1: str(raw), 2: repr(raw), 3: ascii(raw)}[conv]
        return fold(format, raw, spec)
    text = dunder_format(tx, value, conv, spec)
    if text is not None:
        return text.as_python_constant()
    text = contents_repr(value) if conv in (0, 1, 2) and spec == "" else None
    if text is None:
        raise Unsupported(f"f-string of {value}")
    return text


class InliningTranslator(InstructionTranslatorBase):
    """Traces a user function called from the frame; its result goes back to the caller."""

    def run_inline(self) -> VariableTracker:
        while not self.done:
            self.step()
        return self.return_value

    def RETURN_VALUE(self, inst):
        self.return_value = self.pop()
        self.done = True

    # a generator's frame (variables/generators.py) stops at each yield: the item is
    # `yielded`, `yield_index` is where a throw() raises, `delegate` the iterator of a
    # `yield from` under way
    is_generator = False
    yielded: VariableTracker | None = None
    yield_index = 0
    delegate: VariableTracker | None = None

    def YIELD_VALUE(self, inst):
        if not self.is_generator:
            raise Unsupported("yield outside an inlined generator")
        self.yielded = self.pop()
        self.yield_index = self.ip - 1


InstructionTranslatorBase.dispatch = _handler_table(InstructionTranslatorBase)
InliningTranslator.dispatch = _handler_table(InliningTranslator)


class InstructionTranslator(InstructionTranslatorBase):
    """Traces the root frame; a graph break stops it at `break_at` (instruction index, visit)."""

    def __init__(self, code, f_globals, f_builtins, f_locals, closure, output, break_at=None):
        symbolic_locals: dict[str, VariableTracker] = {}
        freevars = set(code.co_freevars)
        for name, value in f_locals.items():
            if name not in freevars:  # frameeval's f_locals also holds the closure's contents
                symbolic_locals[name] = LazyVariable(value, LocalSource(name))
        super().__init__(code, f_globals, f_builtins, symbolic_locals, {}, output)
        self.break_at = break_at  # (instruction index, visit count)
        self.closure = closure
        self.f_locals = f_locals
        self.visits: dict[int, int] = {}
        self.instruction_count = 0
        self.break_inst: Inst | None = None
        self.aliases: dict[str, Any] = {}
        self.module_sources: dict[int, tuple[Any, GlobalSource]] = {}  # id -> (module, source)
        self.first_handler: tuple[Inst, int] | None = None  # (raising instruction, visit)

    def _class_cell(self) -> CellVariable:
        """`__class__` (zero-argument super()): fixed by the type of `self`, which is guarded."""
        index = self.code.co_freevars.index("__class__")
        if not self.closure or not self.code.co_argcount:
            raise Unsupported("__class__ without a closure")
        first = self.code.co_varnames[0]
        self.output.add_guard(
            LocalSource(first), GuardKind.TYPE_MATCH, self.f_locals[first], origin=self.origin()
        )
        cls = self.closure[index].cell_contents
        return CellVariable(wrap(self, cls, None))

    def module_alias_source(self, module_globals: dict, name: str):
        """Globals of another module, reached as G['__framejit_import_<module>'].<name>."""
        module_name = module_globals.get("__name__")
        module = sys.modules.get(module_name) if module_name else None
        if module is None or vars(module) is not module_globals:
            return None
        return AttrSource(self.module_source(module), name)

    def module_source(self, module) -> GlobalSource:
        """A module of sys.modules, reached by guards as G['__framejit_import_<module>']."""
        found = self.module_sources.get(id(module))
        if found is not None and found[0] is module:
            return found[1]
        alias = "__framejit_import_" + module.__name__.replace(".", "_dot_")
        self.aliases[alias] = module
        self.f_globals.setdefault(alias, module)
        source = GlobalSource(alias)
        self.module_sources[id(module)] = (module, source)
        return source

    def run(self) -> None:
        insts = self.insts
        break_at = self.break_at
        visits = self.visits
        while not self.done:
            inst = insts[self.ip]
            visit = visits[inst.index] = visits.get(inst.index, 0) + 1
            if break_at is not None and inst.index == break_at[0] and visit == break_at[1]:
                self.break_inst = inst
                self.current = inst
                return
            self.current_step = (inst, visit)
            try:
                self.step()
            except Unsupported as e:
                if self.first_handler is not None:
                    # a break after a handler of this frame ran: the break goes where the
                    # exception was raised (no resume function starts inside a handler)
                    inst, visit = self.first_handler
                raise RestartAnalysis(inst.offset, e.reason, inst.lineno, visit, inst.index) from e

    def entered_handler(self, index: int) -> None:
        if self.first_handler is None:
            self.first_handler = (self.insts[index], self.visits[index])

    def RETURN_VALUE(self, inst):
        self.return_value = self.pop()
        self.done = True

    def make_super(self, args) -> VariableTracker:
        if not args:
            self.free_var_cell("__class__")
        return super().make_super(args)

    def free_var_cell(self, name: str) -> CellVariable | None:
        """The cell of one of this frame's free variables, made on first use (None: not one)."""
        cell = self.cells.get(name)
        if cell is not None or name not in self.code.co_freevars:
            return cell
        if name == "__class__":
            cell = self._class_cell()
        else:
            index = self.code.co_freevars.index(name)
            if self.closure is None or len(self.closure) != len(self.code.co_freevars):
                raise Unsupported(f"free variable {name!r} without the function's closure")
            cell = FrameFreeVarCell(name, self.closure[index])
        self.cells[name] = cell
        return cell

    def MAKE_CELL(self, inst):
        super().MAKE_CELL(inst)
        # the frame's own cell: a function rebuilt after the graph closes over it by name
        self.cells[inst.argval].frame_name = inst.argval

    def LOAD_DEREF(self, inst):
        self.free_var_cell(inst.argval)
        super().LOAD_DEREF(inst)

    def STORE_DEREF(self, inst):
        self.free_var_cell(inst.argval)
        super().STORE_DEREF(inst)

    def LOAD_CLOSURE(self, inst):
        self.free_var_cell(inst.argval)
        super().LOAD_CLOSURE(inst)


InstructionTranslator.dispatch = _handler_table(InstructionTranslator)

__all__ = [
    "InliningTranslator",
    "InstructionTranslator",
    "InstructionTranslatorBase",
    "LazyVariable",
]
