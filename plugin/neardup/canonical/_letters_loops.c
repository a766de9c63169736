/* The compiled form of neardup.canonical.letters_loops: tokens hashed as they are found,
 * numbers and stop words dropped, one map per code point, the classes of characters a text
 * holds, and where a mark may compose. */
#include "loops.h"

#define LOOKUP(table, n, c) ((Py_ssize_t)(c) < (n) ? (table)[c] : 0)

static int bounds_ok(const int64_t *b, Py_ssize_t nb, Py_ssize_t n) {
    for (Py_ssize_t d = 0; d + 1 < nb; d++)
        if (b[d] < 0 || b[d + 1] < b[d] || b[d + 1] > n) {
            PyErr_SetString(PyExc_IndexError, "bounds lie outside the code points");
            return 0;
        }
    return 1;
}

static PyObject *token_hashes(PyObject *self, PyObject *args) {
    PyObject *oc, *ot, *odg, *ob, *oseed;
    if (!PyArg_ParseTuple(args, "OOOOO", &oc, &ot, &odg, &ob, &oseed)) return NULL;
    Arr cps = ARR_INIT, tab = ARR_INIT, dig = ARR_INIT, bnd = ARR_INIT;
    Arr h = ARR_INIT, num = ARR_INIT, doc = ARR_INIT;
    int64_t *starts = NULL, *ends = NULL;
    uint64_t seed;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(ot, "bool", &tab) < 0 ||
        arr_in(odg, "bool", &dig) < 0 || arr_in(ob, "int64", &bnd) < 0 || u64_of(oseed, &seed) < 0)
        goto done;
    Py_ssize_t n = cps.n;
    const uint32_t *c = cps.data;
    const uint8_t *table = tab.data, *digits = dig.data;
    const int64_t *bounds = bnd.data;
    starts = nd_malloc(sizeof(int64_t) * (size_t)(n / 2 + 2));
    ends = nd_malloc(sizeof(int64_t) * (size_t)(n / 2 + 2));
    if (!starts || !ends) goto done;
    int64_t ks = 0, ke = 0, prev = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) { /* runs found without a branch on where they are */
        int64_t cur = LOOKUP(table, tab.n, c[i]) != 0;
        starts[ks] = i;
        ks += cur & (1 - prev);
        ends[ke] = i;
        ke += prev & (1 - cur);
        prev = cur;
    }
    if (prev) ends[ke] = n;
    Py_END_ALLOW_THREADS
    if (arr_new("uint64", ks, -1, 0, &h) < 0 || arr_new("bool", ks, -1, 0, &num) < 0 ||
        arr_new("int64", ks, -1, 0, &doc) < 0)
        goto done;
    uint64_t *hs = h.data;
    uint8_t *number = num.data;
    int64_t *dc = doc.data;
    Py_BEGIN_ALLOW_THREADS
    int64_t d = 0;
    for (int64_t r = 0; r < ks; r++) {
        int64_t s = starts[r], e = ends[r];
        while (d + 1 < bnd.n && bounds[d + 1] <= s) d++;
        uint64_t acc = (uint64_t)c[s] ^ seed;
        int only = LOOKUP(digits, dig.n, c[s]) != 0;
        for (int64_t j = s + 1; j < e; j++) {
            acc = fmix64(acc * GOLDEN + (uint64_t)c[j]);
            only = only && LOOKUP(digits, dig.n, c[j]) != 0;
        }
        hs[r] = fmix64(acc ^ (uint64_t)(e - s));
        number[r] = (uint8_t)only;
        dc[r] = d;
    }
    Py_END_ALLOW_THREADS
    res = Py_BuildValue("(NNN)", arr_take(&h), arr_take(&num), arr_take(&doc));
done:
    free(starts), free(ends);
    arr_release(&cps), arr_release(&tab), arr_release(&dig), arr_release(&bnd);
    arr_release(&h), arr_release(&num), arr_release(&doc);
    return res;
}

/* Whether v is in the linear-probing table table[lo:hi] (2^b slots, free ones holding empty). */
static inline int member(uint64_t v, const uint64_t *table, int64_t lo, int64_t hi, uint64_t empty) {
    if (hi == lo || v == empty) return 0;
    uint64_t mask = (uint64_t)(hi - lo - 1), j = v & mask;
    for (;;) {
        uint64_t x = table[lo + (int64_t)j];
        if (x == v) return 1;
        if (x == empty) return 0;
        j = (j + 1) & mask;
    }
}

