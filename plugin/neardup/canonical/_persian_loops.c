/* The compiled form of neardup.canonical.persian_loops: drop_marks, the punctuation step and
 * the Persian steps as one loop over the characters, many texts a call. Each function below
 * is the C of the Python function of the same name there, which states the steps. The
 * code-point ranges come from neardup.canonical.ranges when the module loads. */
#include "loops.h"

enum { WORD = 1, MARK = 2, ARABIC = 4, OTHER = 8 };
#define ZWNJ 0x200C
#define SPACE 32
#define NONE (-2)

typedef struct {
    int64_t lo, hi;
} Range;
static Range AB, FA, DIGIT, FA_SCRIPT[8], OTHER_LETTERS[8];
static int n_fa_script, n_other_letters;

/* The tables of one call. */
typedef struct {
    const uint8_t *classes, *space, *first, *second;
    const int32_t *letter_map, *late;
    Py_ssize_t n_classes, n_space, n_letter_map, n_late;
    int step, marks;
} Tables;

/* The output, grown as needed. */
typedef struct {
    uint32_t *buf;
    int64_t cap;
} Out;

static inline int in_range(int64_t c, Range r) { return r.lo <= c && c <= r.hi; }

static inline int within(int64_t c, const Range *ranges, int n) {
    for (int i = 0; i < n; i++)
        if (ranges[i].lo <= c && c <= ranges[i].hi) return 1;
    return 0;
}

static inline uint8_t cls(const Tables *t, int64_t c) {
    return c >= 0 && c < t->n_classes ? t->classes[c] : 0;
}

static inline int64_t run_end(const uint32_t *a, int64_t n, int64_t i) {
    int64_t j = i + 1;
    while (j < n && a[j] == a[i]) j++;
    return j;
}

/* The punctuation step of src, written to out from k; where it ends. */
static int64_t punctuation(const uint32_t *src, int64_t n, const Tables *t, uint32_t *out, int64_t k) {
    int64_t i = 0;
    while (i < n) {
        int64_t c = src[i], j = i + 1;
        if (c == ZWNJ) {
            j = run_end(src, n, i);
            if (i > 0 && in_range(src[i - 1], AB) && j < n && in_range(src[j], AB)) {
                if (j - i == 1) {
                    out[k] = (uint32_t)c;
                } else {
                    out[k] = SPACE;
                    out[k + 1] = SPACE;
                    k++;
                }
            } else {
                out[k] = SPACE;
            }
        } else if (c == 95) {
            j = run_end(src, n, i);
            out[k] = SPACE;
        } else if (!(cls(t, c) & WORD)) {
            while (j < n && src[j] != ZWNJ && src[j] != 95 && !(cls(t, src[j]) & WORD)) j++;
            out[k] = SPACE;
        } else {
            out[k] = (uint32_t)c;
        }
        k++;
        i = j;
    }
    return k;
}

/* The punctuation step at x = src[*i - 1], not a word character; *i moved past its run. */
static inline int64_t punctuation_at(const uint32_t *src, int64_t n, int64_t x, int64_t *i,
                                     const Tables *t) {
    if (x == ZWNJ || x == 95) {
        int64_t j = run_end(src, n, *i - 1);
        int kept = x == ZWNJ && j == *i && *i > 1 && j < n;
        kept = kept && in_range(src[*i - 2], AB) && in_range(src[j], AB);
        x = kept ? x : SPACE;
        *i = j;
    } else {
        while (*i < n && src[*i] != ZWNJ && src[*i] != 95 && !(cls(t, src[*i]) & WORD)) (*i)++;
        x = SPACE;
    }
    return x;
}

static inline int64_t let_out(int64_t held, int64_t nxt, const Tables *t, uint32_t *out, int64_t k) {
    if (held < 0) return k;
    out[k] = SPACE;
    int64_t a = held < 0x700 ? held : 0x700, b = nxt < 0 ? 0 : nxt < 0x700 ? nxt : 0x700;
    k += (t->first[a] & t->second[b]) != 0;
    out[k] = (uint32_t)held;
    return k + 1;
}

