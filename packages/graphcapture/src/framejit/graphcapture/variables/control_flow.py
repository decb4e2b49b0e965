"""torch.cond traced: each branch into a subgraph of its own, one `cond` node in the graph.

`torch.cond(pred, true_fn, false_fn, operands)` with a tensor `pred` cannot be decided while
tracing, so both branches are traced, one after the other, into the frame's graph; the
nodes each one added are then moved into a GraphModule of their own (a submodule of the
graph), and one `torch.ops.higher_order.cond(pred, true_gm, false_gm, inputs)` node takes
their place.  `inputs` are the graph values the branches read from outside (the operands,
parameters, tensors they closed over), as the same placeholders of both subgraphs.  At run
time the graph calls the real operator, which runs the branch eager would run.  A constant
`pred` runs its branch inline, as eager does; a size relation is decided (and guarded) as
an `if` on it is.

Only what both subgraphs can hold is taken: a branch that writes anything outside itself
(an attribute, a container, a closure cell, an in-place op on an input), returns an input
or something that is not a tensor, or reads a non-tensor graph value, is a graph break,
and the call runs for real.  The branches' reads are guarded as any traced read is.
"""

from __future__ import annotations

import operator
import sys

import torch
import torch.fx
from torch.multiprocessing.reductions import StorageWeakRef

from ..exc import Unsupported
from ..fake_cache import CaptureFakeMode
from .base import VariableTracker
from .containers import BaseListVariable, ListVariable, TupleVariable
from .sym_node import SymNodeVariable
from .tensor import TensorVariable

_COND_MODULE = sys.modules["torch._higher_order_ops.cond"]  # (the package's `cond` shadows it)
COND_OP = torch.ops.higher_order.cond
COND_FUNCTIONS = (_COND_MODULE.cond, COND_OP)
# eager torch.cond compiles `def _cond_op_wrapper(*args, **kwargs): return cond_op(...)`, a
# new function at each call: known by its code
_WRAPPER_CODES = tuple(
    c
    for c in _COND_MODULE.cond.__code__.co_consts
    if getattr(c, "co_name", None) == "_cond_op_wrapper"
)
_PARAMS = ("pred", "true_fn", "false_fn", "operands")
_KINDS = ("true", "false")

# in-place forms: a branch running one on a graph value from outside mutates what the
# other branch (and the code after the cond) reads
_INPLACE_OPERATORS = {
    operator.setitem, operator.iadd, operator.isub, operator.imul, operator.itruediv,
    operator.ifloordiv, operator.imod, operator.ipow, operator.imatmul, operator.iand,
    operator.ior, operator.ixor, operator.ilshift, operator.irshift,
}  # fmt: skip
_INPLACE_NAMES = {op.__name__ for op in _INPLACE_OPERATORS}


def is_cond(fn) -> bool:
    return any(fn is f for f in COND_FUNCTIONS) or getattr(fn, "__code__", None) in _WRAPPER_CODES


def call_cond(tx, args: list, kwargs: dict) -> VariableTracker:
    pred, true_fn, false_fn, operands = _bind(args, kwargs)
    if not isinstance(operands, BaseListVariable):
        raise Unsupported("torch.cond with operands that are not a list or tuple")
    items = operands.unpack(tx)
    if not all(isinstance(i, TensorVariable) for i in items):
        raise Unsupported("torch.cond with operands that are not all tensors")
    if pred.is_python_constant():
        value = pred.as_python_constant()
        if not isinstance(value, (bool, int, float)):
            raise Unsupported(f"torch.cond with a {type(value).__name__} predicate")
        return (true_fn if value else false_fn).call_function(tx, list(items), {})
    if isinstance(pred, SymNodeVariable):  # a size relation: decided (and guarded) as an `if`
        return (true_fn if pred.truth(tx) else false_fn).call_function(tx, list(items), {})
    if not isinstance(pred, TensorVariable):
        raise Unsupported(f"torch.cond with a {type(pred).__name__} predicate")
    numel = pred.as_example().numel()
    if not isinstance(numel, int) or numel != 1:
        raise Unsupported("torch.cond with a predicate that is not a one-element tensor")
    _register_fake_rule()
    true_branch = _Branch(tx, true_fn, items)
    false_branch = _Branch(tx, false_fn, items)
    if true_branch.structure != false_branch.structure:
        raise Unsupported("torch.cond branches that return different structures")
    return _emit(tx, pred, true_branch, false_branch)


def _bind(args: list, kwargs: dict) -> list:
    if set(kwargs) - set(_PARAMS[len(args) :]) or len(args) + len(kwargs) != len(_PARAMS):
        raise Unsupported(
            "torch.cond with other arguments than (pred, true_fn, false_fn, operands)"
        )
    return [*args, *(kwargs[name] for name in _PARAMS[len(args) :])]


def _register_fake_rule() -> None:
    """A subgraph holding a cond of its own is run under the capture's fake mode: the rule
    torch gives FakeTensorMode (the operator looks modes up by their exact class)."""
    if CaptureFakeMode not in COND_OP.python_key_table:
        COND_OP.py_impl(CaptureFakeMode)(_COND_MODULE.cond_fake_tensor_mode)


