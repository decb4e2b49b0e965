"""Constructs from torch's own Dynamo tests: eager's answers, and torch.compile's frame and op
counts (torch._dynamo with a counting backend is the reference, run beside framejit)."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing

from framejit import graphcapture as fj


def _counts(compile_fn, fn, calls):
    counter = torch._dynamo.testing.CompileCounter()
    compiled = compile_fn(counter)(fn)
    results = [compiled(*args) for args in calls]
    return results, counter.frame_count, counter.op_count


def assert_like_torch(fn, calls, fullgraph=False, ops=True):
    """fn under framejit: eager's results, and torch.compile's frame and op counts (`ops`
    False: frames only; torch's graphs also count the grad-mode switches it re-enters)."""
    expected = [fn(*args) for args in calls]
    torch._dynamo.reset()
    _, torch_frames, torch_ops = _counts(
        lambda c: torch._dynamo.optimize(c, nopython=fullgraph), fn, calls
    )
    torch._dynamo.reset()
    fj.reset()
    actual, frames, n_ops = _counts(lambda c: fj.optimize(c, fullgraph=fullgraph), fn, calls)
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e)
    assert frames == torch_frames
    if ops:
        assert n_ops == torch_ops


def _two_calls():
    v1 = torch.ones(10)
    v2 = torch.ones(10) * -2.0
    return [(v1, v2), (v2, v1)]


def and_on_tensors(a, b):
    tmp1 = a.sum() > b.sum() and a.sum() > 0
    tmp2 = a.sum() < b.sum() or b.sum() > 0
    if tmp1 and tmp2:
        return 1, tmp1, tmp2
    return 2, tmp1, tmp2


def paths_join(x, c1, c2):
    x = x + 1
    if c1:
        x = x + 2
    x = x + 3
    if c2:
        x = x + 4
    return x + 5


def break_in_no_grad(a, b):
    x = a + b
    with torch.no_grad():
        x = x + 1
        x.sum().tolist()  # graph break
        x = x + 2
        x.sum().tolist()  # graph break
        x = x + 3
    return x + 4


def unsupported(a, b):
    return torch._C._dynamo.eval_frame.unsupported(a, b)


def tuple_iterator_across_break(x):
    it = iter(tuple(range(10)))
    x = x + next(it)
    x = unsupported(x, x)
    x = x + next(it)
    x = x + next(it)
    return x, it


def range_across_break(a, b):
    x = a + b
    rng = range(3, 8, 2)
    x = unsupported(x, x)
    for i in rng:
        x = x + i
    return x


def test_and_or_on_tensors_break_like_torch():
    assert_like_torch(and_on_tensors, _two_calls())


def test_resume_paths_join_share_resume_functions():
    t, f = torch.tensor([True]), torch.tensor([False])
    x = torch.randn(4)
    assert_like_torch(paths_join, [(x, a, b) for a in (t, f) for b in (t, f)])


def test_break_inside_no_grad_resumes_without_recompiling():
    assert_like_torch(break_in_no_grad, _two_calls(), ops=False)


def break_result_dropped(a, b):
    x = a + b
    x.sum().tolist()  # graph break; the list of floats is dropped
    return x * 2


def break_result_stored(a, b):
    x = a + b
    stats = x.sum().tolist()  # graph break; stored, read only on the slow path
    x = x * 2
    if x.dim() > 3:
        print(stats)
    return x + 1


def _varying_calls():
    return [(torch.randn(10), torch.randn(10)) for _ in range(3)]


@pytest.mark.parametrize("fn", [break_in_no_grad, break_result_dropped, break_result_stored])
def test_break_result_that_varies_does_not_recompile_the_resume_function(fn):
    # was one resume-function compile per call: the break's result was passed on the stack
    # and the resume trace specialized on it (EQUALS guard on a float) though it only drops
    # or stores it; torch's lazily guarded stack value compiles each frame once
    assert_like_torch(fn, _varying_calls(), ops=fn is not break_in_no_grad)


def min_values_then_floor(boxes, masks):
    lo = boxes.min(dim=0).values.floor()
    hi, _ = boxes.max(dim=0)
    parts = torch.split(boxes, 1, dim=1)
    return masks * lo.sum() + hi.sum() + parts[0].sum()


def test_unused_tuple_elements_are_not_counted_as_ops():
    # torch.compile drops unused getitem nodes (the indices half of min(dim)'s pair, unread
    # pieces of a split) before the backend sees the graph; framejit counted them
    # (detectron2's _do_paste_mask: 121 ops beside torch's 119)
    calls = [(torch.randn(3, 4), torch.randn(3, 4)) for _ in range(2)]
    assert_like_torch(min_values_then_floor, calls, fullgraph=True)


