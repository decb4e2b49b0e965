/* framejit.frameeval: the PEP 523 frame-evaluation hook, the per-code guarded cache kept in
 * co_extra, and guard evaluation on the hit path.
 *
 * This file is plain CPython C-API code.  cffi only drives the compiler (see _ffibuild.py):
 * the single cffi-exported function, fe_init(), takes the GIL and registers the C-API module
 * "framejit.frameeval._capi"; every Python-facing function is an ordinary PyMethodDef, so
 * nothing crosses cffi's GIL-releasing wrappers.
 *
 * Hook order (fe_eval_frame):
 *   pass-through when this thread has no callback (or fe.SKIP), while a callback/check runs on
 *   this thread (recursion guard), for throwflag / generator-owned / already-started frames,
 *   module and class bodies, generator and coroutine code, and codes marked skip;
 *   otherwise the cache entries are tried most-recently-used first, with one locals view built
 *   per call; a hit runs the replacement code in the already-pushed frame (in-place swap) or,
 *   when it does not fit on the data stack, as a new function; a miss calls the callback with
 *   interception off on this thread.
 */
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <string.h>

/* ======================================================================================
 * The one per-version block: every CPython-version difference lives here.
 * ====================================================================================== */
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "framejit.frameeval supports CPython 3.11, 3.12 and 3.13 only (frame layout is version-specific)"
#endif

#ifdef Py_GIL_DISABLED
#error "framejit.frameeval does not support free-threaded CPython (3.13t): its caches rely on the GIL"
#endif

#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

#if PY_VERSION_HEX < 0x030C0000 /* ---- 3.11 ---------------------------------------------- */
#define FE_PYTHON "3.11"
/* f_code is the code; f_func the function; fresh frames have prev_instr == CODE-1. */
#define FE_FRAME_CODE(f) ((f)->f_code)
#define FE_FRAME_HAS_CODE(f) 1
#define FE_FRAME_FUNC(f) ((PyObject *)(f)->f_func)
#define FE_FRAME_IS_FRESH(f, co) ((f)->prev_instr == _PyCode_CODE(co) - 1)
#define FE_FRAME_NOT_CALLED(f) 1
#define FE_FRAME_SET_CODE(f, co)                                                             \
    do {                                                                                     \
        PyCodeObject *old_ = (f)->f_code;                                                    \
        (f)->f_code = (PyCodeObject *)Py_NewRef(co);                                         \
        (f)->prev_instr = _PyCode_CODE(co) - 1;                                              \
        Py_DECREF(old_);                                                                     \
    } while (0)
#define FE_FRAME_SIZE(co) ((co)->co_nlocalsplus + (co)->co_stacksize + FRAME_SPECIALS_SIZE)
/* In 3.11 the caller (_PyEval_Vector) clears and pops the frame after the hook returns. */
#define FE_HOOK_OWNS_FRAME 0
#define FE_CODE_SET_EXTRA _PyCode_SetExtra
#define FE_REQUEST_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
static inline void fe_discard_frame(PyThreadState *ts, _PyInterpreterFrame *f) {
    (void)ts;
    (void)f;
}

#elif PY_VERSION_HEX < 0x030D0000 /* ---- 3.12 ---------------------------------------------- */
#define FE_PYTHON "3.12"
#define FE_FRAME_CODE(f) ((f)->f_code)
#define FE_FRAME_HAS_CODE(f) 1
#define FE_FRAME_FUNC(f) ((f)->f_funcobj)
#define FE_FRAME_IS_FRESH(f, co) ((f)->prev_instr == _PyCode_CODE(co) - 1)
#define FE_FRAME_NOT_CALLED(f) ((f)->return_offset == 0)
#define FE_FRAME_SET_CODE(f, co)                                                             \
    do {                                                                                     \
        PyCodeObject *old_ = (f)->f_code;                                                    \
        (f)->f_code = (PyCodeObject *)Py_NewRef(co);                                         \
        (f)->prev_instr = _PyCode_CODE(co) - 1;                                              \
        Py_DECREF(old_);                                                                     \
    } while (0)
#define FE_FRAME_SIZE(co) ((co)->co_framesize)
/* From 3.12 the hook owns the frame: whatever is not handed to the default evaluator must be
 * cleared and popped here.  3.12 exports no helper, so this is CPython's clear_thread_frame
 * for a frame that never ran (frame_obj is NULL: nobody could have made one). */
#define FE_HOOK_OWNS_FRAME 1
#define FE_CODE_SET_EXTRA PyUnstable_Code_SetExtra
#define FE_REQUEST_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
static void fe_discard_frame(PyThreadState *ts, _PyInterpreterFrame *f) {
    ts->c_recursion_remaining--;
    for (int i = 0; i < f->stacktop; i++) {
        Py_XDECREF(f->localsplus[i]);
    }
    Py_XDECREF(f->frame_obj);
    Py_XDECREF(f->f_locals);
    Py_DECREF(f->f_funcobj);
    Py_DECREF(f->f_code);
    ts->c_recursion_remaining++;
    PyObject **base = (PyObject **)f;
    _PyStackChunk *chunk = ts->datastack_chunk;
    if (base == &chunk->data[0]) {
        _PyStackChunk *previous = chunk->previous;
        PyObjectArenaAllocator arena;
        PyObject_GetArenaAllocator(&arena);
        ts->datastack_top = &previous->data[previous->top];
        ts->datastack_chunk = previous;
        arena.free(arena.ctx, chunk, chunk->size);
        ts->datastack_limit = (PyObject **)(((char *)previous) + previous->size);
    }
    else {
        ts->datastack_top = base;
    }
}

#else /* ---- 3.13 -------------------------------------------------------------------------- */
#define FE_PYTHON "3.13"
#define FE_FRAME_CODE(f) ((PyCodeObject *)(f)->f_executable)
#define FE_FRAME_HAS_CODE(f) PyCode_Check((f)->f_executable)
#define FE_FRAME_FUNC(f) ((f)->f_funcobj)
#define FE_FRAME_IS_FRESH(f, co) ((f)->instr_ptr == _PyCode_CODE(co))
#define FE_FRAME_NOT_CALLED(f) ((f)->return_offset == 0)
#define FE_FRAME_SET_CODE(f, co)                                                             \
    do {                                                                                     \
        PyObject *old_ = (f)->f_executable;                                                  \
        (f)->f_executable = Py_NewRef(co);                                                   \
        (f)->instr_ptr = _PyCode_CODE(co);                                                   \
        Py_DECREF(old_);                                                                     \
    } while (0)
#define FE_FRAME_SIZE(co) ((co)->co_framesize)
#define FE_HOOK_OWNS_FRAME 1
#define FE_CODE_SET_EXTRA PyUnstable_Code_SetExtra
#define FE_REQUEST_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
PyAPI_FUNC(void) _PyEval_FrameClearAndPop(PyThreadState *tstate, _PyInterpreterFrame *frame);
static inline void fe_discard_frame(PyThreadState *ts, _PyInterpreterFrame *f) {
    _PyEval_FrameClearAndPop(ts, f);
}
#endif /* ------------------------------------------------------------------------------------ */

#ifndef FE_SOURCE_SHA256
#define FE_SOURCE_SHA256 "unknown"
#endif
/* Read from the file by the loader (without importing it) to detect a stale build. */
__attribute__((used)) static const char fe_source_tag[] =
    "framejit-frameeval-source-sha256:" FE_SOURCE_SHA256 ";";

#define FE_UNSUPPORTED_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)
#define FE_SIGNATURE_FLAGS (CO_VARARGS | CO_VARKEYWORDS | CO_OPTIMIZED | CO_NEWLOCALS)

/* ======================================================================================
 * State
 * ====================================================================================== */

enum fe_mode { FE_MODE_OFF = 0, FE_MODE_SKIP = 1, FE_MODE_RUN_ONLY = 2, FE_MODE_CALLBACK = 3 };

/* Per-thread state.  `callback` is borrowed: the thread's slot object (fe_slot, kept in the
 * thread-state dict) owns it, so it lives exactly as long as the thread's setting. */
