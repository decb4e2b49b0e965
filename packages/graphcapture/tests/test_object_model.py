"""Python's object model in the traced frame, as model code uses it: `obj.__class__` of a
container, builtin constructors (complex), id() of inputs, `__weakref__`, a class
statement, ...  Each against eager, with fullgraph where torch.compile manages one graph
and the frame count torch.compile takes where it breaks (torch's test_misc constructs)."""

from __future__ import annotations

import collections
import dataclasses
import inspect
import sys
import typing
import weakref

import numpy as np
import pytest
import torch
import torch._dynamo.testing
from packaging import version
from test_stdlib_cases import assert_same

from framejit import graphcapture as fj

Point = collections.namedtuple("Point", "x y")


def _compare(fn, make_args, fullgraph=True, torch_frames=True):
    """fn under eager and framejit on fresh args (equal results), and framejit's frame
    count beside torch.compile's."""

    def fresh():
        torch.manual_seed(0)
        return make_args()

    expected = fn(*fresh())
    fj.reset()
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=fullgraph)(*fresh())
    assert_same(got, expected)
    if torch_frames:
        torch._dynamo.reset()
        torch_counter = torch._dynamo.testing.CompileCounter()
        torch.compile(fn, backend=torch_counter, fullgraph=fullgraph)(*fresh())
        assert counter.frame_count == torch_counter.frame_count
    return counter


# ------------------------------------------------------------------ obj.__class__
def _rebuild(x):
    return x.__class__([v + 1 for v in x])


def _rebuild_star(x):
    return x.__class__(*[v + 1 for v in x])


def _class_is_type(x):
    return x.__class__ is type(x), x.__class__.__name__, x[0] * 2


def _made_list_class(x):
    made = [x, x + 1]
    return made.__class__((x * 3,)), {"a": x}.__class__(b=x - 1)


def _dict_class(d):
    return d.__class__(d, extra=d["a"] + 1)


CLASS_CASES = {
    "list": (_rebuild, lambda: [[torch.zeros(2), torch.ones(2)]]),
    "tuple": (_rebuild, lambda: [(torch.zeros(2), torch.ones(2))]),
    "namedtuple": (_rebuild_star, lambda: [Point(torch.zeros(2), torch.ones(2))]),
    "is_type": (_class_is_type, lambda: [[torch.ones(2)]]),
    "made_in_frame": (_made_list_class, lambda: [torch.ones(2)]),
    "dict": (_dict_class, lambda: [{"a": torch.ones(2)}]),
    "ordered_dict": (_dict_class, lambda: [collections.OrderedDict(a=torch.ones(2))]),
}


@pytest.mark.parametrize("name", CLASS_CASES)
def test_container_class(name):
    fn, make_args = CLASS_CASES[name]
    _compare(fn, make_args)


def test_container_class_is_guarded():
    """A list compiled for recompiles for a tuple in the same place: __class__ is guarded."""
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_rebuild, backend=counter, fullgraph=True)
    a, b = torch.zeros(2), torch.ones(2)
    assert type(compiled([a, b])) is list
    assert type(compiled((a, b))) is tuple
    assert counter.frame_count == 2


# ------------------------------------------------------------------ builtin constructors
def _complex_numbers(x):
    c = (
        complex(),  # noqa: UP018 (the call is what is traced)
        complex(1),
        complex(2, 3),
        complex(imag=2),
        complex(real=1),
        complex(imag=1, real=2),
        complex("1+2j"),
        complex(1, 2).conjugate(),
    )
    return [x + z for z in c]


def test_complex_constructor():
    _compare(_complex_numbers, lambda: [torch.randn(2)])


def test_complex_of_a_tensor_breaks():
    """complex(t) needs the tensor's value: a break, eager's answer."""

    def fn(x):
        return complex(x.sum()) * 2

    _compare(fn, lambda: [torch.ones(1)], fullgraph=False, torch_frames=False)


# ------------------------------------------------------------------ id()
class _Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.y1 = torch.ones(2)
        self.y2 = torch.zeros(2)

    def forward(self, x, ref_id):
        return x * (self.y1 if ref_id == id(self.y1) else self.y2)


def test_id_of_an_attribute_tensor_is_guarded():
    m = _Holder()
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(m, backend=counter, fullgraph=True)
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x, id(m.y1)), torch.ones(2))
    torch.testing.assert_close(compiled(x, id(m.y2)), torch.zeros(2))
    assert counter.frame_count == 2
    old = id(m.y1)
    m.y1 = torch.full((2,), 5.0)  # another tensor there: the folded id no longer holds
    torch.testing.assert_close(compiled(x, old), m(x, old))


