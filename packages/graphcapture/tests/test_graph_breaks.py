"""Graph breaks: the graph so far is compiled, the instruction runs for real, the rest resumes."""

from __future__ import annotations

import zlib

import pytest
import torch
import torch._dynamo

from framejit import graphcapture as fj


def _run(fn, *args):
    counter = fj.testing.CompileCounter()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(fn, backend=counter)
        expected = fn(*args)
        actual = compiled(*args)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(compiled(*args), expected)  # cache hit, same answer
    finally:
        unsubscribe()
    return counter, records


def _breaks(records):
    return [b for r in records for b in r.graph_breaks]


def with_print(x):
    y = x * 2
    print("side effect from traced code")
    return y + 1


def test_print_breaks_and_prints_once_per_call(capsys):
    counter, records = _run(with_print, torch.randn(4))
    assert counter.frame_count == 2
    [brk] = _breaks(records)
    assert brk.reason == "call to print (I/O)"
    assert brk.source_line == 'print("side effect from traced code")'
    assert (
        capsys.readouterr().out.count("side effect from traced code") == 3
    )  # eager + 2 compiled calls


def with_item(x):
    y = x.sum()
    scale = y.item()
    return x * scale


def test_item_is_a_break():
    counter, records = _run(with_item, torch.randn(4))
    assert counter.frame_count == 2
    assert "Tensor.item" in _breaks(records)[0].reason


def data_dependent_loop(x):
    for i in range(3):
        x = x - 1 if x.sum() > i else x + 1
    return x


def test_break_inside_a_loop_runs_the_frame_eagerly():
    # as torch.compile (0 graphs): a resume function per iteration would recompile each time
    x = torch.full((4,), 0.6)
    counter, records = _run(data_dependent_loop, x)
    assert counter.frame_count == 0
    assert all(b.reason == "data-dependent branch: if on a Tensor" for b in _breaks(records))
    assert records[0].skipped_reason == "graph break in a for/while loop"


def _sin(x):
    return torch.sin(x)


def break_in_loop_calling_a_function(x):
    for _ in range(20):
        _sin(x)
        torch._dynamo.graph_break()
    return x


def break_before_a_loop(x):
    torch._dynamo.graph_break()
    for _ in range(20):
        x = _sin(x)
    return x


@pytest.mark.parametrize(
    "fn, frames, ops",
    [(break_in_loop_calling_a_function, 1, 1), (break_before_a_loop, 1, 20)],
    ids=["break_in_loop", "break_before_loop"],
)
def test_loop_breaks_compile_as_torch_does(fn, frames, ops):
    # torch.compile's counts: the looping frame runs eagerly and `_sin` is compiled once as
    # its own frame; a break before the loop leaves the loop to the resume function
    counter, _ = _run(fn, torch.randn(4))
    assert (counter.frame_count, counter.op_count) == (frames, ops)


def _helper_that_prints(x):
    print("inner")
    return x + 1


def breaks_in_inlined_function(x):
    a = x * 3
    b = _helper_that_prints(a)
    return b * 2


def test_break_in_inlined_function_breaks_at_the_call():
    counter, records = _run(breaks_in_inlined_function, torch.randn(4))
    # caller before/after the call, plus the rest of the helper after its print
    assert counter.frame_count == 3
    reasons = [b.reason for b in _breaks(records)]
    assert reasons.count("call to print (I/O)") == 2


@fj.disable
def _not_compiled(x):
    return x.sin()


def calls_disabled(x):
    return _not_compiled(x * 2) + 1


def test_disabled_function_is_a_break_and_runs_eagerly():
    counter, records = _run(calls_disabled, torch.randn(4))
    assert counter.frame_count == 2
    assert "told to skip" in _breaks(records)[0].reason


def unknown_c_function(x):
    y = x + 1
    z = zlib.crc32(b"7") % 5  # constant folding is for known pure functions (math), not any C one
    return y * z


def calls_c_function_on_tensor_value(x):
    y = x + 1
    n = len(str(y.shape))
    return y * n