typedef struct {
    int mode;
    int guard;            /* > 0 while the callback or a check_fn runs on this thread */
    PyObject *callback;   /* borrowed; valid when mode == FE_MODE_CALLBACK */
    PyObject *skip_once;  /* code whose next frame passes through (new-function strategy) */
} fe_tls_t;
static _Thread_local fe_tls_t fe_tls;

static Py_ssize_t fe_extra_index = -1;
static int fe_active_threads = 0;       /* threads whose mode is not OFF */
static int fe_installed = 0;            /* our function is in interp->eval_frame's chain */
static _PyFrameEvalFunction fe_prev = NULL; /* the evaluator we forward to (NULL: default) */
static unsigned long fe_generation = 0; /* bumped by every cache mutation */
static int fe_cache_limit = 8;

/* Counters for tests and benchmarks (how each intercepted call was run). */
static struct {
    unsigned long long hits, misses, callback_calls, in_place, new_function;
} fe_stats;

/* Configured from Python (framejit/frameeval/__init__.py) by _configure(). */
static PyObject *fe_guarded_code_type = NULL;
static PyObject *fe_skip_code = NULL;
static PyObject *fe_skip_mode = NULL;
static PyObject *fe_run_only_mode = NULL;
static PyObject *fe_cache_entry_type = NULL;
static PyObject *fe_registry = NULL; /* weakref.WeakSet of codes that hold framejit co_extra */
static PyObject *fe_always_true = NULL;
static PyObject *fe_slot_key = NULL;
static PyObject *fe_str_check_fn = NULL, *fe_str_code = NULL, *fe_str_payload = NULL;
static PyObject *fe_str_owner = NULL;
static PyObject *fe_str_add = NULL;

/* ======================================================================================
 * The per-code cache, owned by C and hung off co_extra.
 * co_extra == NULL: never seen; == FE_SKIP_MARK: run untouched; else an fe_cache.
 * ====================================================================================== */

typedef struct {
    PyObject *check_fn; /* strong */
    PyObject *code;     /* strong; validated against the original when it entered; NULL means
                         * "the original code" (no self-reference: co_extra is not traversed
                         * by the GC, so a cycle through it could never be collected) */
    PyObject *payload;  /* strong */
    PyObject *owner;    /* strong or NULL: the callback setting the entry serves (NULL: every
                         * one); a thread with another callback passes over it */
} fe_entry;

typedef struct {
    int n;
    int cap;
    fe_entry *entries; /* most recently used first */
} fe_cache;

static char fe_skip_mark_storage;
#define FE_SKIP_MARK ((void *)&fe_skip_mark_storage)

static void fe_entry_clear(fe_entry *e) {
    Py_CLEAR(e->check_fn);
    Py_XSETREF(e->code, NULL);
    Py_CLEAR(e->payload);
    Py_CLEAR(e->owner);
}

static void fe_extra_free(void *extra) {
    if (extra == NULL || extra == FE_SKIP_MARK) {
        return;
    }
    fe_cache *cache = (fe_cache *)extra;
    /* Detach before dropping references: a finalizer may look at caches. */
    int n = cache->n;
    fe_entry *entries = cache->entries;
    cache->n = 0;
    cache->entries = NULL;
    for (int i = 0; i < n; i++) {
        fe_entry_clear(&entries[i]);
    }
    PyMem_Free(entries);
    PyMem_Free(cache);
}

/* co->co_extra points to this holder (Objects/codeobject.c; the same layout in 3.7-3.13).
 * Reading it here saves the cross-library call of PyUnstable_Code_GetExtra on every hooked
 * call; writes still go through the API. */
typedef struct {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} fe_code_extra_holder;

static inline void *fe_get_extra(PyCodeObject *co) {
    fe_code_extra_holder *holder = (fe_code_extra_holder *)co->co_extra;
    if (holder == NULL || fe_extra_index >= holder->ce_size) {
        return NULL;
    }
    return holder->ce_extras[fe_extra_index];
}

