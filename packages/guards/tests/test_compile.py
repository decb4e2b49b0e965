"""compile_guards: the generated function, its code parts, names, ordering and safety."""

from __future__ import annotations

import ast
import builtins
import dis
import io

import torch

from framejit.guards import (
    AttrSource,
    GlobalSource,
    Guard,
    GuardKind,
    ItemSource,
    LocalSource,
    compile_guards,
    global_state_guard,
)

A, B = LocalSource("a"), LocalSource("b")


def toy_guards(a, b):
    """The guards TorchDynamo installs for the seed's toy_example (first graph)."""
    where = "example.py:14 in toy_example"
    return [
        global_state_guard(),
        Guard(AttrSource(A, "_dynamo_dynamic_indices"), GuardKind.HASATTR, False, where),
        Guard(
            AttrSource(B, "_dynamo_dynamic_indices"),
            GuardKind.HASATTR,
            False,
            "example.py:15 in toy_example",
        ),
        Guard(A, GuardKind.TENSOR_MATCH, a, where),
        Guard(B, GuardKind.TENSOR_MATCH, b, "example.py:15 in toy_example"),
    ]


def test_toy_example_code_parts_read_like_the_seed(tensor_backend):
    a, b = torch.randn(10), torch.randn(10)
    fn = compile_guards(toy_guards(a, b), {"torch": torch})
    seed_parts = [
        "___check_global_state()",
        "hasattr(L['a'], '_dynamo_dynamic_indices') == False",
        "hasattr(L['b'], '_dynamo_dynamic_indices') == False",
        "utils_device.CURRENT_DEVICE == None",
        "___check_tensors(L['a'], L['b'], tensor_check_names=tensor_check_names)",
    ]
    for part in seed_parts:
        assert part in fn.code_parts
    assert fn.code_parts[0] == "___check_global_state()"
    assert fn.code_parts[-1] == seed_parts[-1]
    check_a = (
        "check_tensor(L['a'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
        "torch.float32, device=None, requires_grad=False, size=[10], stride=[1])"
    )
    assert f"{check_a}  # example.py:14 in toy_example" in fn.verbose_code_parts
    assert (
        "hasattr(L['b'], '_dynamo_dynamic_indices') == False  # example.py:15 in toy_example"
        in fn.verbose_code_parts
    )
    assert fn.closure_vars["tensor_check_names"] == ["L['a']", "L['b']"]
    assert {
        "___check_tensors",
        "tensor_check_names",
        "___check_global_state",
        "___is_grad_enabled",
        "___are_deterministic_algorithms_enabled",
        "___is_torch_function_enabled",
        "utils_device",
    } == set(fn.__code__.co_freevars)
    assert fn.__code__.co_varnames[:1] == ("L",)
    assert fn({"a": a, "b": b}) is True
    assert fn({"a": torch.randn(10), "b": torch.randn(10)}) is True
    assert fn({"a": a, "b": torch.randn(11)}) is False
    assert fn.failure_reason({"a": a.double(), "b": b}) == (
        "tensor 'L['a']' dtype mismatch. expected torch.float32, actual torch.float64  # example.py:14 in toy_example"
    )
    assert fn.guards and all(isinstance(g, Guard) for g in fn.guards)
    dis.dis(fn, file=io.StringIO())  # inspectable like any function


def test_failure_reasons_lists_every_failing_guard_with_its_origin(tensor_backend):
    a, b = torch.randn(10), torch.randn(10)
    fn = compile_guards(toy_guards(a, b), {"torch": torch})
    assert fn.failure_reasons({"a": a, "b": b}) == []
    reasons = fn.failure_reasons({"a": a.double(), "b": torch.randn(11)})
    assert reasons == [
        "tensor 'L['a']' dtype mismatch. expected torch.float32, actual torch.float64"
        "  # example.py:14 in toy_example",
        reasons[1],
    ]
    assert "L['b']" in reasons[1] and "size" in reasons[1]
    assert reasons[1].endswith("  # example.py:15 in toy_example")
    assert fn.failure_reason({"a": a.double(), "b": torch.randn(11)}) == reasons[0]


