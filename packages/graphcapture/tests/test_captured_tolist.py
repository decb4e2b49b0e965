"""`Tensor.tolist()` / `ndarray.tolist()` in a fullgraph trace (variables/tensor.py
captured_list): nested lists of captured items (unbacked symbols), values and Python types
equal to eager's, one graph as torch.compile with capture_scalar_outputs; without fullgraph
it stays a graph break."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from framejit import graphcapture as fj


def _times_four(x):
    return [i * 4 for i in x.tolist()]


CASES = {
    "1d_loop": (_times_four, torch.tensor([2, 1])),
    "single_element": (_times_four, torch.tensor([3])),
    "3d": (
        lambda x: x.tolist(),
        torch.tensor([[[2, 1], [2, 1], [2, 1]], [[2, 1], [2, 1], [2, 1]]]),
    ),
    "0d": (lambda x: [x.tolist() * 4], torch.tensor(42)),
    "beside_a_tensor": (lambda x: (x.tolist(), x * 10), torch.randint(3, 5, [5, 5])),
    "bool_and_float": (lambda x: ((x > 0).tolist(), (x / 2).tolist()), torch.tensor([-1, 2])),
    "ndarray_int": (lambda a: a.tolist(), np.arange(5)),
    "ndarray_float_2d": (lambda a: a.tolist(), np.arange(6.0).reshape(2, 3)),
    "ndarray_of_tensor": (lambda t: (t.numpy() * 2).tolist(), torch.arange(4)),
    # bool() of a captured item or of a one-element tensor: `item != 0`, a graph node
    "bool_of_int_item": (lambda x: bool(x.item()), torch.tensor([3])),
    "bool_of_zero_item": (lambda x: bool(x.item()), torch.tensor([0])),
    "bool_of_float_item": (lambda x: bool(x.item()), torch.tensor([0.5])),
    "bool_of_bool_item": (lambda x: bool((x > 1).item()), torch.tensor([2])),
    "bool_of_tensor": (lambda m: bool((m == 0).all()), torch.zeros(2, 3)),
    "bool_of_0d_tensor": (lambda x: (bool(x), x + 1), torch.tensor(0.0)),
}


def _same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    else:
        assert got == expected


@pytest.mark.parametrize("name", list(CASES))
def test_tolist_in_a_fullgraph_trace_is_captured(name):
    fn, x = CASES[name]
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    _same(compiled(x), fn(x))
    changed = x + 1 if isinstance(x, torch.Tensor) else x * 3
    _same(compiled(changed), fn(changed))  # other values: the same graph, no value guard
    assert counter.frame_count == 1


def test_tolist_without_fullgraph_is_a_break():
    counter = fj.testing.CompileCounter()
    fj.reset()
    fn = lambda x: (x + 1).tolist()  # noqa: E731
    assert fj.compile(fn, backend=counter)(torch.arange(3)) == [1, 2, 3]
    assert counter.frame_count == 1  # x + 1; the tolist() ran eagerly after the graph


def test_bool_of_a_tensor_with_more_elements_raises_as_eager():
    fj.reset()
    compiled = fj.compile(lambda x: bool(x), backend="eager", fullgraph=True)
    with pytest.raises(RuntimeError):
        compiled(torch.tensor([1, 2, 3]))


def _checked_then_branched(x):
    u0, u1 = x.tolist()
    torch._check(u0 > 2)
    torch._check((2 * u0) // (u0 + u1) != 0)
    if u0 > 1 and (2 * u0) // (u0 + u1) != 0:  # decided by the checks, no number needed
        return x * 2
    return x - 1


def test_torch_check_of_a_captured_item_is_assumed_then_checked_when_run():
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(_checked_then_branched, backend=counter, fullgraph=True)
    for x in (torch.tensor([3, 3]), torch.tensor([5, 1])):
        torch.testing.assert_close(compiled(x), _checked_then_branched(x))
    assert counter.frame_count == 1
    for bad in (torch.tensor([2, 0]), torch.tensor([3, 9])):  # each breaks one check
        with pytest.raises(RuntimeError, match="Expected cond to be True"):
            _checked_then_branched(bad)
        with pytest.raises(RuntimeError, match="Expected cond to be True"):
            compiled(bad)


def _pair_sum(xs):
    u0, u1 = xs.tolist()
    torch._check(u0 >= 3)
    return u0 + u1 + (1 if u0 >= 2 else 0)


def test_tolist_of_a_tensor_with_symbolic_sizes_specialises_them():
    """dynamic=True: the list's length is Python's, so the size is guarded, the items
    stay captured (one graph for other values, another for another length)."""
    counter = fj.testing.CompileCounter()
    fj.reset()
    compiled = fj.compile(_pair_sum, backend=counter, fullgraph=True, dynamic=True)
    for xs in (torch.tensor([5, 6]), torch.tensor([8, 7])):
        assert compiled(xs) == _pair_sum(xs)
    assert counter.frame_count == 1
    with pytest.raises(RuntimeError):
        compiled(torch.tensor([1, 0]))  # the check fails when the graph runs