class _Branch:
    """One branch traced into the frame's graph: the nodes it added, what it read from
    outside them, and its results (a tensor, or a tuple or list of tensors)."""

    def __init__(self, tx, fn: VariableTracker, items: list):
        output = tx.output
        effects = output.side_effects
        before = set(output.graph.nodes)
        writes = (effects.writes, len(effects.write_targets))
        result = fn.call_function(tx, list(items), {})
        if (effects.writes, len(effects.write_targets)) != writes:
            raise Unsupported("a torch.cond branch that writes outside itself")
        self.structure, results = _flatten(result)
        added = [n for n in output.graph.nodes if n not in before]
        self.nodes = [n for n in added if _moves(output, n)]
        moved = set(self.nodes)
        if any(n.op == "call_module" for n in moved):
            raise Unsupported("a torch.cond branch that calls a module node")
        if not all(r.node in moved for r in results):
            raise Unsupported("a torch.cond branch that returns one of its inputs")
        self.outputs = [r.node for r in results]
        self.inputs: dict[torch.fx.Node, None] = {}
        for node in self.nodes:
            for arg in node.all_input_nodes:
                if arg not in moved:
                    self.inputs[arg] = None
        for node in self.nodes:
            if _writes_to(node, self.inputs):
                raise Unsupported("a torch.cond branch that mutates one of its inputs")
        for arg in self.inputs:
            if not isinstance(arg.meta.get("example_value"), (torch.Tensor, torch.SymInt)):
                raise Unsupported("a torch.cond branch that reads a non-tensor graph value")
        _check_no_alias(results, self.inputs)


def _moves(output, node: torch.fx.Node) -> bool:
    """A node the branch added that goes into its subgraph: its ops and the subgraphs of a
    cond inside it; an input it first read (placeholder, parameter) stays the frame's."""
    if node.op == "get_attr":
        return node.target in output.submodules
    return node.op != "placeholder"


def _flatten(result: VariableTracker) -> tuple:
    if isinstance(result, TensorVariable):
        return ("tensor", 1), [result]
    plain = type(result) in (TupleVariable, ListVariable)
    if plain and getattr(result, "namedtuple_cls", None) is None:
        items = result.items
        if items and all(isinstance(i, TensorVariable) for i in items):
            return (type(result).__name__, len(items)), list(items)
    raise Unsupported("a torch.cond branch that returns other than tensors")


def _writes_to(node: torch.fx.Node, inputs: dict) -> bool:
    target = node.target
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    dunder = name.startswith("__") and name.endswith("__")
    inplace = (
        target in _INPLACE_OPERATORS
        or (name.endswith("_") and not dunder)  # add_, copy_, _foreach_add_
        or (dunder and name[2:-2] in _INPLACE_NAMES)  # __iadd__
    )
    written = [node.args[0] if inplace and node.args else None, node.kwargs.get("out")]
    flat = [w for v in written for w in (v if isinstance(v, (tuple, list)) else [v])]
    return any(isinstance(w, torch.fx.Node) and w in inputs for w in flat)


def _check_no_alias(results: list, inputs: dict) -> None:
    storages = {
        StorageWeakRef(value.untyped_storage())
        for value in (n.meta.get("example_value") for n in inputs)
        if isinstance(value, torch.Tensor)
    }
    for r in results:
        if StorageWeakRef(r.as_example().untyped_storage()) in storages:
            raise Unsupported("a torch.cond branch that returns a view of one of its inputs")


def _emit(tx, pred: TensorVariable, true_branch: _Branch, false_branch: _Branch):
    output = tx.output
    inputs = list({**true_branch.inputs, **false_branch.inputs})
    modules = [_subgraph(output, branch, inputs) for branch in (true_branch, false_branch)]
    for branch in (false_branch, true_branch):  # the later nodes first: users go before
        for node in reversed(branch.nodes):
            output.graph.erase_node(node)
    attrs = [
        output.submodule_attr(f"cond_{kind}_branch", m)
        for kind, m in zip(_KINDS, modules, strict=True)
    ]
    fakes = tuple(n.meta["example_value"] for n in inputs)
    example = output.run_fake("call_function", COND_OP, (pred.as_example(), *modules, fakes), {})
    node = output.create_node(
        "call_function", COND_OP, (pred.as_proxy(), *attrs, tuple(inputs)), {}, example
    )
    results = [
        TensorVariable(output.getitem_node(node, i, fake), fake) for i, fake in enumerate(example)
    ]
    kind, _ = true_branch.structure
    if kind == "tensor":
        return results[0]
    return TupleVariable(results) if kind == "TupleVariable" else ListVariable(results)


def _subgraph(output, branch: _Branch, inputs: list) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta.update(node.meta)
    root = torch.nn.Module()
    for node in branch.nodes:
        if node.op == "get_attr":  # a cond inside this branch: its subgraphs come along
            root.add_module(node.target, output.submodules.pop(node.target))
        env[node] = graph.node_copy(node, env.__getitem__)
    graph.output(tuple(env[n] for n in branch.outputs))
    return torch.fx.GraphModule(root, graph, class_name="CondBranch")