static inline int64_t spaces_out(uint32_t *out, int64_t k, int64_t s) {
    for (int64_t q = 0; q < s; q++) out[k++] = SPACE;
    return k;
}

/* normalize_persian of src[lo:hi] (after the punctuation step with punct), written to out
 * from k: where it ends, or -1 - k where a character maps to -2 in the letter map. */
static int64_t stream(const uint32_t *src, int64_t n, int64_t lo, int64_t hi, int punct,
                      const Tables *t, uint32_t *out, int64_t k) {
    int was_space = 0;
    int64_t zwnj = 0, before_zwnj = -1;
    int in_digits = 0;
    int64_t spaces = 0, before_spaces = -1;
    int64_t prev = -1, run = 0, held = -1;
    int64_t i = lo;
    while (i < hi) {
        int64_t x = src[i++];
        if (punct && !(cls(t, x) & WORD)) x = punctuation_at(src, n, x, &i, t);
        int sp = x < t->n_space && t->space[x]; /* step 1 */
        if (sp && was_space) continue;
        was_space = sp;
        int64_t c = sp ? SPACE : x < 0x10000 && x < t->n_letter_map ? t->letter_map[x] : x;
        if (c == -2) return -1 - k;
        if (c == ZWNJ || c == -1) {
            zwnj += c == ZWNJ;
            continue;
        }
        int64_t s = c == SPACE;
        c = s ? NONE : c;
        int between = s == 0 && in_range(before_zwnj, AB) && in_range(c, AB); /* step 2 */
        s += zwnj * !between;
        zwnj = 0, before_zwnj = c >= 0 ? c : SPACE;
        int ends = s > 0 && in_digits; /* step 3 */
        s += ends;
        in_digits = in_digits && !ends;
        if (c >= 0) {
            int digit = in_range(c, DIGIT);
            s += digit != in_digits;
            in_digits = digit;
        }
        spaces += s;
        if (c < 0) continue;
        s = spaces && in_range(before_spaces, FA) && in_range(c, FA) ? 0 : spaces; /* step 4 */
        spaces = 0, before_spaces = c;
        run = c == prev && !s ? run + 1 : 1; /* step 5 */
        prev = c;
        if (run > 2 && in_range(c, FA)) continue;
        k = let_out(held, s ? SPACE : c, t, out, k); /* step 6 */
        k = spaces_out(out, k, s);
        held = c;
    }
    k = let_out(held, SPACE, t, out, k);
    return spaces_out(out, k, zwnj + in_digits + spaces);
}

/* The Persian steps on each Persian run of p, the rest as it is. */
static int64_t by_runs(const uint32_t *p, int64_t n, const Tables *t, uint32_t *out, int64_t k) {
    int64_t i = 0;
    while (i < n) {
        if (!within(p[i], FA_SCRIPT, n_fa_script)) {
            out[k++] = p[i++];
            continue;
        }
        int64_t last = i, j = i;
        while (j < n && !within(p[j], OTHER_LETTERS, n_other_letters)) {
            if (within(p[j], FA_SCRIPT, n_fa_script)) last = j;
            j++;
        }
        k = stream(p, n, i, last + 1, 0, t, out, k);
        if (k < 0) return k;
        i = last + 1;
    }
    return k;
}

/* The pass over one text, written to out from k: where it ends, or < 0 where a character
 * maps to -2. kept and punct are scratch space of the text's length + 1. */
static int64_t text_into(const uint32_t *src, int64_t n, const Tables *t, uint32_t *kept,
                         uint32_t *punct, uint32_t *out, int64_t k) {
    uint8_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc |= cls(t, src[i]);
    if (t->marks && (acc & MARK)) {
        int64_t m = 0;
        acc = 0;
        for (int64_t i = 0; i < n; i++) {
            uint8_t c = cls(t, src[i]);
            kept[m] = src[i];
            int keep = (c & MARK) == 0;
            acc |= keep ? c : 0;
            m += keep;
        }
        src = kept, n = m;
    }
    if (!t->step) return stream(src, n, 0, n, 0, t, out, k);
    if (!(acc & ARABIC)) return punctuation(src, n, t, out, k);
    if (!(acc & OTHER)) return stream(src, n, 0, n, 1, t, out, k);
    int64_t m = punctuation(src, n, t, punct, 0);
    return by_runs(punct, m, t, out, k);
}