static int fe_register(PyObject *code) {
    /* Remember codes holding our co_extra so that reset() can find them. */
    fe_tls.guard++;
    PyObject *r = PyObject_CallMethodOneArg(fe_registry, fe_str_add, code);
    fe_tls.guard--;
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* Tests only (_debug_fail_set_extra): the next N stores of a non-NULL extra fail as if the
 * extras holder could not be allocated.  Read on the store path, never on a hit. */
static int fe_debug_set_extra_failures = 0;

static int fe_code_set_extra(PyObject *code, void *extra) {
    if (fe_debug_set_extra_failures > 0 && extra != NULL) {
        fe_debug_set_extra_failures--;
        PyErr_NoMemory();
        return -1;
    }
    return FE_CODE_SET_EXTRA(code, fe_extra_index, extra);
}

static int fe_set_extra(PyObject *code, void *extra) {
    fe_generation++;
    if (extra != NULL && fe_register(code) < 0) {
        fe_extra_free(extra);
        return -1;
    }
    /* _PyCode_SetExtra runs fe_extra_free on the previous value.  When it fails (no memory
     * for the extras holder) it has stored nothing: the new value is ours to free. */
    if (fe_code_set_extra(code, extra) < 0) {
        fe_extra_free(extra);
        return -1;
    }
    return 0;
}

/* Insert (check_fn, code, payload) as the most recent entry, evicting the least recently
 * used one when the cache is at its limit. */
static int fe_cache_add(PyCodeObject *co, PyObject *check_fn, PyObject *code, PyObject *payload,
                        PyObject *owner) {
    void *extra = fe_get_extra(co);
    fe_cache *cache;
    if (extra == NULL || extra == FE_SKIP_MARK) {
        cache = PyMem_Calloc(1, sizeof(fe_cache));
        if (cache == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (fe_set_extra((PyObject *)co, cache) < 0) {
            return -1;
        }
    }
    else {
        cache = (fe_cache *)extra;
    }
    fe_generation++;
    if (cache->n + 1 > cache->cap) {
        int cap = cache->cap ? cache->cap * 2 : 4;
        fe_entry *grown = PyMem_Realloc(cache->entries, (size_t)cap * sizeof(fe_entry));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        cache->entries = grown;
        cache->cap = cap;
    }
    /* Evict the least recently used entries beyond the limit; their references are released
     * only once the cache is consistent again (a finalizer may run arbitrary code). */
    int keep = cache->n < fe_cache_limit ? cache->n : fe_cache_limit - 1;
    int nevicted = cache->n - keep;
    fe_entry *evicted = NULL;
    if (nevicted > 0) {
        evicted = PyMem_Malloc((size_t)nevicted * sizeof(fe_entry));
        if (evicted == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(evicted, &cache->entries[keep], (size_t)nevicted * sizeof(fe_entry));
        cache->n = keep;
    }
    memmove(&cache->entries[1], &cache->entries[0], (size_t)cache->n * sizeof(fe_entry));
    cache->entries[0].check_fn = Py_NewRef(check_fn);
    cache->entries[0].code = code == (PyObject *)co ? NULL : Py_NewRef(code);
    cache->entries[0].payload = Py_NewRef(payload);
    cache->entries[0].owner = owner == Py_None ? NULL : Py_NewRef(owner);
    cache->n++;
    for (int i = 0; i < nevicted; i++) {
        fe_entry_clear(&evicted[i]);
    }
    PyMem_Free(evicted);
    return 0;
}

static void fe_cache_move_to_front(fe_cache *cache, int i) {
    if (i > 0) {
        fe_entry hit = cache->entries[i];
        memmove(&cache->entries[1], &cache->entries[0], (size_t)i * sizeof(fe_entry));
        cache->entries[0] = hit;
    }
}

/* ======================================================================================
 * Locals: the call's arguments and the function's free variables, name -> value.  At hook
 * time the argument slots hold raw values (cells are made later by MAKE_CELL) and every other
 * slot is NULL: the free variables are copied in later by COPY_FREE_VARS, so they are read
 * from the function's closure instead.  Free variable i (co_freevars order) is the name
 * co_localsplusnames[co_nlocalsplus - co_nfreevars + i] and the cell func_closure[i]: the
 * name -> cell index mapping is fixed by the code object, nothing is resolved per call.  An
 * empty cell is absent (L['x'] raises KeyError, as for an unbound name).
 *
 * check_fn(L) gets an fe_Locals: a read-only mapping that reads the frame's argument slots
 * and the closure's cells directly while the hook runs (no dict is built for L['a']).  When
 * the hook is done with it and someone kept a reference, it is detached: it copies the values
 * into its own dict, so it stays valid after the frame is gone.
 * ====================================================================================== */

static inline int fe_nargs(PyCodeObject *co) {
    return co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) ? 1 : 0) +
           ((co->co_flags & CO_VARKEYWORDS) ? 1 : 0);
}

/* The function's closure when it matches the code's free variables, else NULL (borrowed). */
static inline PyObject *fe_frame_closure(_PyInterpreterFrame *frame, PyCodeObject *co) {
    PyObject *func = FE_FRAME_FUNC(frame);
    if (co->co_nfreevars == 0 || func == NULL || !PyFunction_Check(func)) {
        return NULL;
    }
    PyObject *closure = ((PyFunctionObject *)func)->func_closure;
    if (closure == NULL || !PyTuple_Check(closure) ||
        PyTuple_GET_SIZE(closure) != co->co_nfreevars) {
        return NULL;
    }
    return closure;
}

/* Where a frame's names live while the hook runs (all borrowed). */
typedef struct {
    PyObject **slots;   /* argument slots: names[0:nargs] */
    PyObject *names;    /* co_localsplusnames */
    int nargs;
    PyObject *closure;  /* cells of names[free_base:free_base + nfree], or NULL */
    int free_base;
    int nfree;
} fe_names_view;

static inline void fe_names_view_init(fe_names_view *v, _PyInterpreterFrame *frame,
                                      PyCodeObject *co) {
    v->slots = frame->localsplus;
    v->names = co->co_localsplusnames;
    v->nargs = fe_nargs(co);
    v->closure = fe_frame_closure(frame, co);
    v->nfree = v->closure ? co->co_nfreevars : 0;
    v->free_base = co->co_nlocalsplus - co->co_nfreevars;
}

/* The value of name index i (an argument index, or FE_FREE_INDEX(j) for free variable j);
 * borrowed, NULL when unbound or the cell is empty. */
#define FE_FREE_INDEX(j) (-2 - (j))
static inline PyObject *fe_names_view_value(const fe_names_view *v, int i) {
    if (i >= 0) {
        return v->slots[i];
    }
    PyObject *cell = PyTuple_GET_ITEM(v->closure, -2 - i);
    return PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
}

static PyObject *fe_locals_dict(const fe_names_view *v) {
    PyObject *d = _PyDict_NewPresized(v->nargs + v->nfree);
    if (d == NULL) {
        return NULL;
    }
    for (int i = 0; i < v->nargs; i++) {
        if (v->slots[i] != NULL && PyDict_SetItem(d, PyTuple_GET_ITEM(v->names, i), v->slots[i]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    for (int j = 0; j < v->nfree; j++) {
        PyObject *value = fe_names_view_value(v, FE_FREE_INDEX(j));
        if (value != NULL &&
            PyDict_SetItem(d, PyTuple_GET_ITEM(v->names, v->free_base + j), value) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

typedef struct {
    PyObject_HEAD
    fe_names_view view; /* view.slots is the frame's argument slots while attached, else NULL */
    PyObject *dict;     /* built on demand (iteration, repr, ...) and when detached */
} fe_Locals;

static PyTypeObject fe_LocalsType;
static fe_Locals *fe_locals_free = NULL; /* one spare instance, reused when nobody kept it */

static fe_Locals *fe_locals_attach(_PyInterpreterFrame *frame, PyCodeObject *co) {
    fe_Locals *L = fe_locals_free;
    if (L != NULL) {
        fe_locals_free = NULL; /* its refcount was left at 1 when it was parked */
    }
    else {
        L = PyObject_New(fe_Locals, &fe_LocalsType);
        if (L == NULL) {
            return NULL;
        }
    }
    fe_names_view_init(&L->view, frame, co);
    L->dict = NULL;
    return L;
}

static PyObject *Locals_dict(fe_Locals *L) {
    if (L->dict == NULL && L->view.slots == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "framejit.frameeval.Locals: the call has ended");
        return NULL;
    }
    if (L->dict == NULL) {
        L->dict = fe_locals_dict(&L->view);
    }
    return L->dict;
}

static inline void fe_locals_unview(fe_Locals *L) {
    L->view.slots = NULL;
    L->view.names = NULL;
    L->view.closure = NULL;
}

/* The hook is done with L: recycle it, or detach it if a reference escaped. */
static int fe_locals_release(fe_Locals *L) {
    int rc = 0;
    if (Py_REFCNT(L) > 1) {
        rc = Locals_dict(L) == NULL ? -1 : 0;
        fe_locals_unview(L);
        Py_DECREF(L);
    }
    else if (fe_locals_free == NULL && L->dict == NULL) {
        fe_locals_unview(L);
        fe_locals_free = L; /* keeps its memory; refcount is reset on reuse */
    }
    else {
        Py_DECREF(L);
    }
    return rc;
}

static void Locals_dealloc(fe_Locals *L) {
    Py_XDECREF(L->dict);
    PyObject_Free(L);
}

/* Index of `key`: an argument index, FE_FREE_INDEX(j) for free variable j, or -1. */
static inline int Locals_index(const fe_names_view *v, PyObject *key) {
    PyObject *names = v->names;
    for (int i = 0; i < v->nargs; i++) {
        if (PyTuple_GET_ITEM(names, i) == key) {
            return i;
        }
    }
    for (int j = 0; j < v->nfree; j++) {
        if (PyTuple_GET_ITEM(names, v->free_base + j) == key) {
            return FE_FREE_INDEX(j);
        }
    }
    if (PyUnicode_Check(key)) {
        for (int i = 0; i < v->nargs; i++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), key) == 0) {
                return i;
            }
        }
        for (int j = 0; j < v->nfree; j++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(names, v->free_base + j), key) == 0) {
                return FE_FREE_INDEX(j);
            }
        }
    }
    return -1;
}

static int Locals_usable(fe_Locals *L) {
    if (L->view.slots == NULL && L->dict == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "framejit.frameeval.Locals: the call has ended");
        return 0;
    }
    return 1;
}

/* Borrowed value of `key` read from the frame, NULL if absent. */
static inline PyObject *Locals_lookup(fe_Locals *L, PyObject *key) {
    int i = Locals_index(&L->view, key);
    return i == -1 ? NULL : fe_names_view_value(&L->view, i);
}

static PyObject *Locals_getitem(fe_Locals *L, PyObject *key) {
    if (!Locals_usable(L)) {
        return NULL;
    }
    if (L->view.slots == NULL || L->dict != NULL) {
        PyObject *v = PyDict_GetItemWithError(L->dict, key);
        if (v == NULL && !PyErr_Occurred()) {
            PyErr_SetObject(PyExc_KeyError, key);
        }
        return Py_XNewRef(v);
    }
    PyObject *value = Locals_lookup(L, key);
    if (value == NULL) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return Py_NewRef(value);
}

static int Locals_contains(fe_Locals *L, PyObject *key) {
    if (!Locals_usable(L)) {
        return -1;
    }
    if (L->view.slots == NULL || L->dict != NULL) {
        return PyDict_Contains(L->dict, key);
    }
    return Locals_lookup(L, key) != NULL;
}

static Py_ssize_t Locals_len(fe_Locals *L) {
    PyObject *d = Locals_dict(L);
    return d ? PyDict_GET_SIZE(d) : -1;
}

static PyObject *Locals_get(fe_Locals *L, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get expected 1 or 2 arguments");
        return NULL;
    }
    int has = Locals_contains(L, args[0]);
    if (has < 0) {
        return NULL;
    }
    if (has) {
        return Locals_getitem(L, args[0]);
    }
    return Py_NewRef(nargs == 2 ? args[1] : Py_None);
}

#define FE_LOCALS_VIA_DICT(name)                                                             \
    static PyObject *Locals_##name(fe_Locals *L, PyObject *unused) {                         \
        PyObject *d = Locals_dict(L);                                                        \
        return d ? PyObject_CallMethod(d, #name, NULL) : NULL;                               \
    }
FE_LOCALS_VIA_DICT(keys)
FE_LOCALS_VIA_DICT(values)
FE_LOCALS_VIA_DICT(items)
FE_LOCALS_VIA_DICT(copy)
#undef FE_LOCALS_VIA_DICT

