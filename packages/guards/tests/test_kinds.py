"""Non-tensor guard kinds: each passes on the traced value and fails on each relevant change."""

from __future__ import annotations

import builtins
import collections
import math

import pytest
import torch
from guard_helpers import fails, passes

from framejit.guards import (
    AttrSource,
    BuiltinSource,
    GlobalSource,
    GlobalsSource,
    Guard,
    GuardKind,
    ItemSource,
    LocalSource,
    TupleIteratorSource,
)

X = LocalSource("x")


def g(kind, value=None, source=X):
    return [Guard(source, kind, value)]


class Point:
    def __init__(self, x):
        self.x = x


class SubPoint(Point):
    pass


def test_type_match():
    passes(g(GuardKind.TYPE_MATCH, 3), {"x": 4})
    reason = fails(g(GuardKind.TYPE_MATCH, 3), {"x": True})
    assert reason == "L['x'] type mismatch. expected int, actual bool"
    fails(g(GuardKind.TYPE_MATCH, 3), {"x": 3.0})
    passes(g(GuardKind.TYPE_MATCH, Point(1)), {"x": Point(2)})
    fails(g(GuardKind.TYPE_MATCH, Point(1)), {"x": SubPoint(1)})
    fails(g(GuardKind.TYPE_MATCH, SubPoint(1)), {"x": Point(1)})


def test_type_match_of_user_class_binds_a_closure_variable():
    from framejit.guards import compile_guards

    fn = compile_guards(g(GuardKind.TYPE_MATCH, Point(1)), {})
    assert fn.code_parts == ["type(L['x']) is ___type_Point"]
    assert fn.closure_vars["___type_Point"] is Point


def test_id_match():
    G = {"torch": torch}
    guards = [Guard(AttrSource(GlobalSource("torch"), "abs"), GuardKind.ID_MATCH, torch.abs)]
    passes(guards, {}, G)
    fails(guards, {}, {"torch": collections.namedtuple("T", "abs")(torch.neg)})
    obj = object()
    passes(g(GuardKind.ID_MATCH, obj), {"x": obj})
    fails(g(GuardKind.ID_MATCH, obj), {"x": object()})


@pytest.mark.parametrize(
    "traced,same,different",
    [
        (3, [3], [4, 3.0, True, "3", None]),
        (0, [0], [False, 0.0, -0.0]),
        (True, [True], [1, False, None]),
        (None, [None], [0, False, "None"]),
        (2.5, [2.5], [2, 2.5000001, float("nan")]),
        (float("nan"), [float("nan"), math.nan], [0.0, float("inf"), "nan"]),
        (float("inf"), [math.inf], [-math.inf, 1e308]),
        (0.0, [0.0], [-0.0, 0, False]),
        (-0.0, [-0.0], [0.0]),
        ("abc", ["abc"], ["abd", b"abc", None]),
        (b"xy", [b"xy"], ["xy"]),
        (
            (1, "a", None),
            [(1, "a", None)],
            [(1, "a"), [1, "a", None], (True, "a", None), (1.0, "a", None)],
        ),
        ((), [()], [(None,), []]),
        ((float("nan"), (2, 3)), [(math.nan, (2, 3))], [(math.nan, (2, 4)), (math.nan, [2, 3])]),
        (1j, [1j, complex(0.0, 1.0)], [-1j, complex(-0.0, 1.0), 1.0, (0, 1), "1j"]),
        (complex(math.nan, 2.0), [complex(math.nan, 2.0)], [complex(math.nan, 3.0), 2.0]),
        ((1j, 2), [(1j, 2)], [(2j, 2), (1j, 2.0)]),
    ],
)
@pytest.mark.parametrize("kind", [GuardKind.EQUALS_MATCH, GuardKind.CONSTANT_MATCH])
def test_equals_match(kind, traced, same, different):
    for v in same:
        passes(g(kind, traced), {"x": v})
    for v in different:
        fails(g(kind, traced), {"x": v})


