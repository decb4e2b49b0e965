"""Builds framejit.frameeval's C extension with cffi (API mode): flags, defines, source hash.

Used by the package build (``hatch_build.py``) and by the loader to rebuild a stale in-place
extension in a checkout.  Run ``python -m framejit.frameeval._ffibuild`` (with ``src`` on
``PYTHONPATH``) to build in place by hand.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_eval_frame.c"
MODULE = "framejit.frameeval._frameeval_c"
SUPPORTED = ((3, 11), (3, 12), (3, 13))


class UnsupportedPython(RuntimeError):
    """The running CPython's frame layout is one framejit.frameeval does not know."""


def check_supported(version: tuple[int, int] | None = None) -> None:
    version = version or sys.version_info[:2]
    if sys.implementation.name != "cpython" or tuple(version) not in SUPPORTED:
        raise UnsupportedPython(
            f"framejit.frameeval supports CPython 3.11, 3.12 and 3.13 only; this is "
            f"{sys.implementation.name} {version[0]}.{version[1]}. The hook reads CPython's "
            "internal frame layout, which changes every release: use a supported interpreter."
        )
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise UnsupportedPython(
            f"framejit.frameeval does not support free-threaded CPython ({version[0]}.{version[1]}t, "
            "built with --disable-gil): the hook and its per-code caches rely on the GIL. Use the "
            "default (GIL) build of the same Python."
        )


def source_sha256() -> str:
    """Hash of everything that determines the extension: the C source and this build script."""
    digest = hashlib.sha256()
    for path in (SOURCE, Path(__file__).resolve()):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def extension_filename() -> str:
    return "_frameeval_c" + sysconfig.get_config_var("EXT_SUFFIX")


def make_ffi():
    check_supported()
    from cffi import FFI

    ffi = FFI()
    ffi.cdef("int fe_init(void);")
    ffi.set_source(
        MODULE,
        '#include "_eval_frame.c"',
        include_dirs=[str(HERE)],
        # cffi compiles against the limited API by default, which hides the frame structs.
        define_macros=[
            ("_CFFI_NO_LIMITED_API", None),
            ("FE_SOURCE_SHA256", f'"{source_sha256()}"'),
        ],
        extra_compile_args=[
            "-O2",
            "-std=gnu11",
            "-fvisibility=hidden",
            "-Wall",
            "-Wno-unused-function",
        ],
    )
    return ffi


def build(dest_dir: Path | str = HERE) -> Path:
    """Compile the extension and place it in dest_dir (atomically); return its path."""
    ffi = make_ffi()
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="framejit-frameeval-") as tmp:
        built = Path(ffi.compile(tmpdir=tmp, verbose=False))
        target = dest / extension_filename()
        partial = dest / f".{target.name}.{os.getpid()}.partial"
        shutil.copyfile(built, partial)
        os.replace(partial, target)
    return target


if __name__ == "__main__":
    print(build())
