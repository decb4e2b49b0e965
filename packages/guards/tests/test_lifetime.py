"""Guards hold what they check: the traced objects are freed when the user drops them."""

from __future__ import annotations

import gc
import weakref

import torch

from framejit.guards import (
    AttrSource,
    GlobalSource,
    Guard,
    GuardKind,
    LocalSource,
    compile_guards,
    mirror_check,
)


class Box:
    pass


def test_tensor_and_type_guards_do_not_keep_the_traced_objects():
    t, box, items = torch.randn(64, 64), Box(), [torch.ones(2)]
    refs = [weakref.ref(t), weakref.ref(box), weakref.ref(items[0])]
    guards = [
        Guard(LocalSource("t"), GuardKind.TENSOR_MATCH, t),
        Guard(LocalSource("box"), GuardKind.TYPE_MATCH, box),
        Guard(LocalSource("box"), GuardKind.NOT_NONE, box),
        Guard(LocalSource("items"), GuardKind.LENGTH_CHECK, items),
    ]
    check_fn = compile_guards(guards, global_scope={})
    L = {"t": t, "box": box, "items": items}
    assert check_fn(L) and mirror_check(guards, L, {})
    del t, box, items, L
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    # the check still works on new objects with the same properties
    assert check_fn({"t": torch.zeros(64, 64), "box": Box(), "items": [0]})


def test_id_match_holds_weakly_and_its_death_invalidates_the_check():
    box = Box()
    box.inner = Box()
    guard = Guard(AttrSource(LocalSource("box"), "inner"), GuardKind.ID_MATCH, box.inner)
    check_fn = compile_guards([guard], global_scope={})
    fired = []
    check_fn.on_invalidate.append(fired.append)
    assert check_fn({"box": box})
    ref = weakref.ref(box.inner)
    box.inner = Box()  # the traced object is dropped: its id may now be reused
    gc.collect()
    assert ref() is None
    assert fired == [check_fn]
    assert check_fn.invalidated is not None and "freed" in check_fn.invalidated
    assert check_fn({"box": box}) is False
    assert "invalidated" in check_fn.failure_reason({"box": box})
    assert check_fn.code_parts == [f"id(L['box'].inner) == {guard.expected}"]


def test_id_match_on_an_object_without_weakref_support_keeps_it_by_the_rule():
    value = (0, 1, "three")  # tuples cannot be weakly referenced: the guard keeps it
    guard = Guard(LocalSource("v"), GuardKind.ID_MATCH, value)
    check_fn = compile_guards([guard], global_scope={})
    assert not guard.value.is_weak and guard.value.get() is value
    assert check_fn({"v": value}) and not check_fn({"v": (*range(2), "three")})
    assert check_fn.invalidated is None


def test_a_check_dies_with_its_last_reference():
    t = torch.ones(3)
    check_fn = compile_guards([Guard(LocalSource("t"), GuardKind.TENSOR_MATCH, t)], {})
    ref = weakref.ref(check_fn)
    del check_fn
    gc.collect()
    assert ref() is None


def test_a_check_reads_its_globals_weakly():
    # a plain dict cannot be weakly referenced: the check reaches it through an anchor the
    # dict itself owns, so the dict dies with its last outside reference (cycles included)
    class Mod:
        pass

    scope = {"m": Mod()}
    scope["self"] = scope  # a cycle: only the GC frees it
    guard = Guard(AttrSource(GlobalSource("m"), "__class__"), GuardKind.ID_MATCH, Mod)
    check_fn = compile_guards([guard], global_scope=scope)
    assert check_fn({}) and check_fn.global_scope() is scope
    scope["m"] = object()
    assert not check_fn({}) and "not the traced object" in check_fn.failure_reason({})
    died = []
    ref = weakref.ref(scope["__framejit_globals__"], died.append)
    del scope
    gc.collect()
    assert ref() is None and died
    assert check_fn.global_scope() is None
    assert check_fn({}) is False
    assert check_fn.failure_reason({}) == "the frame's globals were freed"


def test_type_match_on_a_class_made_at_run_time_holds_it_weakly():
    # a class not reachable by name from its module: its methods' globals could reach the
    # compiled code, so the check keeps its id and a weak reference (like ID_MATCH)
    def make():
        class Local:
            def method(self):
                return make

        return Local

    Local = make()
    guard = Guard(LocalSource("x"), GuardKind.TYPE_MATCH, Local())
    check_fn = compile_guards([guard], global_scope={})
    assert check_fn.code_parts == [f"id(type(L['x'])) == {id(Local)}"]
    assert check_fn({"x": Local()}) and not check_fn({"x": make()()}) and not check_fn({"x": 1})
    assert "type mismatch. expected" in check_fn.failure_reason({"x": 1})
    assert mirror_check([guard], {"x": Local()}, {})
    ref = weakref.ref(Local)
    del Local
    gc.collect()
    assert ref() is None
    assert check_fn.invalidated is not None
    # a class importable from its module keeps the free `is` check
    box_guard = Guard(LocalSource("x"), GuardKind.TYPE_MATCH, Box())
    assert compile_guards([box_guard], {}).code_parts == ["type(L['x']) is ___type_Box"]
