"""NumPy inside compiled frames (variables/numpy_arrays.py): ndarrays traced as graph tensors
through torch._numpy, results equal to eager numpy's (types and dtypes included), the frame
count torch.compile's where it traces the same code, and graph breaks where numpy is not
modelled."""

from __future__ import annotations

import copy
import operator

import numpy as np
import pytest
import torch
import torch._dynamo.testing

from framejit import graphcapture as fj

# eager numpy converting a tensor (Tensor.__array_wrap__'s old signature)
pytestmark = pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")


def _same(got, expected):
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
    elif isinstance(expected, (np.ndarray, np.generic)):
        assert got.dtype == expected.dtype and np.shape(got) == np.shape(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert got == expected


def _frames(fn, args, fullgraph=True, compiler=None):
    counter = fj.testing.CompileCounter() if compiler is None else compiler
    fj.reset()
    got = fj.compile(fn, backend=counter, fullgraph=fullgraph)(*copy.deepcopy(args))
    return got, counter.frame_count


def _torch_frames(fn, args) -> int:
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=counter, fullgraph=True)(*copy.deepcopy(args))
    return counter.frame_count


def _check(fn, *args):
    expected = fn(*copy.deepcopy(args))
    got, frames = _frames(fn, args)
    _same(got, expected)
    assert frames == _torch_frames(fn, args) == 1
    return got


X = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7 + 0.5
CASES = {
    "attributes": lambda x: (lambda a: (a.itemsize, a.strides, a.shape, a.ndim, a.size))(x.numpy()),
    "T_real_imag": lambda x: (lambda a: (a.T, a.real, a.imag))(x.numpy()),
    "reductions": lambda x: (lambda a: (np.sum(a), a.max(axis=0), a.all(axis=0), np.mean(a, 1)))(
        x.numpy()
    ),
    "operators": lambda x: (lambda a: (a + a, a - 1, 2 * a, -a, a > 1.0, a @ a.T))(x.numpy()),
    "methods": lambda x: (lambda a: (a.copy(), a.transpose(1, 0), a.reshape([1, a.size])))(
        x.numpy()
    ),
    "submodules": lambda x: (np.linalg.norm(x.numpy(), axis=0), np.fft.fftshift(x.numpy())),
    "meshgrid": lambda x: np.meshgrid(x.numpy()[0], x.numpy()[1]),
    # numpy's promotion, not torch's: a float32 array times a float64 scalar stays float32
    # only for a Python float; np.float64 makes it float64
    "promotion": lambda x: (x.numpy() * 2.5, x.numpy() * np.float64(2.5), x.int().numpy() + 2),
    "indexing": lambda x: (lambda a: (a[0], a[1, 2], a[:, 1:3], a[..., 0]))(x.numpy()),
    "tensor_args": lambda x: (np.ones_like(x, dtype=np.float64), np.full_like(x, 2.4)),
    "round_trip": lambda x: torch.from_numpy(np.asarray(np.sum(np.mean(x.numpy(), 1)))) + x,
    "to_tensor": lambda x: (
        torch.tensor(np.stack([np.ones([3, 4])]), dtype=torch.long) + x.long(),
        torch.as_tensor(x.numpy(), dtype=torch.float64),
        torch.tensor(x.numpy().sum()),
    ),
    "python_builtins": lambda x: (lambda a: (isinstance(a, np.ndarray), len(a), [*a], a.sum() > 3))(
        x.numpy()
    ),
    "dtype_folds": lambda x: x + np.iinfo(np.int16).max + np.finfo(np.float32).min,
    "array_of_arrays": lambda x: (lambda a: (np.array([a, a + 1]), np.array((a.sum(), a.max()))))(
        x.numpy()
    ),
    "python_type_dtypes": lambda x: (x.numpy().astype(int), np.zeros(2, dtype=float)),
    "dtype_call": lambda x: np.full_like(x, 2.4, dtype=np.dtype("float")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_numpy_code_matches_eager(name):
    _check(CASES[name], X)


def _write(b, index=0):
    b[index] = 100
    return b


VIEWS = {
    # numpy copies, torch._numpy's flatten of a 1-d array is the array: cloned
    "flatten_1d": lambda x: (lambda a: (a, _write(a[0].flatten())))(x.numpy()),
    "copy": lambda x: (lambda a: (a, _write(np.array(a)), _write(a.astype(np.float64))))(x.numpy()),
    "basic_index_view": lambda x: (lambda a: (a, _write(a[0]), _write(a.T, 1)))(x.numpy()),
    "fancy_index_copy": lambda x: (lambda a: (a, _write(a[[0, 1]])))(x.numpy()),
    "in_place_on_view": lambda x: (lambda a: (a, np.add(a.reshape(-1), 1, out=a.reshape(-1))))(
        x.numpy()
    ),
    "same_object": lambda x: (lambda a: (np.asarray(a) is a, np.squeeze(a) is a, a))(x.numpy()),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_and_copies_are_numpys(name):
    # writes reach the tensor exactly when they do in eager
    x = torch.ones(2, 3)
    expected = VIEWS[name](x.clone())
    x_eager = x.clone()
    VIEWS[name](x_eager)
    x_compiled = x.clone()
    fj.reset()
    got = fj.compile(VIEWS[name], backend="eager", fullgraph=True)(x_compiled)
    _same(got, expected)
    torch.testing.assert_close(x_compiled, x_eager)


@pytest.mark.parametrize(
    "op", [operator.add, operator.mul, operator.truediv, operator.lt, operator.sub, operator.pow]
)
@pytest.mark.parametrize("left_numpy", [True, False])
def test_operators_between_tensors_and_arrays_are_eagers(op, left_numpy):
    # Tensor's operator reads an array as a tensor; numpy's converts the tensor (the probe
    # tells which runs): the type and dtype of the result are eager's, in one frame
    def fn(t1, t2):
        return op(t1, t2)

    a, b = torch.rand(5, dtype=torch.float64), torch.rand(5)
    args = (a.numpy(), b) if left_numpy else (b, a.numpy())
    try:
        expected = fn(*copy.deepcopy(args))
    except TypeError:  # ndarray + Tensor: numpy's concatenation refusal, also compiled
        with pytest.raises(TypeError):
            _frames(fn, args, fullgraph=False)
        return
    got, frames = _frames(fn, args, fullgraph=False)
    _same(got, expected)
    assert frames == 1


def test_numpy_frames_break_and_resume_with_arrays():
    def fn(x, n):
        a = x.numpy() ** 2
        b = a.real
        print("graph break")  # the arrays live across the break, as real ndarrays
        return np.multiply(b, 2.0) + n.size + np.issubdtype(type(n.size), np.integer)

    args = (torch.randn(3), np.arange(4))
    got, frames = _frames(fn, args, fullgraph=False)
    _same(got, fn(*args))
    assert frames == 2


def test_ndarray_argument_is_written_in_place_and_guarded_on_layout():
    def fn(a, index, value):
        a[index] = value
        return a

    arr = np.array([[1, 1], [2, 2]])
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    out = compiled(arr, (0, ...), np.zeros(2))
    assert out is arr  # the caller's own array, written through torch.from_numpy's memory
    _same(arr, np.array([[0, 0], [2, 2]]))
    _same(compiled(np.zeros(4), ..., np.ones(4)), np.ones(4))  # new shape and dtype
    _same(compiled(np.zeros(4), ..., np.ones(4)), np.ones(4))
    assert counter.frame_count == 2
    with pytest.raises(ValueError):  # a read-only array: eager's error, after a break
        frozen = np.zeros(4)
        frozen.flags.writeable = False
        fj.compile(fn, backend=counter)(frozen, ..., np.ones(4))


@pytest.mark.parametrize("typ, info", [(int, np.iinfo), (float, np.finfo)])
def test_dtype_and_info_arguments_are_guarded_by_value(typ, info):
    def fn(a, dt):
        return a + info(dt).max

    a = torch.zeros(3, dtype=typ)
    same = [np.dtype(typ), np.ones((1,), dtype=typ).dtype, np.dtype(np.dtype(typ).name)]
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    for dt in same:
        torch.testing.assert_close(compiled(a, dt), fn(a, dt))
    assert counter.frame_count == 1
    other = np.dtype(np.int16 if typ is int else np.float16)
    torch.testing.assert_close(compiled(a, other), fn(a, other))
    assert counter.frame_count == 2


def test_a_dtype_torch_numpy_gets_wrong_is_a_break():
    # torch._numpy divides an int32 array by a Python int in torch's default float32;
    # numpy gives float64: the probe sees it, and the division runs in eager numpy
    def fn(x):
        return x.int().numpy() / 2

    got, frames = _frames(fn, (X,), fullgraph=False)
    _same(got, fn(X))
    assert frames == 1  # x.int().numpy() in the graph; the division after it, eagerly
    fj.reset()
    with pytest.raises(fj.GraphBreakInFullgraph, match="numpy float64"):
        fj.compile(fn, backend="eager", fullgraph=True)(X)


def test_what_numpy_would_refuse_or_randomize_stays_eager():
    def from_scalar(x):
        return torch.from_numpy(np.sum(x.numpy()))  # a numpy scalar: TypeError in eager

    with pytest.raises(TypeError):
        fj.compile(from_scalar, backend="eager")(X)

    def needs_grad(x):
        return x.numpy() + 1  # RuntimeError in eager

    with pytest.raises(RuntimeError):
        fj.compile(needs_grad, backend="eager")(X.clone().requires_grad_())

    def randomized(x):
        return x.numpy() + np.random.rand(3, 4)  # numpy's own RNG stream: a break

    np.random.seed(0)
    expected = randomized(X)
    np.random.seed(0)
    got, frames = _frames(randomized, (X,), fullgraph=False)
    _same(got, expected)
    assert frames == 2  # before and after the break
    fj.reset()
    with pytest.raises(fj.GraphBreakInFullgraph, match=r"numpy\.random"):
        fj.compile(randomized, backend="eager", fullgraph=True)(X)


def test_torch_constructors_keep_a_numpy_numbers_dtype():
    # torch.tensor(np.float64(2.5)) is float64; the Python number 2.5 would make float32
    def fn(x, s):
        return torch.tensor(s), torch.as_tensor(s) + x, torch.tensor([s, s])

    args = (torch.ones(2), np.float64(2.5))
    got, _ = _frames(fn, args, fullgraph=False)
    _same(got, fn(*args))
    assert got[0].dtype == got[2].dtype == torch.float64
