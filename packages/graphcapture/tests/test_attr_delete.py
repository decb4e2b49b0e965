"""`del obj.attr` / delattr in the frame: replayed once after the graph, seen by later reads."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


class Obj:
    def __init__(self, a, b):
        self.a = a
        self.b = b


class SwallowsDelete:
    def __init__(self, val):
        self.val = val
        self.deleted = False

    def __delattr__(self, name):
        if name == "val":
            self.deleted = True
        else:
            super().__delattr__(name)


def deletes_on_input_and_new(x, obj):
    del obj.a
    obj.c = x + 1
    del obj.c  # stored and deleted in the frame: nothing for the real object
    tmp = Obj(x + 2, x + 3)
    del tmp.b
    if hasattr(obj, "a"):
        return x + 1
    return tmp, getattr(obj, "a", None)


def test_delete_attr_input_and_new_object_one_graph():
    cnt = CompileCounter()
    compiled = fj.compile(deletes_on_input_and_new, backend=cnt, fullgraph=True)
    x = torch.zeros([])
    obj = Obj(x, x)
    tmp, missing = compiled(x, obj)
    assert missing is None
    assert not hasattr(obj, "a") and not hasattr(obj, "c") and not hasattr(tmp, "b")
    torch.testing.assert_close(tmp.a, x + 2)
    torch.testing.assert_close(obj.b, x)
    assert cnt.frame_count == 1


def test_delete_attr_again_raises_as_eager():
    compiled = fj.compile(deletes_on_input_and_new, backend="eager")
    x = torch.zeros([])
    obj = Obj(x, x)
    compiled(x, obj)
    with pytest.raises(AttributeError):  # `a` is gone: eager's `del obj.a` raises
        compiled(x, obj)
    assert obj.b is x


def test_user_delattr_inlined():
    def fn(x):
        a = SwallowsDelete(1)
        del a.val
        other = SwallowsDelete(2)
        other.extra = 3
        del other.extra  # super().__delattr__ reaches object's
        return x + 1, hasattr(a, "val"), a.deleted, hasattr(other, "extra")

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    assert compiled(torch.ones(1))[1:] == fn(torch.ones(1))[1:] == (True, True, False)


def test_read_after_delete_breaks_and_raises():
    def fn(x, obj):
        del obj.a
        x = x + 1
        obj.a  # noqa: B018  (eager: AttributeError)
        return x

    obj = Obj(1, 2)
    with pytest.raises(AttributeError):
        fj.compile(fn, backend="eager")(torch.zeros(2), obj)
    assert not hasattr(obj, "a") and obj.b == 2


def test_module_plain_attribute_delete():
    def fn(x, m):
        del m.flag
        return m(x), hasattr(m, "flag")

    m = torch.nn.Linear(2, 2)
    m.flag = True
    out, has = fj.compile(fn, backend="eager", fullgraph=True)(torch.ones(2), m)
    assert has is False and not hasattr(m, "flag")
    torch.testing.assert_close(out, m(torch.ones(2)))


class Shadowed:
    scale = 2.0  # the class attribute an instance's own value shadows until deleted

    def __init__(self, scale):
        self.scale = scale


def deletes_a_shadowing_attribute_of_a_new_object(x):
    obj = Shadowed(5.0)
    before = obj.scale
    del obj.scale
    return x * before + obj.scale, obj


def test_delete_of_a_new_objects_attribute_shows_the_class_one():
    """transformers' get_text_config renames decoder_* keys of a deep copy this way."""
    cnt = CompileCounter()
    compiled = fj.compile(
        deletes_a_shadowing_attribute_of_a_new_object, backend=cnt, fullgraph=True
    )
    x = torch.ones(2)
    got, obj = compiled(x)
    expected, _ = deletes_a_shadowing_attribute_of_a_new_object(x)
    torch.testing.assert_close(got, expected)
    assert "scale" not in vars(obj) and obj.scale == 2.0
    assert cnt.frame_count == 1