static PyObject *Locals_iter(fe_Locals *L) {
    PyObject *d = Locals_dict(L);
    return d ? PyObject_GetIter(d) : NULL;
}

static PyObject *Locals_repr(fe_Locals *L) {
    PyObject *d = Locals_dict(L);
    return d ? PyUnicode_FromFormat("framejit.frameeval.Locals(%R)", d) : NULL;
}

static PyObject *Locals_richcompare(fe_Locals *L, PyObject *other, int op) {
    PyObject *d = Locals_dict(L);
    if (d == NULL) {
        return NULL;
    }
    if (PyObject_TypeCheck(other, &fe_LocalsType)) {
        other = Locals_dict((fe_Locals *)other);
        if (other == NULL) {
            return NULL;
        }
    }
    return PyObject_RichCompare(d, other, op);
}

static PyMappingMethods Locals_as_mapping = {
    .mp_length = (lenfunc)Locals_len,
    .mp_subscript = (binaryfunc)Locals_getitem,
};

static PySequenceMethods Locals_as_sequence = {.sq_contains = (objobjproc)Locals_contains};

static PyMethodDef Locals_methods[] = {
    {"get", (PyCFunction)(void (*)(void))Locals_get, METH_FASTCALL, "L.get(name[, default])"},
    {"keys", (PyCFunction)Locals_keys, METH_NOARGS, "argument and free variable names"},
    {"values", (PyCFunction)Locals_values, METH_NOARGS, "their values"},
    {"items", (PyCFunction)Locals_items, METH_NOARGS, "(name, value) pairs"},
    {"copy", (PyCFunction)Locals_copy, METH_NOARGS, "a dict copy"},
    {NULL},
};

static PyTypeObject fe_LocalsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "framejit.frameeval.Locals",
    .tp_basicsize = sizeof(fe_Locals),
    .tp_dealloc = (destructor)Locals_dealloc,
    .tp_repr = (reprfunc)Locals_repr,
    .tp_as_sequence = &Locals_as_sequence,
    .tp_as_mapping = &Locals_as_mapping,
    .tp_richcompare = (richcmpfunc)Locals_richcompare,
    .tp_iter = (getiterfunc)Locals_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_MAPPING,
    .tp_doc = "Read-only mapping of a call's arguments and the function's free variables "
              "(name -> value), what check_fn(L) gets.",
    .tp_methods = Locals_methods,
};

/* ======================================================================================
 * Python-visible types: Frame (what the callback sees), CacheView (the code's cache as the
 * callback sees it), and the per-thread slot that owns a thread's callback.
 * ====================================================================================== */

typedef struct {
    PyObject_HEAD
    PyObject *f_code, *f_globals, *f_builtins, *f_locals, *closure, *function;
} fe_Frame;

/* GC-tracked: a callback may keep the Frame somewhere its own arguments can reach. */
static int Frame_traverse(fe_Frame *self, visitproc visit, void *arg) {
    Py_VISIT(self->f_code);
    Py_VISIT(self->f_globals);
    Py_VISIT(self->f_builtins);
    Py_VISIT(self->f_locals);
    Py_VISIT(self->closure);
    Py_VISIT(self->function);
    return 0;
}

static int Frame_clear(fe_Frame *self) {
    Py_CLEAR(self->f_code);
    Py_CLEAR(self->f_globals);
    Py_CLEAR(self->f_builtins);
    Py_CLEAR(self->f_locals);
    Py_CLEAR(self->closure);
    Py_CLEAR(self->function);
    return 0;
}

static void Frame_dealloc(fe_Frame *self) {
    PyObject_GC_UnTrack(self);
    Frame_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *Frame_repr(fe_Frame *self) {
    return PyUnicode_FromFormat("<framejit.frameeval.Frame of %R>", self->f_code);
}

static PyMemberDef Frame_members[] = {
    {"f_code", T_OBJECT, offsetof(fe_Frame, f_code), READONLY, "the code object being called"},
    {"f_globals", T_OBJECT, offsetof(fe_Frame, f_globals), READONLY, "the function's globals"},
    {"f_builtins", T_OBJECT, offsetof(fe_Frame, f_builtins), READONLY, "the frame's builtins"},
    {"f_locals", T_OBJECT, offsetof(fe_Frame, f_locals), READONLY,
     "dict of the call's arguments (name -> value, after defaults, *args and **kwargs binding) "
     "and the function's free variables (name -> cell contents; empty cells left out)"},
    {"closure", T_OBJECT, offsetof(fe_Frame, closure), READONLY,
     "the function's closure (tuple of cells) or None"},
    {"function", T_OBJECT, offsetof(fe_Frame, function), READONLY,
     "the function object being called, or None when unknown"},
    {NULL},
};

static PyTypeObject fe_FrameType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "framejit.frameeval.Frame",
    .tp_basicsize = sizeof(fe_Frame),
    .tp_dealloc = (destructor)Frame_dealloc,
    .tp_repr = (reprfunc)Frame_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Frame_traverse,
    .tp_clear = (inquiry)Frame_clear,
    .tp_doc = "A call about to run: what the callback needs to decide (read-only copy).",
    .tp_members = Frame_members,
};

static PyObject *fe_frame_new(_PyInterpreterFrame *frame, PyCodeObject *co, PyObject *locals) {
    fe_Frame *f = PyObject_GC_New(fe_Frame, &fe_FrameType);
    if (f == NULL) {
        return NULL;
    }
    PyObject *func = FE_FRAME_FUNC(frame);
    PyObject *closure = NULL;
    if (func != NULL && PyFunction_Check(func)) {
        closure = ((PyFunctionObject *)func)->func_closure;
    }
    f->f_code = Py_NewRef(co);
    f->f_globals = Py_NewRef(frame->f_globals);
    f->f_builtins = Py_NewRef(frame->f_builtins);
    f->f_locals = Py_NewRef(locals);
    f->closure = Py_NewRef(closure ? closure : Py_None);
    f->function = Py_NewRef(func ? func : Py_None);
    PyObject_GC_Track(f);
    return (PyObject *)f;
}

typedef struct {
    PyObject_HEAD
    PyObject *code;
} fe_CacheView;

static void CacheView_dealloc(fe_CacheView *self) {
    Py_XDECREF(self->code);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static fe_cache *fe_cache_of(PyObject *code) {
    void *extra = fe_get_extra((PyCodeObject *)code);
    return (extra == NULL || extra == FE_SKIP_MARK) ? NULL : (fe_cache *)extra;
}

static PyObject *fe_entries_list(PyObject *code) {
    fe_cache *cache = fe_cache_of(code);
    int n = cache ? cache->n : 0;
    PyObject *list = PyList_New(0);
    if (list == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        fe_entry *e = &cache->entries[i];
        PyObject *item = PyObject_CallFunctionObjArgs(
            fe_cache_entry_type, e->check_fn, e->code ? e->code : code, e->payload,
            e->owner ? e->owner : Py_None, NULL);
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
        cache = fe_cache_of(code); /* building an entry ran Python code */
        if (cache == NULL || i + 1 >= cache->n) {
            break;
        }
    }
    return list;
}

static PyObject *CacheView_entries(fe_CacheView *self, void *closure) {
    return fe_entries_list(self->code);
}

static PyObject *CacheView_limit(fe_CacheView *self, void *closure) {
    return PyLong_FromLong(fe_cache_limit);
}

static PyObject *CacheView_limit_reached(fe_CacheView *self, void *closure) {
    fe_cache *cache = fe_cache_of(self->code);
    return PyBool_FromLong(cache != NULL && cache->n >= fe_cache_limit);
}

static Py_ssize_t CacheView_len(fe_CacheView *self) {
    fe_cache *cache = fe_cache_of(self->code);
    return cache ? cache->n : 0;
}

static PyObject *CacheView_repr(fe_CacheView *self) {
    return PyUnicode_FromFormat("<framejit.frameeval.CacheView of %R: %zd of %d entries>",
                                self->code, CacheView_len(self), fe_cache_limit);
}

static PyGetSetDef CacheView_getset[] = {
    {"entries", (getter)CacheView_entries, NULL,
     "list of CacheEntry, most recently used first", NULL},
    {"limit", (getter)CacheView_limit, NULL, "the per-code cache size limit", NULL},
    {"limit_reached", (getter)CacheView_limit_reached, NULL,
     "True when the cache is full: a GuardedCode returned now evicts the least recently used "
     "entry",
     NULL},
    {NULL},
};

static PyMemberDef CacheView_members[] = {
    {"code", T_OBJECT, offsetof(fe_CacheView, code), READONLY, "the code object"},
    {NULL},
};

static PySequenceMethods CacheView_as_sequence = {.sq_length = (lenfunc)CacheView_len};

static PyTypeObject fe_CacheViewType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "framejit.frameeval.CacheView",
    .tp_basicsize = sizeof(fe_CacheView),
    .tp_dealloc = (destructor)CacheView_dealloc,
    .tp_repr = (reprfunc)CacheView_repr,
    .tp_as_sequence = &CacheView_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A live view of one code object's cache, handed to the callback on a miss.",
    .tp_getset = CacheView_getset,
    .tp_members = CacheView_members,
};

