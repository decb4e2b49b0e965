"""Attribute stores and reads through the class's descriptors and the instance __dict__.

A property's setter, a Python `__set__`/`__get__` descriptor and `obj.__dict__[k] = v` each
behave as in eager: the store is traced through the descriptor (a read after it sees what
the descriptor did, not the stored value), and a `__dict__` store bypasses descriptors.
torch.compile captures every function here in one graph (fullgraph).
"""

from __future__ import annotations

import collections

import pytest
import torch

from framejit import graphcapture as fj


class Doubling:
    """A data descriptor without __get__: reads find the instance __dict__ entry."""

    def __set__(self, obj, value):
        obj.__dict__["field"] = obj.__dict__.get("field", 0) + value * 2


class Stored:
    """A data descriptor with both halves, keeping its value under another name."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return obj.__dict__.get("_value", 0)

    def __set__(self, obj, value):
        obj.__dict__["_value"] = f"set_{value}"


class Constant:
    """A non-data descriptor: an instance __dict__ entry of the same name wins over it."""

    def __get__(self, obj, objtype=None):
        return 7


class Plain:
    field = Doubling()
    stored = Stored()
    seven = Constant()

    @property
    def tripled(self):
        return self._t

    @tripled.setter
    def tripled(self, v):
        self._t = v * 3


class Mapping(collections.OrderedDict):
    pass


class Fallback:
    """A __getattribute__ that raises AttributeError: Python then asks __getattr__."""

    def __init__(self):
        self.real = 2

    def __getattribute__(self, name):
        if name.startswith("virtual_"):
            raise AttributeError(name)
        return super().__getattribute__(name)

    def __getattr__(self, name):
        return len(name)


class ScaledByOwner:
    """A descriptor whose value comes from the owner class it is given."""

    def __get__(self, obj, objtype=None):
        return objtype.factor * 10


class Owner:
    factor = 3
    scaled = ScaledByOwner()


def through_set_descriptor(x, obj):
    obj.field = 10
    return x + obj.field


def through_property_setter(x, obj):
    obj.tripled = 2
    return x + obj.tripled


def through_get_and_set(x, obj):
    obj.stored = "a"
    first = obj.stored
    obj.__dict__["_value"] = "direct"
    return x + 1, first, obj.stored


def dict_store_then_reads(x, obj):
    obj.__dict__["extra"] = 5
    obj.__dict__["seven"] = 1  # shadows the non-data descriptor
    return x + obj.extra + obj.__dict__["extra"] + obj.seven, "extra" in obj.__dict__


def dict_store_on_a_dict_subclass(x, m):
    if "log" not in m.__dict__:
        m.__dict__["log"] = []
    m.__dict__["log"].append(1)
    return x * len(m.__dict__["log"])


def getattribute_falls_back_to_getattr(x, obj):
    return x + obj.virtual_abc + obj.real


def descriptor_reads_its_owner(x, obj):
    return x * obj.scaled


CASES = [
    (through_set_descriptor, Plain),
    (through_property_setter, Plain),
    (through_get_and_set, Plain),
    (dict_store_then_reads, Plain),
    (dict_store_on_a_dict_subclass, Mapping),
    (getattribute_falls_back_to_getattr, Fallback),
    (descriptor_reads_its_owner, Owner),
]


def _assert_same(actual, expected) -> None:
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_same(a, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected)
    else:
        assert actual == expected


@pytest.mark.parametrize("fn,make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_matches_eager_in_one_graph(fn, make):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    x = torch.randn(3)
    expected_obj, obj = make(), make()
    expected = fn(x, expected_obj)
    result = fj.compile(fn, backend=backend, fullgraph=True)(x, obj)
    _assert_same(result, expected)
    assert vars(obj) == vars(expected_obj)
    assert len(graphs) == 1


def test_second_call_sees_the_replayed_state():
    compiled = fj.compile(through_set_descriptor, backend="eager", fullgraph=True)
    x = torch.zeros(2)
    obj, expected_obj = Plain(), Plain()
    for _ in range(2):
        torch.testing.assert_close(compiled(x, obj), through_set_descriptor(x, expected_obj))
    assert obj.__dict__["field"] == expected_obj.__dict__["field"] == 40


def test_a_descriptors_reads_off_its_owner_are_guarded():
    compiled = fj.compile(descriptor_reads_its_owner, backend="eager", fullgraph=True)
    x, obj = torch.ones(2), Owner()
    torch.testing.assert_close(compiled(x, obj), x * 30)
    Owner.factor = 5
    try:
        torch.testing.assert_close(compiled(x, obj), x * 50)
    finally:
        Owner.factor = 3