/* Each out[lo:hi] through late: 1, or 0 where one maps to -1. */
static int late_in_place(uint32_t *out, int64_t lo, int64_t hi, const Tables *t) {
    for (int64_t i = lo; i < hi; i++) {
        int32_t v = out[i] < t->n_late ? t->late[out[i]] : -1;
        if (v < 0) return 0;
        out[i] = (uint32_t)v;
    }
    return 1;
}

static PyObject *persian_pieces_many(PyObject *self, PyObject *args) {
    PyObject *oc, *ob, *ocl, *olm, *osp, *ofi, *ose, *ostep, *omarks, *olate;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &oc, &ob, &ocl, &olm, &osp, &ofi, &ose, &ostep,
                          &omarks, &olate))
        return NULL;
    Arr cps = ARR_INIT, bnd = ARR_INIT, cl = ARR_INIT, lm = ARR_INIT, sp = ARR_INIT;
    Arr fi = ARR_INIT, se = ARR_INIT, la = ARR_INIT, at = ARR_INIT, st = ARR_INIT;
    uint32_t *out = NULL, *kept = NULL, *punct = NULL;
    PyObject *res = NULL;
    Tables t;
    t.step = PyObject_IsTrue(ostep), t.marks = PyObject_IsTrue(omarks);
    if (t.step < 0 || t.marks < 0 || arr_in(oc, "uint32", &cps) < 0 ||
        arr_in(ob, "int64", &bnd) < 0 || arr_in(ocl, "uint8", &cl) < 0 ||
        arr_in(olm, "int32", &lm) < 0 || arr_in(osp, "bool", &sp) < 0 ||
        arr_in(ofi, "bool", &fi) < 0 || arr_in(ose, "bool", &se) < 0 ||
        arr_in(olate, "int32", &la) < 0)
        goto done;
    if (fi.n < 0x701 || se.n < 0x701) {
        PyErr_SetString(PyExc_ValueError, "the anchor tables need 0x701 entries");
        goto done;
    }
    t.classes = cl.data, t.space = sp.data, t.first = fi.data, t.second = se.data;
    t.letter_map = lm.data, t.late = la.data;
    t.n_classes = cl.n, t.n_space = sp.n, t.n_letter_map = lm.n, t.n_late = la.n;
    const uint32_t *c = cps.data;
    const int64_t *b = bnd.data;
    Py_ssize_t nd = bnd.n - 1;
    if (nd < 0) {
        PyErr_SetString(PyExc_ValueError, "bounds need a first entry");
        goto done;
    }
    int64_t longest = 0;
    for (Py_ssize_t d = 0; d < nd; d++) {
        if (b[d] < 0 || b[d + 1] < b[d] || b[d + 1] > cps.n) {
            PyErr_SetString(PyExc_IndexError, "bounds lie outside the code points");
            goto done;
        }
        if (b[d + 1] - b[d] > longest) longest = b[d + 1] - b[d];
    }
    if (arr_new("int64", nd + 1, -1, 1, &at) < 0 || arr_new("int64", nd, -1, 1, &st) < 0) goto done;
    int64_t cap = cps.n + cps.n / 2 + 16;
    out = nd_malloc(sizeof(uint32_t) * (size_t)cap);
    kept = nd_malloc(sizeof(uint32_t) * (size_t)(longest + 1));
    punct = nd_malloc(sizeof(uint32_t) * (size_t)(longest + 1));
    if (!out || !kept || !punct) goto done;
    int64_t *ats = at.data, *status = st.data, k = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < nd; d++) {
        const uint32_t *src = c + b[d];
        int64_t n = b[d + 1] - b[d];
        int64_t need = k + 6 * n + 16; /* a text comes out at most 4 times as long, 2 more a run */
        if (need > cap) {
            int64_t bigger = 2 * cap > need ? 2 * cap : need;
            uint32_t *grown = realloc(out, sizeof(uint32_t) * (size_t)bigger);
            if (grown == NULL) {
                failed = 1;
                break;
            }
            out = grown, cap = bigger;
        }
        int64_t end = text_into(src, n, &t, kept, punct, out, k);
        status[d] = end >= 0;
        if (end >= 0 && t.n_late) {
            if (late_in_place(out, k, end, &t))
                status[d] = 2;
            else /* the map stopped part way: the text again */
                end = text_into(src, n, &t, kept, punct, out, k);
        }
        k = end >= 0 ? end : k;
        out[k++] = SPACE; /* each text followed by a space */
        ats[d + 1] = k;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *made = arr_copy_of("uint32", out, k, sizeof(uint32_t));
    if (made != NULL) res = Py_BuildValue("(NNN)", made, arr_take(&at), arr_take(&st));
done:
    free(out), free(kept), free(punct);
    arr_release(&cps), arr_release(&bnd), arr_release(&cl), arr_release(&lm), arr_release(&sp);
    arr_release(&fi), arr_release(&se), arr_release(&la), arr_release(&at), arr_release(&st);
    return res;
}

