/* The compiled form of neardup.simhash_loops: the weighted bit votes of each document. */
#include "loops.h"

#define BYTE_LSBS 0x0101010101010101ULL

/* Byte k of lanes[j] times weight onto sums[8k + j]; the lanes emptied. */
static inline void lanes_to_sums(uint64_t *lanes, int64_t weight, int64_t *sums) {
    for (int j = 0; j < 8; j++) {
        for (int k = 0; k < 8; k++)
            sums[8 * k + j] = (int64_t)((uint64_t)sums[8 * k + j] +
                                        (uint64_t)weight * ((lanes[j] >> (8 * k)) & 0xFF));
        lanes[j] = 0;
    }
}

/* The SimHash of hashes[lo:hi]: bit b set iff 2 * sum_i w_i * bit_b(h_i) > sum_i w_i; the
 * values of the first one's weight counted 8 bits at a time in byte lanes. */
static uint64_t votes(const uint64_t *hashes, const int64_t *weights, int64_t lo, int64_t hi) {
    int64_t sums[64] = {0};
    uint64_t lanes[8] = {0};
    uint64_t total = 0;
    int64_t common = weights[lo];
    int counted = 0;
    for (int64_t i = lo; i < hi; i++) {
        int64_t w = weights[i];
        uint64_t h = hashes[i];
        total += (uint64_t)w;
        if (w != common) {
            for (int b = 0; b < 64; b++)
                sums[b] = (int64_t)((uint64_t)sums[b] + (uint64_t)w * ((h >> b) & 1));
            continue;
        }
        for (int j = 0; j < 8; j++) lanes[j] += (h >> j) & BYTE_LSBS;
        if (++counted == 255) {
            lanes_to_sums(lanes, common, sums);
            counted = 0;
        }
    }
    lanes_to_sums(lanes, common, sums);
    uint64_t fp = 0;
    for (int b = 0; b < 64; b++)
        if ((int64_t)(2 * (uint64_t)sums[b]) > (int64_t)total) fp |= (uint64_t)1 << b;
    return fp;
}

static int ragged_ok(const int64_t *of, Py_ssize_t n_docs, Py_ssize_t n) {
    for (Py_ssize_t d = 0; d < n_docs; d++)
        if (of[d] < 0 || of[d + 1] < of[d] || of[d + 1] > n) {
            PyErr_SetString(PyExc_IndexError, "offsets lie outside the hashes");
            return 0;
        }
    return 1;
}

static PyObject *simhash_votes(PyObject *self, PyObject *args) {
    PyObject *oh, *ow, *oo;
    if (!PyArg_ParseTuple(args, "OOO", &oh, &ow, &oo)) return NULL;
    Arr h = ARR_INIT, w = ARR_INIT, off = ARR_INIT, out = ARR_INIT;
    PyObject *res = NULL;
    if (arr_in(oh, "uint64", &h) < 0 || arr_in(ow, "int64", &w) < 0 ||
        arr_in(oo, "int64", &off) < 0)
        goto done;
    Py_ssize_t d = off.n - 1;
    const int64_t *of = off.data;
    if (d < 0 || w.n < h.n) {
        PyErr_SetString(PyExc_ValueError, "offsets need a first entry, each hash a weight");
        goto done;
    }
    if (!ragged_ok(of, d, h.n) || arr_new("uint64", d, -1, 1, &out) < 0) goto done;
    uint64_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t doc = 0; doc < d; doc++)
        if (of[doc + 1] > of[doc]) o[doc] = votes(h.data, w.data, of[doc], of[doc + 1]);
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&h), arr_release(&w), arr_release(&off), arr_release(&out);
    return res;
}

static PyObject *tf_simhash(PyObject *self, PyObject *args) {
    PyObject *oh, *oo, *ow;
    if (!PyArg_ParseTuple(args, "OOO", &oh, &oo, &ow)) return NULL;
    Arr h = ARR_INIT, off = ARR_INIT, wt = ARR_INIT, out = ARR_INIT;
    uint64_t *keys = NULL, *distinct = NULL;
    int64_t *counts = NULL, *used = NULL, *weights = NULL;
    PyObject *res = NULL;
    if (arr_in(oh, "uint64", &h) < 0 || arr_in(oo, "int64", &off) < 0 ||
        arr_in(ow, "int64", &wt) < 0)
        goto done;
    Py_ssize_t d = off.n - 1;
    const int64_t *of = off.data;
    if (d < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets need a first entry");
        goto done;
    }
    if (!ragged_ok(of, d, h.n) || arr_new("uint64", d, -1, 1, &out) < 0) goto done;
    int64_t longest = 0;
    for (Py_ssize_t doc = 0; doc < d; doc++)
        if (of[doc + 1] - of[doc] > longest) longest = of[doc + 1] - of[doc];
    if (wt.n <= longest) {
        PyErr_SetString(PyExc_ValueError, "a weight is needed for every count up to the longest");
        goto done;
    }
    size_t size = 16;
    while (size < (size_t)(2 * longest)) size *= 2;
    keys = nd_malloc(size * 8), distinct = nd_malloc(size * 8);
    counts = calloc(size, 8), used = nd_malloc(size * 8), weights = nd_malloc(size * 8);
    if (!keys || !distinct || !counts || !used || !weights) {
        PyErr_NoMemory();
        goto done;
    }
    const uint64_t *hs = h.data;
    const int64_t *wot = wt.data;
    uint64_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t doc = 0; doc < d; doc++) {
        int64_t lo = of[doc], hi = of[doc + 1];
        if (lo == hi) continue;
        uint64_t mask = 15;
        while (mask + 1 < (uint64_t)(2 * (hi - lo))) mask = (mask << 1) | 1;
        int64_t n_used = 0;
        for (int64_t i = lo; i < hi; i++) {
            uint64_t x = hs[i];
            int64_t slot = (int64_t)(x & mask);
            while (counts[slot] != 0 && keys[slot] != x) slot = (int64_t)(((uint64_t)slot + 1) & mask);
            if (counts[slot] == 0) {
                keys[slot] = x;
                used[n_used++] = slot;
            }
            counts[slot]++;
        }
        for (int64_t j = 0; j < n_used; j++) {
            int64_t slot = used[j];
            distinct[j] = keys[slot];
            weights[j] = wot[counts[slot]];
            counts[slot] = 0;
        }
        o[doc] = votes(distinct, weights, 0, n_used);
    }
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    free(keys), free(distinct), free(counts), free(used), free(weights);
    arr_release(&h), arr_release(&off), arr_release(&wt), arr_release(&out);
    return res;
}

static PyMethodDef methods[] = {
    {"simhash_votes", simhash_votes, METH_VARARGS,
     "simhash_votes(hashes, weights, offsets): the SimHash of each document (uint64)."},
    {"tf_simhash", tf_simhash, METH_VARARGS,
     "tf_simhash(hashes, offsets, weight_of_tf): the SimHash of each document's distinct "
     "values weighted by their count (uint64)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_simhash_loops, methods, "Compiled form of neardup.simhash_loops.")
