"""A second, foreign PEP 523 evaluator for coexistence tests, compiled with cffi on demand.

It counts the frames it sees and forwards to the evaluator it found when installed (chaining)
or, when installed with chain=False, straight to CPython's default (like a naive debugger).
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

SOURCE = r"""
#include <Python.h>
static _PyFrameEvalFunction saved = NULL;
static long long seen = 0;

static PyObject *foreign_eval(PyThreadState *ts, struct _PyInterpreterFrame *f, int throwflag) {
    seen++;
    return saved ? saved(ts, f, throwflag) : _PyEval_EvalFrameDefault(ts, f, throwflag);
}

static void foreign_install(int chain) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    saved = (chain && cur != _PyEval_EvalFrameDefault) ? cur : NULL;
    _PyInterpreterState_SetEvalFrameFunc(interp, foreign_eval);
    PyGILState_Release(g);
}

static void foreign_uninstall(int restore) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyInterpreterState_SetEvalFrameFunc(
        interp, (restore && saved) ? saved : _PyEval_EvalFrameDefault);
    saved = NULL;
    PyGILState_Release(g);
}

static long long foreign_seen(void) { return seen; }
"""


def build():
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(
        "void foreign_install(int chain); void foreign_uninstall(int restore); long long foreign_seen(void);"
    )
    ffi.set_source(
        "_framejit_test_foreign_hook", SOURCE, define_macros=[("_CFFI_NO_LIMITED_API", None)]
    )
    tmp = tempfile.mkdtemp(prefix="framejit-foreign-hook-")
    path = ffi.compile(tmpdir=tmp)
    spec = importlib.util.spec_from_file_location("_framejit_test_foreign_hook", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.lib


def module_dir() -> Path:
    return Path(__file__).parent
