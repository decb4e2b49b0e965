"""Sources render valid Python that evaluates to the same value as Source.get."""

from __future__ import annotations

import builtins

import pytest
import torch

from framejit.guards import (
    AttrSource,
    BufferSource,
    BuiltinSource,
    CallSource,
    CellContentsSource,
    ClosureCellSource,
    EnvironSource,
    GlobalSource,
    GlobalsSource,
    HandledExceptionSource,
    ItemSource,
    ListItemSource,
    ListLenSource,
    LocalSource,
    NNModuleSource,
    NumelSource,
    ParamSource,
    ShapeSource,
    StrideSource,
    TupleIteratorSource,
    TypeSource,
)
from framejit.guards.source import SOURCE_HELPERS, builtins_dict


def _closure_fn():
    captured = torch.ones(2)

    def inner():
        return captured

    return inner


class Box:
    pass


class Reversed(list):
    """A list subclass whose own __getitem__/__len__ lie: ListItemSource/ListLenSource read
    past them."""

    def __getitem__(self, i):
        return list.__getitem__(self, -1 - i)

    def __len__(self):
        return 0


@pytest.fixture
def frame():
    mod = torch.nn.BatchNorm1d(3)
    box = Box()
    box.value = 7
    setattr(box, "not an identifier", 8)
    setattr(box, "class", 9)
    it = iter((10, 20, 30))
    next(it)
    L = {
        "x": torch.randn(4, 5).t(),
        "mod": mod,
        "d": {"k": [1, 2], 3: "three", ("t", 1): None},
        "box": box,
        "fn": _closure_fn(),
        "it": it,
        "cell": _closure_fn().__closure__[0],
        "rev": Reversed([1, 2, 3]),
    }
    G = {"torch": torch, "__builtins__": builtins}
    return L, G


CASES = [
    (LocalSource("x"), "L['x']"),
    (GlobalSource("torch"), "G['torch']"),
    (AttrSource(GlobalSource("torch"), "abs"), "G['torch'].abs"),
    (BuiltinSource("len"), "B['len']"),
    (GlobalsSource(), "G"),
    (ItemSource(GlobalsSource(), "torch"), "G['torch']"),
    (ItemSource(LocalSource("d"), "k"), "L['d']['k']"),
    (ItemSource(ItemSource(LocalSource("d"), "k"), 1), "L['d']['k'][1]"),
    (ItemSource(LocalSource("d"), 3), "L['d'][3]"),
    (ItemSource(LocalSource("d"), ("t", 1)), "L['d'][('t', 1)]"),
    (TypeSource(LocalSource("x")), "type(L['x'])"),
    (AttrSource(LocalSource("box"), "value"), "L['box'].value"),
    (AttrSource(LocalSource("box"), "not an identifier"), "getattr(L['box'], 'not an identifier')"),
    (AttrSource(LocalSource("box"), "class"), "getattr(L['box'], 'class')"),
    (ParamSource(NNModuleSource(LocalSource("mod")), "weight"), "L['mod']._parameters['weight']"),
    (
        BufferSource(NNModuleSource(LocalSource("mod")), "running_mean"),
        "L['mod']._buffers['running_mean']",
    ),
    (ClosureCellSource(LocalSource("fn"), 0), "L['fn'].__closure__[0].cell_contents"),
    (CellContentsSource(LocalSource("cell")), "L['cell'].cell_contents"),
    (TupleIteratorSource(LocalSource("it"), 1), "___tuple_iterator_getitem(L['it'], 1)"),
    (ListItemSource(LocalSource("rev"), 0), "___list_getitem(L['rev'], 0)"),
    (ListLenSource(LocalSource("rev")), "___list_len(L['rev'])"),
    (ShapeSource(LocalSource("x"), 0), "L['x'].size()[0]"),
    (StrideSource(LocalSource("x"), 0), "L['x'].stride()[0]"),
    (NumelSource(LocalSource("x")), "L['x'].numel()"),
    (EnvironSource("PATH"), "___environ_get('PATH')"),
    (HandledExceptionSource(), "___handled_exception()"),
    (
        CallSource(AttrSource(GlobalSource("torch"), "is_autocast_enabled"), ("cpu",)),
        "G['torch'].is_autocast_enabled('cpu')",
    ),
    (
        CallSource(AttrSource(GlobalSource("torch"), "get_default_dtype"), ()),
        "G['torch'].get_default_dtype()",
    ),
]


