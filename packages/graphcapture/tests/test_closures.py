"""The compiled function's own closure: free variables are read as L['name'] and guarded.

frameeval's check_fn input holds the function's free variables by name, so a read of a
closure cell is guarded like an argument: a rebinding (`nonlocal` from outside, another
closure of the same code) recompiles instead of reusing a stale graph, and stores to the
closure inside the compiled function are replayed (or the frame runs eagerly).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


class Compiled:
    """fj.compile(fn) with a counting backend and the compile records."""

    def __init__(self, fn):
        self.counter = fj.testing.CompileCounter()
        self.records = []
        self._unsubscribe = fj.events.subscribe(self.records.append)
        self.fn = fj.compile(fn, backend=self.counter)

    def __call__(self, *args):
        return self.fn(*args)

    def close(self):
        self._unsubscribe()

    def guard_text(self) -> str:
        return "\n".join(part for r in self.records for part in r.check_fn.code_parts)


@pytest.fixture
def compiled():
    made = []

    def make(fn):
        c = Compiled(fn)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def make_scaler(scale):
    def scaler(x):
        return torch.sin(x) * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return scaler, set_scale


def test_closure_over_a_float_is_captured_and_guarded(compiled):
    scaler, _ = make_scaler(2.5)
    c = compiled(scaler)
    x = torch.randn(5)
    torch.testing.assert_close(c(x), scaler(x))
    torch.testing.assert_close(c(x), scaler(x))
    record = c.records[0]
    assert record.transformed_code is not None and not record.graph_breaks
    assert c.counter.frame_count == 1
    assert "L['scale'] == 2.5" in c.guard_text()


def test_nonlocal_rebinding_between_calls_recompiles(compiled):
    scaler, set_scale = make_scaler(2.0)
    c = compiled(scaler)
    x = torch.randn(4)
    torch.testing.assert_close(c(x), scaler(x))
    set_scale(-3.0)
    torch.testing.assert_close(c(x), torch.sin(x) * -3.0)
    assert c.counter.frame_count == 2
    assert c.records[1].is_recompile
    assert any("scale" in reason for reason in c.records[1].recompile_reasons)
    set_scale(2.0)  # back to the first value: the first entry is reused
    torch.testing.assert_close(c(x), torch.sin(x) * 2.0)
    assert c.counter.frame_count == 2


def test_two_closures_from_one_factory_are_each_right(compiled):
    double, _ = make_scaler(2.0)
    triple, _ = make_scaler(3.0)
    assert double.__code__ is triple.__code__
    c_double, c_triple = compiled(double), compiled(triple)
    x = torch.randn(6)
    for _ in range(2):
        torch.testing.assert_close(c_double(x), torch.sin(x) * 2.0)
        torch.testing.assert_close(c_triple(x), torch.sin(x) * 3.0)
    assert len(fe.cache_entries(double.__code__)) == 2


def make_tensor_closure(weight):
    def apply(x):
        return x @ weight + weight.sum()

    def set_weight(value):
        nonlocal weight
        weight = value

    return apply, set_weight


def test_closure_over_a_tensor_is_a_graph_input(compiled):
    apply, set_weight = make_tensor_closure(torch.randn(3, 2))
    c = compiled(apply)
    x = torch.randn(4, 3)
    torch.testing.assert_close(c(x), apply(x))
    assert "L['weight']" in c.guard_text()
    placeholders = [n for n in c.counter.graphs[0].graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 2
    # same properties, new values: the graph input is read from the cell at call time
    set_weight(torch.randn(3, 2))
    torch.testing.assert_close(c(x), apply(x))
    assert c.counter.frame_count == 1
    # another shape: the tensor guard fails and the frame recompiles
    set_weight(torch.randn(3, 5))
    torch.testing.assert_close(c(x), apply(x))
    assert c.counter.frame_count == 2


def make_module_closure(module):
    def run(x):
        return torch.relu(module(x))

    def set_module(value):
        nonlocal module
        module = value

    return run, set_module


def test_closure_over_a_module(compiled):
    torch.manual_seed(0)
    first, second = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    run, set_module = make_module_closure(first)
    c = compiled(run)
    x = torch.randn(2, 4)
    torch.testing.assert_close(c(x), run(x))
    set_module(second)
    torch.testing.assert_close(c(x), run(x))
    torch.testing.assert_close(c(x), second(x).relu())
    assert c.counter.frame_count == 2


def make_pipeline(fns):
    def pipeline(x):
        for i in range(len(fns)):
            x = fns[i](x) + i
        return x

    return pipeline


def test_closure_over_a_list_of_functions_indexed_in_a_loop(compiled):
    fns = [torch.sin, lambda t: t * 2, torch.cos]
    pipeline = make_pipeline(fns)
    c = compiled(pipeline)
    x = torch.randn(5)
    torch.testing.assert_close(c(x), pipeline(x))
    torch.testing.assert_close(c(x), pipeline(x))
    assert c.counter.frame_count == 1 and not c.records[0].graph_breaks
    fns[0] = torch.tanh  # the list is read through the cell: an item change recompiles
    torch.testing.assert_close(c(x), pipeline(x))
    fns.append(torch.exp)
    torch.testing.assert_close(c(x), pipeline(x))
    assert c.counter.frame_count == 3


def make_counter():
    count = 0
    total = None

    def step(x):
        nonlocal count, total
        count += 1
        y = x * count
        total = y if total is None else total + y
        return y.sin()

    def state():
        return count, total

    return step, state


def test_closure_mutated_inside_the_compiled_function(compiled):
    step, state = make_counter()
    eager_step, eager_state = make_counter()
    c = compiled(step)
    x = torch.randn(3)
    for _ in range(4):
        torch.testing.assert_close(c(x), eager_step(x))
        count, total = state()
        eager_count, eager_total = eager_state()
        assert count == eager_count
        torch.testing.assert_close(total, eager_total)


def make_swapper(a, b):
    def swap(x):
        nonlocal a, b
        a, b = b, a
        return x + a * 10 + b

    return swap


def test_stores_to_several_free_variables_replay_the_traced_values(compiled):
    swap = make_swapper(torch.ones(2), torch.zeros(2))
    eager = make_swapper(torch.ones(2), torch.zeros(2))
    c = compiled(swap)
    x = torch.randn(2)
    for _ in range(3):
        torch.testing.assert_close(c(x), eager(x))
    torch.testing.assert_close(
        [cell.cell_contents for cell in swap.__closure__],
        [cell.cell_contents for cell in eager.__closure__],
    )


def make_keep_old(t):
    def keep_old(x):
        nonlocal t
        old = t
        t = t * 2
        return x + old

    return keep_old


def make_return_old(t):
    def return_old(x):
        nonlocal t
        old = t
        t = t * 2
        return old, x + t

    return return_old


@pytest.mark.parametrize("factory", [make_keep_old, make_return_old])
def test_a_value_read_before_its_cell_is_reassigned_stays_right(compiled, factory):
    fn = factory(torch.ones(3))
    eager = factory(torch.ones(3))
    c = compiled(fn)
    x = torch.randn(3)
    for _ in range(3):
        torch.testing.assert_close(c(x), eager(x))
    torch.testing.assert_close(fn.__closure__[0].cell_contents, eager.__closure__[0].cell_contents)
    reason = c.records[0].skipped_reason
    if factory is make_keep_old:  # `old` only feeds the graph: compiled, the store replayed
        assert reason is None and c.records[0].transformed_code is not None
    else:  # `old` itself is returned: rebuilding it would read the new `t`
        assert "closure variable 't'" in reason


def make_nested_reader(scale):
    def f(x):
        def inner(y):
            return y * scale

        return inner(x) + 1

    def set_scale(value):
        nonlocal scale
        scale = value

    return f, set_scale


def test_an_inner_function_reading_the_closure_is_inlined_and_guarded(compiled):
    f, set_scale = make_nested_reader(3.0)
    c = compiled(f)
    x = torch.randn(4)
    torch.testing.assert_close(c(x), x * 3.0 + 1)
    assert not c.records[0].graph_breaks and c.records[0].skipped_reason is None
    set_scale(-1.0)
    torch.testing.assert_close(c(x), x * -1.0 + 1)
    assert c.counter.frame_count == 2


def make_nested_writer(total):
    def f(x):
        def bump():
            nonlocal total
            total = total + x.sum()

        bump()
        return x * total

    def state():
        return total

    return f, state


def test_an_inner_function_writing_the_closure_is_replayed(compiled):
    f, state = make_nested_writer(torch.tensor(1.0))
    eager, eager_state = make_nested_writer(torch.tensor(1.0))
    c = compiled(f)
    x = torch.randn(4)
    for _ in range(3):
        torch.testing.assert_close(c(x), eager(x))
        torch.testing.assert_close(state(), eager_state())
    assert c.counter.frame_count == 1


def make_rebind_at_break(t):
    def rebind():
        nonlocal t
        t = t + 100

    def f(x):
        y = t
        rebind()  # assigns to an outer function's cell: a graph break, run for real
        return x + y + t

    return f


def test_a_free_variable_rebound_at_a_graph_break_is_not_reused_stale(compiled):
    f = make_rebind_at_break(torch.ones(3))
    eager = make_rebind_at_break(torch.ones(3))
    c = compiled(f)
    x = torch.randn(3)
    for _ in range(3):
        torch.testing.assert_close(c(x), eager(x))


def make_unbound():
    def reader(x):
        return x + later

    def bind(value):
        nonlocal later
        later = value

    def unbind():
        nonlocal later
        del later

    return reader, bind, unbind
    later = None  # unreachable: makes `later` a cell of make_unbound


def test_an_empty_cell_raises_name_error_like_eager(compiled):
    reader, bind, _ = make_unbound()
    c = compiled(reader)
    x = torch.randn(2)
    with pytest.raises(NameError):
        c(x)
    bind(5.0)
    torch.testing.assert_close(c(x), x + 5.0)
    bind(torch.ones(2))
    torch.testing.assert_close(c(x), x + 1)


def test_a_cell_emptied_after_compiling_fails_the_guard_not_the_call(compiled):
    reader, bind, unbind = make_unbound()
    bind(2.0)
    c = compiled(reader)
    x = torch.randn(2)
    torch.testing.assert_close(c(x), x + 2.0)
    assert c.records[0].skipped_reason is None and "L['later']" in c.guard_text()
    unbind()
    with pytest.raises(NameError):
        c(x)
    bind(torch.full((2,), 3.0))
    torch.testing.assert_close(c(x), x + 3.0)


def make_adder(w):
    def add(x):
        return x * 2 + w

    return add


def test_a_closure_tensor_passed_also_as_the_argument_is_not_confused_with_it(compiled):
    t = torch.ones(3)
    add = make_adder(t)
    c = compiled(add)
    other = torch.full((3,), 5.0)
    torch.testing.assert_close(c(t), add(t))  # traced with w is x
    assert "L['w'] is L['x']" in c.guard_text()
    torch.testing.assert_close(c(other), add(other))  # w is not x any more: recompiled
    torch.testing.assert_close(c(t), add(t))
    assert c.counter.frame_count == 2


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenBudget:
    lines: int = 8
    chars: int = 640


def builds_a_frozen_dataclass(x):
    budget = FrozenBudget(lines=2)  # its generated __init__ is a closure (object.__setattr__)
    return x * budget.lines + budget.chars, budget


def test_a_frozen_dataclass_init_a_closure_itself_runs_right(compiled):
    c = compiled(builds_a_frozen_dataclass)
    x = torch.randn(3)
    out, budget = c(x)
    expected, expected_budget = builds_a_frozen_dataclass(x)
    torch.testing.assert_close(out, expected)
    assert budget == expected_budget


def _adder(val):
    def inner(x):
        return torch.sin(x + val)

    return inner


def _scaled(k=2.0):
    return lambda x, k=k: x * k


def test_closures_made_per_call_share_compiled_code_like_torch():
    # a function argument was guarded by identity: each new closure over an equal value
    # recompiled (4 frames beside torch's 2); it is now guarded by its code, globals and
    # empty __dict__, and what it closes over by value
    import torch._dynamo
    import torch._dynamo.testing

    def fn(x, other_fn):
        return other_fn(x + 1) - 1

    x = torch.randn(8)
    fns = [_adder(5), _adder(5), _adder(torch.randn(8)), _adder(torch.randn(8)), _adder(6)]
    counter = torch._dynamo.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    for f in fns:
        torch.testing.assert_close(compiled(x, f), fn(x, f))
    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    opt = torch.compile(fn, backend=reference, fullgraph=True)
    for f in fns:
        opt(x, f)
    assert counter.frame_count == reference.frame_count == 3


def test_code_matched_functions_still_see_what_differs():
    def fn(x, f):
        return f(x)

    compiled = fj.compile(fn, backend="eager")
    x = torch.randn(4)
    # defaults differ per function object made by the same code
    for k in (2.0, 3.0, 2.0):
        torch.testing.assert_close(compiled(x, _scaled(k)), x * k)

    # an attribute set on one of them: that one is not matched by its code
    plain, marked = _adder(1.0), _adder(1.0)
    marked.extra = True
    torch.testing.assert_close(compiled(x, plain), torch.sin(x + 1.0))
    torch.testing.assert_close(compiled(x, marked), torch.sin(x + 1.0))

    # identity read in the trace: guarded by identity again
    first = _adder(1.0)

    def pick(x, f):
        return x + 1 if f is first else x - 1

    compiled_pick = fj.compile(pick, backend="eager")
    torch.testing.assert_close(compiled_pick(x, first), x + 1)
    torch.testing.assert_close(compiled_pick(x, _adder(1.0)), x - 1)

    # a closure cell rebound between calls (nonlocal) is read anew
    def counter_fn():
        n = 0

        def bump(x):
            nonlocal n
            n += 1
            return x + n

        return bump

    bump_a, bump_b = counter_fn(), counter_fn()
    torch.testing.assert_close(compiled(x, bump_a), x + 1)
    torch.testing.assert_close(compiled(x, bump_a), x + 2)
    torch.testing.assert_close(compiled(x, bump_b), x + 1)
    torch.testing.assert_close(compiled(x, bump_a), x + 3)


def make_counter_pair():
    n = 0

    def bump(k):
        nonlocal n
        n += k

    def fn(x):
        bump(10)
        y = x.sin() if n == 10 else x.cos()
        bump(1)
        return y + n

    def read():
        return n

    return fn, read


def test_inlined_nonlocal_store_to_the_frames_own_cell_is_replayed(compiled):
    # bump's cell is the compiled frame's free variable `n`: one tracker for both, so the
    # store is replayed once after the graph and fn's later read sees it (and is guarded)
    fn, read = make_counter_pair()
    ref, ref_read = make_counter_pair()
    c = compiled(fn)
    x = torch.randn(4)
    for _ in range(3):
        torch.testing.assert_close(c(x), ref(x))
        assert read() == ref_read()
    assert not any(r.graph_breaks for r in c.records)
    # n: 0 specialised, then 11 differs and n is a symbol from then on (automatic dynamic);
    # torch.compile compiles 2 frames too
    assert c.counter.frame_count == 2