def test_unknown_c_function_breaks():
    counter, records = _run(unknown_c_function, torch.randn(4))
    assert "crc32" in _breaks(records)[0].reason
    assert counter.frame_count == 2


def nonlocal_store(x):
    total = 0

    def bump():
        nonlocal total
        total += 1

    bump()
    return x + total


def test_nonlocal_store_in_an_inlined_closure():
    counter, records = _run(nonlocal_store, torch.randn(4))
    assert counter.frame_count == 1 and not _breaks(records)


def break_then_more_graph(x, y):
    a = torch.relu(x) + y
    print("middle")
    b = a.sin() * y
    return a, b


def test_graph_on_both_sides_of_a_break():
    counter, _ = _run(break_then_more_graph, torch.randn(4), torch.randn(4))
    assert counter.frame_count == 2
    assert counter.op_count == 4


def test_fullgraph_turns_the_first_break_into_an_error():
    compiled = fj.compile(with_print, backend="eager", fullgraph=True)
    with pytest.raises(fj.GraphBreakInFullgraph) as info:
        compiled(torch.randn(4))
    message = str(info.value)
    assert "call to print (I/O)" in message
    assert __file__ in message
    assert f"line {with_print.__code__.co_firstlineno + 2}" in message


def test_fullgraph_without_breaks_compiles():
    compiled = fj.compile(lambda x: x.cos() + 1, backend="eager", fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x.cos() + 1)


def many_breaks(x):
    x = x + 1
    print("one")
    x = x * 2
    print("two")
    x = x - 3
    return x


def test_consecutive_breaks():
    counter, records = _run(many_breaks, torch.randn(4))
    assert counter.frame_count == 3
    assert len(_breaks(records)) == 2


def branch_on_tensor_truth(x, flag):
    if flag:
        return x + 1
    return x - 1


def test_branch_on_tensor_value_argument():
    counter, _ = _run(branch_on_tensor_truth, torch.randn(3), torch.tensor(True))
    counter2, _ = _run(branch_on_tensor_truth, torch.randn(3), torch.tensor(False))
    assert counter.frame_count >= 1 and counter2.frame_count >= 1


def break_with_stack_values(x):
    # the break happens with values on the stack: the resume function receives them
    return torch.cat([x * 2, torch.tensor([float(len(repr(1)))]), x + 1])


def test_break_with_pending_stack_values():
    counter, _ = _run(break_with_stack_values, torch.randn(3))
    assert counter.frame_count >= 1


def break_in_try(x):
    try:
        y = x * 2
        print("in try")
    except RuntimeError:
        y = x
    return y + 1


def test_break_inside_try_block_keeps_the_frame_compiled():
    # the print runs under a handler of the rewritten code; `y + 1` is captured after it
    _counter, records = _run(break_in_try, torch.randn(3))
    assert records[0].skipped_reason is None
    assert [len(r.graphs) for r in records] == [1, 1]


def comprehensions_around_a_break(a):
    xs = [a * i for i in range(3)]
    print("break between comprehensions")
    return [a + x for x in xs]


def test_break_in_a_function_with_cell_variables():
    counter, records = _run(comprehensions_around_a_break, torch.randn(3))
    assert counter.frame_count == 2
    assert records[0].skipped_reason is None


def closure_alive_across_break(a):
    scale = 2

    def f(x):
        return x * scale

    print("break while f is alive")
    scale = 3
    return f(a)


def test_break_while_a_closure_is_alive_runs_the_frame_eagerly():
    _, records = _run(closure_alive_across_break, torch.randn(3))
    assert (
        records[0].skipped_reason == "graph break while a closure over this frame's locals is alive"
    )


def del_after_break(x):
    outputs = x + 1  # read again only by `del` after the break (transformers' generate loop)
    for _ in range(2):
        y = outputs * 2
        print("break")
        del outputs
        outputs = y
    return outputs


def test_a_local_read_only_by_del_after_a_break_is_passed_to_the_resume_function():
    _, records = _run(del_after_break, torch.randn(3))
    assert _breaks(records)
