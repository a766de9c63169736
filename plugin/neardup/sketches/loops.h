/* What every C module of neardup's compiled loops shares: arrays in and out through the
 * buffer protocol (numpy makes and converts them; no numpy headers, so a module builds
 * against any numpy), reading scalars as numba did (uint64 wrapping), and fmix64.
 *
 * Each module holds the compiled form of the loops of one rule; the interpreted form is
 * the Python module of the same name without the leading underscore (neardup.loops), and
 * tests check the two equal. All arithmetic is on uint64 (wrapping) or int64, as there. */
#ifndef NEARDUP_LOOPS_H
#define NEARDUP_LOOPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define MAX64 0xFFFFFFFFFFFFFFFFULL

/* MurmurHash3's 64-bit finalizer (neardup.mixing.fmix64_inplace). */
static inline uint64_t fmix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

/* An array argument or result: the object (owned) and its buffer. */
typedef struct {
    PyObject *obj;
    Py_buffer view;
    int held;
    Py_ssize_t n; /* number of items */
    void *data;
} Arr;

#define ARR_INIT {NULL, {0}, 0, 0, NULL}

static inline PyObject *numpy_module(void) {
    static PyObject *np = NULL;
    if (np == NULL) np = PyImport_ImportModule("numpy");
    return np;
}

static inline void arr_release(Arr *a) {
    if (a->held) PyBuffer_Release(&a->view);
    a->held = 0;
    Py_CLEAR(a->obj);
}

static inline int arr_view(Arr *a, int flags) {
    if (PyObject_GetBuffer(a->obj, &a->view, flags) < 0) return -1;
    a->held = 1;
    a->data = a->view.buf;
    a->n = a->view.itemsize ? a->view.len / a->view.itemsize : 0;
    return 0;
}

/* ``numpy.ascontiguousarray(o, dtype)`` (no copy where it is one already), viewed. */
static inline int arr_in(PyObject *o, const char *dtype, Arr *a) {
    PyObject *np = numpy_module();
    if (np == NULL) return -1;
    a->obj = PyObject_CallMethod(np, "ascontiguousarray", "Os", o, dtype);
    if (a->obj == NULL) return -1;
    return arr_view(a, PyBUF_C_CONTIGUOUS);
}

/* ``o`` itself, a C-contiguous writable array of ``itemsize`` bytes an item (changed in place). */
static inline int arr_inout(PyObject *o, Py_ssize_t itemsize, Arr *a) {
    Py_INCREF(o);
    a->obj = o;
    if (arr_view(a, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return -1;
    if (a->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "expected items of %zd bytes", itemsize);
        return -1;
    }
    return 0;
}

/* The format character of a buffer's items ('Q', 'q', 'I', ...), without byte order. */
static inline char format_of(PyObject *o, Py_ssize_t *itemsize) {
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_FORMAT | PyBUF_ND) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *f = v.format ? v.format : "B";
    while (*f == '<' || *f == '=' || *f == '@' || *f == '>' || *f == '!') f++;
    *itemsize = v.itemsize;
    char c = *f;
    PyBuffer_Release(&v);
    return c;
}

/* A new array ``numpy.zeros`` (zero) or ``numpy.empty`` of shape (d0,) or (d0, d1) (d1 >= 0). */
static inline int arr_new(const char *dtype, Py_ssize_t d0, Py_ssize_t d1, int zero, Arr *a) {
    PyObject *np = numpy_module();
    if (np == NULL) return -1;
    PyObject *shape = d1 >= 0 ? Py_BuildValue("(nn)", d0, d1) : Py_BuildValue("(n)", d0);
    if (shape == NULL) return -1;
    a->obj = PyObject_CallMethod(np, zero ? "zeros" : "empty", "Os", shape, dtype);
    Py_DECREF(shape);
    if (a->obj == NULL) return -1;
    return arr_view(a, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE);
}

/* A new 1-d array of ``n`` items copied from ``src``. */
static inline PyObject *arr_copy_of(const char *dtype, const void *src, Py_ssize_t n, size_t itemsize) {
    Arr a = ARR_INIT;
    if (arr_new(dtype, n, -1, 0, &a) < 0) {
        arr_release(&a);
        return NULL;
    }
    if (n) memcpy(a.data, src, (size_t)n * itemsize);
    PyObject *out = a.obj;
    Py_INCREF(out);
    arr_release(&a);
    return out;
}

/* The result object of ``a`` (a new reference); ``a`` released. */
static inline PyObject *arr_take(Arr *a) {
    PyObject *out = a->obj;
    Py_XINCREF(out);
    arr_release(a);
    return out;
}

/* A scalar as uint64, wrapping (np.uint64 of a Python int or numpy integer). */
static inline int u64_of(PyObject *o, uint64_t *out) {
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) return -1;
    *out = PyLong_AsUnsignedLongLongMask(i);
    Py_DECREF(i);
    return PyErr_Occurred() ? -1 : 0;
}

static inline int i64_of(PyObject *o, int64_t *out) {
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) return -1;
    *out = PyLong_AsLongLong(i);
    Py_DECREF(i);
    return PyErr_Occurred() ? -1 : 0;
}

/* malloc that sets MemoryError (never NULL for 0 bytes). */
static inline void *nd_malloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) PyErr_NoMemory();
    return p;
}

#define NEARDUP_MODULE(name, methods, doc)                                            \
    static struct PyModuleDef name##_def = {PyModuleDef_HEAD_INIT, #name, doc, -1,    \
                                            methods};                                 \
    PyMODINIT_FUNC PyInit_##name(void) { return PyModule_Create(&name##_def); }

#endif