static PyObject *fe_cacheview_new(PyCodeObject *co) {
    fe_CacheView *v = PyObject_New(fe_CacheView, &fe_CacheViewType);
    if (v == NULL) {
        return NULL;
    }
    v->code = Py_NewRef(co);
    return (PyObject *)v;
}

/* A thread's setting lives in its thread-state dict, so it dies with the thread and the
 * count of active threads (which decides whether the hook is installed) stays right. */
typedef struct {
    PyObject_HEAD
    PyObject *setting; /* the object given to set_callback (callable or a mode sentinel) */
    int counted;       /* contributes to fe_active_threads */
} fe_Slot;

static void fe_uninstall(void);

static void Slot_dealloc(fe_Slot *self) {
    if (self->counted) {
        self->counted = 0;
        if (--fe_active_threads == 0) {
            fe_uninstall();
        }
    }
    Py_XDECREF(self->setting);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject fe_SlotType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "framejit.frameeval._ThreadSlot",
    .tp_basicsize = sizeof(fe_Slot),
    .tp_dealloc = (destructor)Slot_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

/* ======================================================================================
 * Validation of replacement code (once, when it enters the cache).
 * ====================================================================================== */

static int fe_validate(PyCodeObject *orig, PyObject *repl_obj) {
    if (!PyCode_Check(repl_obj)) {
        PyErr_Format(PyExc_TypeError,
                     "framejit.frameeval: GuardedCode.code must be a code object, got %.100s",
                     Py_TYPE(repl_obj)->tp_name);
        return -1;
    }
    PyCodeObject *repl = (PyCodeObject *)repl_obj;
    if (repl == orig) {
        return 0;
    }
#define FE_REJECT(what, a, b)                                                                \
    do {                                                                                     \
        PyErr_Format(PyExc_ValueError,                                                       \
                     "framejit.frameeval: replacement code %R cannot stand in for %R: " what \
                     " differs (%d != %d); a replacement must keep the original's arguments, " \
                     "flags and free variables",                                             \
                     repl, orig, (int)(a), (int)(b));                                        \
        return -1;                                                                           \
    } while (0)
    if (repl->co_flags & FE_UNSUPPORTED_FLAGS) {
        PyErr_Format(PyExc_ValueError,
                     "framejit.frameeval: replacement code %R is a generator/coroutine; "
                     "only plain function code can replace %R",
                     repl, orig);
        return -1;
    }
    if (repl->co_argcount != orig->co_argcount) {
        FE_REJECT("co_argcount", repl->co_argcount, orig->co_argcount);
    }
    if (repl->co_posonlyargcount != orig->co_posonlyargcount) {
        FE_REJECT("co_posonlyargcount", repl->co_posonlyargcount, orig->co_posonlyargcount);
    }
    if (repl->co_kwonlyargcount != orig->co_kwonlyargcount) {
        FE_REJECT("co_kwonlyargcount", repl->co_kwonlyargcount, orig->co_kwonlyargcount);
    }
    if ((repl->co_flags & FE_SIGNATURE_FLAGS) != (orig->co_flags & FE_SIGNATURE_FLAGS)) {
        FE_REJECT("co_flags & (VARARGS|VARKEYWORDS|OPTIMIZED|NEWLOCALS)",
                  repl->co_flags & FE_SIGNATURE_FLAGS, orig->co_flags & FE_SIGNATURE_FLAGS);
    }
    if (repl->co_nfreevars != orig->co_nfreevars) {
        FE_REJECT("the number of free variables", repl->co_nfreevars, orig->co_nfreevars);
    }
#undef FE_REJECT
    int nargs = fe_nargs(orig);
    for (int i = 0; i < nargs; i++) {
        PyObject *a = PyTuple_GET_ITEM(repl->co_localsplusnames, i);
        PyObject *b = PyTuple_GET_ITEM(orig->co_localsplusnames, i);
        int eq = PyObject_RichCompareBool(a, b, Py_EQ);
        if (eq < 0) {
            return -1;
        }
        if (!eq) {
            PyErr_Format(PyExc_ValueError,
                         "framejit.frameeval: replacement code %R cannot stand in for %R: "
                         "argument %d is named %R, the original's is %R",
                         repl, orig, i, a, b);
            return -1;
        }
    }
    PyObject *fa = PyCode_GetFreevars(repl);
    PyObject *fb = fa ? PyCode_GetFreevars(orig) : NULL;
    int eq = fb ? PyObject_RichCompareBool(fa, fb, Py_EQ) : -1;
    if (eq == 0) {
        PyErr_Format(PyExc_ValueError,
                     "framejit.frameeval: replacement code %R cannot stand in for %R: "
                     "co_freevars %R differ from the original's %R (same names, same order)",
                     repl, orig, fa, fb);
        eq = -1;
    }
    Py_XDECREF(fa);
    Py_XDECREF(fb);
    return eq < 0 ? -1 : 0;
}

/* ======================================================================================
 * Running code
 * ====================================================================================== */

static inline PyObject *fe_forward(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag) {
    if (fe_prev != NULL) {
        return fe_prev(ts, frame, throwflag);
    }
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

/* Error return for a frame the hook still owns (3.12+: clear and pop it first). */
static PyObject *fe_fail(PyThreadState *ts, _PyInterpreterFrame *frame) {
#if FE_HOOK_OWNS_FRAME
    PyObject *exc = PyErr_GetRaisedException();
    fe_discard_frame(ts, frame);
    PyErr_SetRaisedException(exc);
#else
    (void)ts;
    (void)frame;
#endif
    return NULL;
}

/* Strategy B: the frame is the newest on the data stack and the replacement fits: swap the
 * code in place.  The function (and so the closure for COPY_FREE_VARS) stays the original;
 * CPython later clears and pops the frame with the new code's size. */
static int fe_can_swap_in_place(PyThreadState *ts, _PyInterpreterFrame *frame, PyCodeObject *co,
                                PyCodeObject *repl) {
    if (ts->datastack_top != (PyObject **)frame + FE_FRAME_SIZE(co) ||
        (PyObject **)frame + FE_FRAME_SIZE(repl) >= ts->datastack_limit ||
        frame->frame_obj != NULL || frame->stacktop != co->co_nlocalsplus ||
        !FE_FRAME_NOT_CALLED(frame)) {
        return 0;
    }
    for (int i = fe_nargs(co); i < co->co_nlocalsplus; i++) {
        if (frame->localsplus[i] != NULL) {
            return 0;
        }
    }
    return 1;
}

/* Strategy A: call a new function built from the replacement with the frame's arguments. */
static PyObject *fe_call_as_function(PyThreadState *ts, _PyInterpreterFrame *frame,
                                     PyCodeObject *co, PyObject *repl) {
    PyObject *func = FE_FRAME_FUNC(frame);
    PyObject *closure = (func && PyFunction_Check(func))
                            ? ((PyFunctionObject *)func)->func_closure
                            : NULL;
    PyObject *fn = PyFunction_New(repl, frame->f_globals);
    if (fn == NULL) {
        return NULL;
    }
    if (closure != NULL && PyFunction_SetClosure(fn, closure) < 0) {
        Py_DECREF(fn);
        return NULL;
    }
    int argc = co->co_argcount, kwonly = co->co_kwonlyargcount;
    PyObject **lp = frame->localsplus;
    int slot = argc + kwonly;
    PyObject *varargs = (co->co_flags & CO_VARARGS) ? lp[slot++] : NULL;
    PyObject *varkw = (co->co_flags & CO_VARKEYWORDS) ? lp[slot++] : NULL;
    Py_ssize_t nvar = varargs ? PyTuple_GET_SIZE(varargs) : 0;
    Py_ssize_t nkwd = varkw ? PyDict_GET_SIZE(varkw) : 0;
    Py_ssize_t npos = argc + nvar, nkw = kwonly + nkwd;
    PyObject **args = PyMem_Malloc((size_t)(1 + npos + nkw) * sizeof(PyObject *));
    PyObject *kwnames = nkw ? PyTuple_New(nkw) : NULL;
    PyObject *result = NULL;
    if (args == NULL || (nkw && kwnames == NULL)) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject **argv = args + 1;
    for (int i = 0; i < argc; i++) {
        argv[i] = lp[i];
    }
    for (Py_ssize_t i = 0; i < nvar; i++) {
        argv[argc + i] = PyTuple_GET_ITEM(varargs, i);
    }
    for (int i = 0; i < kwonly; i++) {
        argv[npos + i] = lp[argc + i];
        PyTuple_SET_ITEM(kwnames, i, Py_NewRef(PyTuple_GET_ITEM(co->co_localsplusnames, argc + i)));
    }
    if (nkwd) {
        Py_ssize_t pos = 0, k = kwonly;
        PyObject *key, *value;
        while (PyDict_Next(varkw, &pos, &key, &value)) {
            argv[npos + k] = value;
            PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
            k++;
        }
    }
    PyObject *saved_skip = fe_tls.skip_once;
    fe_tls.skip_once = repl; /* the new frame must not be intercepted again */
    result = PyObject_Vectorcall(fn, argv, (size_t)npos | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    fe_tls.skip_once = saved_skip;
done:
    PyMem_Free(args);
    Py_XDECREF(kwnames);
    Py_DECREF(fn);
    return result;
}

/* Run `repl` (a strong reference, consumed) for `frame`, whose code is `co`. */
static PyObject *fe_run(PyThreadState *ts, _PyInterpreterFrame *frame, PyCodeObject *co,
                        PyObject *repl) {
    if (repl == (PyObject *)co) {
        Py_DECREF(repl);
        return fe_forward(ts, frame, 0);
    }
    PyCodeObject *rc = (PyCodeObject *)repl;
    if (fe_can_swap_in_place(ts, frame, co, rc)) {
        fe_stats.in_place++;
        int nargs = fe_nargs(co);
        for (int i = nargs; i < rc->co_nlocalsplus; i++) {
            frame->localsplus[i] = NULL;
        }
        ts->datastack_top = (PyObject **)frame + FE_FRAME_SIZE(rc);
        frame->stacktop = rc->co_nlocalsplus;
        FE_FRAME_SET_CODE(frame, rc);
        Py_DECREF(repl);
        return fe_forward(ts, frame, 0);
    }
    fe_stats.new_function++;
    PyObject *result = fe_call_as_function(ts, frame, co, repl);
    Py_DECREF(repl);
#if FE_HOOK_OWNS_FRAME
    if (result == NULL) {
        return fe_fail(ts, frame);
    }
    fe_discard_frame(ts, frame);
#endif
    return result;
}

/* ======================================================================================
 * The hook
 * ====================================================================================== */

static PyObject *fe_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag);

/* Our hook outlived every thread's callback while someone else's hook sat on top of it;
 * now that ours is the installed one again, take it out of the chain. */
static void fe_maybe_self_remove(void) {
    PyInterpreterState *interp = PyInterpreterState_Main();
    if (fe_installed && _PyInterpreterState_GetEvalFrameFunc(interp) == fe_eval_frame) {
        _PyInterpreterState_SetEvalFrameFunc(interp, fe_prev ? fe_prev : _PyEval_EvalFrameDefault);
        fe_installed = 0;
        fe_prev = NULL;
    }
}

/* Try the entries in MRU order.  Returns 1 with *hit set (strong) on a hit, 0 on a miss,
 * -1 on error.  *locals is built on first need and returned to the caller. */
static int fe_lookup(_PyInterpreterFrame *frame, PyCodeObject *co, fe_cache *cache,
                     fe_Locals **locals, PyObject **hit) {
    unsigned long generation = fe_generation;
    /* RUN_ONLY uses what any callback compiled; a callback only its own entries and unowned ones */
    PyObject *owner = fe_tls.mode == FE_MODE_CALLBACK ? fe_tls.callback : NULL;
    for (int i = 0; i < cache->n; i++) {
        fe_entry *e = &cache->entries[i];
        if (owner != NULL && e->owner != NULL && e->owner != owner) {
            continue;
        }
        if (e->check_fn == fe_always_true) {
            *hit = Py_NewRef(e->code ? e->code : (PyObject *)co);
            fe_cache_move_to_front(cache, i);
            return 1;
        }
        if (*locals == NULL) {
            *locals = fe_locals_attach(frame, co);
            if (*locals == NULL) {
                return -1;
            }
        }
        PyObject *check = Py_NewRef(e->check_fn);
        PyObject *code = Py_NewRef(e->code ? e->code : (PyObject *)co);
        fe_tls.guard++;
        PyObject *r = PyObject_CallOneArg(check, (PyObject *)*locals);
        fe_tls.guard--;
        Py_DECREF(check);
        int ok = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (ok < 0) {
            Py_DECREF(code);
            return -1;
        }
        if (ok) {
            *hit = code;
            if (generation == fe_generation) {
                fe_cache_move_to_front(cache, i);
            }
            return 1;
        }
        Py_DECREF(code);
        if (generation != fe_generation) {
            return 0; /* the check changed the caches: treat the rest as a miss */
        }
    }
    return 0;
}

/* Miss: ask this thread's callback.  Returns 1 with *run set (strong), 0 to run the original,
 * -1 on error. */
static int fe_ask_callback(_PyInterpreterFrame *frame, PyCodeObject *co, PyObject **run) {
    fe_names_view names;
    fe_names_view_init(&names, frame, co);
    PyObject *locals = fe_locals_dict(&names);
    if (locals == NULL) {
        return -1;
    }
    PyObject *callback = Py_NewRef(fe_tls.callback);
    PyObject *f = fe_frame_new(frame, co, locals);
    Py_DECREF(locals);
    PyObject *view = f ? fe_cacheview_new(co) : NULL;
    PyObject *r = NULL;
    if (view != NULL) {
        fe_tls.guard++;
        r = PyObject_CallFunctionObjArgs(callback, f, view, NULL);
        fe_tls.guard--;
    }
    Py_DECREF(callback);
    Py_XDECREF(f);
    Py_XDECREF(view);
    if (r == NULL) {
        return -1;
    }
    int status = 0;
    if (r == Py_None) {
        status = 0;
    }
    else if (r == fe_skip_code) {
        status = fe_set_extra((PyObject *)co, FE_SKIP_MARK) < 0 ? -1 : 0;
    }
    else if (PyObject_TypeCheck(r, (PyTypeObject *)fe_guarded_code_type)) {
        PyObject *check = PyObject_GetAttr(r, fe_str_check_fn);
        PyObject *code = check ? PyObject_GetAttr(r, fe_str_code) : NULL;
        PyObject *payload = code ? PyObject_GetAttr(r, fe_str_payload) : NULL;
        PyObject *owner = payload ? PyObject_GetAttr(r, fe_str_owner) : NULL;
        status = -1;
        if (owner != NULL && fe_validate(co, code) == 0 &&
            fe_cache_add(co, check, code, payload, owner) == 0) {
            /* The replacement itself is never intercepted (unless it has a cache of its own). */
            if ((PyCodeObject *)code != co && fe_get_extra((PyCodeObject *)code) == NULL &&
                fe_set_extra(code, FE_SKIP_MARK) < 0) {
                status = -1;
            }
            else {
                *run = Py_NewRef(code);
                status = 1;
            }
        }
        Py_XDECREF(check);
        Py_XDECREF(code);
        Py_XDECREF(payload);
        Py_XDECREF(owner);
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "framejit.frameeval: the callback must return a GuardedCode, None or "
                     "SKIP_CODE, got %.100s (for %R)",
                     Py_TYPE(r)->tp_name, co);
        status = -1;
    }
    Py_DECREF(r);
    return status;
}

static PyObject *fe_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag) {
    fe_tls_t *tls = &fe_tls;
    if (tls->mode < FE_MODE_RUN_ONLY || tls->guard) {
        if (fe_active_threads == 0) {
            fe_maybe_self_remove();
        }
        return fe_forward(ts, frame, throwflag);
    }
    if (!FE_FRAME_HAS_CODE(frame)) {
        return fe_forward(ts, frame, throwflag);
    }
    PyCodeObject *co = FE_FRAME_CODE(frame);
    if (tls->skip_once == (PyObject *)co) {
        tls->skip_once = NULL;
        return fe_forward(ts, frame, throwflag);
    }
    if (throwflag || ts->tracing || frame->owner != FRAME_OWNED_BY_THREAD || frame->f_locals != NULL ||
        (co->co_flags & FE_UNSUPPORTED_FLAGS) || !(co->co_flags & CO_OPTIMIZED) ||
        !FE_FRAME_IS_FRESH(frame, co)) {
        return fe_forward(ts, frame, throwflag);
    }
    void *extra = fe_get_extra(co);
    if (extra == FE_SKIP_MARK) {
        return fe_forward(ts, frame, 0);
    }
    fe_Locals *locals = NULL;
    PyObject *run = NULL;
    int status = 0;
    if (extra != NULL) {
        status = fe_lookup(frame, co, (fe_cache *)extra, &locals, &run);
    }
    if (status > 0) {
        fe_stats.hits++;
    }
    else if (status == 0) {
        fe_stats.misses++;
        if (tls->mode == FE_MODE_CALLBACK) {
            fe_stats.callback_calls++;
            status = fe_ask_callback(frame, co, &run);
        }
    }
    if (locals != NULL && fe_locals_release(locals) < 0 && status >= 0) {
        Py_XDECREF(run);
        status = -1;
    }
    if (status < 0) {
        return fe_fail(ts, frame);
    }
    if (status == 0) {
        return fe_forward(ts, frame, 0);
    }
    return fe_run(ts, frame, co, run);
}