def test_duplicates_are_merged():
    a = torch.randn(3)
    guards = [
        Guard(A, GuardKind.TENSOR_MATCH, a),
        Guard(A, GuardKind.TENSOR_MATCH, a),
        Guard(A, GuardKind.TYPE_MATCH, a),
        Guard(A, GuardKind.TYPE_MATCH, torch.randn(1)),
        Guard(LocalSource("n"), GuardKind.EQUALS_MATCH, 3),
        Guard(LocalSource("n"), GuardKind.EQUALS_MATCH, 3),
        global_state_guard(),
        global_state_guard(),
    ]
    fn = compile_guards(guards, {})
    assert len(fn.guards) == 4
    assert (
        fn.code_parts.count("___check_tensors(L['a'], tensor_check_names=tensor_check_names)") == 1
    )
    assert fn.code_parts.count("___check_global_state()") == 1
    assert fn({"a": a, "n": 3})


def test_order_cheap_first_tensors_batched_shapes_last():
    import sympy

    from framejit.guards import ShapeExpr, ShapeSource

    s0 = sympy.Symbol("s0", integer=True)
    x = torch.randn(4)
    guards = [
        Guard(None, GuardKind.SHAPE_EXPR, ShapeExpr(sympy.Le(2, s0), {s0: ShapeSource(A, 0)})),
        Guard(A, GuardKind.TENSOR_MATCH, x, dynamic_dims=[0]),
        Guard(LocalSource("d"), GuardKind.DICT_KEYS, {"k": 1}),
        Guard(B, GuardKind.TENSOR_MATCH, x),
        Guard(AttrSource(GlobalSource("torch"), "abs"), GuardKind.ID_MATCH, torch.abs),
        Guard(GlobalSource("torch"), GuardKind.ID_MATCH, torch),
        global_state_guard(),
    ]
    fn = compile_guards(guards, {"torch": torch})
    parts = fn.code_parts
    assert parts[0] == "___check_global_state()"
    assert parts.index(f"id(G['torch']) == {id(torch)}") < parts.index(
        f"id(G['torch'].abs) == {id(torch.abs)}"
    )
    assert parts.index("list(dict.keys(L['d'])) == ['k']") < parts.index(
        "___check_tensors(L['a'], L['b'], tensor_check_names=tensor_check_names)"
    )
    assert parts[-1] == "2 <= L['a'].size()[0]"
    assert fn({"a": torch.randn(7), "b": x, "d": {"k": 2}})
    assert not fn({"a": torch.randn(1), "b": x, "d": {"k": 2}})


def test_empty_guard_set_always_passes():
    fn = compile_guards([], {})
    assert fn({}) is True and fn.code_parts == [] and fn.failure_reason({}) is None


def test_globals_are_bound_at_compile_time():
    scope = {"torch": torch}
    fn = compile_guards([Guard(GlobalSource("torch"), GuardKind.ID_MATCH, torch)], scope)
    assert fn.global_scope() is scope
    assert "G" not in fn.closure_vars  # read through a weak reference, never held
    assert fn({})
    scope["torch"] = builtins
    assert not fn({})
    assert "G['torch'] is not the traced object" in fn.failure_reason({})


PAYLOAD = "__import__('builtins').__setattr__('FRAMEJIT_PWNED', 1)"
HOSTILE = [
    PAYLOAD,
    f"x'] or {PAYLOAD} or L['",
    f'x"] or {PAYLOAD} or L["',
    f"x\n{PAYLOAD}\n",
    f"x\\' + {PAYLOAD} + \\'",
    f"x)); {PAYLOAD}; ((",
    "\x00\r\u2028" + PAYLOAD,
]


class Obj:
    pass


