/* The compiled form of neardup.hashing_loops: the fmix64 chain of each run of units
 * (neardup.hashing.hash_runs) and of every window of units (neardup.shingles). */
#include "loops.h"

/* The units, uint32 or uint64 as given, any other integer type as uint64. */
typedef struct {
    Arr a;
    int wide;
} Units;

static int units_in(PyObject *o, Units *u) {
    PyObject *np = numpy_module();
    if (np == NULL) return -1;
    PyObject *arr = PyObject_CallMethod(np, "ascontiguousarray", "O", o);
    if (arr == NULL) return -1;
    Py_ssize_t size = 0;
    char f = format_of(arr, &size);
    int ok32 = size == 4 && (f == 'I' || f == 'L');
    int ok64 = size == 8 && (f == 'Q' || f == 'L');
    int rc;
    if (ok32 || ok64) {
        u->a.obj = arr;
        u->wide = ok64;
        rc = arr_view(&u->a, PyBUF_C_CONTIGUOUS);
    } else {
        u->wide = 1;
        rc = arr_in(arr, "uint64", &u->a);
        Py_DECREF(arr);
    }
    return rc;
}

#define UNIT(u, j) ((u)->wide ? ((const uint64_t *)(u)->a.data)[j] : (uint64_t)((const uint32_t *)(u)->a.data)[j])

/* h = fmix64(a_n xor size), a_1 = u_0 xor seed, a_{j+1} = fmix64(a_j * C + u_j). */
static inline uint64_t run_hash(const Units *u, int64_t s, int64_t n, uint64_t seed, uint64_t size) {
    uint64_t acc = UNIT(u, s) ^ seed;
    for (int64_t j = s + 1; j < s + n; j++) acc = fmix64(acc * GOLDEN + UNIT(u, j));
    return fmix64(acc ^ size);
}

static PyObject *hash_runs(PyObject *self, PyObject *args) {
    PyObject *ou, *os, *ol, *oz, *oseed;
    if (!PyArg_ParseTuple(args, "OOOOO", &ou, &os, &ol, &oz, &oseed)) return NULL;
    Units u = {ARR_INIT, 0};
    Arr st = ARR_INIT, ln = ARR_INIT, sz = ARR_INIT, out = ARR_INIT;
    uint64_t seed;
    PyObject *res = NULL;
    if (units_in(ou, &u) < 0 || arr_in(os, "int64", &st) < 0 || arr_in(ol, "int64", &ln) < 0 ||
        arr_in(oz, "int64", &sz) < 0 || u64_of(oseed, &seed) < 0)
        goto done;
    if (ln.n < st.n || sz.n < st.n) {
        PyErr_SetString(PyExc_ValueError, "starts, lengths and sizes differ in length");
        goto done;
    }
    if (arr_new("uint64", st.n, -1, 0, &out) < 0) goto done;
    const int64_t *s = st.data, *l = ln.data, *z = sz.data;
    uint64_t *o = out.data;
    for (Py_ssize_t r = 0; r < st.n; r++) {
        if (s[r] < 0 || l[r] < 1 || s[r] + l[r] > u.a.n) {
            PyErr_SetString(PyExc_IndexError, "a run lies outside the units");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < st.n; r++) o[r] = run_hash(&u, s[r], l[r], seed, (uint64_t)z[r]);
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&u.a), arr_release(&st), arr_release(&ln), arr_release(&sz), arr_release(&out);
    return res;
}

static PyObject *window_hashes(PyObject *self, PyObject *args) {
    PyObject *ou, *oo, *ow;
    if (!PyArg_ParseTuple(args, "OOO", &ou, &oo, &ow)) return NULL;
    Units u = {ARR_INIT, 0};
    Arr off = ARR_INIT, wid = ARR_INIT, out = ARR_INIT, oof = ARR_INIT;
    PyObject *res = NULL;
    if (units_in(ou, &u) < 0 || arr_in(oo, "int64", &off) < 0 || arr_in(ow, "int64", &wid) < 0)
        goto done;
    Py_ssize_t n_docs = off.n - 1;
    if (n_docs < 0 || wid.n < n_docs) {
        PyErr_SetString(PyExc_ValueError, "offsets and widths do not match");
        goto done;
    }
    const int64_t *of = off.data, *w = wid.data;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        if (of[d] < 0 || of[d + 1] < of[d] || of[d + 1] > u.a.n) {
            PyErr_SetString(PyExc_IndexError, "offsets lie outside the units");
            goto done;
        }
    }
    if (arr_new("int64", n_docs + 1, -1, 1, &oof) < 0) goto done;
    int64_t *oo_ = oof.data;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        int64_t n = of[d + 1] - of[d], width = n < w[d] ? n : w[d];
        oo_[d + 1] = oo_[d] + (n > 0 ? n - width + 1 : 0);
    }
    if (arr_new("uint64", oo_[n_docs], -1, 0, &out) < 0) goto done;
    uint64_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        int64_t n = of[d + 1] - of[d], width = n < w[d] ? n : w[d];
        uint64_t size = (uint64_t)width;
        int64_t m = oo_[d + 1] - oo_[d], r = 0;
        for (; r + 4 <= m; r += 4) { /* four windows at a time: their chains interleave */
            int64_t s = of[d] + r;
            uint64_t a0 = UNIT(&u, s), a1 = UNIT(&u, s + 1), a2 = UNIT(&u, s + 2),
                     a3 = UNIT(&u, s + 3);
            for (int64_t j = s + 1; j < s + width; j++) {
                a0 = fmix64(a0 * GOLDEN + UNIT(&u, j));
                a1 = fmix64(a1 * GOLDEN + UNIT(&u, j + 1));
                a2 = fmix64(a2 * GOLDEN + UNIT(&u, j + 2));
                a3 = fmix64(a3 * GOLDEN + UNIT(&u, j + 3));
            }
            uint64_t *t = o + oo_[d] + r;
            t[0] = fmix64(a0 ^ size), t[1] = fmix64(a1 ^ size);
            t[2] = fmix64(a2 ^ size), t[3] = fmix64(a3 ^ size);
        }
        for (; r < m; r++) o[oo_[d] + r] = run_hash(&u, of[d] + r, width, 0, size);
    }
    Py_END_ALLOW_THREADS
    res = Py_BuildValue("(NN)", arr_take(&out), arr_take(&oof));
done:
    arr_release(&u.a), arr_release(&off), arr_release(&wid), arr_release(&out), arr_release(&oof);
    return res;
}

static PyMethodDef methods[] = {
    {"hash_runs", hash_runs, METH_VARARGS,
     "hash_runs(units, starts, lengths, sizes, seed): the hash of each run (uint64)."},
    {"window_hashes", window_hashes, METH_VARARGS,
     "window_hashes(units, offsets, widths): the hash of every window; (hashes, offsets)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_hashing_loops, methods, "Compiled form of neardup.hashing_loops.")