/* ======================================================================================
 * Installing and removing the hook (only while some thread has a setting).
 * ====================================================================================== */

static int fe_install(void) {
    PyInterpreterState *interp = PyInterpreterState_Main();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (cur == fe_eval_frame) {
        fe_installed = 1;
        return 0;
    }
    if (fe_installed) {
        if (cur != _PyEval_EvalFrameDefault) {
            /* Someone installed their hook over ours and will hand control back (torch does
             * this around a compiled region): stay in their chain, do not clobber them. */
            return 0;
        }
        if (PyErr_WarnEx(PyExc_RuntimeWarning,
                         "framejit.frameeval: another PEP 523 user removed framejit's frame "
                         "evaluator; installing it again",
                         1) < 0) {
            return -1;
        }
    }
    /* Chain to whatever is installed now (a debugger, another JIT): frames we do not
     * intercept, and the replacement frames we run, go to it. */
    fe_prev = (cur == _PyEval_EvalFrameDefault) ? NULL : cur;
    _PyInterpreterState_SetEvalFrameFunc(interp, fe_eval_frame);
    fe_installed = 1;
    return 0;
}

static void fe_uninstall(void) {
    /* May run from a thread slot's deallocation: use the main interpreter (the only one
     * framejit.frameeval supports), which needs no current thread state. */
    PyInterpreterState *interp = PyInterpreterState_Main();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (cur == fe_eval_frame) {
        _PyInterpreterState_SetEvalFrameFunc(interp, fe_prev ? fe_prev : _PyEval_EvalFrameDefault);
        fe_installed = 0;
        fe_prev = NULL;
    }
    else if (cur == _PyEval_EvalFrameDefault) {
        fe_installed = 0; /* someone already took us out */
        fe_prev = NULL;
    }
    /* else: another hook sits on top of ours; removing ours now would clobber it.  Ours stays
     * in its chain as a pure pass-through and takes itself out (fe_maybe_self_remove) the
     * first time it runs as the installed evaluator again. */
}