def test_equals_match_refuses_non_literals():
    with pytest.raises(TypeError, match="use ID_MATCH or TYPE_MATCH"):
        Guard(X, GuardKind.EQUALS_MATCH, [1, 2])

    class MyInt(int):
        pass

    with pytest.raises(TypeError):
        Guard(X, GuardKind.EQUALS_MATCH, MyInt(3))


def test_equals_failure_reason():
    assert fails(g(GuardKind.EQUALS_MATCH, 3), {"x": 4}) == "L['x'] == 3  (actual: 4)"


def test_length_check():
    passes(g(GuardKind.LENGTH_CHECK, [1, 2, 3]), {"x": (4, 5, 6)})
    assert (
        fails(g(GuardKind.LENGTH_CHECK, [1, 2, 3]), {"x": [1, 2]})
        == "len(L['x']) == 3  (actual: 2)"
    )
    fails(g(GuardKind.LENGTH_CHECK, [1]), {"x": 5})  # len() raises: a miss, not an error


def test_dict_keys_are_order_sensitive():
    traced = {"a": 1, 2: "b", ("t",): None}
    passes(g(GuardKind.DICT_KEYS, traced), {"x": {"a": 0, 2: 0, ("t",): 0}})
    fails(g(GuardKind.DICT_KEYS, traced), {"x": {2: 0, "a": 0, ("t",): 0}})
    fails(g(GuardKind.DICT_KEYS, traced), {"x": {"a": 0, 2: 0}})
    fails(g(GuardKind.DICT_KEYS, traced), {"x": {"a": 0, 2: 0, ("t",): 0, "extra": 0}})
    passes(g(GuardKind.DICT_KEYS, collections.OrderedDict(traced)), {"x": dict(traced)})
    fails(g(GuardKind.DICT_KEYS, traced), {"x": ["a", 2, ("t",)]})


def test_dict_keys_refuses_unrenderable_keys():
    with pytest.raises(TypeError, match="not supported"):
        Guard(X, GuardKind.DICT_KEYS, {object(): 1})


def test_none_checks():
    passes(g(GuardKind.NOT_NONE), {"x": 0})
    assert fails(g(GuardKind.NOT_NONE), {"x": None}) == "L['x'] is not None  (actual: None)"
    passes(g(GuardKind.IS_NONE), {"x": None})
    fails(g(GuardKind.IS_NONE), {"x": 0})


def test_hasattr():
    t = torch.randn(2)
    absent = [Guard(AttrSource(X, "_dynamo_dynamic_indices"), GuardKind.HASATTR, False)]
    passes(absent, {"x": t})
    marked = torch.randn(2)
    marked._dynamo_dynamic_indices = {0}
    fails(absent, {"x": marked})
    present = [Guard(AttrSource(X, "_dynamo_dynamic_indices"), GuardKind.HASATTR, True)]
    passes(present, {"x": marked})
    fails(present, {"x": t})


class _LazyModule(type(collections)):
    """A module whose __getattr__ (transformers' lazy import machinery) must not run."""

    calls = 0

    def __getattr__(self, name):
        type(self).calls += 1
        raise AttributeError(name)


def test_dict_contains():
    mod = _LazyModule("lazy")
    absent = [Guard(ItemSource(AttrSource(X, "__dict__"), "len"), GuardKind.DICT_CONTAINS, False)]
    passes(absent, {"x": mod})
    assert _LazyModule.calls == 0  # the globals dict is read, not the module's attributes
    shadowed = _LazyModule("lazy")
    shadowed.len = len
    reason = fails(absent, {"x": shadowed})
    assert reason == "'len' not in L['x'].__dict__  (actual: True)"
    present = [Guard(ItemSource(X, "k"), GuardKind.DICT_CONTAINS, True)]
    passes(present, {"x": {"k": None}})  # a None value is still a key
    fails(present, {"x": {}})
    fails(present, {"x": 3})  # not a container: the check raises, a miss