def _allowed_calls(code: str) -> None:
    """Every call in a code part is a builtin or closure helper, never a user string."""
    tree = ast.parse(code, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                assert func.id in {
                    "id",
                    "type",
                    "len",
                    "list",
                    "hasattr",
                    "getattr",
                    "float",
                } or func.id.startswith("___"), code
            else:
                assert ast.unparse(func) == "dict.keys", code
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and PAYLOAD in node.value:
            continue  # inert: a string literal
        if isinstance(node, ast.Name):
            assert (
                node.id
                in {
                    "L",
                    "G",
                    "B",
                    "id",
                    "type",
                    "len",
                    "list",
                    "dict",
                    "hasattr",
                    "getattr",
                    "float",
                    "str",
                    "bytes",
                    "int",
                    "device",
                }
                or node.id.startswith("___")
                or node.id in {"utils_device", "tensor_check_names"}
            ), code


def test_hostile_names_are_inert(tensor_backend):
    for name in HOSTILE:
        obj = Obj()
        setattr(obj, name, 5)
        t = torch.randn(2)
        L = {name: obj, "d": {name: t}, "t": t}
        G = {name: obj}
        guards = [
            Guard(LocalSource(name), GuardKind.TYPE_MATCH, obj),
            Guard(AttrSource(LocalSource(name), name), GuardKind.EQUALS_MATCH, 5),
            Guard(AttrSource(GlobalSource(name), name), GuardKind.EQUALS_MATCH, 5),
            Guard(ItemSource(LocalSource("d"), name), GuardKind.TENSOR_MATCH, t),
            Guard(LocalSource("d"), GuardKind.DICT_KEYS, {name: t}),
            Guard(AttrSource(LocalSource(name), name), GuardKind.HASATTR, True),
            Guard(LocalSource("s"), GuardKind.EQUALS_MATCH, name),
        ]
        L["s"] = name
        fn = compile_guards(guards, G)
        for part in fn.code_parts:
            _allowed_calls(part)
        assert fn(L) is True
        L2 = dict(L, s="other")
        assert fn(L2) is False
        assert fn.failure_reason(L2).startswith("L['s'] == ")
        assert not hasattr(builtins, "FRAMEJIT_PWNED")


def test_generated_source_is_recorded():
    fn = compile_guards([Guard(A, GuardKind.NOT_NONE)], {})
    assert "def ___make_guard_fn(" in fn.source
    assert "if not (L['a'] is not None):" in fn.source
    import linecache

    assert (
        linecache.getline(fn.__code__.co_filename, fn.__code__.co_firstlineno).strip()
        == "def guard(L):"
    )


class Mod:
    """A module-like tree: hook dicts (OrderedDicts) on nested objects."""

    def __init__(self, *children):
        from collections import OrderedDict

        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()
        self.kids = list(children)
        self.training = False


def _tree_guards(root):
    guards = [Guard(LocalSource("m"), GuardKind.ID_MATCH, root)]
    for i, kid in enumerate(root.kids):
        src = ItemSource(AttrSource(LocalSource("m"), "kids"), i)
        guards.append(Guard(src, GuardKind.ID_MATCH, kid))
        guards.append(Guard(AttrSource(src, "training"), GuardKind.EQUALS_MATCH, False))
        for table in ("_forward_hooks", "_forward_pre_hooks"):
            guards.append(Guard(AttrSource(src, table), GuardKind.DICT_KEYS, getattr(kid, table)))
    return guards


def test_empty_dict_keys_are_one_call_and_each_still_fails():
    root = Mod(Mod(), Mod())
    fn = compile_guards(_tree_guards(root), {})
    batched = [p for p in fn.code_parts if p.startswith("___check_no_keys(")]
    assert batched == [
        "___check_no_keys(L['m'].kids[0]._forward_hooks, L['m'].kids[0]._forward_pre_hooks, "
        "L['m'].kids[1]._forward_hooks, L['m'].kids[1]._forward_pre_hooks)"
    ]
    assert "list(dict.keys(L['m'].kids[1]._forward_pre_hooks)) == []" in fn.verbose_code_parts
    assert fn({"m": root})
    for kid in root.kids:
        for table in ("_forward_hooks", "_forward_pre_hooks"):
            hooks = getattr(kid, table)
            hooks[0] = print
            assert not fn({"m": root})
            assert fn.failure_reason({"m": root}).startswith(
                f"L['m'].kids[{root.kids.index(kid)}].{table} keys changed"
            )
            del hooks[0]
            setattr(kid, table, None)  # not a dict any more
            assert not fn({"m": root})
            setattr(kid, table, hooks)
            assert fn({"m": root})


def test_shared_sources_are_read_once_into_locals():
    root = Mod(Mod(), Mod())
    fn = compile_guards(_tree_guards(root), {})
    # L['m'] and L['m'].kids are read by every guard on a kid: locals, each read once
    assert fn.source.count("L['m']") == 1 and fn.source.count(".kids") == 1
    assert "L['m'].kids[1].training is False" in fn.code_parts  # parts spelled in full
    assert fn({"m": root})
    root.kids[1].training = True
    assert not fn({"m": root})
    root.kids[1].training = False
    old, root.kids[0] = root.kids[0], Mod()  # old kept alive: its death would invalidate
    assert not fn({"m": root})
    assert "L['m'].kids[0] is not the traced object" in fn.failure_reason({"m": root})
    root.kids[0] = old
    assert fn({"m": root})
