"""Synthetic CompileRecords (the attributes graphcapture publishes), built without graphcapture."""

from __future__ import annotations

from types import SimpleNamespace

import torch
import torch.fx
from helpers import offset_of, patch

from framejit.guards import Guard, GuardKind, LocalSource, compile_guards


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def _graph(a, b):
    return b.sum() < 0, a / (torch.abs(a) + 1)


def _rewritten(a, b):
    x, flag = __compiled_fn_0(a, b)  # noqa: F821
    if flag:
        return __resume_at_30_1(b, x)  # noqa: F821
    return __resume_at_38_2(b, x)  # noqa: F821


def _resume(b, x):
    b = b * -1
    return x * b


class KernelCallable:
    """What a code-generating backend returns: callable, with its generated source."""

    def __init__(self, gm):
        self.gm = gm
        self.source_code = "# generated kernels\ndef call(args):\n    return args\n"

    def __call__(self, *args):
        return self.gm(*args)


def rewritten_code():
    code = _rewritten.__code__
    store = offset_of(code, "STORE_FAST", "flag")
    return patch(patch(code, store, "NOP"), store + 2, "NOP").replace(co_name="toy_example")


def make_records():
    a, b = torch.randn(10), torch.randn(10)
    gm = torch.fx.symbolic_trace(_graph)
    check_fn = compile_guards(
        [
            Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, a),
            Guard(LocalSource("b"), GuardKind.TENSOR_MATCH, b),
        ],
        global_scope=globals(),
    )
    graph = SimpleNamespace(
        name="__compiled_fn_0",
        graph_module=gm,
        example_inputs=[a, b],
        compiled=KernelCallable(gm),
        backend="test",
    )
    brk = SimpleNamespace(
        reason="data-dependent branch: if on a Tensor",
        filename=__file__,
        lineno=toy_example.__code__.co_firstlineno + 2,
        source_line="if b.sum() < 0:",
        offset=30,
        function_name="toy_example",
    )
    first = SimpleNamespace(
        index=0,
        function_name="toy_example",
        filename=__file__,
        firstlineno=toy_example.__code__.co_firstlineno,
        code=toy_example.__code__,
        transformed_code=rewritten_code(),
        check_fn=check_fn,
        graphs=[graph],
        graph_breaks=[brk],
        resume_functions={"__resume_at_30_1": _resume.__code__},
        is_recompile=False,
        recompile_reasons=[],
        timings={"trace": 0.25, "total": 0.5},
        skipped_reason=None,
    )
    again = SimpleNamespace(**{**vars(first), "index": 1, "is_recompile": True, "graph_breaks": []})
    again.recompile_reasons = ["tensor 'L['a']' size mismatch at index 0. expected 10, actual 5"]
    again.timings = {"trace": 0.75, "total": 0.9}
    skipped = SimpleNamespace(
        **{
            **vars(first),
            "index": 2,
            "function_name": "helper",
            "transformed_code": None,
            "check_fn": None,
        },
    )
    skipped.graphs, skipped.graph_breaks, skipped.resume_functions = [], [], {}
    skipped.skipped_reason = "no tensor operations"
    return [first, again, skipped]