def test_builtin_unshadowed_and_unpatched_over_the_frames_globals():
    """`'len' not in G` and `B['len']` is len: graphcapture's guards for a builtin read in
    an exec'd namespace, where no module's __dict__ reaches the globals."""
    scope = {"__builtins__": dict(vars(builtins))}
    guards = [
        Guard(ItemSource(GlobalsSource(), "len"), GuardKind.DICT_CONTAINS, False),
        Guard(BuiltinSource("len"), GuardKind.ID_MATCH, len),
    ]
    passes(guards, {}, scope)
    scope["len"] = len
    assert fails(guards, {}, scope) == "'len' not in G  (actual: True)"
    del scope["len"]
    passes(guards, {}, scope)
    scope["__builtins__"]["len"] = lambda v: 0
    assert "B['len'] is not the traced object" in fails(guards, {}, scope)


def test_items_and_attributes_through_chains():
    traced = {"cfg": Point(3)}
    guards = [Guard(AttrSource(ItemSource(X, "cfg"), "x"), GuardKind.EQUALS_MATCH, 3)]
    passes(guards, {"x": traced})
    fails(guards, {"x": {"cfg": Point(4)}})
    fails(guards, {"x": {}})  # KeyError while evaluating: a miss
    fails(guards, {"x": {"cfg": object()}})  # AttributeError: a miss


def test_tuple_iterator_source():
    it = iter((1, 2, 3))
    next(it)
    guards = [Guard(TupleIteratorSource(X, 0), GuardKind.EQUALS_MATCH, 2)]
    passes(guards, {"x": it})
    it2 = iter((1, 2, 3))
    fails(guards, {"x": it2})


def test_missing_local_is_a_miss():
    fails(g(GuardKind.NOT_NONE), {})


def test_tensor_aliasing():
    a = torch.randn(2)
    same = [Guard(LocalSource("a"), GuardKind.TENSOR_ALIASING, LocalSource("b"))]
    passes(same, {"a": a, "b": a})
    fails(same, {"a": a, "b": a.clone()})
    distinct = [Guard(None, GuardKind.NO_TENSOR_ALIASING, (LocalSource("a"), LocalSource("b")))]
    passes(distinct, {"a": a, "b": a.clone()})
    assert "are the same object" in fails(distinct, {"a": a, "b": a})
    three = [Guard(None, GuardKind.NO_TENSOR_ALIASING, [LocalSource(n) for n in "abc"])]
    passes(three, {"a": a, "b": a.clone(), "c": a.clone()})
    fails(three, {"a": a, "b": a.clone(), "c": a})


@pytest.mark.parametrize(
    "make",
    [
        lambda: Guard(None, GuardKind.TYPE_MATCH, 3),
        lambda: Guard(X, "TYPE_MATCH", 3),
        lambda: Guard("L['x']", GuardKind.TYPE_MATCH, 3),
        lambda: Guard(X, GuardKind.HASATTR, True),
        lambda: Guard(AttrSource(X, "a"), GuardKind.HASATTR, 1),
        lambda: Guard(AttrSource(X, "a"), GuardKind.DICT_CONTAINS, False),
        lambda: Guard(ItemSource(X, "a"), GuardKind.DICT_CONTAINS, None),
        lambda: Guard(X, GuardKind.TENSOR_ALIASING, "L['y']"),
        lambda: Guard(None, GuardKind.NO_TENSOR_ALIASING, (X,)),
        lambda: Guard(X, GuardKind.GLOBAL_STATE, None),
        lambda: Guard(None, GuardKind.SHAPE_EXPR, "s0 == s1"),
    ],
)
def test_malformed_guards_are_refused(make):
    with pytest.raises(TypeError):
        make()