def test_id_of_input_tensors():
    def fn(x, y):
        return x + 1, id(x), id(x) == id(y)

    fj.reset()
    compiled = fj.compile(fn, fullgraph=True)
    a, b = torch.randn(2), torch.randn(2)
    for args in ((a, a), (a, b), (b, a)):
        got, expected = compiled(*args), fn(*args)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1:] == expected[1:]


# ------------------------------------------------------------------ __weakref__
class Plain:
    pass


def _fresh_weakref(x):
    foo = Plain()
    return (torch.cos(x) if foo.__weakref__ else torch.sin(x)), foo.__weakref__ is None


def _weakref_made(x):
    foo = Plain()
    r = weakref.ref(foo)
    return (torch.cos(x) if foo.__weakref__ else torch.sin(x)), foo.__weakref__ is r


def _input_weakref(x, foo):
    return torch.cos(x) if foo.__weakref__ else torch.sin(x)


_KEPT = Plain()
_KEPT_REF = weakref.ref(_KEPT)

WEAKREF_CASES = {
    "fresh_object": (_fresh_weakref, lambda: [torch.randn(3)], True),
    "weakref_made_in_frame": (_weakref_made, lambda: [torch.randn(3)], True),
    "input_without_refs": (_input_weakref, lambda: [torch.randn(3), Plain()], False),
    "input_with_a_ref": (_input_weakref, lambda: [torch.randn(3), _KEPT], False),
}


@pytest.mark.parametrize("name", WEAKREF_CASES)
def test_dunder_weakref(name):
    fn, make_args, fullgraph = WEAKREF_CASES[name]
    _compare(fn, make_args, fullgraph=fullgraph, torch_frames=fullgraph)


def test_weakref_ref_is_one_object():
    def fn(x):
        foo = Plain()
        return x + 1, weakref.ref(foo) is weakref.ref(foo)

    _compare(fn, lambda: [torch.randn(2)], torch_frames=False)  # (torch: a break)


# ------------------------------------------------------------------ class statements
def _class_after_op(x):
    x += 1

    class C:
        pass

    return x.sin(), C.__name__


def _class_used_after(x):
    y = x + 1

    class Scaled:
        scale = 2

        def f(self, z):
            return z * self.scale

    return Scaled().f(y).cos()


def _module_class(x):
    y = x + 1

    class Triple(torch.nn.Module):
        def forward(self, z):
            return z * 3

    return Triple()(y) + 1


CLASS_STATEMENT_CASES = [_class_after_op, _class_used_after, _module_class]


@pytest.mark.parametrize("fn", CLASS_STATEMENT_CASES, ids=lambda f: f.__name__)
def test_class_statement_breaks_cleanly(fn):
    """A class statement in the frame: the graph before it is kept, the rest resumes."""
    counter = _compare(fn, lambda: [torch.randn(3)], fullgraph=False, torch_frames=False)
    assert counter.frame_count == 2


# ------------------------------------------------------------------ super().attribute
class _Base:
    a = 4
    label = "base"

    def mul(self, x):
        return x * 0.1

    @property
    def doubled(self):
        return self.a * 2


class _Child(_Base):
    a = 7

    def mul(self, x):
        return super().mul(x) * 0.2


class _Grandchild(_Child):
    def value(self, x):
        return super().a * x

    def through_two(self, x):
        return super(_Child, self).a * x

    def label_len(self, x):
        return x + len(super().label)

    def prop(self, x):
        return x * super().doubled


# method -> whether torch.compile takes it in one graph (a property through super(): not)
SUPER_CASES = {"value": True, "through_two": True, "label_len": True, "prop": False}


@pytest.mark.parametrize("method", SUPER_CASES)
def test_super_plain_attribute(method):
    obj = _Grandchild()
    _compare(getattr(obj, method), lambda: [torch.rand(4)], torch_frames=SUPER_CASES[method])


def test_super_attribute_is_guarded():
    """`super().a` folds the class attribute found: rebinding it recompiles."""
    obj = _Grandchild()
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(obj.value, backend=counter, fullgraph=True)
    x = torch.rand(4)
    torch.testing.assert_close(compiled(x), obj.value(x))
    old = _Child.a
    try:
        _Child.a = 11
        torch.testing.assert_close(compiled(x), obj.value(x))
        compiled(x)
    finally:
        _Child.a = old
    assert counter.frame_count == 2


# ------------------------------------------------------------------ metaclass __instancecheck__
class _AcceptAll(type):
    def __instancecheck__(cls, instance):
        return True


class _Tagged(type):
    def __instancecheck__(cls, instance):
        return getattr(instance, "tag", None) == cls.__name__


class AnyThing(metaclass=_AcceptAll):
    pass


class Red(metaclass=_Tagged):
    pass


class _WithTag:
    def __init__(self, tag):
        self.tag = tag


