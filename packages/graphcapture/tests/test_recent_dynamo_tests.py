"""Patterns from recent torch test/dynamo files (benchmarks/dynamo_tests.py measures them),
each compared with eager and with torch.compile's frame count on fullgraph=True."""

from __future__ import annotations

import copy
import functools
import math
import operator

import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


def _check(fn, *args):
    """fn under framejit (fullgraph) equals eager, in as many frames as torch.compile
    (each run on its own copy of the arguments: fn may mutate them)."""
    expected = fn(*copy.deepcopy(args))
    fj.reset()
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*copy.deepcopy(args))
    torch.testing.assert_close(got, expected)
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=True)(*copy.deepcopy(args))
    assert counter.frame_count == torch_counter.frame_count
    return got


def test_in_place_method_result_is_its_tensor():
    # `y = x.add_(1)` is x itself: `is`, `is not` and set membership see one object
    def fn(x):
        y = x.add_(1)
        z = torch.Tensor.mul_(y, 2)
        s = {x}
        s.add(y)
        return x is y, y is not z, z in s, len(s)

    assert _check(fn, torch.ones(3)) == (True, False, True, 1)


def test_distinct_tensors_stay_distinct():
    def fn(x):
        y = x + 1
        return x is y, len({x, y})

    assert _check(fn, torch.ones(2)) == (False, 2)


@pytest.mark.parametrize("attr", ["func", "args", "__call__", "__dict__", "__name__", "__code__"])
def test_hasattr_of_a_partial_made_in_the_frame(attr):
    def fn(t):
        p = functools.partial(lambda x, y: torch.sin(x) + y, y=t)
        return p(t) if hasattr(p, attr) else torch.zeros_like(t)

    _check(fn, torch.randn(3))


def test_callable_of_instances_tensors_and_containers():
    class WithCall:
        def __call__(self):
            return 1

    class Plain:
        pass

    def fn(x, a, b):
        flags = (callable(a), callable(b), callable(x), callable([x]), callable((1, 2)))
        return x + sum(f * 2**i for i, f in enumerate(flags))

    _check(fn, torch.ones(2), WithCall(), Plain())


def test_math_and_operator_functions_fold_on_constants():
    def fn(x, a):
        ops = (operator.abs, operator.neg, operator.index, operator.length_hint)
        folded = [op(-3) if op is not operator.length_hint else op((1, 2)) for op in ops]
        return x + math.radians(a) + math.hypot(3, 4) + sum(folded)

    _check(fn, torch.ones(2), 12)


def test_tensor_metadata_queries_by_keyword():
    def fn(x):
        y = x + 1
        return torch.is_floating_point(input=y), torch.is_complex(y), torch.is_tensor(y)

    assert _check(fn, torch.ones(2)) == (True, False, True)


def test_jit_unwrap_optional_is_the_value():
    def fn(x):
        return torch.jit._unwrap_optional(x).sin()

    _check(fn, torch.ones(2))


class _Exc(Exception):
    pass


def _raises_in_callee(x):
    raise NotImplementedError("from the callee")


