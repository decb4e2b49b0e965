"""Objects of set subclasses with Python methods of their own (`add` calling `super().add`),
built in the frame: the class's methods inlined, set's own behaviour on the contents for
the rest, each against eager with torch.compile's frame count; one read from the inputs
is a graph break, never a wrong answer."""

from __future__ import annotations

import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


class ShiftedSet(set):
    def add(self, item):
        return super().add(item + 1)

    def contains(self, item):
        return True


def _frames(fn, *args):
    fj.reset()
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*args)
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=True)(*args)
    return got, counter.frame_count, torch_counter.frame_count


def test_set_subclass_built_in_the_frame():
    def fn(x):
        s = ShiftedSet([1, 2])
        s.add(3)  # the class's add: 4
        set.add(s, 10)  # set's own
        s.tag = "t"
        facts = (
            s == {1, 2, 4, 10},
            s.contains(3),
            4 in s,
            3 in s,
            len(s),
            sorted(s),
            type(s | {7}) is set,  # set operations give the base type
            sorted(s - {1}),
            bool(s),
        )
        return x + len(s), facts, s

    x = torch.ones(2)
    expected = fn(x)
    got, frames, torch_frames = _frames(fn, x)
    torch.testing.assert_close(got[0], expected[0])
    assert got[1] == expected[1]
    assert type(got[2]) is ShiftedSet and got[2] == expected[2] and got[2].tag == "t"
    assert frames == torch_frames == 1


def test_set_subclass_from_the_inputs_is_not_read_unguarded():
    def fn(x, s):
        s.add(5)
        return x + len(s)

    compiled = fj.compile(fn, backend="eager")
    eager_set, compiled_set = ShiftedSet([1]), ShiftedSet([1])
    torch.testing.assert_close(
        compiled(torch.zeros(1), compiled_set), fn(torch.zeros(1), eager_set)
    )
    assert compiled_set == eager_set == {1, 6}
