"""Code shaped like what framejit generates: rewritten frames and resume functions.

The code objects are made the way graphcapture makes them, by editing compiled
bytecode: an entry jump into the middle of the original code (resume
functions), stack values restored before the jump, and a rewritten frame whose
graph outputs stay on the stack.  The oracle is always the edited code object
itself, run as a function.
"""

from __future__ import annotations

import dis
import itertools
import types

from helpers import jump_forward, offset_of, outcome, patch

from framejit.inspect import decompile


def _function(code: types.CodeType, namespace: dict) -> types.FunctionType:
    return types.FunctionType(code, namespace)


def _decompiled_function(code: types.CodeType, namespace: dict) -> tuple[str, types.FunctionType]:
    source = decompile(code)
    scope = dict(namespace)
    exec(compile(source, "<decompiled>", "exec"), scope)
    return source, scope[code.co_name]


def _same_behaviour(code: types.CodeType, namespace: dict, samples: list[tuple]) -> str:
    source, rebuilt = _decompiled_function(code, namespace)
    generated = _function(code, namespace)
    for args in samples:
        expected = outcome(generated, args)
        assert expected[0] == "ok", expected
        assert outcome(rebuilt, args) == expected, (args, source)
    return source


def test_rewritten_frame_keeps_graph_outputs_on_the_stack():
    def toy_example(a, b):
        x, flag = __compiled_fn_0(a, b)  # noqa: F821
        if flag:
            return __resume_at_30_1(b, x)  # noqa: F821
        return __resume_at_38_2(b, x)  # noqa: F821

    code = toy_example.__code__
    # drop ``STORE_FAST flag; LOAD_FAST flag``: the jump tests the graph output on the stack,
    # exactly the seed's MODIFIED BYTECODE
    store = offset_of(code, "STORE_FAST", "flag")
    code = patch(patch(code, store, "NOP"), store + 2, "NOP")
    namespace = {
        "__compiled_fn_0": lambda a, b: (a / (abs(a) + 1), b < 0),
        "__resume_at_30_1": lambda b, x: x * (b * -1),
        "__resume_at_38_2": lambda b, x: x * b,
    }
    source = _same_behaviour(code, namespace, [(2.0, -3.0), (2.0, 3.0)])
    lines = [line.strip() for line in source.splitlines()]
    assert lines[0] == "def toy_example(a, b):"
    assert lines[1].startswith("__temp_") and lines[1].endswith("= __compiled_fn_0(a, b)")
    temp = lines[1].split(" ")[0]
    assert lines[2] == f"x = {temp}[0]"
    assert lines[3] == f"if {temp}[1]:"
    assert lines[4] == "return __resume_at_30_1(b, x)"
    assert lines[5] == "return __resume_at_38_2(b, x)"


def test_resume_function_jumps_into_the_middle_of_the_original():
    def resume_in_toy_example(b, x, a):
        x = a / (abs(a) + 1)
        if b.real < 0:
            b = b * -1
        return x * b

    code = resume_in_toy_example.__code__
    target = offset_of(code, "LOAD_FAST", "b", nth=1)  # ``b = b * -1``
    code = jump_forward(code, offset_of(code, "LOAD_FAST", "a"), target)
    source = _same_behaviour(code, {"abs": abs}, [(3.0, 2.0, 1.0), (-1.0, 0.5, 1.0)])
    assert "abs" not in source  # the skipped prefix is not shown
    assert "b = b * -1" in source


def test_resume_function_restores_the_stack_before_jumping():
    def resume(___stack0, y):
        z = ___stack0
        return (z + y) * 2

    code = resume.__code__
    # ``LOAD_FAST ___stack0`` stays; ``STORE_FAST z`` becomes the jump to ``LOAD_FAST y``
    code = jump_forward(code, offset_of(code, "STORE_FAST", "z"), offset_of(code, "LOAD_FAST", "y"))
    source = _same_behaviour(code, {}, [(1, 2), (5, -1)])
    assert "z" not in source.split("\n", 1)[1]


def test_resume_function_reenters_a_for_loop():
    def resume(___stack0, acc):
        for i in ___stack0:
            acc = acc + i
            acc = acc * 2
        return acc

    code = resume.__code__
    ins = list(dis.get_instructions(code))
    second = next(  # ``acc = acc * 2`` (3.13 fuses the first line's loads, so not by count)
        a.offset
        for a, b in itertools.pairwise(ins)
        if a.opname == "LOAD_FAST" and a.argval == "acc" and b.argval == 2
    )
    code = jump_forward(code, offset_of(code, "GET_ITER"), second)  # the iterator is on the stack
    namespace: dict = {}
    source, rebuilt = _decompiled_function(code, namespace)
    generated = _function(code, namespace)
    for items in ([1, 2, 3], [], [5]):
        assert rebuilt(iter(items), 1) == generated(iter(items), 1), source
    assert "for i in ___stack0:" in source


def test_graphcapture_style_rewritten_frame():
    def toy_example(a, b):
        ___graph_out = __compiled_fn_0(a, b)  # noqa: F821
        if ___graph_out[0]:
            return __resume_at_102_1(b, ___graph_out[1])  # noqa: F821
        return __resume_at_112_2(b, ___graph_out[1])  # noqa: F821

    namespace = {
        "__compiled_fn_0": lambda a, b: (b < 0, a / (abs(a) + 1)),
        "__resume_at_102_1": lambda b, x: x * (b * -1),
        "__resume_at_112_2": lambda b, x: x * b,
    }
    source = _same_behaviour(toy_example.__code__, namespace, [(2.0, -3.0), (2.0, 3.0)])
    assert "___graph_out = __compiled_fn_0(a, b)" in source
