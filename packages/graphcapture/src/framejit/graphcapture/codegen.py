"""PyCodegen: emits canonical instructions (`framejit.frameeval.bytecode`) that rebuild values.

Used for the rewritten frame (graph call, side-effect replay, stack/locals rebuild,
graph-break instruction, resume calls) and by the variable trackers' `reconstruct`.
A first "collect" pass only records which graph values are needed as graph outputs.
Calls are emitted as `add_push_null(load the callable)` + args + `call(n)`, which puts the
NULL where this interpreter wants it (below the callable until 3.12, above it on 3.13).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from framejit.frameeval import bytecode as fbc

from .sources import emit_load


class ConstBox:
    """Holds a constant for generated code; hashed by identity."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _unhashable(value: Any) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return any(_unhashable(item) for item in value)
    return type(value).__hash__ is None


class PyCodegen:
    def __init__(
        self,
        code,
        graph_output_var: str | None = None,
        output_index: dict | None = None,
        f_globals: dict | None = None,
    ):
        self.code = code
        self.f_globals = f_globals  # the generated frame's globals
        self.insts: list[Any] = []
        self.graph_output_var = graph_output_var
        self.output_index = output_index  # fx node -> position in the graph's output tuple
        self.collected: list[Any] = []  # collect mode: TensorVariables needed as outputs
        self._temps: dict[int, str] = {}
        self._temp_count = 0
        self.lineno: int | None = None
        # sources read before the side-effect replay, by name -> the local holding the value
        self.preloaded: dict[str, str] = {}
        self.sources_loaded: list[tuple[int, Any]] = []  # (instruction position, source)

    @property
    def collecting(self) -> bool:
        return self.output_index is None

    def emit(self, name: str, arg: Any = None, **kw) -> fbc.Inst:
        ins = fbc.inst(name, arg, lineno=self.lineno, **kw)
        self.insts.append(ins)
        return ins

    def extend(self, insts: list) -> None:
        self.insts.extend(insts)

    # ---------------------------------------------------------------- loads and stores
    def load_const(self, value: Any) -> None:
        if _unhashable(value):
            # a code object hashes its co_consts (frameeval keeps codes in a WeakSet): an
            # unhashable constant (a closure cell, a list) is loaded from a box's slot
            self.emit("LOAD_CONST", ConstBox(value))
            self.emit("LOAD_ATTR", "value")
            return
        self.emit("LOAD_CONST", value)

    def _is_cell(self, name: str) -> bool:
        return name in self.code.co_cellvars or name in self.code.co_freevars

    def load_local(self, name: str) -> None:
        self.emit("LOAD_DEREF" if self._is_cell(name) else "LOAD_FAST", name)

    def store_local(self, name: str) -> None:
        self.emit("STORE_DEREF" if self._is_cell(name) else "STORE_FAST", name)

    def load_global(self, name: str, push_null: bool = False) -> None:
        """LOAD_GLOBAL; with push_null, ready to be called (NULL placed for this version)."""
        self.emit("LOAD_GLOBAL", name, push_null=push_null)

    def store_global(self, name: str) -> None:
        self.emit("STORE_GLOBAL", name)

    def load_attr(self, name: str) -> None:
        self.emit("LOAD_ATTR", name)

    def store_attr(self, name: str) -> None:
        self.emit("STORE_ATTR", name)

    def load_method(self, name: str) -> None:
        self.emit("LOAD_METHOD", name)

    def load_source(self, source: Any) -> None:
        from .sources import source_name

        name = source_name(source)
        temp = self.preloaded.get(name)
        if temp is not None:
            self.emit("LOAD_FAST", temp)
            return
        self.sources_loaded.append((len(self.insts), source))
        emit_load(self, source)

    def load_global_dict(self, f_globals: dict | None = None) -> None:
        """The generated frame's globals (`globals()`), or `f_globals` when that is another
        module's: a function made in inlined code of another module reads its globals."""
        if f_globals is not None and f_globals is not self.f_globals:
            self.load_const(f_globals)
            return
        self.add_push_null(lambda: self.load_const(globals))
        self.call(0)

    def load_graph_output(self, vt) -> None:
        if self.collecting:
            if all(v.node is not vt.node for v in self.collected):
                self.collected.append(vt)
            self.emit("LOAD_CONST", None)  # placeholder: collect mode output is discarded
            return
        self.emit("LOAD_FAST", self.graph_output_var)
        self.emit("LOAD_CONST", self.output_index[vt.node])
        self.binary_subscr()

    def reconstruct_once(self, vt, build) -> None:
        """Build a mutable object once; later references load the same object."""
        temp = self._temps.get(id(vt))
        if temp is not None:
            self.emit("LOAD_FAST", temp)
            return
        build(self)
        temp = f"___tmp_{len(self._temps)}"
        self._temps[id(vt)] = temp
        self.emit("COPY", 1)
        self.emit("STORE_FAST", temp)

    # ---------------------------------------------------------------- stack ops
    def push_null(self) -> None:
        """A NULL stack slot as such (rebuilding a saved stack); to call, use add_push_null."""
        self.emit("PUSH_NULL")

    def add_push_null(self, load_callable: Callable[[], None]) -> None:
        """Load a callable for `call(n)`, with the NULL below it (3.11, 3.12) or above it (3.13)."""
        if fbc.VERSION.null_after_callable:
            load_callable()
            self.push_null()
        else:
            self.push_null()
            load_callable()

    def pop_top(self) -> None:
        self.emit("POP_TOP")

    def call(self, nargs: int) -> None:
        """Call the callable loaded by add_push_null / load_global(push_null) / load_method."""
        self.emit("CALL", nargs)

    def call_method(self, nargs: int) -> None:
        self.emit("CALL", nargs)

    def call_kw(self, nargs: int, names: tuple[str, ...]) -> None:
        """Call with the last len(names) of the nargs arguments passed by keyword."""
        if fbc.VERSION.has_kw_names:
            self.emit("KW_NAMES", tuple(names))
            self.emit("CALL", nargs)
        else:
            self.load_const(tuple(names))
            self.emit("CALL_KW", nargs)

    def make_closure(self, code) -> None:
        """A function of `code` closing over this frame's cells of the same names."""
        for name in code.co_freevars:
            self.emit("LOAD_CLOSURE", name)
        self.build_tuple(len(code.co_freevars))
        self.load_const(code)
        if fbc.VERSION.make_function_flags:
            self.emit("MAKE_FUNCTION", 8)
        else:
            self.emit("MAKE_FUNCTION")
            self.emit("SET_FUNCTION_ATTRIBUTE", 8)

    def jump_if(self, truthy: bool, label) -> None:
        """Pop the top of stack and jump to `label` when bool(it) == truthy."""
        if fbc.VERSION.jumps_need_bool:
            self.emit("TO_BOOL")
        self.emit("POP_JUMP_IF_TRUE" if truthy else "POP_JUMP_IF_FALSE", jump=label)

    def build_tuple(self, n: int) -> None:
        self.emit("BUILD_TUPLE", n)

    def build_list(self, n: int) -> None:
        self.emit("BUILD_LIST", n)

    def build_map(self, n: int) -> None:
        self.emit("BUILD_MAP", n)

    def build_slice(self, n: int) -> None:
        self.emit("BUILD_SLICE", n)

    def binary_subscr(self) -> None:
        self.emit("BINARY_SUBSCR")

    def store_subscr(self) -> None:
        self.emit("STORE_SUBSCR")

    def binary_op(self, op: int) -> None:
        """BINARY_OP with an NB_* argument (see opcodes.BINARY_OPS)."""
        self.emit("BINARY_OP", int(op))


