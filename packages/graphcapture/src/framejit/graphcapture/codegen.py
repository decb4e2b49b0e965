"""PyCodegen: emits bytecode (as `bytecode.Instr` lists) that rebuilds tracked values.

Used for the rewritten frame (graph call, side-effect replay, stack/locals rebuild,
graph-break instruction, resume calls) and by the variable trackers' `reconstruct`.
A first "collect" pass only records which graph values are needed as graph outputs.
"""

from __future__ import annotations

from typing import Any

from bytecode import BinaryOp, CellVar, FreeVar, Instr

from . import pyversion
from .sources import emit_load


class PyCodegen:
    def __init__(self, code, graph_output_var: str | None = None, output_index: dict | None = None):
        self.code = code
        self.insts: list[Any] = []
        self.graph_output_var = graph_output_var
        self.output_index = output_index  # fx node -> position in the graph's output tuple
        self.collected: list[Any] = []  # collect mode: TensorVariables needed as outputs
        self._temps: dict[int, str] = {}
        self._temp_count = 0
        self.lineno: int | None = None

    @property
    def collecting(self) -> bool:
        return self.output_index is None

    def emit(self, name: str, arg: Any = None) -> None:
        kw = {"lineno": self.lineno} if self.lineno is not None else {}
        if arg is None and name in _NO_ARG:
            self.insts.append(Instr(name, **kw))
        else:
            self.insts.append(Instr(name, arg, **kw))

    def extend(self, insts: list) -> None:
        self.insts.extend(insts)

    # ---------------------------------------------------------------- loads and stores
    def load_const(self, value: Any) -> None:
        self.emit("LOAD_CONST", value)

    def _var(self, name: str):
        if name in self.code.co_cellvars:
            return CellVar(name)
        if name in self.code.co_freevars:
            return FreeVar(name)
        return None

    def load_local(self, name: str) -> None:
        var = self._var(name)
        if var is not None:
            self.emit("LOAD_DEREF", var)
        else:
            self.emit("LOAD_FAST", name)

    def store_local(self, name: str) -> None:
        var = self._var(name)
        if var is not None:
            self.emit("STORE_DEREF", var)
        else:
            self.emit("STORE_FAST", name)

    def load_global(self, name: str, push_null: bool = False) -> None:
        self.insts.append(pyversion.emit_load_global(name, push_null, self.lineno))

    def store_global(self, name: str) -> None:
        self.emit("STORE_GLOBAL", name)

    def load_attr(self, name: str) -> None:
        self.emit("LOAD_ATTR", name)

    def store_attr(self, name: str) -> None:
        self.emit("STORE_ATTR", name)

    def load_method(self, name: str) -> None:
        self.emit("LOAD_METHOD", name)

    def load_source(self, source: Any) -> None:
        emit_load(self, source)

    def load_global_dict(self) -> None:
        self.push_null()
        self.load_const(globals)
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
        self.emit("PUSH_NULL")

    def pop_top(self) -> None:
        self.emit("POP_TOP")

    def call(self, nargs: int) -> None:
        """Call with [NULL, callable, *args] on the stack."""
        self.insts.extend(pyversion.emit_call(nargs, self.lineno))

    def call_method(self, nargs: int) -> None:
        """Call after LOAD_METHOD (same sequence on 3.11)."""
        self.insts.extend(pyversion.emit_call(nargs, self.lineno))

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

    def binary_op(self, op: BinaryOp) -> None:
        self.emit("BINARY_OP", op)


_NO_ARG = {
    "PUSH_NULL",
    "POP_TOP",
    "BINARY_SUBSCR",
    "STORE_SUBSCR",
    "RETURN_VALUE",
    "GET_ITER",
    "NOP",
}
