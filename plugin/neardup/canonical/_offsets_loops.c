/* The compiled form of neardup.canonical.offsets_loops: tokens found in turn in the stream
 * of piece tokens. */
#include "loops.h"

/* Whether the n code points at s equal those at t. */
static inline int same(const uint32_t *s, const uint32_t *t, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        if (s[k] != t[k]) return 0;
    return 1;
}

static PyObject *find_tokens(PyObject *self, PyObject *args) {
    PyObject *os, *oa, *ow, *owa, *owin;
    if (!PyArg_ParseTuple(args, "OOOOO", &os, &oa, &ow, &owa, &owin)) return NULL;
    Arr str = ARR_INIT, ats = ARR_INIT, wds = ARR_INIT, wat = ARR_INIT;
    Arr fnd = ARR_INIT, from = ARR_INIT;
    int64_t window;
    PyObject *res = NULL;
    if (arr_in(os, "uint32", &str) < 0 || arr_in(oa, "int64", &ats) < 0 ||
        arr_in(ow, "uint32", &wds) < 0 || arr_in(owa, "int64", &wat) < 0 ||
        i64_of(owin, &window) < 0)
        goto done;
    const uint32_t *s = str.data, *w = wds.data;
    const int64_t *at = ats.data, *wa = wat.data;
    const int64_t size = str.n, n_parts = ats.n;
    const Py_ssize_t n_words = wat.n - 1;
    if (n_words < 0 || window < 0) {
        PyErr_SetString(PyExc_ValueError, "word offsets need a first entry, window >= 0");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_words; i++)
        if (wa[i] < 0 || wa[i + 1] < wa[i] || wa[i + 1] > wds.n) {
            PyErr_SetString(PyExc_IndexError, "word offsets lie outside the words");
            goto done;
        }
    if (arr_new("int64", n_words, -1, 0, &fnd) < 0 || arr_new("int64", n_words, -1, 0, &from) < 0)
        goto done;
    int64_t *found = fnd.data, *looked_from = from.data;
    Py_BEGIN_ALLOW_THREADS
    int64_t cursor = 0, j = 0; /* j: the first piece token starting at or after the cursor */
    for (Py_ssize_t i = 0; i < n_words; i++) {
        const uint32_t *t = w + wa[i];
        const int64_t n = wa[i + 1] - wa[i];
        int64_t a = -1;
        looked_from[i] = cursor;
        while (j < n_parts && at[j] < cursor) j++;
        if (n > 0) {
            if (cursor + n <= size && same(s + cursor, t, n)) {
                a = cursor;
            } else {
                int64_t first = -1, k = j;
                int64_t end = cursor + window + n < size ? cursor + window + n : size;
                for (int64_t p = cursor; p + n <= end; p++) {
                    if (s[p] != t[0] || !same(s + p, t, n)) continue;
                    if (first < 0) first = p;
                    while (k < n_parts && at[k] < p) k++;
                    if (k < n_parts && at[k] == p) {
                        a = p;
                        break;
                    }
                }
                if (a < 0) a = first;
            }
        }
        found[i] = a;
        if (a >= 0) cursor = a + n;
    }
    Py_END_ALLOW_THREADS
    res = Py_BuildValue("(NN)", arr_take(&fnd), arr_take(&from));
done:
    arr_release(&str), arr_release(&ats), arr_release(&wds), arr_release(&wat);
    arr_release(&fnd), arr_release(&from);
    return res;
}

static PyMethodDef methods[] = {
    {"find_tokens", find_tokens, METH_VARARGS,
     "find_tokens(stream, at, words, word_at, window): (found, cursor) of each word, in turn "
     "(neardup.canonical.offsets_loops)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_offsets_loops, methods, "Compiled form of neardup.canonical.offsets_loops.")
