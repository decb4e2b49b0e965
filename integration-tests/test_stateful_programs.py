"""Generated programs that change state between calls: framejit against eager, call by call.

A fixed set of seeds of stateful_programs.py (the CLI benchmarks/fuzz_stateful.py runs
thousands): each compares results, exception types, gradients, printed output and every
global/module/object state after each call.
"""

from __future__ import annotations

import pytest
import stateful_programs as sp

# seeds whose programs failed before the fixes they led to (minimised repros in
# test_folded_facts.py, test_side_effects.py, test_with_try_breaks.py)
REGRESSION_SEEDS = [25, 105, 153, 297, 519, 926, 1345]
EAGER_SEEDS = [*range(0, 36), *REGRESSION_SEEDS]
INDUCTOR_SEEDS = [67, 1000, 1001]  # 67: a size output under dynamic shapes


def _check(seed: int, backend: str) -> None:
    program = sp.generate(seed)
    verdict = sp.check(program, "framejit", backend)
    assert verdict.status == "ok", f"{program.describe()}: call {verdict.call}: {verdict.detail}"


@pytest.mark.parametrize("seed", EAGER_SEEDS)
def test_stateful_program_eager_backend(seed):
    _check(seed, "eager")


@pytest.mark.parametrize("seed", INDUCTOR_SEEDS)
def test_stateful_program_inductor_lite(seed):
    _check(seed, "inductor-lite")


def test_generator_covers_every_feature():
    """The fixed seeds exercise every feature of the table and some state change of each kind."""
    names = {f.name for s in EAGER_SEEDS for f in sp.generate(s).features}
    assert {sp.generate(s).entry for s in EAGER_SEEDS} == {"module", "function", "catching"}
    assert names == {fn(0, __import__("random").Random(0)).name for fn in sp.FEATURES}
    mutations = {c.mutation for s in EAGER_SEEDS for c in sp.generate(s).calls}
    assert sum(m in mutations for m in sp.GENERIC_MUTATIONS) >= len(sp.GENERIC_MUTATIONS) - 2
