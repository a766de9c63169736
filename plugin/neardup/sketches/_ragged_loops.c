/* The compiled form of neardup.ragged_loops: each document's sorted distinct values. */
#include "loops.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* ``values`` into ``seg`` by their top b bits (2^b >= n), or sorted where a bucket would
 * hold more than 32 (then 1 is returned: no insertion sort needed). */
static int bucketed(const uint64_t *values, uint64_t *seg, int64_t n, int64_t *starts) {
    int b = 1;
    while (((int64_t)1 << b) < n) b++;
    int shift = 64 - b;
    int64_t nb = (int64_t)1 << b;
    memset(starts, 0, sizeof(int64_t) * (size_t)(nb + 1));
    for (int64_t i = 0; i < n; i++) starts[(values[i] >> shift) + 1]++;
    int64_t most = 0;
    for (int64_t j = 0; j < nb; j++) {
        if (starts[j + 1] > most) most = starts[j + 1];
        starts[j + 1] += starts[j];
    }
    if (most > 32) { /* not hashes: a comparison sort */
        qsort(seg, (size_t)n, sizeof(uint64_t), cmp_u64);
        return 1;
    }
    for (int64_t i = 0; i < n; i++) seg[starts[values[i] >> shift]++] = values[i];
    return 0;
}

static PyObject *segment_unique(PyObject *self, PyObject *args) {
    PyObject *ov, *oo;
    if (!PyArg_ParseTuple(args, "OO", &ov, &oo)) return NULL;
    Arr val = ARR_INIT, off = ARR_INIT, noff = ARR_INIT;
    uint64_t *out = NULL;
    int64_t *starts = NULL;
    PyObject *res = NULL;
    if (arr_in(ov, "uint64", &val) < 0 || arr_in(oo, "int64", &off) < 0) goto done;
    Py_ssize_t n_docs = off.n - 1;
    const int64_t *of = off.data;
    const uint64_t *v = val.data;
    if (n_docs < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets need a first entry");
        goto done;
    }
    int64_t longest = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        if (of[d] < 0 || of[d + 1] < of[d] || of[d + 1] > val.n) {
            PyErr_SetString(PyExc_IndexError, "offsets lie outside the values");
            goto done;
        }
        if (of[d + 1] - of[d] > longest) longest = of[d + 1] - of[d];
    }
    if (arr_new("int64", n_docs + 1, -1, 1, &noff) < 0) goto done;
    if ((out = nd_malloc(sizeof(uint64_t) * (size_t)val.n)) == NULL) goto done;
    if ((starts = nd_malloc(sizeof(int64_t) * (size_t)(2 * longest + 2))) == NULL) goto done;
    int64_t *no = noff.data, k = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        int64_t lo = of[d], n = of[d + 1] - lo;
        uint64_t *seg = out + k;
        memcpy(seg, v + lo, sizeof(uint64_t) * (size_t)n);
        if (!(n > 16 && bucketed(v + lo, seg, n, starts))) {
            for (int64_t i = 1; i < n; i++) { /* insertion sort */
                uint64_t x = seg[i];
                int64_t j = i - 1;
                while (j >= 0 && seg[j] > x) {
                    seg[j + 1] = seg[j];
                    j--;
                }
                seg[j + 1] = x;
            }
        }
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            seg[m] = seg[i];
            m += (i == 0 || seg[i] != seg[m - 1]);
        }
        k += m;
        no[d + 1] = k;
    }
    Py_END_ALLOW_THREADS
    PyObject *values = arr_copy_of("uint64", out, k, sizeof(uint64_t));
    if (values != NULL) res = Py_BuildValue("(NN)", values, arr_take(&noff));
done:
    free(out), free(starts);
    arr_release(&val), arr_release(&off), arr_release(&noff);
    return res;
}

static PyMethodDef methods[] = {
    {"segment_unique", segment_unique, METH_VARARGS,
     "segment_unique(values, offsets): each document's sorted distinct values; (values, offsets)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_ragged_loops, methods, "Compiled form of neardup.ragged_loops.")