_NULL, _VALUE, _EITHER = "null", "value", "either"


def check_call_layout(items: list) -> str | None:
    """Why the generated `items` would call with a NULL in the callable's slot (None: fine).

    Simulates which stack slots hold NULL through straight-line generated code (labels take
    the state of the jump or handler that reaches them).  A call laid out for another
    version (`push_null()` then the callable on 3.13) would crash the interpreter; the
    caller turns it into an eager run instead.
    """
    state: list[str] | None = []
    at_label: dict[int, list[str]] = {}
    null_after = fbc.VERSION.null_after_callable
    for item in items:
        if isinstance(item, fbc.Label):
            state = at_label.get(id(item), state)
            continue
        if isinstance(item, fbc.TryBegin):
            if state is not None:
                kept = state[: item.depth] + [_VALUE] * (item.lasti + 1)
                at_label[id(item.handler)] = kept
            continue
        if not isinstance(item, fbc.Inst) or state is None:
            continue
        name = item.opname
        if name in ("CALL", "CALL_KW"):
            n = item.arg + (name == "CALL_KW")
            if len(state) < n + 2:
                return f"{name} {item.arg} with {len(state)} values on the stack"
            slot = state[-(n + 2)] if null_after else state[-(n + 1)]
            if slot == _NULL:
                return f"{name} {item.arg} with a NULL where the callable goes"
        pops, pushes = fbc.pops_pushes(item)
        if pops > len(state):
            return f"{name} pops {pops} of {len(state)} values"
        before = state[:]
        del state[len(state) - pops :]
        if name == "PUSH_NULL":
            state.append(_NULL)
        elif name == "LOAD_GLOBAL" and item.push_null:
            state.extend([_VALUE, _NULL] if null_after else [_NULL, _VALUE])
        elif name == "LOAD_METHOD":
            state.extend([_EITHER, _EITHER])
        elif name in ("COPY", "SWAP"):
            state[:] = before
            if name == "COPY":
                state.append(state[-item.arg])
            else:
                state[-1], state[-item.arg] = state[-item.arg], state[-1]
        else:
            state.extend([_VALUE] * pushes)
        if item.jump is not None:
            at_label[id(item.jump)] = state[:]
        if name in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"):
            state = None
    return None