@pytest.mark.parametrize("fn", [range_across_break, lambda a, b: a + b])
def test_range_live_across_break(fn):
    assert_like_torch(fn, _two_calls())


def test_tuple_iterator_live_across_break_is_advanced():
    x = torch.randn(4)
    expected, _ = tuple_iterator_across_break(x)
    fj.reset()
    compiled = fj.compile(tuple_iterator_across_break, backend="eager")
    for _ in range(2):
        actual, it = compiled(x)
        torch.testing.assert_close(actual, expected)
        assert list(it) == list(iter(tuple(range(3, 10))))
    assert_like_torch(lambda x: tuple_iterator_across_break(x)[0], [(x,), (x,)])


def test_tuple_iterator_argument_is_advanced_for_real():
    def consume(x, it):
        x = x + next(it)
        return x + next(it)

    fj.reset()
    compiled = fj.compile(consume, backend="eager")
    x = torch.randn(4)
    it = iter((1, 2, 3, 4))
    torch.testing.assert_close(compiled(x, it), x + 3)
    torch.testing.assert_close(compiled(x, it), x + 7)  # guards see 2 left, not 4
    assert list(it) == []


@torch.jit.script_if_tracing
def _scripted_if_tracing(x):
    return x + 1


def torch_constants(a, b):
    if torch.iinfo(torch.int32).bits == 32 and not torch.onnx.is_in_onnx_export():
        a = a + torch.ones(1, device=torch.device("cpu"))
    tmp = f"{a.__class__.__name__} foo"
    if tmp.startswith("Tensor"):
        a = a + 1
    a = torch.jit.annotate(torch.Tensor, a * 2)
    return torch.finfo(a.dtype).min * b + _scripted_if_tracing(a)


def softmax_built_in_frame(x, y):
    return torch.nn.Softmax(dim=-1)(x + y * 2)


def min_max_of_scalars(a, b):
    c = a + b
    a = a.sum()
    b = b.sum()
    a = min(max(a, 0), 1)
    b = max(0, min(1, b))
    return max(a, b) - min(a, b) + c


@pytest.mark.parametrize(
    ("fn", "ops"),
    # torch's graph of nn.Softmax() built in the frame also holds its _log_api_usage_once
    [(torch_constants, True), (softmax_built_in_frame, False), (min_max_of_scalars, False)],
)
def test_one_graph_like_torch(fn, ops):
    calls = [(torch.randn(3, 3), torch.randn(3, 3)) for _ in range(2)]
    assert_like_torch(fn, calls, fullgraph=True, ops=ops)


def test_min_max_keep_pythons_answer_on_nan():
    nan = torch.tensor(float("nan"))
    for x, y in [(nan, 0.5), (0.5, nan), (nan, torch.tensor(1.0)), (torch.tensor(1.0), nan)]:
        fj.reset()
        compiled = fj.compile(lambda x, y: (max(x, y) * 2, min(x, y) * 2), fullgraph=True)
        expected = [torch.as_tensor(v) for v in (max(x, y) * 2, min(x, y) * 2)]
        torch.testing.assert_close(list(compiled(x, y)), expected, equal_nan=True)


def test_nested_optimize_wrappers_are_traced_through():
    def inner(x):
        return torch.sin(x) * 10

    counter_inner = fj.testing.CompileCounter()
    counter_outer = fj.testing.CompileCounter()
    inner_opt = fj.optimize(counter_inner, fullgraph=True)(fj.run(inner))
    outer = fj.optimize(counter_outer, fullgraph=True)(lambda x: torch.relu(inner_opt(x) + 1))
    x = torch.randn(4)
    torch.testing.assert_close(outer(x), torch.relu(inner(x) + 1))
    assert (counter_inner.frame_count, counter_outer.frame_count) == (0, 1)


def test_returned_nested_function_keeps_closure_and_defaults():
    def make(a, b):
        c = a + b

        def scaled(f=7, *, g=9.0):
            return c * f - a * g

        return scaled

    fj.reset()
    scaled = fj.compile(make, fullgraph=True)(torch.ones(2), torch.ones(2))
    torch.testing.assert_close(scaled(), make(torch.ones(2), torch.ones(2))())
    torch.testing.assert_close(scaled(2, g=1.0), torch.full((2,), 3.0))


def profiled_with_break(x):
    y = x**2
    with torch.profiler.profile():
        y = y + 2
        with torch.autograd.profiler.record_function("my_function"):
            z = y**3
            z.tolist()  # graph break
            z = z + 1
    return z


