"""Mutations of objects outside the frame are replayed after the graph, as eager does them."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj

COUNTER = 0
STATE = {"calls": 0}


def appends_to_input_list(x, out):
    out.append(x * 2)
    out.append(len(out))
    return x + 1


def mutates_input_dict(x, d):
    d["y"] = x * 3
    d.pop("drop", None)
    d["n"] = d.get("n", 0) + 1
    return x


def writes_global(x):
    global COUNTER
    COUNTER = COUNTER + 1
    return x * COUNTER


def mutates_global_dict(x):
    STATE["calls"] += 1
    STATE["last"] = x.sum()
    return x


class Holder:
    def __init__(self):
        self.value = 1
        self.items = []


def sets_attribute(x, holder):
    holder.value = holder.value + 1
    holder.cached = x * 2
    holder.items.append(holder.value)
    return x * holder.value


def test_list_append_on_input():
    compiled = fj.compile(appends_to_input_list, backend="eager")
    x = torch.randn(3)
    out_eager, out = [], []
    appends_to_input_list(x, out_eager)
    torch.testing.assert_close(compiled(x, out), x + 1)
    assert len(out) == 2 and out[1] == out_eager[1]
    torch.testing.assert_close(out[0], out_eager[0])


def test_dict_mutation_on_input():
    compiled = fj.compile(mutates_input_dict, backend="eager")
    x = torch.randn(3)
    d_eager = {"drop": 1, "n": 5}
    d = {"drop": 1, "n": 5}
    mutates_input_dict(x, d_eager)
    compiled(x, d)
    assert list(d) == list(d_eager)
    torch.testing.assert_close(d["y"], d_eager["y"])
    assert d["n"] == 6


def test_global_store():
    global COUNTER
    COUNTER = 0
    compiled = fj.compile(writes_global, backend="eager")
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x), x * 1)
    torch.testing.assert_close(compiled(x), x * 2)  # the guard on COUNTER fails: recompiles
    torch.testing.assert_close(compiled(x), x * 3)
    assert COUNTER == 3


def test_global_dict_mutation():
    STATE.clear()
    STATE["calls"] = 0
    compiled = fj.compile(mutates_global_dict, backend="eager")
    x = torch.randn(4)
    compiled(x)
    compiled(x)
    assert STATE["calls"] == 2
    torch.testing.assert_close(STATE["last"], x.sum())


def test_attribute_mutation_on_user_object():
    holder = Holder()
    reference = Holder()
    compiled = fj.compile(sets_attribute, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, holder), sets_attribute(x, reference))
    assert holder.value == reference.value == 3
    assert holder.items == reference.items == [2, 3]
    torch.testing.assert_close(holder.cached, reference.cached)


def side_effect_then_break(x, log):
    log.append("first")
    y = x * 2
    print("break")
    log.append("second")
    return y


def test_side_effects_are_replayed_before_the_break_instruction(capsys):
    compiled = fj.compile(side_effect_then_break, backend="eager")
    log: list = []
    compiled(torch.randn(2), log)
    assert log == ["first", "second"]


def returns_new_containers(x):
    items = [x, x + 1]
    mapping = {"a": items, "b": (x, items)}
    return mapping


def test_new_containers_keep_their_identity():
    compiled = fj.compile(returns_new_containers, backend="eager")
    result = compiled(torch.randn(2))
    assert result["a"] is result["b"][1]


def aliasing_inputs(a, b):
    a.add_(1)
    return a + b


def test_in_place_on_aliased_inputs():
    compiled = fj.compile(aliasing_inputs, backend="eager")
    t1 = torch.zeros(3)
    t2 = torch.zeros(3)
    expected = aliasing_inputs(t1.clone(), t1.clone())
    torch.testing.assert_close(compiled(t2, torch.zeros(3)), expected)
    t3 = torch.zeros(3)
    torch.testing.assert_close(
        compiled(t3, t3), aliasing_inputs(torch.zeros(3), torch.zeros(3)) + 1
    )


SEEN: list = []


@pytest.mark.parametrize(
    "op",
    [
        lambda x, w: torch.nn.functional.linear(x, w),
        lambda x, w: x @ w,
        lambda x, w: x.mm(w),
        lambda x, w: torch.nn.functional.layer_norm(x, (4,), w[0]),
    ],
)
def test_side_effect_before_an_op_eager_raises_on(op):
    """A float64 input to float32 weights: fake propagation lets mm/linear/layer_norm
    through, eager raises.  Traced, the graph raised before the list append was replayed
    (found by integration-tests/stateful_programs.py); the op now breaks the graph."""

    def f(x, w):
        SEEN.append(x.shape[0])
        return op(x + 1, w)

    x, w = torch.randn(2, 4, dtype=torch.float64), torch.randn(4, 4)
    for fn in (f, fj.compile(f)):
        SEEN.clear()
        with pytest.raises(RuntimeError):
            fn(x, w)
        assert SEEN == [2]
    torch.testing.assert_close(fj.compile(f)(x.float(), w), f(x.float(), w))