@pytest.mark.parametrize(
    "body",
    ["raise", "callee", "missing key", "zero division", "next", "with", "finally", "tuple"],
)
def test_exceptions_caught_in_the_trace(body):
    def fn(x, d):
        x = x.cos()
        try:
            if body == "raise":
                raise _Exc(1, 2.0)
            if body == "callee":
                _raises_in_callee(x)
            if body == "missing key":
                x = x * d["missing"]
            if body == "zero division":
                x = x / (1 // len(d))
            if body == "next":
                next(iter([]))
            if body == "with":
                with torch.no_grad():
                    x = x.sin()
                    raise ValueError
            if body in ("finally", "tuple"):
                try:
                    raise KeyError("k")
                finally:
                    x = x + 10
        except (_Exc, NotImplementedError) as e:
            x = x + len(e.args)
        except (KeyError, ZeroDivisionError, StopIteration, ValueError):
            x = x.sigmoid()
        return x * 2

    d = {} if body == "zero division" else {"present": 1}
    x = torch.ones(3, requires_grad=True)
    got = _check(fn, x, d)
    # grad mode after an exception left a no_grad block is the mode outside it again
    assert got.requires_grad == fn(x, d).requires_grad
    assert torch.is_grad_enabled()


def test_missing_key_answer_is_guarded():
    def fn(x, d):
        try:
            return x * d["k"]
        except KeyError:
            return x - 1

    compiled = fj.compile(fn, backend="eager")
    for d in ({}, {"k": 3}, {}):
        torch.testing.assert_close(compiled(torch.ones(2), d), fn(torch.ones(2), d))


def test_graph_break_after_a_handler_breaks_at_the_raise():
    def fn(x):
        x = x + 1
        try:
            raise KeyError("a")
        except KeyError as e:
            x = x * len(e.args)
            print("", end="")  # a graph break inside the handler
        return x * 2

    torch.testing.assert_close(fj.compile(fn, backend="eager")(torch.ones(2)), fn(torch.ones(2)))


def test_torch_check_that_holds_is_nothing():
    def fn(x):
        torch._check(x.shape[0] > 3, lambda: "Shape is not greater than 3")
        torch._check_with(ValueError, x.dim() == 1, lambda: "1-d")
        return x + 1

    _check(fn, torch.randn(4))


def test_custom_attributes_stored_on_tensors():
    def fn(x, flag):
        x.offloading_activation = flag
        y = x + 1
        y.tag = "made"
        return y, hasattr(y, "tag"), y.tag

    x = torch.ones(3)
    y, present, tag = fj.compile(fn, backend="eager", fullgraph=True)(x, True)
    torch.testing.assert_close(y, x + 1)
    assert (present, tag, y.tag, x.offloading_activation) == (True, "made", "made", True)


def test_type_with_a_legacy_tensor_class():
    def fn(a, b):
        m = a.type(torch.HalfTensor)
        return b.type(m.type())

    _check(fn, torch.randn(2), torch.randn(2))


def test_hasattr_of_sizes_lists_and_tuples_asks_their_type():
    # hasattr(x.shape, "_fields") was True (any attribute of a list/tuple "existed"): a
    # wrong branch
    def fn(x):
        flags = [hasattr(x.shape, "_fields"), hasattr([x], "append"), hasattr((x,), "append")]
        return x + 1 if hasattr(x.shape, "_fields") else x - 1, flags

    _check(fn, torch.ones(2))


def test_attributes_an_input_tensor_already_has():
    # hasattr(x, "test") on a tensor with x.test set said False (the class has none): the
    # wrong branch on every call
    def fn(x):
        if hasattr(x, "test"):
            return x + 2 if x.test is None else x * x.test
        return x + 1

    compiled = fj.compile(fn, backend="eager")
    for value in ("absent", None, 3, "absent"):
        x = torch.ones(2)
        if value != "absent":
            x.test = value
        torch.testing.assert_close(compiled(x), fn(x))


def test_fromkeys_of_dict_ordereddict_and_defaultdict():
    import collections

    def fn(x, y):
        d = dict.fromkeys(["a", "b"])
        d1 = dict.fromkeys(d, x + 1)
        d2 = collections.defaultdict.fromkeys(iter(d1), x - 2)
        d3 = collections.OrderedDict.fromkeys(("a", "b"), value=y)
        ordered = type(d3) is collections.OrderedDict
        return d1["a"] * d2["b"] + d3["a"], d["b"] is None, ordered, list(d2) == ["a", "b"]

    _check(fn, torch.ones(2), torch.zeros(2))


def test_fromkeys_with_one_shared_list_keeps_the_aliasing():
    def fn(x):
        d = dict.fromkeys(["a", "b"], [])  # noqa: RUF024 (the shared list is under test)
        d["a"].append(1)
        return x + len(d["b"]), d

    x = torch.ones(2)
    got, d = fj.compile(fn, backend="eager")(x)
    torch.testing.assert_close(got, x + 1)
    assert d["a"] is d["b"]
