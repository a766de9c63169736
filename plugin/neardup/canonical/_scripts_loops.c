/* The compiled form of neardup.canonical.scripts_loops: letters counted by script. */
#include "loops.h"

static PyObject *script_counts(PyObject *self, PyObject *args) {
    PyObject *oc, *ob, *ol, *os, *osample, *ocodes;
    if (!PyArg_ParseTuple(args, "OOOOOO", &oc, &ob, &ol, &os, &osample, &ocodes)) return NULL;
    Arr cps = ARR_INIT, bnd = ARR_INIT, let = ARR_INIT, scr = ARR_INIT, out = ARR_INIT;
    int64_t sample, codes;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(ob, "int64", &bnd) < 0 ||
        arr_in(ol, "bool", &let) < 0 || arr_in(os, "uint8", &scr) < 0 ||
        i64_of(osample, &sample) < 0 || i64_of(ocodes, &codes) < 0)
        goto done;
    const uint32_t *c = cps.data;
    const int64_t *b = bnd.data;
    const uint8_t *letter = let.data, *script = scr.data;
    Py_ssize_t nd = bnd.n - 1;
    if (nd < 0 || codes < 1) {
        PyErr_SetString(PyExc_ValueError, "bounds need a first entry, codes >= 1");
        goto done;
    }
    for (Py_ssize_t d = 0; d < nd; d++)
        if (b[d] < 0 || b[d + 1] < b[d] || b[d + 1] > cps.n) {
            PyErr_SetString(PyExc_IndexError, "bounds lie outside the code points");
            goto done;
        }
    for (Py_ssize_t i = 0; i < cps.n; i++)
        if ((Py_ssize_t)c[i] >= let.n || (Py_ssize_t)c[i] >= scr.n ||
            (letter[c[i]] && script[c[i]] >= codes)) {
            PyErr_SetString(PyExc_IndexError, "a code point beyond the tables");
            goto done;
        }
    if (arr_new("int64", nd, codes, 1, &out) < 0) goto done;
    int64_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < nd; d++) {
        int64_t *row = o + d * codes;
        if (b[d + 1] - b[d] <= sample) { /* every letter counts: no branch on letters */
            for (int64_t i = b[d]; i < b[d + 1]; i++)
                if (script[c[i]] < codes) row[script[c[i]]] += letter[c[i]] != 0;
            continue;
        }
        int64_t need = sample;
        for (int64_t i = b[d]; i < b[d + 1]; i++) {
            if (!letter[c[i]]) continue;
            row[script[c[i]]]++;
            if (--need == 0) break;
        }
    }
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&cps), arr_release(&bnd), arr_release(&let), arr_release(&scr), arr_release(&out);
    return res;
}

static PyMethodDef methods[] = {
    {"script_counts", script_counts, METH_VARARGS,
     "script_counts(cps, bounds, letter, script, sample, codes): per text, its first sample "
     "letters counted by script, (D, codes)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_scripts_loops, methods, "Compiled form of neardup.canonical.scripts_loops.")
