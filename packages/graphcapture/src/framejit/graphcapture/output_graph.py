"""The FX graph under construction: inputs, parameters, ops with FakeTensor propagation, guards.

One OutputGraph per traced root frame.  Ops are recorded as FX nodes whose example values
are computed on FakeTensors, so capture never runs real compute.  Any failure of fake
propagation becomes `Unsupported` (a graph break): the interpreter then runs the op for
real, which raises eager's exception when there is one.
"""

from __future__ import annotations

import operator
import weakref
from typing import Any

import torch
import torch.fx
from torch._dispatch.python import enable_python_dispatcher
from torch.fx.experimental.symbolic_shapes import is_accessor_node
from torch.utils._pytree import tree_map

from framejit.guards import Guard, GuardKind

from . import fake_checks
from .dim_policy import DimPolicy
from .dynamic_shapes import ShapeTracker
from .exc import Unsupported
from .fake_cache import CaptureFakeMode
from .fast_fake import fast_fake
from .module_policy import ModulePolicy
from .readable_graph import RESERVED_NAMES, graph_input_name, stack_trace_of
from .side_effects import SideEffects
from .sources import python_identifier, source_name


class WeakOwnerGraph(torch.fx.Graph):
    """An FX graph that refers to its GraphModule weakly.  fx's own back reference makes
    every GraphModule a reference cycle, freed only by the cycle collector: a module's
    parameters, held by the graph module as get_attr attributes, stayed alive after the
    user dropped the module (and the compiled code that used them) until the next
    collection.  The module still finds its graph; the graph finds its module while the
    module lives."""

    def _get_owner(self):
        ref = self.__dict__.get("_owner_ref")
        return None if ref is None else ref()

    def _set_owner(self, mod) -> None:
        self.__dict__["_owner_ref"] = None if mod is None else weakref.ref(mod)

    # fx reads and writes both names (Graph.__init__ and some passes use the private one)
    owning_module = property(_get_owner, _set_owner)
    _owning_module = property(_get_owner, _set_owner)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_owner_ref", None)
        return state


class GraphInput:
    __slots__ = ("example", "node", "source", "value")

    def __init__(self, source, value, node, example):
        self.source = source
        self.value = value
        self.node = node
        self.example = example


