"""Cases for user-defined classes built inside the frame and their Python dunder methods.

Plain classes, dataclasses (frozen, field defaults, default factories, __post_init__),
NamedTuple, Enum lookups, properties, classmethods/staticmethods, super() in its forms,
__eq__/__lt__/__add__/__bool__/__len__/__getitem__/__iter__/__contains__; objects that
escape the frame are rebuilt.  torch.compile captures each in one graph (fullgraph).
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import sys
import typing

import torch
from cases import Case, args, t

USER_CLASS_CASES: list[Case] = []


def case(*factories, frames=1, check_ops=True):
    def register(fn):
        USER_CLASS_CASES.append(Case(fn, args(*factories), frames, check_ops))
        return fn

    return register


@dataclasses.dataclass
class Tag:
    name: str
    n: int


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    items: list = dataclasses.field(default_factory=list)
    scale: float = 2.0


@dataclasses.dataclass
class WithPost:
    x: torch.Tensor
    k: int = 3

    def __post_init__(self):
        self.y = self.x * self.k


@dataclasses.dataclass(order=True)
class Version:
    major: int
    minor: int


class Pair(typing.NamedTuple):
    first: torch.Tensor
    second: int = 2


class Color(enum.Enum):
    RED = 1
    BLUE = 2


class Box:
    unit = 5

    def __init__(self, x):
        self.x = x

    @property
    def double(self):
        return self.x * 2

    @classmethod
    def make(cls, x):
        return cls(x + 1)

    @staticmethod
    def helper(x):
        return x - 1

    def __add__(self, other):
        return Box(self.x + other.x)

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return self.x + i

    def __contains__(self, item):
        return item == "x"

    def __iter__(self):
        return iter([self.x, self.x + 1])


class Base:
    def __init__(self, x):
        self.x = x

    def value(self):
        return self.x * 2

    @classmethod
    def build(cls, *args):
        return cls(*args)


class Child(Base):
    def __init__(self, x, k):
        super().__init__(x)
        self.k = k

    def value(self):
        return super().value() + self.k

    @classmethod
    def build(cls, x):
        return super().build(x, 2).value()


class Left(Base):
    def value(self):
        return super().value() + 1


class Right(Base):
    def value(self):
        return super().value() * 3


class Diamond(Left, Right):
    def value(self):
        return super(Left, self).value() + super().value()


class Truthy:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


# ----------------------------------------------------------------- dataclasses
@case(t(4))
def dataclass_equal_instances_compare_equal(x):
    # regression: Tag('a', 0) == Tag('a', 0) was False (folded as identity)
    if Tag("a", 0) == Tag("a", 0):
        x = x + 1
    if Tag("a", 0) != Tag("a", 1):
        x = x * 2
    return x, Tag("a", 0) is Tag("a", 0)


@case(t(4))
def dataclass_frozen_defaults(x):
    f = Frozen(1)
    return x * f.scale + f.a + len(f.items), f == Frozen(1), f != Frozen(2)


@case(t(4))
def dataclass_post_init_escapes(x):
    w = WithPost(x)
    return w.y + w.k, w


@case(t(4))
def dataclass_order(x):
    if Version(1, 2) < Version(1, 3) and Version(2, 0) >= Version(1, 9):
        return x + 1
    return x - 1


@case(t(4))
def dataclass_replace_fields(x):
    w = WithPost(x, 2)
    return w.y + len(dataclasses.fields(w))


# ----------------------------------------------------------------- NamedTuple, Enum
@case(t(4))
def namedtuple_class_defaults(x):
    p = Pair(x)
    return p.first * p.second, p, Pair(second=4, first=x)[1]


@case(t(4))
def enum_lookup_by_value(x):
    return x * Color(2).value, Color.RED, Color(1) is Color.RED


# ----------------------------------------------------------------- plain classes
@case(t(4))
def plain_class_property_and_dunders(x):
    b = Box(x)
    c = b + Box.make(x)
    return c.double, len(b), b[1], "x" in b, "y" in b, list(b), Box.helper(x), b.unit


@case(t(4))
def plain_object_escapes_and_is_rebuilt(x):
    b = Box(x * 2)
    b.extra = x + 1
    return b


@case(t(4))
def bool_dunder(x):
    if Truthy(True):
        x = x + 1
    if not Truthy(False):
        x = x * 3
    return x


@case(t(4))
def object_identity(x):
    a = Box(x)
    b = a
    return x + (a is b) + (a is not Box(x)) * 2


# ----------------------------------------------------------------- super() in its forms
@case(t(4))
def super_zero_arg_init_and_method(x):
    return Child(x, 3).value()


@case(t(4))
def super_in_classmethod(x):
    return Child.build(x)


@case(t(4))
def super_multiple_inheritance(x):
    return Diamond(x).value(), Left(x).value(), Right(x).value()


@case(t(4))
def classmethod_through_instance(x):
    return Child(x, 1).build(x) + Base.build(x).value()


if sys.version_info < (3, 13):  # (3.13 stopped chaining classmethod over another descriptor)

    class BoxIndex(enum.IntEnum):
        """An IntEnum whose class-level properties give slices (torch's issue134451)."""

        X = 0
        Y = 1
        HEADING = 2

        @classmethod
        @property
        def POINT(cls):
            return slice(cls.X, cls.Y + 1)

    @case(t(3, 5))
    def classmethod_over_property(x):
        x = x.clone()
        x[..., BoxIndex.POINT] = x[..., BoxIndex.POINT].tanh() * 32
        return x


# ----------------------------------------------------------------- dict subclasses, metaclasses
class RenamingMeta(type):
    """A metaclass that leaves type.__call__ alone (transformers' _BCCacheNameMeta)."""

    def __setattr__(cls, name, value):
        super().__setattr__(name, value)


class Output(collections.OrderedDict, metaclass=RenamingMeta):
    """transformers' ModelOutput, reduced: a dataclass over an OrderedDict whose fields are
    both attributes and keys, written through super().__setitem__/__setattr__."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = self.__dict__.get(f.name)
            if v is not None:
                self[f.name] = v

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name, value):
        if name in {f.name for f in dataclasses.fields(self)} and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())

    def get(self, key, default=None):
        return super().get(key, default)


@dataclasses.dataclass
class LayerOutput(Output):
    hidden: torch.Tensor = None
    extra: torch.Tensor = None


class Registry(dict):
    """transformers' _CanRecordRegistry: keyed by str(key), read through super().get."""

    def get(self, key):
        return super().get(str(key)) or {}


REGISTRY = Registry({"k": {"scale": 2}})


class Settings(dict):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.origin = "made"


@case(t(4))
def model_output_built_read_and_escapes(x):
    out = LayerOutput(hidden=x + 1)
    y = out[0] * 2 + out["hidden"] + out.hidden + (out.get("extra") is None)
    return (
        LayerOutput(hidden=y, extra=out.get("hidden")),
        len(out),
        list(out.keys()),
        "extra" in out,
    )


@case(t(4))
def dict_subclass_super_get_on_a_global(x):
    return x * REGISTRY.get("k")["scale"] + len(REGISTRY.get("absent"))


@case(t(4))
def dict_subclass_init_iteration_and_truth(x):
    s = Settings(a=1, b=x)
    total = x * 0
    for k in s:
        total = total + s[k]
    return total, len(s), bool(s), [k for k, _ in s.items()], s.origin, s


@case(t(4))
def finfo_and_iinfo_of_a_dtype_are_folded(x):
    # transformers' masks: torch.finfo(dtype).min
    return x.clamp(min=torch.finfo(x.dtype).min) + torch.iinfo(torch.int8).max + torch.finfo().eps


class _PlainInit:
    def __init__(self, x):
        super().__init__()  # reaches object.__init__: nothing to do
        self.a = x + 1


@case(t(4))
def super_init_reaching_object(x):
    obj = _PlainInit(x / 3.0)
    obj.b = obj.a * 2
    return obj.a, obj.b


class _WithNew:
    def __new__(cls, *args):
        instance = super().__new__(cls)
        instance.made_by = "new"
        return instance

    def __init__(self, x):
        self.x = x


class _ChildWithNew(_WithNew):
    def __new__(cls, *args):
        return super(_ChildWithNew, cls).__new__(cls, *args)  # noqa: UP008 (two-argument form)

    def __init__(self, x, k):
        super().__init__(x)
        self.k = k


class _NewReturnsOther:
    def __new__(cls):
        other = object.__new__(_WithNew)  # not a _NewReturnsOther: __init__ is skipped
        other.x = 7
        return other

    def __init__(self):
        self.x = 11


@case(t(4))
def own_new_then_init(x):
    # type.__call__: cls.__new__(cls, *args), then __init__ on what it made
    a = _WithNew(x)
    b = _ChildWithNew(x, 2)
    return a.x + 1, a.made_by, b.x * b.k, b.made_by, type(b) is _ChildWithNew


@case(t(4))
def new_returning_another_class_skips_init(x):
    other = _NewReturnsOther()
    return x * other.x, type(other) is _WithNew


@case(t(4))
def class_mro_and_flags(x):
    mro = type(Child(x, 1)).__mro__
    is_mapping = collections.OrderedDict.__flags__ & (1 << 6)
    return x + (Base in mro) + (Left in mro) + bool(is_mapping), len(mro)


# ----------------------------------------------------------------- __slots__ classes
class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


class PointWithDict(Point):  # no __slots__ of its own: its instances get a __dict__
    def scaled(self):
        return self.x * self.k


@case(t(4))
def slots_object_built_written_and_escapes(x):
    p = Point(x, 2)
    p.y = p.y + 1
    return p.x * p.y, p


@case(t(4))
def slots_errors_as_eager(x):
    p = Point(x, 2)
    caught = []
    try:
        p.z = 1  # no slot, no __dict__
    except AttributeError as e:
        caught.append(str(e))
    q = Point.__new__(Point)
    try:
        q.y  # noqa: B018 (an empty slot)
    except AttributeError as e:
        caught.append(str(e))
    return x + len(caught), caught, hasattr(q, "x"), hasattr(p, "x")


@case(t(4))
def slots_and_dict_attributes_of_a_subclass(x):
    p = PointWithDict(x, 1)
    p.k = 3
    return p.scaled(), p


# ----------------------------------------------------------------- torch's OrderedSet
@case(t(4))
def ordered_set_built_and_combined(x):
    from torch.utils._ordered_set import OrderedSet

    s = OrderedSet(["c", "b", "a"])
    s.add("d")
    s.discard("b")
    u, i, d = s | OrderedSet("xa"), s & OrderedSet("ad"), s - OrderedSet("c")
    s |= {"e"}
    return (
        x * len(s), list(s), list(u), list(i), list(d), "a" in s, s == OrderedSet(s),
        s != u, repr(s), s.issubset(u), s,
    )  # fmt: skip


@case(t(4))
def ordered_set_errors_as_eager(x):
    from torch.utils._ordered_set import OrderedSet

    s = OrderedSet("ab")
    caught = []
    for bad in (lambda: s - 1, lambda: s.issubset(), lambda: OrderedSet().pop(), lambda: s.add([])):
        try:
            bad()
        except (TypeError, KeyError) as e:
            caught.append((type(e).__name__, str(e)))
    return x + len(caught), caught