/* ======================================================================================
 * Python-facing functions
 * ====================================================================================== */

static PyObject *fe_py_configure(PyObject *self, PyObject *args) {
    PyObject *gc, *skip_code, *skip_mode, *run_only, *entry_type, *registry;
    if (!PyArg_ParseTuple(args, "OOOOOO:_configure", &gc, &skip_code, &skip_mode, &run_only,
                          &entry_type, &registry)) {
        return NULL;
    }
    if (!PyType_Check(gc)) {
        PyErr_SetString(PyExc_TypeError, "GuardedCode must be a type");
        return NULL;
    }
    Py_XSETREF(fe_guarded_code_type, Py_NewRef(gc));
    Py_XSETREF(fe_skip_code, Py_NewRef(skip_code));
    Py_XSETREF(fe_skip_mode, Py_NewRef(skip_mode));
    Py_XSETREF(fe_run_only_mode, Py_NewRef(run_only));
    Py_XSETREF(fe_cache_entry_type, Py_NewRef(entry_type));
    Py_XSETREF(fe_registry, Py_NewRef(registry));
    Py_RETURN_NONE;
}

static fe_Slot *fe_thread_slot(int create) {
    PyObject *tdict = PyThreadState_GetDict();
    if (tdict == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "framejit.frameeval: no thread state dict");
        return NULL;
    }
    PyObject *slot = PyDict_GetItemWithError(tdict, fe_slot_key);
    if (slot != NULL || PyErr_Occurred() || !create) {
        return (fe_Slot *)slot;
    }
    slot = (PyObject *)PyObject_New(fe_Slot, &fe_SlotType);
    if (slot == NULL) {
        return NULL;
    }
    ((fe_Slot *)slot)->setting = Py_NewRef(Py_None);
    ((fe_Slot *)slot)->counted = 0;
    int rc = PyDict_SetItem(tdict, fe_slot_key, slot);
    Py_DECREF(slot); /* the dict owns it */
    return rc < 0 ? NULL : (fe_Slot *)slot;
}

static PyObject *fe_py_set_callback(PyObject *self, PyObject *setting) {
    int mode;
    if (setting == Py_None) {
        mode = FE_MODE_OFF;
    }
    else if (setting == fe_skip_mode) {
        mode = FE_MODE_SKIP;
    }
    else if (setting == fe_run_only_mode) {
        mode = FE_MODE_RUN_ONLY;
    }
    else if (PyCallable_Check(setting)) {
        mode = FE_MODE_CALLBACK;
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "framejit.frameeval.set_callback: expected a callable "
                     "cb(frame, cache), None, fe.SKIP or fe.RUN_ONLY, got %.100s",
                     Py_TYPE(setting)->tp_name);
        return NULL;
    }
    fe_Slot *slot = fe_thread_slot(1);
    if (slot == NULL) {
        return NULL;
    }
    int want = mode != FE_MODE_OFF;
    if (want) {
        /* Idempotent; also notices when another PEP 523 user has removed ours. */
        if (fe_install() < 0) {
            return NULL;
        }
        if (!slot->counted) {
            fe_active_threads++;
            slot->counted = 1;
        }
    }
    PyObject *previous = slot->setting; /* reference moves to the caller */
    slot->setting = Py_NewRef(setting);
    fe_tls.mode = mode;
    fe_tls.callback = mode == FE_MODE_CALLBACK ? setting : NULL;
    if (!want && slot->counted) {
        slot->counted = 0;
        if (--fe_active_threads == 0) {
            fe_uninstall();
        }
    }
    return previous;
}

