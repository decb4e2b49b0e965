"""debug_get_cache_entry_list / innermost_fn over frameeval's cache, without graphcapture.

The cache is filled through frameeval directly: a callback returns a GuardedCode
whose check function comes from guards.compile_guards, as graphcapture does.
"""

from __future__ import annotations

import functools

import pytest

fe = pytest.importorskip("framejit.frameeval")
guards = pytest.importorskip("framejit.guards")
torch = pytest.importorskip("torch")

from helpers import recompile  # noqa: E402

from framejit.inspect import CacheEntry, debug_get_cache_entry_list, decompile, innermost_fn  # noqa: E402


def original(a, b):
    return a + b


def transformed(a, b):  # stands for the rewritten code: same arguments, other body
    if b > 1:
        return a * b
    return a - b


def _guarding_callback(frame, cache):
    locals_ = frame.f_locals
    check_fn = guards.compile_guards(
        [
            guards.Guard(guards.LocalSource("a"), guards.GuardKind.TENSOR_MATCH, locals_["a"]),
            guards.Guard(guards.LocalSource("b"), guards.GuardKind.EQUALS_MATCH, locals_["b"]),
        ],
        global_scope=frame.f_globals,
    )
    return fe.GuardedCode(check_fn, transformed.__code__, payload="record")


@pytest.fixture
def cached_original():
    fe.clear(original)
    with fe.callback(_guarding_callback):
        first = original(torch.ones(2), 3)
        second = original(torch.ones(2), 1)
    yield first, second
    fe.clear(original)


def test_entries_expose_check_fn_and_code(cached_original):
    first, second = cached_original
    torch.testing.assert_close(first, transformed(torch.ones(2), 3))
    torch.testing.assert_close(second, transformed(torch.ones(2), 1))
    entries = debug_get_cache_entry_list(original)
    assert len(entries) == 2
    assert all(isinstance(e, CacheEntry) for e in entries)
    assert all(e.code is transformed.__code__ for e in entries)
    assert entries[0].payload == "record"
    raw = fe.cache_entries(original)
    assert [e.check_fn for e in entries] == [e.check_fn for e in raw]


def test_guard_reads_as_in_the_seed(cached_original):
    guard = debug_get_cache_entry_list(original)[0].check_fn
    assert guard.code_parts == list(guard.code_parts) and guard.code_parts
    assert any("L['b']" in part for part in guard.code_parts)
    freevars = guard.__code__.co_freevars
    assert "___check_tensors" in freevars and "tensor_check_names" in freevars
    assert len(freevars) == len(guard.__closure__)
    entry = debug_get_cache_entry_list(original)[0]
    assert list(entry.closure_vars) == list(freevars)
    assert entry.code_parts == guard.code_parts
    # the guard holds for the arguments it was made for, and not for others
    entries = debug_get_cache_entry_list(original)
    for b in (1, 3):
        assert any(e.check_fn({"a": torch.zeros(2), "b": b}) for e in entries)
    assert not any(e.check_fn({"a": torch.zeros(2), "b": 99}) for e in entries)
    assert not any(e.check_fn({"a": torch.zeros(3), "b": 1}) for e in entries)


def test_cache_entry_code_decompiles_to_what_runs(cached_original):
    entry = debug_get_cache_entry_list(original)[0]
    source = entry.decompile()
    assert source == decompile(entry.code)
    rebuilt = recompile(transformed, source)
    for args in [(torch.arange(3.0), 3), (torch.arange(3.0), 0)]:
        torch.testing.assert_close(rebuilt(*args), transformed(*args))


def test_code_objects_and_methods_are_accepted(cached_original):
    assert len(debug_get_cache_entry_list(original.__code__)) == 2

    class Holder:
        def method(self):
            return 1

    assert debug_get_cache_entry_list(Holder().method) == []


def test_rejects_things_without_code():
    with pytest.raises(TypeError, match="needs a function"):
        debug_get_cache_entry_list(42)


def test_innermost_fn_unwraps_every_convention():
    def base(x):
        return x

    @functools.wraps(base)
    def wraps_layer(*args):
        return base(*args)

    def framejit_layer(*args):
        return wraps_layer(*args)

    framejit_layer._framejit_orig = wraps_layer

    def dynamo_like(*args):
        return framejit_layer(*args)

    dynamo_like._torchdynamo_orig_callable = framejit_layer
    assert innermost_fn(dynamo_like) is base
    assert innermost_fn(base) is base

    class Module:
        pass

    wrapper = Module()
    wrapper._orig_mod = base
    assert innermost_fn(wrapper) is base


def test_innermost_fn_stops_on_cycles():
    def a():
        pass

    def b():
        pass

    a.__wrapped__ = b
    b.__wrapped__ = a
    assert innermost_fn(a) in (a, b)
