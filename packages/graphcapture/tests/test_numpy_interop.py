"""NumPy objects crossing the frame boundary (variables/numpy_arrays.py): ufunc `out=` arrays,
read-only arrays, against eager numpy (values, identity, writeability, the exception type)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj

pytestmark = pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")


def _run(fn, *args, fullgraph=False):
    """(result or exception type, args after the call) for eager and for framejit."""

    def one(call):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        for c, a in zip(copies, args, strict=True):
            if isinstance(a, np.ndarray):
                c.flags.writeable = a.flags.writeable
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # torch.from_numpy of a read-only array
            try:
                return call(*copies), copies
            except (ValueError, TypeError, AssertionError) as e:
                return type(e), copies

    fj.reset()
    return one(fn), one(fj.compile(fn, backend="eager", fullgraph=fullgraph))


def _same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, (tuple, list)):
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype
        assert got.flags.writeable == expected.flags.writeable
    else:
        assert got == expected


# ------------------------------------------------------------------ ufunc out=
def _out_local():
    x = np.arange(5)
    out = np.empty((x.shape[0], x.shape[0]))
    res = np.sin(x, out=out)
    assert res is out
    return out


OUT_CASES = {
    "local_out": (_out_local, ()),
    "argument_out": (lambda x, out: (np.add(x, 1, out=out) is out, out), "x_out"),
    "out_of_a_view": (lambda x, out: (np.multiply(x, 2.0, out=out[1]), out), "x_out"),
    "out_positional": (lambda x, out: (np.negative(x, out) is out, out), "x_out"),
}


@pytest.mark.parametrize("name", list(OUT_CASES))
def test_ufunc_out_is_written_and_returned_as_in_eager(name):
    fn, args = OUT_CASES[name]
    if args == "x_out":
        args = (np.arange(5.0), np.zeros((3, 5)))
    (expected, eager_args), (got, fj_args) = _run(fn, *args, fullgraph=name == "local_out")
    _same(got, expected)
    _same(fj_args, eager_args)  # the out array the caller passed is written


# ------------------------------------------------------------------ read-only arrays
def _write_view(x):
    y = x[0]
    y[0] = 5
    return y


def _iadd(x):
    x += 1
    return x


READONLY_CASES = {
    "identity": lambda x: x,
    "arithmetic": lambda x: x * 2 + 1,
    "view": lambda x: x[0],
    "write_through_view": _write_view,
    "in_place_operator": _iadd,
    "broadcast_to_in_frame": lambda x: (lambda b: (b.sum(0), b))(np.broadcast_to(x[0], (2, 3))),
    "torch_tensor_copy": lambda x: torch.tensor(x) + 1,
    "out_into_it": lambda x: np.add(x, 1, out=x),
}


@pytest.mark.parametrize("writeable", [False, True])
@pytest.mark.parametrize("name", list(READONLY_CASES))
def test_read_only_arrays_behave_as_in_eager(name, writeable):
    x = np.arange(6.0).reshape(2, 3)
    x.flags.writeable = writeable
    (expected, eager_args), (got, fj_args) = _run(READONLY_CASES[name], x)
    if isinstance(expected, type):  # eager refuses the write: so does framejit
        assert got is expected
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        _same(got, expected)
    _same(fj_args, eager_args)


def test_a_read_only_argument_is_one_graph_and_comes_back_itself():
    x = np.broadcast_to(np.arange(3), (2, 3))
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(lambda a: (a, a + 1), backend=counter, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        same, plus = compiled(x)
    assert same is x and counter.frame_count == 1
    np.testing.assert_array_equal(plus, x + 1)
    writeable = np.arange(6).reshape(2, 3)
    compiled(writeable)  # the writeability is guarded: a writeable array recompiles
    assert counter.frame_count == 2


# ------------------------------------------------------------------ automatic dynamic
def _sum_rows(a, t):
    return np.sum(a * 2, axis=0) + 1, t + a.shape[0]


def test_ndarray_arguments_get_automatic_dynamic_sizes_as_tensors_do():
    """A C-contiguous ndarray argument's sizes follow the dim policy (torch.compile treats
    it as a tensor): a second size recompiles once, with that dim a symbol."""
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(_sum_rows, backend=counter)
    for rows in (3, 5, 6, 7, 5):
        a = np.arange(rows * 4, dtype=np.float64).reshape(rows, 4)
        (got, got_t), (want, want_t) = compiled(a, torch.ones(2)), _sum_rows(a, torch.ones(2))
        _same(got, want)
        torch.testing.assert_close(got_t, want_t)
    assert counter.frame_count == 2
    other = np.ones((5, 3))  # a static dim that differs: guarded, recompiles
    _same(compiled(other, torch.ones(2))[0], _sum_rows(other, torch.ones(2))[0])
    assert counter.frame_count == 3


def test_a_non_contiguous_ndarray_keeps_its_exact_layout_guarded():
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(lambda a: (a + 1, a.strides), backend=counter)
    for rows in (3, 5):
        a = np.arange(rows * 4.0).reshape(4, rows).T  # a transposed view
        got, want = compiled(a), (a + 1, a.strides)
        _same(got, want)
    assert counter.frame_count == 2


def test_numpy_random_in_a_loop_is_a_break_and_the_callee_recompiles_once():
    """torch's test_numpy_no_raise: np.random stays eager (numpy's own stream); the callee
    taking the arrays compiles twice over three shapes, as torch.compile's."""

    def callee(t, t_np):
        return t, np.nan_to_num(t_np)

    def fn():
        out = []
        for shape in ((3, 3), (4, 4), (5, 5)):
            t = torch.randn(shape)
            t_np = np.random.randn(*shape).astype(np.complex64)
            out.append(callee(t, t_np)[1].shape)
            torch._dynamo.graph_break()  # (the original prints: a break for both)
        return out

    counter = fj.testing.CompileCounter()
    fj.reset()
    assert fj.compile(fn, backend=counter)() == [(3, 3), (4, 4), (5, 5)]
    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=reference)()
    assert counter.frame_count <= reference.frame_count