def _check_any(x, obj):
    return x + 1 if isinstance(obj, AnyThing) else x - 1


def _check_tagged(x, obj):
    return x + 1 if isinstance(obj, (int, Red)) else x - 1


INSTANCECHECK_CASES = {
    "accept_all": (_check_any, lambda: [torch.rand(4), Plain()]),
    "tag_matches": (_check_tagged, lambda: [torch.rand(4), _WithTag("Red")]),
    "tag_differs": (_check_tagged, lambda: [torch.rand(4), _WithTag("Blue")]),
    "exact_type": (_check_tagged, lambda: [torch.rand(4), Red()]),
}


@pytest.mark.parametrize("name", INSTANCECHECK_CASES)
def test_metaclass_instancecheck(name):
    fn, make_args = INSTANCECHECK_CASES[name]
    _compare(fn, make_args)


def test_metaclass_instancecheck_is_guarded():
    """What the traced __instancecheck__ read (the tag) is guarded: another tag recompiles."""
    fj.reset()
    compiled = fj.compile(_check_tagged, fullgraph=True)
    x = torch.rand(4)
    for tag in ("Red", "Blue", "Red"):
        torch.testing.assert_close(compiled(x, _WithTag(tag)), _check_tagged(x, _WithTag(tag)))


# ------------------------------------------------------------------ frozen dataclass keys
@dataclasses.dataclass(frozen=True)
class Inner:
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class Outer:
    b: Inner
    z: int
    note: str = dataclasses.field(default="", compare=False)


@dataclasses.dataclass(frozen=True)
class Twin:
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class OwnHash:
    x: int

    def __hash__(self):
        return 0


def _dict_key(x):
    dc = Inner(3.2, 2.5)
    d = {}
    d[dc] = 2
    return dc.x + dc.y + d[dc] + x


def _nested_key(x):
    a, b = Outer(Inner(2.4, 4.4), 5), Outer(Inner(2.4, 4.4), 5, "other note")
    d = {a: 1}
    d[b] = 2  # equal to a: replaces its value, keeps a as the key
    return x + d[a] + len(d), list(d.values()), next(iter(d)).note


def _set_members(x):
    s = {Inner(1.0, 2.0), Inner(1, 2), Twin(1.0, 2.0)}
    return x + len(s), Inner(1, 2) in s, Twin(3, 4) in s


def _input_key(x, key):
    table = {Inner(1.0, 2.0): 3, Inner(3.0, 4.0): 7}
    return x + table[key]


def _own_hash(x):
    return x + len({OwnHash(1), OwnHash(2)})


KEY_CASES = {
    "dict_key": (_dict_key, lambda: [torch.ones(2)], True),
    "nested": (_nested_key, lambda: [torch.ones(2)], True),
    "set_members": (_set_members, lambda: [torch.ones(2)], False),
    "input_key": (_input_key, lambda: [torch.ones(2), Inner(3.0, 4.0)], True),
    "own_hash_breaks": (_own_hash, lambda: [torch.ones(2)], False),
}


@pytest.mark.parametrize("name", KEY_CASES)
def test_frozen_dataclass_keys(name):
    fn, make_args, fullgraph = KEY_CASES[name]
    _compare(fn, make_args, fullgraph=fullgraph, torch_frames=fullgraph)


def test_frozen_dataclass_key_is_guarded():
    """An input key's fields are guarded: another key value recompiles, right answer."""
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_input_key, backend=counter, fullgraph=True)
    x = torch.ones(2)
    for key in (Inner(1.0, 2.0), Inner(3.0, 4.0), Inner(1.0, 2.0)):
        torch.testing.assert_close(compiled(x, key), _input_key(x, key))
    assert counter.frame_count == 2


# ------------------------------------------------------------------ a class's __dict__
_TYPE_DICT_GET = type.__dict__["__dict__"].__get__


class Namespace:
    a = 1
    b = 2
    param = inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=42)


def _namespace_len(x):
    return x + len(_TYPE_DICT_GET(Namespace))


def _namespace_item(x):
    return x + _TYPE_DICT_GET(Namespace)["param"].default + Namespace.__dict__["a"]


@pytest.mark.parametrize("fn", [_namespace_len, _namespace_item], ids=lambda f: f.__name__)
def test_class_namespace(fn):
    _compare(fn, lambda: [torch.randn(3)])


def test_class_namespace_length_is_guarded():
    fj.reset()
    compiled = fj.compile(_namespace_len, fullgraph=True)
    x = torch.zeros(1)
    before = compiled(x)
    Namespace.c = 3
    try:
        torch.testing.assert_close(compiled(x), _namespace_len(x))
        assert compiled(x).item() == before.item() + 1
    finally:
        del Namespace.c