/* ranges.<name> (a (lo, hi) tuple, or a tuple of them) into out; how many. */
static int read_ranges(PyObject *ranges, const char *name, Range *out, int most) {
    PyObject *v = PyObject_GetAttrString(ranges, name);
    if (v == NULL) return -1;
    int n = -1;
    if (PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 2 && PyLong_Check(PyTuple_GET_ITEM(v, 0))) {
        out[0].lo = PyLong_AsLongLong(PyTuple_GET_ITEM(v, 0));
        out[0].hi = PyLong_AsLongLong(PyTuple_GET_ITEM(v, 1));
        n = 1;
    } else if (PyTuple_Check(v) && PyTuple_GET_SIZE(v) <= most) {
        n = (int)PyTuple_GET_SIZE(v);
        for (int i = 0; i < n; i++) {
            PyObject *r = PyTuple_GET_ITEM(v, i);
            if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
                n = -1;
                break;
            }
            out[i].lo = PyLong_AsLongLong(PyTuple_GET_ITEM(r, 0));
            out[i].hi = PyLong_AsLongLong(PyTuple_GET_ITEM(r, 1));
        }
    }
    Py_DECREF(v);
    if (n < 0 && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "ranges.%s: not ranges", name);
    return PyErr_Occurred() ? -1 : n;
}

static PyMethodDef methods[] = {
    {"persian_pieces_many", persian_pieces_many, METH_VARARGS,
     "persian_pieces_many(cps, bounds, classes, letter_map, space, first, second, step, marks, "
     "late): the Persian pass over each text; (outputs, where each starts, status)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_persian_loops",
                                        "Compiled form of neardup.canonical.persian_loops.",
                                        -1, methods};

PyMODINIT_FUNC PyInit__persian_loops(void) {
    PyObject *ranges = PyImport_ImportModule("neardup.canonical.ranges");
    if (ranges == NULL) return NULL;
    int ok = read_ranges(ranges, "ARABIC_BLOCK", &AB, 1) == 1 &&
             read_ranges(ranges, "PERSIAN_LETTERS", &FA, 1) == 1 &&
             read_ranges(ranges, "PERSIAN_DIGITS", &DIGIT, 1) == 1 &&
             (n_fa_script = read_ranges(ranges, "FA_SCRIPT", FA_SCRIPT, 8)) >= 0 &&
             (n_other_letters = read_ranges(ranges, "OTHER_LETTERS", OTHER_LETTERS, 8)) >= 0;
    Py_DECREF(ranges);
    if (!ok) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "WORD", WORD) < 0 || PyModule_AddIntConstant(m, "MARK", MARK) < 0 ||
        PyModule_AddIntConstant(m, "ARABIC", ARABIC) < 0 ||
        PyModule_AddIntConstant(m, "OTHER", OTHER) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