def test_profiler_contexts_do_nothing_to_compiled_code():
    x = torch.randn(2, 2)
    assert_like_torch(profiled_with_break, [(x,), (x,)])


def test_bound_profiler_context_runs_for_real():
    def fn(x):
        with torch.profiler.profile() as prof:
            y = x + 1
        return y, prof is not None

    fj.reset()
    x = torch.randn(2)
    y, bound = fj.compile(fn, backend="eager")(x)
    torch.testing.assert_close(y, x + 1)
    assert bound


def unused_results(x):
    t = torch.arange(1, 3)  # unused: torch.compile's graph keeps it too
    (x + 1).sum()
    return [isinstance(x, torch.Tensor), isinstance(t, torch.Tensor), x * 2]


def test_unused_ops_stay_in_the_graph_as_in_torch():
    assert_like_torch(unused_results, [(torch.randn(3),), (torch.randn(3),)], fullgraph=True)


def item_returned(x):
    return torch.max(x).int().item()


def item_in_math(x):
    y = x.sum().item()
    return x + y, y * 2


# torch's graph for item_in_math also holds a scalar_tensor for the float it returns
@pytest.mark.parametrize(("fn", "ops"), [(item_returned, True), (item_in_math, False)])
def test_item_is_captured_with_fullgraph(fn, ops):
    calls = [(torch.tensor([[10.6, 11.7, -2.2]]),), (torch.tensor([[1.0, 61.5, 3.0]]),)]
    assert_like_torch(fn, calls, fullgraph=True, ops=ops)


def test_item_value_needed_by_python_is_a_fullgraph_error():
    def branch(x):
        if x.sum().item() > 0:
            return x + 1
        return x - 1

    fj.reset()
    with pytest.raises(fj.GraphBreakInFullgraph, match=r"Tensor\.item"):
        fj.compile(branch, fullgraph=True)(torch.ones(2))
    fj.reset()
    torch.testing.assert_close(fj.compile(branch)(torch.ones(2)), torch.ones(2) + 1)


class _ById(torch.nn.Module):
    def forward(self, x, ref_id):
        if id(self) == ref_id:
            x = torch.mul(x, 1.0)
        return torch.add(x, 1.0)


def test_id_of_an_input_module_is_folded_and_guarded():
    m, other = _ById(), _ById()
    x = torch.randn(2)
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.optimize(counter, fullgraph=True)(lambda mod, x, ref: mod(x, ref))
    torch.testing.assert_close(compiled(m, x, id(m)), x + 1)
    assert counter.op_count == 2
    torch.testing.assert_close(compiled(other, x, id(m)), x + 1)  # another module: recompiled
    assert (counter.frame_count, counter.op_count) == (2, 3)


def test_comprehension_broken_mid_way_keeps_every_item():
    # was [8, 7] for 10 items: the resume function appended to the list it was handed
    # (LIST_APPEND on a stack argument) without replaying that on the real list
    import random

    def gen():
        return [random.randint(5, 10) for _ in range(10)]

    random.seed(0)
    expected = gen()
    fj.reset()
    random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one resume per item left: cache limit
        assert fj.compile(gen, backend="eager")() == expected


def test_helpers_on_constants_leave_no_graph_nodes():
    mha = torch.nn.MultiheadAttention(8, 2).eval()

    def attend(x):
        return mha(x, x, x, need_weights=False)[0] + 1

    assert_like_torch(attend, [(torch.randn(3, 8),), (torch.randn(3, 8),)], fullgraph=True)


def pair_helpers(a):
    return (
        torch.zeros(torch.nn.modules.utils._pair(a.size()))
        + a
        + torch.ones(torch.nn.modules.utils._ntuple(3)(3)).sum()
    )


def test_nn_utils_helpers_are_inlined():
    assert_like_torch(pair_helpers, [(torch.randn(3, 3),), (torch.randn(3, 3),)], fullgraph=True)


def test_renamed_nested_function_keeps_its_name():
    def make(x):
        def parse(v):
            return v + x

        parse.__name__ = "renamed"
        return parse

    fj.reset()
    fn = fj.compile(make, fullgraph=True)(torch.ones(2))
    assert fn.__name__ == "renamed"
    torch.testing.assert_close(fn(torch.ones(2)), torch.full((2,), 2.0))


def test_values_read_through_a_mutated_container_are_read_before_the_replay():
    # was IndexError: `res` (alist[1]) was loaded after the replay of alist.pop()
    def f1(x):
        alist = [x]
        alist.append(x + 1)
        alist[0].sum().item()  # graph break
        res = alist.pop()
        res.sum().item()  # graph break
        return res, len(alist)

    x = torch.rand(2, 3)
    assert_like_torch(f1, [(x,), (x,)])