# (built with real annotations: this file's `from __future__ import annotations` makes
# strings of a class statement's, which get_type_hints evaluates with compile())
Annotated = type("Annotated", (), {"__annotations__": {"a": int, "t": torch.Tensor}})
MoreAnnotated = type("MoreAnnotated", (Annotated,), {"__annotations__": {"b": float}, "b": 1.0})


def _namespace_snapshot(x):
    names = dict(vars(Namespace))
    return x + names["a"] + len(list(Namespace.__dict__.items())), sorted(names)


def _builtin_type_namespace(x):
    annotations = object.__dict__.get("__annotations__", {})  # noqa: RUF063 (the read is the test)
    return x + len(annotations) + ("__init__" in vars(object))


def _type_hints(x):
    hints = typing.get_type_hints(MoreAnnotated, include_extras=True)
    return x + len(hints), sorted(hints)


def _module_namespace(x):
    module = sys.modules.get(__name__, None)
    return x + getattr(module, "__dict__", {})["Namespace"].a


@pytest.mark.parametrize(
    "fn",
    [_namespace_snapshot, _builtin_type_namespace, _type_hints, _module_namespace],
    ids=lambda f: f.__name__,
)
def test_namespaces_read_whole(fn):
    _compare(fn, lambda: [torch.randn(3)], torch_frames=False)


def test_module_namespace_guards_only_the_names_read():
    """A global added to the module (framejit installs its compiled function there on every
    compile) does not recompile a frame that read one name of the module's __dict__; a
    class namespace read whole recompiles when a name is added to it."""
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_module_namespace, backend=counter, fullgraph=True)
    x = torch.zeros(1)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), _module_namespace(x))
    assert counter.frame_count == 1
    snapshot = fj.compile(_namespace_snapshot, backend=counter, fullgraph=True)
    snapshot(x)
    Namespace.c = 3
    try:
        assert_same(snapshot(x), _namespace_snapshot(x))
    finally:
        del Namespace.c
    assert counter.frame_count == 3


# ------------------------------------------------------------------ legacy tensor types
def _long_of_numpy_scalars():
    x = np.array([1, 2, 3, 4, 5, 6], dtype=np.int64)
    return torch.LongTensor([x[0], x[2], x[4]])


def _float_of_numbers(x):
    return x + torch.FloatTensor([[1, 2.5], [3, 4]]), torch.LongTensor((1.7, -2.7, True))


def _double_of_mixed():
    x = np.array([1.5, 2.5], dtype=np.float32)
    return torch.DoubleTensor([x[1], 3, 0.25])


# name -> (fn, args, whether torch.compile traces it: mixing numbers fails its fake run)
LEGACY_CASES = {
    "long_of_numpy": (_long_of_numpy_scalars, lambda: [], True),
    "float_of_numbers": (_float_of_numbers, lambda: [torch.ones(2, 2)], True),
    "double_of_mixed": (_double_of_mixed, lambda: [], False),
}


@pytest.mark.parametrize("name", LEGACY_CASES)
def test_legacy_tensor_constructor(name):
    fn, make_args, torch_traces = LEGACY_CASES[name]
    _compare(fn, make_args, torch_frames=torch_traces)


def test_legacy_tensor_of_sizes_breaks():
    """LongTensor(2, 3) allocates uninitialised memory: never traced (its shape checked)."""

    def fn(x):
        return torch.LongTensor(2, 3).shape, x + 1

    _compare(fn, lambda: [torch.ones(2)], fullgraph=False, torch_frames=False)


# ------------------------------------------------------------------ version objects
def _packaging_compare():
    x = torch.zeros(1)
    if version.parse(torch.__version__) >= version.parse("2.0.0"):
        return x + 1
    return x


def _torch_version_compare(x):
    newer = torch.__version__ >= "2.0"
    return (x + 1 if newer else x - 1), torch.__version__ < (99, 0), str(torch.__version__)


_PARSED = version.parse("1.5.2")


def _version_fields(x):
    v = _PARSED
    return x * v.major + v.minor, v.release, v.public, v > version.Version("1.5")


VERSION_CASES = {
    "packaging_parse": (_packaging_compare, lambda: []),
    "torch_version": (_torch_version_compare, lambda: [torch.ones(1)]),
    "fields": (_version_fields, lambda: [torch.ones(1)]),
}


@pytest.mark.parametrize("name", VERSION_CASES)
def test_version_objects(name):
    fn, make_args = VERSION_CASES[name]
    _compare(fn, make_args)


def test_invalid_version_raises_as_eager():
    def fn(x):
        return x + 1, version.parse("not a version")

    fj.reset()
    with pytest.raises(version.InvalidVersion):
        fj.compile(fn)(torch.ones(1))
