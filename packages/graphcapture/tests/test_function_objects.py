"""Function objects library code passes around, read like any object: a functools.partial's
own attributes (hasattr(p, "__name__"), set ones), eager's answers, guarded."""

from __future__ import annotations

import functools
import inspect

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events


def _graphs(fn, *args):
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        out = fj.compile(fn, fullgraph=True)(*args)
    finally:
        unsubscribe()
    return sum(len(r.graphs) for r in seen), out


def bar(x, y):
    return torch.sin(x) + torch.cos(y)


GLOBAL_PARTIAL = functools.partial(bar, y=4)
NAMED_PARTIAL = functools.partial(bar, y=4)
NAMED_PARTIAL.__name__ = "named"


PARTIAL_ATTRIBUTES = {
    "hasattr_name_global": lambda x: (x + 1, hasattr(GLOBAL_PARTIAL, "__name__")),
    "getattr_default_global": lambda x: (x + 1, getattr(GLOBAL_PARTIAL, "__name__", "none")),
    "set_name": lambda x: (x + 1, getattr(NAMED_PARTIAL, "__name__", "none")),
    "doc": lambda x: (x + 1, GLOBAL_PARTIAL.__doc__),
    "made_in_frame": lambda x: (
        functools.partial(bar, y=x)(x),
        hasattr(functools.partial(bar, y=x), "__name__"),
    ),
}


@pytest.mark.parametrize("case", list(PARTIAL_ATTRIBUTES))
def test_partial_own_attributes(case):
    fj.reset()
    fn = PARTIAL_ATTRIBUTES[case]
    x = torch.randn(3)
    count, (value, answer) = _graphs(fn, x)
    expected_value, expected_answer = fn(x)
    assert count == 1 and answer == expected_answer
    torch.testing.assert_close(value, expected_value)


def test_partial_gaining_an_attribute_recompiles():
    fj.reset()
    p = functools.partial(bar, y=1)

    def f():
        return hasattr(p, "__name__")

    compiled = fj.compile(f)
    assert compiled() is False
    p.__name__ = "late"
    assert compiled() is True


def inner(a, b, *rest, c=10, d=11, **extra):
    return a


def annotated(a: torch.Tensor, b: int = 3) -> torch.Tensor:
    return a + b


def _bind_and_edit(x):
    bound = inspect.signature(inner).bind(x * 2, 2, 3, d=12, e=15)
    bound.arguments["d"] = 13
    return bound.args, bound.kwargs, bound.arguments


def _bind_apply_defaults(x):
    bound = inspect.signature(inner).bind(x * 2, 2)
    before = bound.arguments
    bound.apply_defaults()
    return before, bound.arguments, bound.args, bound.kwargs


def _bind_partial(x):
    bound = inspect.signature(inner).bind_partial(b=x * 2)
    return bound.args, bound.kwargs


def _route_kwargs(x):
    # library code routing keyword arguments to a callee's parameters
    params = inspect.signature(annotated).parameters
    kwargs = {k: v for k, v in {"a": x, "zz": 1}.items() if k in params}
    return annotated(**kwargs), params["b"].default, params["a"].default is inspect.Parameter.empty


def _parameter_fields(x):
    p = inspect.signature(annotated).parameters["b"]
    return x + p.default, p.name == "b", p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD


def _bind_type_error(x):
    try:
        inspect.signature(annotated).bind(x, 1, 2)
    except TypeError:
        return x - 1
    return x + 1


SIGNATURE_CASES = {
    "bind_and_edit": _bind_and_edit,
    "bind_apply_defaults": _bind_apply_defaults,
    "bind_partial": _bind_partial,
    "route_kwargs": _route_kwargs,
    "parameter_fields": _parameter_fields,
    "bind_type_error": _bind_type_error,
}


@pytest.mark.parametrize("case", list(SIGNATURE_CASES))
def test_inspect_signature_in_one_graph(case):
    fj.reset()
    fn = SIGNATURE_CASES[case]
    x = torch.randn(3)
    count, out = _graphs(fn, x)
    assert count == 1
    torch.testing.assert_close(out, fn(x))


def test_signature_and_bound_arguments_escape():
    fj.reset()

    def f(x):
        sig = inspect.signature(inner)
        bound = sig.bind(1, 2, 3, d=12)
        return sig, bound, x + 1

    sig, bound, _ = fj.compile(f, fullgraph=True)(torch.ones(1))
    ref_sig, ref_bound, _ = f(torch.ones(1))
    assert sig == ref_sig and bound == ref_bound


class DefaultStr:
    pass


class CustomStr:
    def __str__(self):
        return "ok"


KEPT = DefaultStr()


def test_str_of_an_object_with_object_repr_escapes_as_its_text():
    """str(obj) of a class leaving __str__/__repr__ to object: the text holds the address,
    made from the object as rebuilt (new here) or read (an input); one graph."""
    fj.reset()

    def f(x):
        a = DefaultStr()
        return x + 1, str(a), a, str(KEPT), str(CustomStr())

    count, (_value, text, obj, kept, custom) = _graphs(f, torch.ones(2))
    assert count == 1
    assert text == object.__repr__(obj) and kept == object.__repr__(KEPT) and custom == "ok"


def test_str_of_an_object_with_object_repr_used_as_a_string_breaks_the_graph():
    fj.reset()

    def f(x):
        a = DefaultStr()
        return x + 1, str(a).split(" object at")[0], a

    _, head, obj = fj.compile(f)(torch.ones(2))
    assert head == object.__repr__(obj).split(" object at")[0]