static PyObject *kept_tokens(PyObject *self, PyObject *args) {
    PyObject *oh, *onum, *odoc, *odrop, *ogrp, *otab, *ob, *oemp, *odocs;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &oh, &onum, &odoc, &odrop, &ogrp, &otab, &ob,
                          &oemp, &odocs))
        return NULL;
    Arr h = ARR_INIT, num = ARR_INIT, doc = ARR_INIT, grp = ARR_INIT, tab = ARR_INIT;
    Arr bnd = ARR_INIT, emp = ARR_INIT, counts = ARR_INIT;
    uint64_t *out = NULL;
    int64_t docs;
    PyObject *res = NULL;
    int drop = PyObject_IsTrue(odrop);
    if (drop < 0 || arr_in(oh, "uint64", &h) < 0 || arr_in(onum, "bool", &num) < 0 ||
        arr_in(odoc, "int64", &doc) < 0 || arr_in(ogrp, "int64", &grp) < 0 ||
        arr_in(otab, "uint64", &tab) < 0 || arr_in(ob, "int64", &bnd) < 0 ||
        arr_in(oemp, "uint64", &emp) < 0 || i64_of(odocs, &docs) < 0)
        goto done;
    const uint64_t *hs = h.data, *table = tab.data, *empties = emp.data;
    const uint8_t *number = num.data;
    const int64_t *dc = doc.data, *group = grp.data, *bounds = bnd.data;
    if (num.n < h.n || doc.n < h.n || docs < 0) {
        PyErr_SetString(PyExc_ValueError, "each token needs its number flag and text");
        goto done;
    }
    for (Py_ssize_t t = 0; t < h.n; t++)
        if (dc[t] < 0 || dc[t] >= docs || dc[t] >= grp.n) {
            PyErr_SetString(PyExc_IndexError, "a token's text is out of range");
            goto done;
        }
    for (Py_ssize_t g = 0; g < grp.n; g++)
        if (group[g] >= 0 && (group[g] + 1 >= bnd.n || group[g] >= emp.n ||
                              bounds[group[g]] < 0 || bounds[group[g] + 1] > tab.n)) {
            PyErr_SetString(PyExc_IndexError, "a text's set is out of range");
            goto done;
        }
    if (arr_new("int64", docs, -1, 1, &counts) < 0) goto done;
    if ((out = nd_malloc(sizeof(uint64_t) * (size_t)h.n)) == NULL) goto done;
    int64_t *cn = counts.data, k = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < h.n; t++) {
        if (drop && number[t]) continue;
        uint64_t v = hs[t];
        int64_t d = dc[t], g = group[d];
        if (g >= 0 && member(v, table, bounds[g], bounds[g + 1], empties[g])) continue;
        out[k++] = v;
        cn[d]++;
    }
    Py_END_ALLOW_THREADS
    PyObject *kept = arr_copy_of("uint64", out, k, sizeof(uint64_t));
    if (kept != NULL) res = Py_BuildValue("(NN)", kept, arr_take(&counts));
done:
    free(out);
    arr_release(&h), arr_release(&num), arr_release(&doc), arr_release(&grp);
    arr_release(&tab), arr_release(&bnd), arr_release(&emp), arr_release(&counts);
    return res;
}

static PyObject *map_code_points(PyObject *self, PyObject *args) {
    PyObject *oc, *ob, *ot;
    if (!PyArg_ParseTuple(args, "OOO", &oc, &ob, &ot)) return NULL;
    Arr cps = ARR_INIT, bnd = ARR_INIT, tab = ARR_INIT, out = ARR_INIT, ok = ARR_INIT;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(ob, "int64", &bnd) < 0 ||
        arr_in(ot, "int32", &tab) < 0)
        goto done;
    const uint32_t *c = cps.data;
    const int64_t *b = bnd.data;
    const int32_t *table = tab.data;
    Py_ssize_t nd = bnd.n - 1;
    if (nd < 0) {
        PyErr_SetString(PyExc_ValueError, "bounds need a first entry");
        goto done;
    }
    if (!bounds_ok(b, bnd.n, cps.n)) goto done;
    if (arr_new("uint32", cps.n, -1, 0, &out) < 0 || arr_new("bool", nd, -1, 0, &ok) < 0)
        goto done;
    uint32_t *o = out.data;
    uint8_t *okd = ok.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < nd; d++) {
        okd[d] = 1;
        for (int64_t i = b[d]; i < b[d + 1]; i++) {
            int32_t v = (Py_ssize_t)c[i] < tab.n ? table[c[i]] : -1;
            if (v < 0) {
                okd[d] = 0;
                break;
            }
            o[i] = (uint32_t)v;
        }
        if (!okd[d]) memcpy(o + b[d], c + b[d], sizeof(uint32_t) * (size_t)(b[d + 1] - b[d]));
    }
    Py_END_ALLOW_THREADS
    res = Py_BuildValue("(NN)", arr_take(&out), arr_take(&ok));
done:
    arr_release(&cps), arr_release(&bnd), arr_release(&tab), arr_release(&out), arr_release(&ok);
    return res;
}

