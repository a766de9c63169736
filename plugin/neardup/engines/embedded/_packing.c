/* The compiled form of neardup.engines.embedded.packing: the keys column, a batch at a time
 * (tags: 0 raw, 1 subset, 2 exact; the format in neardup.engines.embedded.keycolumn). */
#include "loops.h"

enum { RAW = 0, SUBSET = 1, EXACT = 2 };

/* Whether values[lo:lo+m] is strictly increasing and all among the sorted
 * shingles[s_lo:s_lo+n]; their positions there into at (a merge walk). */
static int subset_positions(const uint64_t *values, int64_t lo, int64_t m,
                            const uint64_t *shingles, int64_t s_lo, int64_t n, int64_t *at) {
    int64_t i = 0;
    for (int64_t j = 0; j < m; j++) {
        uint64_t v = values[lo + j];
        if (j && v <= values[lo + j - 1]) return 0;
        while (i < n && shingles[s_lo + i] < v) i++;
        if (i == n || shingles[s_lo + i] != v) return 0;
        at[j] = i;
    }
    return 1;
}

static PyObject *pack_keys(PyObject *self, PyObject *args) {
    PyObject *ov, *oo, *osh, *oso, *oex, *ohas;
    if (!PyArg_ParseTuple(args, "OOOOOO", &ov, &oo, &osh, &oso, &oex, &ohas)) return NULL;
    Arr val = ARR_INIT, off = ARR_INIT, sh = ARR_INIT, so = ARR_INIT, ex = ARR_INIT;
    Arr has = ARR_INIT, bnd = ARR_INIT;
    uint8_t *out = NULL;
    int64_t *at = NULL;
    PyObject *res = NULL;
    if (arr_in(ov, "uint64", &val) < 0 || arr_in(oo, "int64", &off) < 0 ||
        arr_in(osh, "uint64", &sh) < 0 || arr_in(oso, "int64", &so) < 0 ||
        arr_in(oex, "uint64", &ex) < 0 || arr_in(ohas, "bool", &has) < 0)
        goto done;
    if (off.view.ndim != 2) {
        PyErr_SetString(PyExc_ValueError, "the offsets must be a 2-d array (fields, documents + 1)");
        goto done;
    }
    Py_ssize_t n_fields = off.view.shape[0], width = off.view.shape[1], n_docs = so.n - 1;
    const int64_t *of = off.data, *sof = so.data;
    const uint64_t *values = val.data, *shingles = sh.data, *exact = ex.data;
    const uint8_t *has_exact = has.data;
    if (n_docs < 0 || width < n_docs + 1 || ex.n < n_docs || has.n < n_docs) {
        PyErr_SetString(PyExc_ValueError, "the offsets do not match the documents");
        goto done;
    }
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        if (sof[d] < 0 || sof[d + 1] < sof[d] || sof[d + 1] > sh.n) goto outside;
        for (Py_ssize_t f = 0; f < n_fields; f++) {
            int64_t lo = of[f * width + d], hi = of[f * width + d + 1];
            if (lo < 0 || hi < lo || hi > val.n) goto outside;
        }
    }
    size_t cap = (size_t)(n_fields * n_docs * 11 + 8 * val.n + n_fields * (sh.n / 8 + n_docs));
    if ((out = calloc(cap ? cap : 1, 1)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if ((at = nd_malloc(sizeof(int64_t) * (size_t)(val.n + 1))) == NULL) goto done;
    if (arr_new("int64", n_docs + 1, -1, 0, &bnd) < 0) goto done;
    int64_t *bounds = bnd.data, pos = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        bounds[d] = pos;
        int64_t s_lo = sof[d], n = sof[d + 1] - s_lo;
        for (Py_ssize_t f = 0; f < n_fields; f++) {
            int64_t lo = of[f * width + d], hi = of[f * width + d + 1], m = hi - lo;
            if (m == 1 && has_exact[d] && values[lo] == exact[d]) {
                out[pos++] = EXACT;
            } else if (m > 0 && (n + 7) / 8 < 8 * m &&
                       subset_positions(values, lo, m, shingles, s_lo, n, at)) {
                out[pos++] = SUBSET; /* a little-endian bitmap of the positions */
                for (int64_t j = 0; j < m; j++) out[pos + at[j] / 8] |= (uint8_t)(1 << (at[j] % 8));
                pos += (n + 7) / 8;
            } else {
                out[pos++] = RAW; /* a varint count, then the keys as little-endian uint64 */
                uint64_t c = (uint64_t)m;
                while (c > 0x7F) {
                    out[pos++] = (uint8_t)((c & 0x7F) | 0x80);
                    c >>= 7;
                }
                out[pos++] = (uint8_t)c;
                for (int64_t j = lo; j < hi; j++)
                    for (int byte = 0; byte < 8; byte++)
                        out[pos++] = (uint8_t)((values[j] >> (8 * byte)) & 0xFF);
            }
        }
    }
    bounds[n_docs] = pos;
    Py_END_ALLOW_THREADS
    PyObject *blob = arr_copy_of("uint8", out, pos, 1);
    if (blob != NULL) res = Py_BuildValue("(NN)", blob, arr_take(&bnd));
    goto done;
outside:
    PyErr_SetString(PyExc_IndexError, "offsets lie outside the values or shingles");
done:
    free(out), free(at);
    arr_release(&val), arr_release(&off), arr_release(&sh), arr_release(&so);
    arr_release(&ex), arr_release(&has), arr_release(&bnd);
    return res;
}

static PyMethodDef methods[] = {
    {"pack_keys", pack_keys, METH_VARARGS,
     "pack_keys(values, offsets, shingles, shingle_offsets, exact, has_exact): the keys "
     "column of each document; (bytes, bounds)."},
    {NULL, NULL, 0, NULL}};

NEARDUP_MODULE(_packing, methods, "Compiled form of neardup.engines.embedded.packing.")