class OutputGraph:
    def __init__(
        self,
        f_globals: dict,
        dim_policy: DimPolicy | None = None,
        module_policy: ModulePolicy | None = None,
    ):
        self.f_globals = f_globals
        self.fullgraph = False  # set by convert_frame: Tensor.item() is then captured
        self.inlined_try = False  # an inlined function has try/with blocks (rerun.py)
        self.generators: list = []  # every generator the trace made (variables/generators.py)
        self.graph = WeakOwnerGraph()
        self.shapes = ShapeTracker()
        self.dim_policy = dim_policy or DimPolicy()
        self.module_policy = module_policy or ModulePolicy()
        self.fake_mode = CaptureFakeMode(
            allow_non_fake_inputs=False, shape_env=self.shapes.shape_env
        )
        self.sym_inputs: dict[Any, torch.fx.Node] = {}  # size symbol -> its placeholder
        self.inputs: dict[str, GraphInput] = {}
        self.attrs: dict[str, torch.Tensor] = {}
        # the graph's submodules: torch.cond's branch subgraphs (variables/control_flow.py)
        self.submodules: dict[str, torch.nn.Module] = {}
        self._attr_nodes: dict[int, torch.fx.Node] = {}
        self.guards: dict[tuple[str, Any], Guard] = {}
        self.side_effects = SideEffects()
        # autocast contexts the trace entered and has not left (variables/autocast.py)
        self.open_contexts: list = []
        # user functions the trace inlined: a frame without tensor ops that made calls runs
        # as traced (its callees are not captured again as frames of their own)
        self.inlined_calls = 0
        # an inlined closure's cells, one tracker per real cell (id -> (cell, tracker)): a
        # nonlocal store in one call is seen by the next
        self.closure_cells: dict[int, tuple] = {}
        self.wrapped: dict[str, Any] = {}  # source name -> tracker (one tracker per source)
        self.wrapped_by_id: dict[int, tuple[Any, Any]] = {}  # id -> (object, tracker)
        self._fakes: dict[int, torch.Tensor] = {}
        # the placeholders of each `.data =` store's target and value (tensor_stores)
        self.data_stores: list[tuple[torch.fx.Node, torch.fx.Node | None]] = []
        self._last_placeholder: torch.fx.Node | None = None
        self._input_names: set[str] = set()  # placeholder targets (L_x_; fx names the node l_x_)
        self.current_tx = None  # the translator stepping now: its line is each node's stack_trace

    # ------------------------------------------------------------------ guards
    def add_guard(self, source, kind: GuardKind, value: Any, origin=None, dynamic_dims=()) -> None:
        key = (source_name(source), kind)
        if key not in self.guards:
            extra = {"dynamic_dims": dynamic_dims} if dynamic_dims else {}
            self.guards[key] = Guard(source, kind, value, origin=origin, **extra)

    def all_guards(self) -> list[Guard]:
        """The trace's guards and the ShapeEnv's (read last: the backend may have added some)."""
        return [*self.guards.values(), *self.shapes.shape_guards()]

    # ------------------------------------------------------------------ inputs
    def fake(self, tensor: torch.Tensor) -> torch.Tensor:
        found = self._fakes.get(id(tensor))
        if found is None:
            found = fast_fake(self.fake_mode, tensor)
            if found is None:
                found = self.fake_mode.from_tensor(tensor, static_shapes=True)
            self._fakes[id(tensor)] = found
        return found

    def graph_input(self, source, value: torch.Tensor) -> GraphInput:
        key = source_name(source)
        found = self.inputs.get(key)
        if found is not None:
            return found
        example = self._fakes.get(id(value))
        if example is None:
            dims = self.dim_policy.dims(key, value)
            example = self.shapes.fake_input(self.fake_mode, value, source, dims)
            if example is not None:
                self._fakes[id(value)] = example
                self._sym_placeholders(example)
            else:
                example = self.fake(value)
        found = GraphInput(source, value, self._placeholder(source, example), example)
        self.inputs[key] = found
        return found

    def static_graph_input(self, source, value: torch.Tensor) -> GraphInput:
        """An input made from an argument at each call (torch.from_numpy(arr)): its sizes
        are fixed, as the argument's own guards check them."""
        key = source_name(source)
        found = self.inputs.get(key)
        if found is None:
            example = self.fake(value)
            found = GraphInput(source, value, self._placeholder(source, example), example)
            self.inputs[key] = found
        return found

    def _placeholder(self, source, example, name: str | None = None) -> torch.fx.Node:
        name = self._unique_name(name or graph_input_name(source), first=0)
        if self._last_placeholder is None:
            first = next(iter(self.graph.nodes), None)
            ctx = self.graph.inserting_before(first)
        else:
            ctx = self.graph.inserting_after(self._last_placeholder)
        with ctx:
            node = self.graph.placeholder(name)
        self._input_names.add(name)
        self._last_placeholder = node
        node.meta["example_value"] = example
        node.meta["val"] = example
        node.meta["source"] = source_name(source)
        return node

    def _sym_placeholders(self, fake: torch.Tensor) -> None:
        """A SymInt placeholder (before the tensor's, as torch.compile orders them) for each
        new size symbol of an input; the call passes the real size, read from its source."""
        for size in fake.shape:
            if not isinstance(size, torch.SymInt):
                continue
            sym = size.node.expr
            if sym in self.sym_inputs:
                continue
            source = self.shapes.sources[sym][0]
            node = self._placeholder(source, size, name=str(sym))
            self.sym_inputs[sym] = node
            key = source_name(source)
            self.inputs[key] = GraphInput(source, self.shapes.hints[sym], node, size)

    def int_input(self, source, value: int) -> tuple[torch.fx.Node, torch.SymInt]:
        """A SymInt placeholder for the int argument at `source`; the call passes it."""
        key = source_name(source)
        found = self.inputs.get(key)
        if found is not None:
            return found.node, found.example
        example = self.shapes.int_input(value, source)
        sym = example.node.expr
        node = self._placeholder(source, example, name=str(sym))
        self.sym_inputs[sym] = node
        self.inputs[key] = GraphInput(source, value, node, example)
        return node, example

    def sym_node(self, value) -> torch.fx.Node | None:
        """The placeholder of a SymInt that is exactly one input size symbol."""
        if isinstance(value, torch.SymInt):
            return self.sym_inputs.get(value.node.expr)
        return None

    def get_attr(self, source, value: torch.Tensor) -> torch.fx.Node:
        """A parameter/buffer of an nn.Module, read through get_attr (autograd reaches it)."""
        node = self._attr_nodes.get(id(value))
        if node is not None:
            return node
        name = self._unique_name(python_identifier(source))
        self.attrs[name] = value
        node = self.graph.get_attr(name)
        node.meta["example_value"] = self.fake(value)
        self._attr_nodes[id(value)] = node
        return node

    def submodule_attr(self, base: str, module: torch.nn.Module) -> torch.fx.Node:
        """A get_attr node for `module`, held by the graph module as a submodule."""
        name = self._unique_name(base)
        self.submodules[name] = module
        node = self.graph.get_attr(name)
        node.meta["example_value"] = module
        return node

    def _unique_name(self, base: str, first: int = 1) -> str:
        # fx's namespace holds every node name given out (a set, kept as nodes are made):
        # scanning the nodes on each call made a model's parameters quadratic
        used = getattr(getattr(self.graph, "_graph_namespace", None), "_used_names", None)
        if not isinstance(used, set):
            used = {n.name for n in self.graph.nodes}
        name, i = base, first
        taken = self._input_names
        while (
            name in used
            or name in taken
            or name in self.attrs
            or name in self.submodules
            or name in RESERVED_NAMES
        ):
            name = f"{base}_{i}"
            i += 1
        return name

    # ------------------------------------------------------------------ ops
    def run_fake(self, kind: str, target: Any, args: tuple, kwargs: dict) -> Any:
        refused = fake_checks.check(kind, target, args, kwargs)
        if refused is not None:
            raise Unsupported(refused)
        try:
            try:
                with self.fake_mode:
                    return _apply(kind, target, args, kwargs)
            except RuntimeError as e:
                if _CONCRETE_ONLY not in str(e):
                    raise
                # a C++ composite kernel without SymInt support (upsample_*.vec with symbolic
                # sizes): refused at dispatch, before any work; the Python dispatcher runs
                # the op's Python decomposition instead, as torch.compile's propagation does
                with self.fake_mode, enable_python_dispatcher():
                    return _apply(kind, target, args, kwargs)
        except Unsupported:
            raise
        except Exception as e:
            name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
            raise Unsupported(f"{name}: {type(e).__name__} during fake propagation: {e}") from e

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict, example: Any):
        node = self.graph.create_node(kind, target, args, kwargs)
        node.meta["example_value"] = example
        tx = self.current_tx
        if tx is not None:
            node.meta["stack_trace"] = stack_trace_of(tx.code, tx.current)
        return node

    def call_op(self, kind: str, target: Any, args: list, kwargs: dict):
        """Record `target(*args, **kwargs)` (variable trackers) and wrap its result."""
        from .variables.tensor import wrap_op_result

        proxy_args = tuple(_graph_arg(a.as_proxy()) for a in args)
        proxy_kwargs = {k: _graph_arg(v.as_proxy()) for k, v in kwargs.items()}
        fake_args = tuple(a.as_example() for a in args)
        fake_kwargs = {k: v.as_example() for k, v in kwargs.items()}
        example = self.run_fake(kind, target, fake_args, fake_kwargs)
        self.shapes.check_marked()
        node = self.create_node(kind, target, proxy_args, proxy_kwargs, example)
        return wrap_op_result(self, node, example)

    def getitem_node(self, node, index: int, example):
        return self.create_node("call_function", operator.getitem, (node, index), {}, example)

    def count_calls(self) -> int:
        return sum(
            1 for n in self.graph.nodes if n.op in ("call_function", "call_method", "call_module")
        )

    # ------------------------------------------------------------------ finishing
    def build_graph_module(self, outputs: list[torch.fx.Node]) -> torch.fx.GraphModule:
        graph = self.graph
        graph.output(tuple(outputs))
        root = torch.nn.Module()
        for name, value in self.attrs.items():
            if isinstance(value, torch.nn.Parameter):
                root.register_parameter(name, value)
            else:
                root.register_buffer(name, value)
        for name, module in self.submodules.items():
            root.add_module(name, module)
        # no general dead-code elimination: the backend gets every op the code ran, as
        # torch.compile hands it (its CompileCounter counts them); only the trivially pure
        # leftovers that torch.compile also drops go (_prune_trivial)
        _prune_trivial(graph)
        for node in list(graph.nodes):
            if node.op == "placeholder" and not node.users and node not in self._bound_syms():
                graph.erase_node(node)
        return torch.fx.GraphModule(root, graph, class_name="GraphModule")

    def _bound_syms(self) -> set[torch.fx.Node]:
        """SymInt placeholders of symbols in a kept tensor placeholder's sizes or strides:
        kept even when unused, as torch.compile keeps them (backends bind sizes by them)."""
        used: set = set()
        for node in self.graph.nodes:
            value = node.meta.get("example_value")
            if node.op == "placeholder" and node.users and isinstance(value, torch.Tensor):
                for s in (*value.shape, *value.stride()):
                    if isinstance(s, torch.SymInt):
                        used |= s.node.expr.free_symbols
        return {node for sym, node in self.sym_inputs.items() if sym in used}