static PyObject *or_flags(PyObject *self, PyObject *args) {
    PyObject *oc, *ob, *ot;
    if (!PyArg_ParseTuple(args, "OOO", &oc, &ob, &ot)) return NULL;
    Arr cps = ARR_INIT, bnd = ARR_INIT, tab = ARR_INIT, out = ARR_INIT;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(ob, "int64", &bnd) < 0 ||
        arr_in(ot, "uint8", &tab) < 0)
        goto done;
    const uint32_t *c = cps.data;
    const int64_t *b = bnd.data;
    const uint8_t *table = tab.data;
    Py_ssize_t nd = bnd.n - 1;
    if (nd < 0) {
        PyErr_SetString(PyExc_ValueError, "bounds need a first entry");
        goto done;
    }
    if (!bounds_ok(b, bnd.n, cps.n) || arr_new("uint8", nd, -1, 1, &out) < 0) goto done;
    uint8_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < nd; d++) {
        uint8_t acc = 0;
        for (int64_t i = b[d]; i < b[d + 1]; i++) acc |= LOOKUP(table, tab.n, c[i]);
        o[d] = acc;
    }
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&cps), arr_release(&bnd), arr_release(&tab), arr_release(&out);
    return res;
}

static PyObject *positions_in(PyObject *self, PyObject *args) {
    PyObject *oc, *ot;
    if (!PyArg_ParseTuple(args, "OO", &oc, &ot)) return NULL;
    Arr cps = ARR_INIT, tab = ARR_INIT;
    int64_t *out = NULL;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(ot, "bool", &tab) < 0) goto done;
    if ((out = nd_malloc(sizeof(int64_t) * (size_t)cps.n)) == NULL) goto done;
    const uint32_t *c = cps.data;
    const uint8_t *table = tab.data;
    int64_t k = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < cps.n; i++) {
        out[k] = i;
        k += LOOKUP(table, tab.n, c[i]) != 0;
    }
    Py_END_ALLOW_THREADS
    res = arr_copy_of("int64", out, k, sizeof(int64_t));
done:
    free(out);
    arr_release(&cps), arr_release(&tab);
    return res;
}

static PyObject *marks_may_compose(PyObject *self, PyObject *args) {
    PyObject *oc, *os, *oe, *ot, *om, *ocomb, *op;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &oc, &os, &oe, &ot, &om, &ocomb, &op)) return NULL;
    Arr cps = ARR_INIT, st = ARR_INIT, en = ARR_INIT, tab = ARR_INIT, pr = ARR_INIT;
    Arr out = ARR_INIT;
    int64_t mark, combining;
    PyObject *res = NULL;
    if (arr_in(oc, "uint32", &cps) < 0 || arr_in(os, "int64", &st) < 0 ||
        arr_in(oe, "int64", &en) < 0 || arr_in(ot, "uint8", &tab) < 0 ||
        i64_of(om, &mark) < 0 || i64_of(ocomb, &combining) < 0 || arr_in(op, "uint64", &pr) < 0)
        goto done;
    const uint32_t *c = cps.data;
    const int64_t *s = st.data, *e = en.data;
    const uint8_t *table = tab.data;
    const uint64_t *pairs = pr.data;
    if (en.n < st.n) {
        PyErr_SetString(PyExc_ValueError, "each start needs an end");
        goto done;
    }
    for (Py_ssize_t d = 0; d < st.n; d++)
        if (s[d] < 0 || e[d] > cps.n) {
            PyErr_SetString(PyExc_IndexError, "a text lies outside the code points");
            goto done;
        }
    if (arr_new("bool", st.n, -1, 1, &out) < 0) goto done;
    uint8_t *o = out.data;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < st.n; d++) {
        for (int64_t i = s[d] + 1; i < e[d]; i++) {
            if (!(LOOKUP(table, tab.n, c[i]) & mark)) continue;
            uint64_t key = ((uint64_t)c[i - 1] << 21) | (uint64_t)c[i];
            Py_ssize_t lo = 0, hi = pr.n; /* searchsorted, left */
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (pairs[mid] < key) lo = mid + 1;
                else hi = mid;
            }
            if ((LOOKUP(table, tab.n, c[i - 1]) & combining) || (lo < pr.n && pairs[lo] == key)) {
                o[d] = 1;
                break;
            }
        }
    }
    Py_END_ALLOW_THREADS
    res = arr_take(&out);
done:
    arr_release(&cps), arr_release(&st), arr_release(&en), arr_release(&tab), arr_release(&pr);
    arr_release(&out);
    return res;
}

static PyMethodDef methods[] = {
    {"token_hashes", token_hashes, METH_VARARGS,
     "token_hashes(cps, table, digits, bounds, seed): each run of table code points hashed; "
     "(hashes, all digits, text)."},
    {"kept_tokens", kept_tokens, METH_VARARGS,
     "kept_tokens(hashes, number, doc, drop_numbers, group, table, bounds, empties, docs): "
     "the tokens kept and the count per text."},
    {"map_code_points", map_code_points, METH_VARARGS,
     "map_code_points(cps, bounds, table): each code point mapped, per text or not at all; "
     "(code points, ok)."},
    {"or_flags", or_flags, METH_VARARGS,
     "or_flags(cps, bounds, table): per text, the or of the table over its code points."},
    {"positions_in", positions_in, METH_VARARGS,
     "positions_in(cps, table): the indices where the table holds."},
    {"marks_may_compose", marks_may_compose, METH_VARARGS,
     "marks_may_compose(cps, starts, ends, table, mark, combining, pairs): per text, whether "
     "a mark follows a combining character or its pair."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_letters_loops, methods, "Compiled form of neardup.canonical.letters_loops.")
