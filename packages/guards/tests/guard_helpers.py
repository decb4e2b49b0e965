"""Check a guard set three ways: compiled check_fn, mirror, and failure_reason."""

from __future__ import annotations

from framejit.guards import compile_guards, mirror_check


def agree(guards, L, G=None, expect=True):
    """Assert check_fn, the mirror and failure_reason all say ``expect``; return the reason."""
    G = {} if G is None else G
    fn = compile_guards(guards, G)
    assert fn(L) is expect, fn.code_parts
    assert mirror_check(guards, L, G) is expect
    reason = fn.failure_reason(L)
    assert (reason is None) is expect, reason
    reasons = fn.failure_reasons(L)
    assert (reasons == []) is expect, reasons
    assert reasons[:1] == ([] if expect else [reason])  # the first of all is the first one
    return reason


def passes(guards, L, G=None):
    agree(guards, L, G, True)


def fails(guards, L, G=None):
    return agree(guards, L, G, False)
