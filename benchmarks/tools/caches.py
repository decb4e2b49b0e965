"""Cold compiler caches: fresh FRAMEJIT_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR for a benchmark.

Both compilers read their cache directory when they first compile, so a benchmark points
them at an empty temporary folder before it compiles anything (``fresh_caches``), or gives
a child process the environment for one (``cache_env``).  Imports nothing heavy: it runs
before torch is imported.
"""

from __future__ import annotations

import os
import tempfile


def cache_env(root: str) -> dict[str, str]:
    """The environment variables that put both compilers' caches under ``root``."""
    return {
        "FRAMEJIT_CACHE_DIR": os.path.join(root, "framejit"),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor"),
    }


def fresh_caches(prefix: str = "fj-bench-") -> str:
    """Point this process's compilers at a new empty temporary folder; returns it."""
    root = tempfile.mkdtemp(prefix=prefix)
    os.environ.update(cache_env(root))
    return root
