"""Symbolic ints (a dynamic size, an int argument traced as a symbol) in the Python that
model code runs on them (variables/sym_builtins.py, sym_node.py): values against eager
for several sizes, in one graph per compile (fullgraph), symbolic where torch.compile keeps
them symbolic (the same frame count), specialised and guarded where Python needs the number."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj

TABLE = {3: 1.5, 4: 2.5, 5: 3.5}


def _n(x):
    return x.shape[0]


# name -> (fn, symbolic: torch.compile keeps one graph for every size under dynamic=True)
CASES = {
    "dict_key": (lambda x: x * TABLE[_n(x)], False),
    "dict_get": (lambda x: x * TABLE.get(_n(x), 0.0), False),
    "in_dict": (lambda x: x + (_n(x) in TABLE), False),
    "set_member": (lambda x: x + (_n(x) in {3, 5}), False),
    "str": (lambda x: (x + 1, str(_n(x))), False),
    "fstring": (lambda x: (x + 1, f"n={_n(x)}:{_n(x):03d}"), False),
    "format": (lambda x: (x + 1, "{}-{}".format(_n(x), 2)), False),  # noqa: UP032
    "repr_size": (lambda x: (x + 1, repr(x.shape), str(x.shape)), False),
    "list_times_n": (lambda x: (x + 1, [0] * _n(x)), False),
    "n_times_tuple": (lambda x: x + torch.tensor(_n(x) * (1.0,)), False),
    "constant_tuple_index": (lambda x: x + (1, 2, 3, 4, 5, 6)[_n(x)], False),
    "hash": (lambda x: (x + 1, hash(_n(x))), False),
    "divmod": (lambda x: x + divmod(_n(x), 2)[1], False),
    "round": (lambda x: x + round(_n(x) / 3), False),
    "math_sqrt": (lambda x: x + math.sqrt(_n(x)), False),
    "max": (lambda x: x + max(_n(x), 4), True),
    "min_three": (lambda x: x + min(_n(x), 4, x.shape[0] + 1), True),
    "abs": (lambda x: x + abs(-_n(x)), True),
    "int": (lambda x: x + int(_n(x)), True),
    "float": (lambda x: x + float(_n(x)), True),
    "size_numel": (lambda x: x + x.shape.numel(), True),
    "size_concat": (lambda x: x.new_zeros(x.shape + (2,)), True),  # noqa: RUF005
}


def _same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, tuple):
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert got == expected


def _frames(compile_fn, reset, fn, dynamic, sizes):
    counter = torch._dynamo.testing.CompileCounter()
    reset()
    compiled = compile_fn(fn, backend=counter, fullgraph=True, dynamic=dynamic)
    for n in sizes:
        x = torch.arange(float(n))
        _same(compiled(x), fn(x))
    return counter.frame_count


@pytest.mark.parametrize("dynamic", [True, None])
@pytest.mark.parametrize("name", list(CASES))
def test_symbolic_int_constructs_match_eager_in_one_graph(name, dynamic):
    fn, symbolic = CASES[name]
    sizes = (3, 4, 5, 4)
    frames = _frames(fj.compile, fj.reset, fn, dynamic, sizes)
    if symbolic:
        assert frames == _frames(torch.compile, torch._dynamo.reset, fn, dynamic, sizes)


def test_a_specialised_symbol_is_guarded():
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(lambda x: x * TABLE[x.shape[0]], backend=counter, dynamic=True)
    for n in (3, 4, 3, 5):
        x = torch.ones(n)
        torch.testing.assert_close(compiled(x), x * TABLE[n])
    assert counter.frame_count == 3  # one per value the key took


# ------------------------------------------------------------------ numpy numbers
NUMPY_CASES = {
    "mod": lambda x, a, b: x + (a % b),
    "results_keep_numpy_types": lambda x, a, b: (x + 1, a % b, a + b, a * b > 3, b - a, a // b),
    "chained": lambda x, a, b: (x, (a % b) + 1, type((a % b) + 1).__name__),
    "float64": lambda x, a, b: (x, a * np.float64(1.5)),
}


@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_symbolic_int_with_a_numpy_int64(name):
    fn = NUMPY_CASES[name]
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(fn, backend=counter, dynamic=True, fullgraph=True)
    for a in (4096, 4099, 4096):
        args = (torch.arange(4.0), a, np.int64(8))
        _same(compiled(*args), fn(*args))
    assert counter.frame_count == 1


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, a, b: (x, b % a),  # numpy's x % 0 is 0 (a warning), Python's raises
        lambda x, a, b: (x, a / b),
        lambda x, a, b: (x, a + np.int32(3)),  # int32 arithmetic wraps
    ],
)
def test_symbolic_int_with_numpy_numbers_python_would_not_match_breaks(fn):
    args = (torch.arange(4.0), 4096, np.int64(8))
    fj.reset()
    with pytest.raises(fj.GraphBreakInFullgraph):
        fj.compile(fn, backend="eager", dynamic=True, fullgraph=True)(*args)
    _same(fj.compile(fn, backend="eager", dynamic=True)(*args), fn(*args))