@pytest.mark.parametrize("source,text", CASES, ids=[t for _, t in CASES])
def test_renders_and_evaluates_like_get(frame, source, text):
    L, G = frame
    assert source.name() == text
    scope = {"L": L, "G": G, "B": builtins_dict(G), **SOURCE_HELPERS}
    via_eval = eval(source.name(), scope)
    via_get = source.get(L, G)
    if isinstance(via_get, torch.Tensor):
        assert via_eval is via_get
    else:
        assert via_eval == via_get


def test_values_the_sources_reach(frame):
    L, G = frame
    assert TupleIteratorSource(LocalSource("it"), 1).get(L, G) == 30  # 10 was consumed
    assert ShapeSource(LocalSource("x"), 0).get(L, G) == 5
    assert StrideSource(LocalSource("x"), 0).get(L, G) == 1
    assert ParamSource(LocalSource("mod"), "weight").get(L, G) is L["mod"].weight
    assert BuiltinSource("len").get(L, G) is len
    assert ListItemSource(LocalSource("rev"), 0).get(L, G) == 1  # not Reversed.__getitem__
    assert ListLenSource(LocalSource("rev")).get(L, G) == 3


def test_hashable_and_comparable():
    a1 = AttrSource(LocalSource("self"), "w")
    a2 = AttrSource(LocalSource("self"), "w")
    assert a1 == a2 and hash(a1) == hash(a2)
    assert a1 != AttrSource(LocalSource("self"), "b")
    assert ParamSource(LocalSource("m"), "w") != BufferSource(LocalSource("m"), "w")
    assert len({a1, a2, LocalSource("self"), GlobalSource("self")}) == 3
    assert a1.root() == LocalSource("self") and a1.depth() == 1 and a1.is_local()
    assert not AttrSource(GlobalSource("torch"), "abs").is_local()


@pytest.mark.parametrize(
    "make",
    [
        lambda: LocalSource(3),
        lambda: GlobalSource(None),
        lambda: AttrSource(LocalSource("x"), 1),
        lambda: ItemSource(LocalSource("x"), 1.5),
        lambda: ItemSource(LocalSource("x"), object()),
        lambda: ShapeSource(LocalSource("x"), "0"),
    ],
)
def test_bad_parts_are_refused(make):
    with pytest.raises(TypeError):
        make()


def test_str_subclass_with_hostile_repr_is_refused():
    class Evil(str):
        def __repr__(self):
            return "__import__('os').getcwd()"

    with pytest.raises(TypeError):
        ItemSource(LocalSource("d"), Evil("k"))
    with pytest.raises(TypeError):
        LocalSource(Evil("a"))


def test_environ_source_guards_a_variable_set_or_unset(monkeypatch):
    from framejit.guards import Guard, GuardKind, compile_guards

    monkeypatch.delenv("FRAMEJIT_TEST_ENV", raising=False)
    unset = compile_guards(
        [Guard(EnvironSource("FRAMEJIT_TEST_ENV"), GuardKind.EQUALS_MATCH, None)], {}
    )
    is_one = compile_guards(
        [Guard(EnvironSource("FRAMEJIT_TEST_ENV"), GuardKind.EQUALS_MATCH, "1")], {}
    )
    assert unset({}) and not is_one({})
    monkeypatch.setenv("FRAMEJIT_TEST_ENV", "1")
    assert is_one({}) and not unset({})
    monkeypatch.setenv("FRAMEJIT_TEST_ENV", "0")
    assert not is_one({}) and not unset({})


def test_numpy_tensor_source_loads_the_arrays_memory():
    np = pytest.importorskip("numpy")
    from framejit.guards import NumpyTensorSource

    L = {"a": np.zeros(3)}
    source = NumpyTensorSource(LocalSource("a"))
    assert source.name() == "___from_numpy(L['a'])"
    tensor = eval(source.name(), {"L": L, **SOURCE_HELPERS})
    tensor[1] = 5.0  # the array's own memory
    assert L["a"][1] == 5.0 and source.get(L, {}).dtype == torch.float64


def test_handled_exception_source_guards_the_callers_except_block():
    from framejit.guards import Guard, GuardKind, compile_guards

    outside = compile_guards([Guard(HandledExceptionSource(), GuardKind.EQUALS_MATCH, None)], {})
    assert outside({})
    try:
        raise KeyError("k")
    except KeyError:
        assert not outside({})
    assert outside({})