class _ReadLogged(dict):
    """A dict subclass whose __getitem__ is its own (transformers' ModelOutput overrides it):
    it logs each read and reads ints through the values' order."""

    def __getitem__(self, k):
        _READS.append(k)
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(dict.__getitem__(self, k) for k in self.keys())


_READS: list = []


def test_dict_subclass_with_its_own_getitem_read_from_the_inputs():
    # was a graph break: the guards and values now read dict.__getitem__, never the override
    def fn(obj):
        x = obj["a"] * 10 + obj[1]
        if "c" in obj:
            x = x + obj["c"]
        return x, obj.to_tuple()[0]

    first = _ReadLogged(a=torch.ones(3), b=torch.full((3,), 2.0))
    other = _ReadLogged(a=torch.ones(3), c=torch.full((3,), 5.0))
    calls = [(first,), (first,), (other,)]

    def reads_of(f, args):
        _READS.clear()
        result = f(*args)
        return result, list(_READS)

    expected = [reads_of(fn, args) for args in calls]
    fj.reset()
    counter = torch._dynamo.testing.CompileCounter()
    compiled = fj.optimize(counter, fullgraph=True)(fn)
    for args, (result, reads) in zip(calls, expected, strict=True):
        actual, actual_reads = reads_of(compiled, args)
        torch.testing.assert_close(actual, result)
        assert actual_reads == reads  # the override ran as in eager: not in guards, not twice
    assert counter.frame_count == 2  # the key set is guarded: `other` recompiles


def test_dict_method_called_unbound_skips_the_subclass_override():
    # was a wrong answer: dict.__getitem__(obj, k) ran the class's own __getitem__
    class Hundred(dict):
        def __getitem__(self, k):
            return 100

    def fn(obj, x):
        made = Hundred(a=2)
        return x + dict.__getitem__(obj, "a") + dict.__getitem__(made, "a") + obj["a"]

    assert_like_torch(fn, [(Hundred(a=1), torch.zeros(2))], fullgraph=True)


class _AttrConfig(dict):
    def __getattr__(self, name):
        return self[name]


def test_dict_subclass_getattr_is_not_run_by_the_tracer():
    # was an internal error (eager frame): the tracer's own probe for __objclass__ ran
    # the class's __getattr__ (KeyError)
    def fn(cfg, x, y):
        return x + y + cfg.offset

    x = torch.randn(10)
    assert_like_torch(fn, [(_AttrConfig(offset=5), x, x), (_AttrConfig(offset=5), x, x)])


def _make_counter(start):
    x = start

    def counter():
        nonlocal x
        x = x + 1
        return x

    def peek():
        return x

    return counter, peek


def test_nonlocal_store_in_an_inlined_function():
    # was a graph break: the store is replayed into fn.__closure__[i] after the graph, and
    # the next inlined call (and another function sharing the cell) sees it in the trace
    def fn(counter, peek, y):
        return counter() + counter() * y + peek()

    def run(f):
        counter, peek = _make_counter(torch.zeros(3))
        results = [f(counter, peek, torch.full((3,), 2.0)) for _ in range(2)]
        return results, peek()

    expected, expected_state = run(fn)
    fj.reset()
    counter = torch._dynamo.testing.CompileCounter()
    actual, state = run(fj.optimize(counter, fullgraph=True)(fn))
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(state, expected_state)
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    run(torch._dynamo.optimize(torch_counter, nopython=True)(fn))
    assert (counter.frame_count, counter.op_count) == (
        torch_counter.frame_count,
        torch_counter.op_count,
    )


def test_break_at_the_start_of_no_grad_compiles_no_pointless_graph():
    # the graph before the break held only the no_grad switch: it was compiled as a graph
    # of its own (2 frames beside torch's 1); the switch now runs in the rewritten frame
    seen = []

    @fj.disable
    def record_grad_mode():
        seen.append(torch.is_grad_enabled())

    def fn(x):
        with torch.no_grad():
            record_grad_mode()
            return x + 1

    def torch_fn(x):
        with torch.no_grad():
            torch._dynamo.graph_break()
            return x + 1

    x = torch.randn(4, requires_grad=True)
    fj.reset()
    counter = torch._dynamo.testing.CompileCounter()
    out = fj.optimize(counter)(fn)(x)
    torch.testing.assert_close(out, x.detach() + 1)
    assert not out.requires_grad and seen == [False] and torch.is_grad_enabled()
    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    torch._dynamo.optimize(reference)(torch_fn)(x)
    assert counter.frame_count == reference.frame_count == 1
