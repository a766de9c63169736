/* The compiled form of neardup.minhash_loops: one-permutation hashing, the minimum of each
 * bin, and the optimal densification of empty bins (Shrivastava 2017). */
#include "loops.h"

static PyObject *oph_bins(PyObject *self, PyObject *args) {
    PyObject *osh, *ooff, *ok, *oseed;
    if (!PyArg_ParseTuple(args, "OOOO", &osh, &ooff, &ok, &oseed)) return NULL;
    Arr sh = ARR_INIT, off = ARR_INIT, out = ARR_INIT;
    int64_t num_perm;
    uint64_t seed;
    PyObject *res = NULL;
    if (arr_in(osh, "uint64", &sh) < 0 || arr_in(ooff, "int64", &off) < 0 ||
        i64_of(ok, &num_perm) < 0 || u64_of(oseed, &seed) < 0)
        goto done;
    Py_ssize_t d = off.n - 1;
    const int64_t *of = off.data;
    if (d < 0 || num_perm < 1) {
        PyErr_SetString(PyExc_ValueError, "offsets need a first entry and num_perm >= 1");
        goto done;
    }
    for (Py_ssize_t i = 0; i < d; i++)
        if (of[i] < 0 || of[i + 1] < of[i] || of[i + 1] > sh.n) {
            PyErr_SetString(PyExc_IndexError, "offsets lie outside the shingles");
            goto done;
        }
    if (arr_new("uint64", d, num_perm, 0, &out) < 0) goto done;
    uint64_t *o = out.data;
    const uint64_t *s = sh.data, k = (uint64_t)num_perm;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < d * num_perm; i++) o[i] = MAX64;
    for (Py_ssize_t doc = 0; doc < d; doc++) {
        uint64_t *row = o + doc * num_perm;
        for (int64_t i = of[doc]; i < of[doc + 1]; i++) {
            uint64_t h = fmix64(s[i] ^ seed);
            uint64_t b = ((h >> 32) * k) >> 32;
            if (h < row[b]) row[b] = h;
        }
    }
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&sh), arr_release(&off), arr_release(&out);
    return res;
}

static PyObject *oph_densify(PyObject *self, PyObject *args) {
    PyObject *osk, *obase;
    if (!PyArg_ParseTuple(args, "OO", &osk, &obase)) return NULL;
    Arr sk = ARR_INIT;
    uint64_t base;
    uint64_t *src = NULL;
    PyObject *res = NULL;
    if (arr_inout(osk, 8, &sk) < 0 || u64_of(obase, &base) < 0) goto done;
    if (sk.view.ndim != 2) {
        PyErr_SetString(PyExc_ValueError, "the sketches must be a 2-d array");
        goto done;
    }
    Py_ssize_t d = sk.view.shape[0], num_perm = sk.view.shape[1];
    if ((src = nd_malloc(sizeof(uint64_t) * (size_t)num_perm)) == NULL) goto done;
    uint64_t k = (uint64_t)num_perm;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < d; r++) {
        uint64_t *row = (uint64_t *)sk.data + r * num_perm;
        Py_ssize_t n_filled = 0;
        for (Py_ssize_t e = 0; e < num_perm; e++) {
            src[e] = row[e];
            n_filled += row[e] != MAX64;
        }
        if (n_filled == 0 || n_filled == num_perm) continue;
        for (Py_ssize_t e = 0; e < num_perm; e++) {
            if (src[e] != MAX64) continue;
            for (uint64_t a = 1;; a++) {
                uint64_t p = fmix64((((uint64_t)e << 20) + a) ^ base);
                uint64_t b = ((p >> 32) * k) >> 32;
                if (src[b] != MAX64) {
                    row[e] = src[b];
                    break;
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    res = Py_NewRef(Py_None);
done:
    free(src);
    arr_release(&sk);
    return res;
}

static PyMethodDef methods[] = {
    {"oph_bins", oph_bins, METH_VARARGS,
     "oph_bins(shingles, offsets, num_perm, seed): the minimum of each bin, (D, num_perm)."},
    {"oph_densify", oph_densify, METH_VARARGS,
     "oph_densify(sketches, base): empty bins filled in place (optimal densification)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_minhash_loops, methods, "Compiled form of neardup.minhash_loops.")
