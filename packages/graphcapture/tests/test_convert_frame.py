"""The capture pipeline without the frame hook: convert_frame, resume functions, liveness, bytecode."""

from __future__ import annotations

import dis
import inspect
import types

import torch
import torch.nn.functional as F
from torch import nn

from framejit import graphcapture as fj
from framejit.frameeval import bytecode as fbc
from framejit.graphcapture.instructions import decode
from framejit.graphcapture.resume import VALUE, make_resume_function


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def straight_line(a, b):
    c = torch.relu(a) @ b
    return c.sum(dim=0), c.shape


def _as_function(code, fn):
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def test_convert_frame_directly():
    a, b = torch.randn(3, 4), torch.randn(4, 2)
    result = fj.convert_frame(
        straight_line.__code__,
        {"a": a, "b": b},
        straight_line.__globals__,
        backend=fj.lookup_backend("eager"),
    )
    assert result.transformed
    assert result.check_fn({"a": a, "b": b})
    assert not result.check_fn({"a": a.double(), "b": b})
    out = _as_function(result.code, straight_line)(a, b)
    expected = straight_line(a, b)
    torch.testing.assert_close(out[0], expected[0])
    assert out[1] == expected[1]
    [graph] = result.record.graphs
    assert [n.op for n in graph.graph_module.graph.nodes].count("placeholder") == 2


def test_convert_frame_with_a_break_runs_without_the_hook():
    a, b = torch.randn(10), torch.randn(10)
    result = fj.convert_frame(
        toy_example.__code__,
        {"a": a, "b": b},
        toy_example.__globals__,
        backend=fj.lookup_backend("eager"),
    )
    # resume after the `if` test and at its target: offsets of this CPython's bytecode
    insts = decode(toy_example.__code__).insts
    jump = next(i for i in insts if i.opname == "POP_JUMP_IF_FALSE")
    offsets = (insts[jump.index + 1].offset, insts[jump.target].offset)
    assert set(result.record.resume_functions) == {
        f"__resume_at_{offsets[0]}_1",
        f"__resume_at_{offsets[1]}_2",
    }
    fn = _as_function(result.code, toy_example)
    for _ in range(10):
        a, b = torch.randn(10), torch.randn(10)
        torch.testing.assert_close(fn(a, b), toy_example(a, b))


def test_liveness_at_the_resume_points():
    decoded = decode(toy_example.__code__)
    jump = next(i for i in decoded.insts if i.opname == "POP_JUMP_IF_FALSE")
    assert decoded.live_locals_at(jump.index + 1) == {"b", "x"}
    assert decoded.live_locals_at(jump.target) == {"b", "x"}
    assert decoded.live_locals_at(1) == {"a", "b"}


def test_resume_function_prologue_restores_the_stack():
    def f(x, y):
        return [x, x + 1, len(y)]

    # resume right after `len(y)`'s CALL: stack holds x, x + 1 and the len result
    call = [i for i in decode(f.__code__).insts if i.opname == "CALL"][-1]
    resume = make_resume_function(
        f.__code__, call.index + 1, (VALUE, VALUE, VALUE), (), lambda off: f"__resume_at_{off}_test"
    )
    assert resume.code.co_varnames[:3] == ("___stack0", "___stack1", "___stack2")
    fn = types.FunctionType(resume.code, f.__globals__)
    assert fn(1, 2, 3) == [1, 2, 3]


def _python_functions():
    seen = []
    for module in (
        F,
        nn.modules.linear,
        nn.modules.activation,
        nn.modules.conv,
        nn.modules.transformer,
    ):
        for value in vars(module).values():
            if isinstance(value, types.FunctionType):
                seen.append(value)
            elif inspect.isclass(value):
                seen.extend(v for v in vars(value).values() if isinstance(v, types.FunctionType))
    return seen


def test_decoded_code_maps_every_offset():
    functions = _python_functions()
    assert len(functions) > 200
    for fn in functions:
        decoded = decode(fn.__code__)
        for ins in dis.get_instructions(fn.__code__):
            if ins.opname in ("EXTENDED_ARG", "CACHE", "PRECALL"):
                continue
            found = decoded.insts[decoded.index_of_offset[ins.offset]]
            assert (found.offset, found.realname) == (ins.offset, ins.opname), (fn, ins.offset)


def test_reassembled_code_runs_like_the_original():
    functions = [F.relu, F.softmax, F.layer_norm, F.dropout, F.normalize]
    x = torch.randn(4, 6)
    calls = {
        F.relu: (x,),
        F.softmax: (x, -1),
        F.layer_norm: (x, (6,)),
        F.dropout: (x, 0.5, False),
        F.normalize: (x,),
    }
    for fn in functions:
        code = fbc.reassemble(fn.__code__)
        copy = _as_function(code, fn)
        torch.testing.assert_close(copy(*calls[fn]), fn(*calls[fn]))


def test_call_layout_check_catches_a_null_in_the_callable_slot():
    from framejit.graphcapture.codegen import PyCodegen, check_call_layout

    def f(x):
        return x

    good = PyCodegen(f.__code__)
    good.add_push_null(lambda: good.load_const(len))
    good.load_const((1, 2))
    good.call(1)
    assert check_call_layout(good.insts) is None
    wrong = PyCodegen(f.__code__)  # the other version's order of NULL and callable
    if fbc.VERSION.null_after_callable:
        wrong.push_null()
        wrong.load_const(len)
    else:
        wrong.load_const(len)
        wrong.push_null()
    wrong.load_const((1, 2))
    wrong.call(1)
    assert "NULL where the callable goes" in check_call_layout(wrong.insts)


def _backend_helper(fn, args):
    """Python code of a backend's own, run by its compiled callable at each call."""
    return fn(*args)


def test_a_backends_python_code_runs_without_capture():
    """The compiled callable runs with capture off, as torch.compile runs its compiled
    function under `disable`: a backend's Python wrapper frames are not user code (with
    fullgraph, capturing them raised GraphBreakInFullgraph out of the backend)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)

        def run(*args):
            print("", end="")  # would be a graph break if this frame were traced
            return _backend_helper(gm.forward, args)

        return run

    def fn(x):
        return torch.sin(x) + 1

    compiled = fj.compile(fn, backend=backend, fullgraph=True)
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(graphs) == 1  # the backend's frames were never compiled themselves