static PyObject *fe_py_get_callback(PyObject *self, PyObject *unused) {
    fe_Slot *slot = fe_thread_slot(0);
    if (slot == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    return Py_NewRef(slot->setting);
}

static int fe_check_code(PyObject *code) {
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "framejit.frameeval: expected a code object, got %.100s",
                     Py_TYPE(code)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *fe_py_entries(PyObject *self, PyObject *code) {
    if (fe_check_code(code) < 0) {
        return NULL;
    }
    return fe_entries_list(code);
}

static PyObject *fe_py_clear(PyObject *self, PyObject *code) {
    if (fe_check_code(code) < 0) {
        return NULL;
    }
    if (fe_set_extra(code, NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* discard(code, check_fn) -> bool: drop the entries of `code` whose check is `check_fn`.
 * Called when a check's watched objects die, possibly from a GC pass inside a lookup: the
 * generation bump makes a running lookup stop trusting its index. */
static PyObject *fe_py_discard(PyObject *self, PyObject *args) {
    PyObject *code, *check_fn;
    if (!PyArg_ParseTuple(args, "OO:discard", &code, &check_fn) || fe_check_code(code) < 0) {
        return NULL;
    }
    void *extra = fe_get_extra((PyCodeObject *)code);
    if (extra == NULL || extra == FE_SKIP_MARK) {
        Py_RETURN_FALSE;
    }
    fe_cache *cache = (fe_cache *)extra;
    fe_entry *dropped = PyMem_Malloc((size_t)(cache->n ? cache->n : 1) * sizeof(fe_entry));
    if (dropped == NULL) {
        return PyErr_NoMemory();
    }
    int kept = 0, ndropped = 0;
    for (int i = 0; i < cache->n; i++) {
        if (cache->entries[i].check_fn == check_fn) {
            dropped[ndropped++] = cache->entries[i];
        }
        else {
            cache->entries[kept++] = cache->entries[i];
        }
    }
    cache->n = kept;
    fe_generation++;
    /* References are released only now that the cache is consistent (finalizers run code). */
    for (int i = 0; i < ndropped; i++) {
        fe_entry_clear(&dropped[i]);
    }
    PyMem_Free(dropped);
    return PyBool_FromLong(ndropped > 0);
}

static PyObject *fe_py_skip(PyObject *self, PyObject *code) {
    if (fe_check_code(code) < 0) {
        return NULL;
    }
    if (fe_set_extra(code, FE_SKIP_MARK) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *fe_py_is_skipped(PyObject *self, PyObject *code) {
    if (fe_check_code(code) < 0) {
        return NULL;
    }
    return PyBool_FromLong(fe_get_extra((PyCodeObject *)code) == FE_SKIP_MARK);
}

static PyObject *fe_py_set_cache_limit(PyObject *self, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 1 || n > 1024) {
        PyErr_Format(PyExc_ValueError,
                     "framejit.frameeval: cache limit must be between 1 and 1024, got %ld", n);
        return NULL;
    }
    long previous = fe_cache_limit;
    fe_cache_limit = (int)n;
    return PyLong_FromLong(previous);
}

static PyObject *fe_py_get_cache_limit(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(fe_cache_limit);
}

static PyObject *fe_py_debug_fail_set_extra(PyObject *self, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int previous = fe_debug_set_extra_failures;
    fe_debug_set_extra_failures = n < 0 ? 0 : (n > INT_MAX ? INT_MAX : (int)n);
    return PyLong_FromLong(previous);
}

static PyObject *fe_py_hook_state(PyObject *self, PyObject *unused) {
    PyInterpreterState *interp = PyInterpreterState_Main();
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    const char *current = cur == fe_eval_frame              ? "framejit"
                          : cur == _PyEval_EvalFrameDefault ? "default"
                                                            : "other";
    return Py_BuildValue("{s:O,s:s,s:O,s:i}", "installed", fe_installed ? Py_True : Py_False,
                         "current", current, "chained", fe_prev ? Py_True : Py_False,
                         "active_threads", fe_active_threads);
}

static PyObject *fe_py_stats(PyObject *self, PyObject *reset) {
    PyObject *d = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "hits", fe_stats.hits, "misses",
                                fe_stats.misses, "callback_calls", fe_stats.callback_calls,
                                "in_place", fe_stats.in_place, "new_function",
                                fe_stats.new_function);
    if (d != NULL && PyObject_IsTrue(reset)) {
        memset(&fe_stats, 0, sizeof(fe_stats));
    }
    return d;
}

static PyObject *fe_py_always_true(PyObject *self, PyObject *locals) {
    Py_RETURN_TRUE;
}

static PyMethodDef fe_methods[] = {
    {"_configure", fe_py_configure, METH_VARARGS, "internal: wire the Python-side types"},
    {"set_callback", fe_py_set_callback, METH_O, "set this thread's callback; returns previous"},
    {"get_callback", fe_py_get_callback, METH_NOARGS, "this thread's callback setting"},
    {"cache_entries", fe_py_entries, METH_O, "list of CacheEntry for a code object"},
    {"clear", fe_py_clear, METH_O, "drop a code object's cache and skip mark"},
    {"discard", fe_py_discard, METH_VARARGS, "discard(code, check_fn): drop those entries"},
    {"skip", fe_py_skip, METH_O, "never intercept this code object"},
    {"is_skipped", fe_py_is_skipped, METH_O, "whether a code object is marked skip"},
    {"set_cache_limit", fe_py_set_cache_limit, METH_O, "set the per-code limit; returns previous"},
    {"get_cache_limit", fe_py_get_cache_limit, METH_NOARGS, "the per-code cache limit"},
    {"hook_state", fe_py_hook_state, METH_NOARGS, "diagnostics about the installed hook"},
    {"stats", fe_py_stats, METH_O, "stats(reset) -> counters of intercepted calls"},
    {"_debug_fail_set_extra", fe_py_debug_fail_set_extra, METH_O,
     "tests: make the next N co_extra stores fail with MemoryError; returns the previous N"},
    {"always_true", fe_py_always_true, METH_O,
     "always_true(L) -> True; as a check_fn it is recognised and evaluated in C"},
    {NULL, NULL, 0, NULL},
};

static int fe_init_module(void) {
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        /* eval_frame and co_extra indices are per interpreter; the hook's state is not. */
        PyErr_SetString(PyExc_ImportError,
                        "framejit.frameeval can only be imported in the main interpreter");
        return -1;
    }
    if (PyType_Ready(&fe_FrameType) < 0 || PyType_Ready(&fe_CacheViewType) < 0 ||
        PyType_Ready(&fe_LocalsType) < 0 ||
        PyType_Ready(&fe_SlotType) < 0) {
        return -1;
    }
    fe_extra_index = FE_REQUEST_EXTRA_INDEX(fe_extra_free);
    if (fe_extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "framejit.frameeval: no co_extra index left");
        return -1;
    }
    fe_slot_key = PyUnicode_InternFromString("framejit.frameeval.thread_slot");
    fe_str_check_fn = PyUnicode_InternFromString("check_fn");
    fe_str_code = PyUnicode_InternFromString("code");
    fe_str_payload = PyUnicode_InternFromString("payload");
    fe_str_owner = PyUnicode_InternFromString("owner");
    fe_str_add = PyUnicode_InternFromString("add");
    if (!fe_slot_key || !fe_str_check_fn || !fe_str_code || !fe_str_payload || !fe_str_owner || !fe_str_add) {
        return -1;
    }
    PyObject *module = PyImport_AddModule("framejit.frameeval._capi"); /* borrowed */
    if (module == NULL || PyModule_AddFunctions(module, fe_methods) < 0) {
        return -1;
    }
    fe_always_true = PyObject_GetAttrString(module, "always_true");
    if (fe_always_true == NULL ||
        PyModule_AddObjectRef(module, "Frame", (PyObject *)&fe_FrameType) < 0 ||
        PyModule_AddObjectRef(module, "CacheView", (PyObject *)&fe_CacheViewType) < 0 ||
        PyModule_AddObjectRef(module, "Locals", (PyObject *)&fe_LocalsType) < 0 ||
        PyModule_AddStringConstant(module, "SOURCE_SHA256", FE_SOURCE_SHA256) < 0 ||
        PyModule_AddStringConstant(module, "PYTHON", FE_PYTHON) < 0) {
        return -1;
    }
    return 0;
}

/* The only cffi-visible function.  cffi's wrapper releases the GIL around it. */
static int fe_init(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    if (fe_extra_index < 0) {
        rc = fe_init_module();
    }
    if (rc < 0) {
        PyErr_Print();
    }
    PyGILState_Release(g);
    return rc;
}