def test_many_hasattr_guards_on_one_name_are_batched(tensor_backend):
    from framejit.guards import compile_guards

    ts = [torch.randn(2) for _ in range(4)]
    L = {f"t{i}": t for i, t in enumerate(ts)}
    guards = [
        Guard(
            AttrSource(LocalSource(n), "_framejit_dynamic_dims"),
            GuardKind.HASATTR,
            False,
            f"f.py:{i}",
        )
        for i, n in enumerate(L)
    ]
    fn = compile_guards(guards, {})
    assert fn.code_parts == [
        "___check_hasattr('_framejit_dynamic_dims', False, L['t0'], L['t1'], L['t2'], L['t3'])"
    ]
    assert (
        fn.verbose_code_parts[2] == "hasattr(L['t2'], '_framejit_dynamic_dims') == False  # f.py:2"
    )
    passes(guards, L)
    marked = torch.randn(2)
    marked._framejit_dynamic_dims = {0}
    reason = fails(guards, dict(L, t2=marked))
    assert reason == "hasattr(L['t2'], '_framejit_dynamic_dims') == False  (actual: True)  # f.py:2"
    present = [
        Guard(AttrSource(LocalSource(n), "_framejit_dynamic_dims"), GuardKind.HASATTR, True)
        for n in L
    ]
    fails(present, dict(L, t2=marked))
    passes(present, dict.fromkeys(L, marked))


def test_equals_match_numpy_numbers():
    """np.int64(8) guards its exact numpy type and its number (args of torch's dynamo tests)."""
    np = pytest.importorskip("numpy")
    passes(g(GuardKind.EQUALS_MATCH, np.int64(8)), {"x": np.int64(8)})
    for other in (np.int64(7), np.int32(8), 8, 8.0, np.float64(8.0)):
        fails(g(GuardKind.EQUALS_MATCH, np.int64(8)), {"x": other})
    passes(g(GuardKind.EQUALS_MATCH, np.float32(2.5)), {"x": np.float32(2.5)})
    fails(g(GuardKind.EQUALS_MATCH, np.float64(0.0)), {"x": np.float64(-0.0)})
    fails(g(GuardKind.EQUALS_MATCH, np.float64("nan")), {"x": 1.0})
    passes(g(GuardKind.EQUALS_MATCH, np.float64("nan")), {"x": np.float64("nan")})
    with pytest.raises(TypeError):  # a numpy bool is no number here (torch promotes it apart)
        Guard(X, GuardKind.EQUALS_MATCH, np.bool_(True))


def test_subclasses_source_length_and_identity():
    """SubclassesSource: a class's live subclasses, their count and each one's identity."""
    from framejit.guards import SubclassesSource

    class Base:
        pass

    class A(Base):
        pass

    subs = SubclassesSource(X)
    assert subs.name() == "___type_subclasses(L['x'])"
    guards = [
        Guard(subs, GuardKind.LENGTH_CHECK, [A]),
        Guard(ItemSource(subs, 0), GuardKind.ID_MATCH, A),
    ]
    passes(guards, {"x": Base})

    class B(Base):
        pass

    fails(guards, {"x": Base})
    fails(guards, {"x": B})


def test_set_item_at_source_pins_contents_and_order():
    """SetItemAtSource: a set's member at a position of its iteration order, with the set's
    type and length guarded: equal contents in the same order pass, anything else fails."""
    from framejit.guards import SetItemAtSource

    s = {"a", "b", 3}
    order = list(s)
    assert SetItemAtSource(X, 1).name() == "___set_item_at(L['x'], 1)"
    guards = [
        Guard(X, GuardKind.TYPE_MATCH, s),
        Guard(X, GuardKind.LENGTH_CHECK, s),
        *(Guard(SetItemAtSource(X, i), GuardKind.EQUALS_MATCH, v) for i, v in enumerate(order)),
    ]
    passes(guards, {"x": set(s)})
    fails(guards, {"x": {"a", "b"}})
    fails(guards, {"x": {"a", "b", 4}})
    fails(guards, {"x": frozenset(s)})