def _is_sym_arg(arg: Any) -> bool:
    if isinstance(arg, (int, float, bool)):
        return True
    return isinstance(arg, torch.fx.Node) and isinstance(
        arg.meta.get("example_value"), (torch.SymInt, torch.SymFloat, torch.SymBool)
    )


def _is_trivial(node: torch.fx.Node) -> bool:
    """A node whose result, unused, can go without changing what the graph does: an
    attribute read, `operator.getitem` (the unused half of `x.min(dim)`'s pair, an element
    of a split), a size accessor, or arithmetic on size symbols alone."""
    if node.op == "get_attr":
        return True
    if node.op != "call_function":
        return False
    if node.target is operator.getitem or is_accessor_node(node):
        return True
    return (
        isinstance(node.meta.get("example_value"), (torch.SymInt, torch.SymFloat, torch.SymBool))
        and all(_is_sym_arg(a) for a in node.args)
        and all(_is_sym_arg(a) for a in node.kwargs.values())
    )


def _prune_trivial(graph: torch.fx.Graph) -> None:
    """Drop unused trivial nodes, last first (a chain of them goes at once), as
    torch.compile's output graph does before calling the backend."""
    for node in reversed(list(graph.nodes)):
        if not node.users and _is_trivial(node):
            graph.erase_node(node)


def tree_proxies(value):
    return tree_map(lambda v: v.as_proxy(), value)


# a Python scalar type where a torch op takes a dtype (`x.to(float)`): the dtype eager
# converts it to, which the graph's printed code can name (`float` there is a SyntaxError)
_DTYPE_OF_TYPE = {
    float: torch.float64,
    int: torch.int64,
    bool: torch.bool,
    complex: torch.complex128,
}


_CONCRETE_ONLY = "expected to contain only concrete integers"


def _apply(kind: str, target: Any, args: tuple, kwargs: dict) -> Any:
    if kind == "call_method":
        return getattr(args[0], target)(*args[1:], **kwargs)
    return target(*args, **kwargs)


def _graph_arg(value: Any) -> Any:
    if isinstance(value, type) and value in _DTYPE_OF_TYPE:
        return _DTYPE_OF_TYPE[value]
    return value
