"""Loads the compiled hook and refuses to run a stale one.

In a checkout (``_eval_frame.c`` beside this file: a PYTHONPATH or editable install) the source hash
embedded in the extension is compared with the source before the extension is imported; a
stale or missing build is rebuilt in place (cffi and a C compiler needed), or a clear
ImportError says how to rebuild.  Installed wheels ship no C source and skip the check.
"""

from __future__ import annotations

import importlib
import os
import re
import sys

from . import _ffibuild

_TAG = re.compile(rb"framejit-frameeval-source-sha256:([0-9a-f]{64});")
NO_REBUILD_ENV = "FRAMEJIT_FRAMEEVAL_NO_REBUILD"


def _embedded_hash(path) -> str | None:
    match = _TAG.search(path.read_bytes())
    return match.group(1).decode() if match else None


def _ensure_fresh_build() -> None:
    if not _ffibuild.SOURCE.exists():
        return  # an installed wheel: the build hook compiled the extension it ships
    expected = _ffibuild.source_sha256()
    ext = _ffibuild.HERE / _ffibuild.extension_filename()
    found = _embedded_hash(ext) if ext.exists() else None
    if found == expected:
        return
    state = "missing" if not ext.exists() else "stale (built from another _eval_frame.c)"
    if os.environ.get(NO_REBUILD_ENV):
        raise ImportError(
            f"framejit.frameeval: the C extension {ext.name} is {state} and {NO_REBUILD_ENV} is "
            f"set; rebuild with `python -m framejit.frameeval._ffibuild` or reinstall the package"
        )
    print(
        f"framejit.frameeval: C extension {state}; rebuilding {ext.name} in place", file=sys.stderr
    )
    try:
        _ffibuild.build()
    except Exception as exc:  # compiler, cffi or setuptools missing: say how to fix it
        raise ImportError(
            f"framejit.frameeval: the C extension {ext.name} is {state} and rebuilding it failed "
            f"({type(exc).__name__}: {exc}). Install cffi (and setuptools on Python >= 3.12) and "
            "a C compiler with the Python headers, then run `python -m framejit.frameeval._ffibuild`"
        ) from exc


def load():
    """Import the extension, initialise it, and return its C-API module."""
    _ffibuild.check_supported()
    _ensure_fresh_build()
    ext = importlib.import_module(_ffibuild.MODULE)
    if ext.lib.fe_init() != 0:
        raise ImportError("framejit.frameeval: initialising the C hook failed (see stderr)")
    capi = sys.modules["framejit.frameeval._capi"]
    if _ffibuild.SOURCE.exists() and _ffibuild.source_sha256() != capi.SOURCE_SHA256:
        raise ImportError(
            "framejit.frameeval: a stale C extension was already loaded in this process; "
            "restart Python"
        )
    return capi
