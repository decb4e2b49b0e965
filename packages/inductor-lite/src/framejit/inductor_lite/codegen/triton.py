"""Triton code generation (next round).  It will render the same scheduled `FusedGroup`s:
one program per group over the outer ranges, block-tiled inner loops, `tl.reduce` for
reductions, symbolic sizes passed as kernel arguments."""

from __future__ import annotations

from typing import Any


class TritonCodegenUnavailable(NotImplementedError):
    pass


class TritonCodegen:
    name = "triton"

    def __init__(self) -> None:
        raise TritonCodegenUnavailable(
            "inductor-lite: the Triton code generator is not implemented yet; "
            "use compile_fx(..., codegen='cpp') (the default on CPU)"
        )

    def generate(self, groups: list[Any], buffers: dict[str, Any]) -> Any:  # pragma: no cover
        raise TritonCodegenUnavailable("triton codegen")

    def load(self, generated: Any) -> Any:  # pragma: no cover
        raise TritonCodegenUnavailable("triton codegen")
