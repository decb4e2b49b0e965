"""Python semantics the trace answers as eager does: identity, `in`, class namespaces.

Each compares framejit (fullgraph) with eager, and its frame count with torch.compile's
where torch captures the pattern too."""

from __future__ import annotations

import copy
import dataclasses
import operator

import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


def _check(fn, *args, torch_too=True):
    expected = fn(*copy.deepcopy(args))
    fj.reset()
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*copy.deepcopy(args))
    torch.testing.assert_close(got, expected)
    if torch_too:
        torch._dynamo.reset()
        torch_counter = torch._dynamo.testing.CompileCounter()
        torch.compile(fn, backend=torch_counter, fullgraph=True)(*copy.deepcopy(args))
        assert counter.frame_count == torch_counter.frame_count
    return got


# ------------------------------------------------------------------ identity
@pytest.mark.parametrize("op", [operator.is_, operator.is_not])
def test_identity_between_a_constant_and_a_tensor(op):
    def fn(x):
        return op(-10, x), op(x, "a"), x + 1

    _check(fn, torch.randn(3))


def test_identity_between_objects_of_unrelated_classes():
    # dataclasses' field(default_factory=...) compares a default with a sentinel object
    @dataclasses.dataclass
    class Out:
        scalar: int = 2
        named: dict = dataclasses.field(default_factory=dict)

    def fn(x):
        a = Out(1)
        b = Out(5, named={"x": x})
        return x * a.scalar + b.named["x"], len(a.named)

    _check(fn, torch.randn(3))


def test_identity_between_related_classes_is_not_folded_by_type():
    class Base:
        pass

    class Sub(Base):
        pass

    s = Sub()

    def fn(x, a, b):
        return x + 1, a is b

    fj.reset()
    f = fj.compile(fn, backend="eager")
    assert f(torch.ones(1), s, s)[1] is True
    assert f(torch.ones(1), s, Base())[1] is False
    assert f(torch.ones(1), s, s)[1] is True


# ------------------------------------------------------------------ `in`
class _Point:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, _Point) and self.v == other.v

    __hash__ = None


def test_in_over_user_objects_runs_their_eq():
    a = _Point(1)

    def fn(x, objs):
        return x + 1, [a in objs, _Point(1) in objs, _Point(5) in objs, None in objs]

    got = _check(fn, torch.ones(2), [_Point(0), a], torch_too=False)
    assert got[1] == [True, True, False, False]


def test_in_over_tensors_by_identity():
    def fn(x, y):
        return x + 1, x in [x, y], None in (x, y), "k" in [x, "k"]

    _check(fn, torch.ones(2), torch.zeros(2), torch_too=False)


def test_in_needing_a_tensor_value_breaks():
    # `1 in [t]` asks bool(t == 1): data-dependent, eager's answer comes from a break
    def fn(x):
        return 1 in [x], x + 1

    with pytest.raises(fj.exc.GraphBreakInFullgraph):
        fj.compile(fn, backend="eager", fullgraph=True)(torch.ones(1))
    fj.reset()
    assert fj.compile(fn, backend="eager")(torch.ones(1))[0] is True
    fj.reset()
    assert fj.compile(fn, backend="eager")(torch.zeros(1))[0] is False


# ------------------------------------------------------------------ class __dict__
def test_class_dict_is_the_class_namespace_guarded_key_by_key():
    class A:
        x = 4

        def __init__(self):
            self.a = 6

    a = A()

    def fn(x):
        ns = type(a).__dict__
        return x + (1 if "x" in ns else 2), "a" in ns, ns.get("zz", 7), A.__dict__["x"]

    _check(fn, torch.ones(2))
    f = fj.compile(fn, backend="eager", fullgraph=True)
    assert f(torch.ones(1))[3] == 4
    A.x = 10  # the guards on the namespace's entries notice
    torch.testing.assert_close(f(torch.ones(1)), fn(torch.ones(1)))
    del A.x
    with pytest.raises(KeyError):
        fn(torch.ones(1))
    with pytest.raises(KeyError):
        fj.compile(fn, backend="eager")(torch.ones(1))


def test_class_dict_does_not_see_inherited_attributes():
    class Base:
        x = 1

    class Sub(Base):
        pass

    def fn(x):
        return x + 1, "x" in Sub.__dict__, "x" in Base.__dict__

    _check(fn, torch.ones(2))


# ------------------------------------------------------------------ C descriptors
def test_getset_descriptor_get_is_the_attribute_read():
    def fn(g, x):
        torch.sin(x)
        return g.__get__(x), g.__get__(None, torch.Tensor) is g

    fj.reset()
    counter = fj.testing.CompileCounter()
    f = fj.compile(fn, backend=counter, fullgraph=True)
    for g, x in [(torch.Tensor.shape, torch.ones(2, 2)), (torch.Tensor.shape, torch.ones(2, 2)),
                 (torch.Tensor.dtype, torch.ones(2, 2))]:  # fmt: skip
        assert f(g, x) == fn(g, x)
    assert counter.frame_count == 2  # another descriptor recompiles, the same one does not


# ------------------------------------------------------------------ torch.distributions
def test_distributions_are_traced_as_python_over_tensor_ops():
    def fn(x):
        normal = torch.distributions.Normal(x, torch.tensor(1.0), validate_args=False)
        independent = torch.distributions.Independent(normal, 1, validate_args=False)
        return independent.log_prob(x), normal.entropy(), normal.stddev

    _check(fn, torch.randn(4))


def test_distribution_argument_validation_breaks_and_raises_as_eager():
    # `if not torch._is_all_true(valid): raise ValueError`: a tensor's value decides
    # (validate_args given: torch.compile switches the default off for the process)
    def fn(mu, y):
        return torch.distributions.Normal(mu, 1.0, validate_args=True).log_prob(y)

    fj.reset()
    f = fj.compile(fn, backend="eager")
    torch.testing.assert_close(f(torch.zeros(3), torch.ones(3)), fn(torch.zeros(3), torch.ones(3)))
    for call in (fn, f):
        with pytest.raises(ValueError):
            call(torch.tensor([float("nan")]), torch.ones(1))
