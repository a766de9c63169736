/* The compiled form of neardup.sampling_loops: winnowing (Schleimer, Wilkerson and Aiken 2003). */
#include "loops.h"

#define WINNOW_BODY(T)                                                                  \
    {                                                                                   \
        const T *seq = (const T *)sq.data;                                              \
        for (Py_ssize_t d = 0; d < n_docs; d++) {                                       \
            int64_t lo = of[d], hi = of[d + 1];                                         \
            int64_t w = window < hi - lo ? window : hi - lo;                            \
            int64_t first = k, m = lo - 1, end = hi > lo ? hi - w + 1 : lo;             \
            for (int64_t i = lo; i < end; i++) {                                        \
                int64_t e = i + w - 1;                                                  \
                if (m < i) {                                                            \
                    m = i;                                                              \
                    for (int64_t j = i + 1; j < i + w; j++) m = seq[j] <= seq[m] ? j : m; \
                } else if (seq[e] <= seq[m]) {                                          \
                    m = e;                                                              \
                } else {                                                                \
                    continue;                                                           \
                }                                                                       \
                pos[k++] = m;                                                           \
            }                                                                           \
            cn[d] = k - first;                                                          \
        }                                                                               \
    }

static PyObject *winnow(PyObject *self, PyObject *args) {
    PyObject *os, *oo, *ow;
    if (!PyArg_ParseTuple(args, "OOO", &os, &oo, &ow)) return NULL;
    Arr sq = ARR_INIT, off = ARR_INIT, counts = ARR_INIT;
    int64_t *pos = NULL, window;
    PyObject *res = NULL;
    Py_ssize_t size = 0;
    char f = format_of(os, &size);
    int is_signed = f == 'b' || f == 'h' || f == 'i' || f == 'l' || f == 'q';
    /* values compare as they are: signed as int64, unsigned as uint64 */
    if (arr_in(os, is_signed ? "int64" : "uint64", &sq) < 0 || arr_in(oo, "int64", &off) < 0 ||
        i64_of(ow, &window) < 0)
        goto done;
    Py_ssize_t n_docs = off.n - 1;
    const int64_t *of = off.data;
    if (n_docs < 0 || window < 1) {
        PyErr_SetString(PyExc_ValueError, "offsets need a first entry and the window >= 1");
        goto done;
    }
    for (Py_ssize_t d = 0; d < n_docs; d++)
        if (of[d] < 0 || of[d + 1] < of[d] || of[d + 1] > sq.n) {
            PyErr_SetString(PyExc_IndexError, "offsets lie outside the sequence");
            goto done;
        }
    if (arr_new("int64", n_docs, -1, 1, &counts) < 0) goto done;
    if ((pos = nd_malloc(sizeof(int64_t) * (size_t)sq.n)) == NULL) goto done;
    int64_t *cn = counts.data, k = 0;
    Py_BEGIN_ALLOW_THREADS
    if (is_signed)
        WINNOW_BODY(int64_t)
    else
        WINNOW_BODY(uint64_t)
    Py_END_ALLOW_THREADS
    PyObject *positions = arr_copy_of("int64", pos, k, sizeof(int64_t));
    if (positions != NULL) res = Py_BuildValue("(NN)", positions, arr_take(&counts));
done:
    free(pos);
    arr_release(&sq), arr_release(&off), arr_release(&counts);
    return res;
}

static PyMethodDef methods[] = {
    {"winnow", winnow, METH_VARARGS,
     "winnow(seq, offsets, window): the positions of the rightmost minimum of every window, "
     "each once; (positions, counts)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_sampling_loops, methods, "Compiled form of neardup.sampling_loops.")
