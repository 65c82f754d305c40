/* The dict-run scan of haystack_irmetrics.core.inputs.prepare, in one C pass per query.
 *
 * Optional: the package builds it when a C compiler is there and falls back to the pure-Python
 * path otherwise (and whenever this returns False). It computes exactly what that path computes
 * (ranking.py's module docstring states the two orders); tests check both paths against each
 * other and against pytrec_eval and BEIR.
 *
 * It handles the common input only: dict runs and qrels, str ids (exact str), scores that are
 * finite floats (or ints within 2**53, exact as doubles). On anything else it returns False
 * before writing a result, and the Python path reads the input, raising its typed errors.
 * No Python code runs during the scan (exact str keys: no user __eq__ or __hash__), so the
 * dicts cannot change under it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h> /* isfinite, NAN: macros, no libm call */
#include <stdint.h>
#include <string.h>

/* Per-query working arrays, grown to the longest query. */
typedef struct {
    Py_ssize_t cap;
    float *s;        /* float32 scores: the trec order's key */
    double *d;       /* float64 scores: the stable order's key */
    PyObject **k;    /* doc ids (borrowed from the run dict) */
    Py_ssize_t *tie; /* members of one float32 tie group */
    Py_ssize_t *ord; /* a sorted order of the query's documents */
    Py_ssize_t *ord2;
    Py_ssize_t *tmp; /* merge sort buffer */
} Work;

static void work_free(Work *w) {
    PyMem_Free(w->s);
    PyMem_Free(w->d);
    PyMem_Free(w->k);
    PyMem_Free(w->tie);
    PyMem_Free(w->ord);
    PyMem_Free(w->ord2);
    PyMem_Free(w->tmp);
    memset(w, 0, sizeof *w);
}

static int work_grow(Work *w, Py_ssize_t m) {
    if (m <= w->cap && w->s != NULL) return 0;
    Py_ssize_t cap = m < 1024 ? 1024 : m;
    work_free(w);
    w->s = PyMem_Malloc(cap * sizeof(float));
    w->d = PyMem_Malloc(cap * sizeof(double));
    w->k = PyMem_Malloc(cap * sizeof(PyObject *));
    w->tie = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    w->ord = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    w->ord2 = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    w->tmp = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    if (!w->s || !w->d || !w->k || !w->tie || !w->ord || !w->ord2 || !w->tmp) {
        work_free(w);
        PyErr_NoMemory();
        return -1;
    }
    w->cap = cap;
    return 0;
}

#define EXACT_INT 9007199254740992LL /* 2**53: beyond it neighbouring ints share a double */

/* The double pytrec_eval reads and BEIR's sort compares; 0 when the value is one this scan takes. */
static int as_double(PyObject *v, double *out) {
    if (PyFloat_Check(v)) { /* a float subclass: its own value, as struct reads it */
        *out = PyFloat_AS_DOUBLE(v);
    } else if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || x >= EXACT_INT || x <= -EXACT_INT) return -1; /* BEIR compares such ints as ints */
        *out = (double)x;
    } else {
        return -1;
    }
    return isfinite(*out) ? 0 : -1;
}

static int same_str(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    if (PyUnicode_GET_LENGTH(a) != PyUnicode_GET_LENGTH(b)) return 0;
    return PyUnicode_Compare(a, b) == 0;
}

/* Orders as comparisons of document indices within one query. */
static int before_trec(const Work *w, Py_ssize_t a, Py_ssize_t b) {
    if (w->s[a] != w->s[b]) return w->s[a] > w->s[b];
    return PyUnicode_Compare(w->k[a], w->k[b]) > 0; /* ties: id descending, code-point (= UTF-8 byte) order */
}

static int before_stable(const Work *w, Py_ssize_t a, Py_ssize_t b) {
    if (w->d[a] != w->d[b]) return w->d[a] > w->d[b];
    return a < b; /* ties keep results order */
}

typedef int (*Before)(const Work *, Py_ssize_t, Py_ssize_t);

/* Bottom-up merge sort of ord[0..n) by `before` (stable; n log n comparisons at most). */
static void sort_by(const Work *w, Py_ssize_t *ord, Py_ssize_t n, Before before) {
    Py_ssize_t *src = ord, *dst = w->tmp;
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n;
            Py_ssize_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            Py_ssize_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = before(w, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        Py_ssize_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != ord) memcpy(ord, src, n * sizeof(Py_ssize_t));
}

/* Position of document e in ord[0..n) (sorted by `before`, a strict total order): its rank. */
static Py_ssize_t rank_in(const Work *w, const Py_ssize_t *ord, Py_ssize_t n, Py_ssize_t e, Before before) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (before(w, ord[mid], e)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (b->itemsize != itemsize || b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes", name, n, itemsize);
        return -1;
    }
    return 0;
}

/* Rank one query's judged documents. Returns 1 when done, 0 to fall back, -1 on a Python error. */
static int rank_query(Work *w, PyObject *run, PyObject *qrel, PyObject *qid, int drop, float *scores_out,
                      Py_ssize_t *n_written, int64_t *own_out, double *labels, double *found, int64_t *trec,
                      int64_t *stable, PyObject *pair_doc) {
    Py_ssize_t m_raw = PyDict_GET_SIZE(run);
    if (work_grow(w, m_raw) < 0) return -1;
    Py_ssize_t pos = 0, raw = 0, m = 0;
    PyObject *key, *value;
    *own_out = -1;
    while (PyDict_Next(run, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) return 0;
        if (drop && *own_out < 0 && same_str(key, qid)) { /* BEIR drops a query's own id */
            *own_out = raw++;
            continue;
        }
        double dv;
        if (as_double(value, &dv) < 0) return 0;
        w->s[m] = (float)dv; /* beyond float32's range: +-inf, as trec_eval stores it */
        w->d[m] = dv;
        w->k[m] = key;
        m++;
        raw++;
    }
    if (m) memcpy(scores_out, w->s, m * sizeof(float));
    *n_written = m;

    Py_ssize_t n_judged = PyDict_GET_SIZE(qrel);
    /* Few judged documents: one pass over the scores each. Many (beyond ~2 log2 m + 4): sort the
     * query once. The choice changes the cost only, never a rank. */
    Py_ssize_t bits = 0;
    for (size_t v = (size_t)m + 2; v; v >>= 1) bits++;
    int heavy = n_judged > 2 * bits + 4;
    int sorted_trec = 0, sorted_stable = 0;
    Py_ssize_t j = 0;
    pos = 0;
    while (PyDict_Next(qrel, &pos, &key, &value)) {
        /* Labels as the Python read takes them here: exact floats, ints within 2**53. */
        if (!PyUnicode_CheckExact(key) || (!PyFloat_CheckExact(value) && !PyLong_CheckExact(value)) ||
            as_double(value, labels + j) < 0)
            return 0;
        PyObject *hit = PyDict_GetItemWithError(run, key);
        if (hit == NULL && PyErr_Occurred()) return -1;
        if (hit == NULL || (drop && *own_out >= 0 && same_str(key, qid))) {
            found[j] = NAN;
            trec[j] = stable[j] = -1;
            j++;
            continue;
        }
        double dv;
        if (as_double(hit, &dv) < 0) return 0; /* read above already; kept for safety */
        volatile float rounded = (float)dv; /* through memory: a float, even where registers hold more (x87) */
        const float t = rounded;
        found[j] = dv;
        if (PyList_Append(pair_doc, key) < 0) return -1;
        if (heavy) {
            if (!sorted_trec) {
                for (Py_ssize_t e = 0; e < m; e++) w->ord[e] = e;
                sort_by(w, w->ord, m, before_trec);
                sorted_trec = 1;
            }
            /* The judged document's index: where it sorts among the query's documents. */
            Py_ssize_t lo = 0, hi = m;
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                Py_ssize_t e = w->ord[mid];
                int earlier = w->s[e] != t ? w->s[e] > t : PyUnicode_Compare(w->k[e], key) > 0;
                if (earlier) lo = mid + 1;
                else hi = mid;
            }
            if (lo >= m || !same_str(w->k[w->ord[lo]], key)) {
                PyErr_SetString(PyExc_RuntimeError, "judged document not found in its query's order");
                return -1;
            }
            Py_ssize_t self = w->ord[lo];
            trec[j] = lo;
            if (!sorted_stable) {
                for (Py_ssize_t e = 0; e < m; e++) w->ord2[e] = e;
                sort_by(w, w->ord2, m, before_stable);
                sorted_stable = 1;
            }
            stable[j] = rank_in(w, w->ord2, m, self, before_stable);
            j++;
            continue;
        }
        Py_ssize_t greater = 0, n_tie = 0;
        for (Py_ssize_t e = 0; e < m; e++) {
            if (w->s[e] > t) greater++;
            else if (w->s[e] == t) w->tie[n_tie++] = e; /* -0.0 == 0.0, inf == inf */
        }
        Py_ssize_t by_id = 0, by_score = 0;
        if (n_tie > 1) { /* a float32 tie group: ordered by id (trec) or float64 then position (stable) */
            Py_ssize_t self = -1;
            for (Py_ssize_t i = 0; i < n_tie && self < 0; i++)
                if (same_str(w->k[w->tie[i]], key)) self = w->tie[i];
            if (self < 0) {
                PyErr_SetString(PyExc_RuntimeError, "judged document not found in its tie group");
                return -1;
            }
            for (Py_ssize_t i = 0; i < n_tie; i++) {
                Py_ssize_t e = w->tie[i];
                if (e == self) continue;
                by_id += PyUnicode_Compare(w->k[e], key) > 0;
                by_score += before_stable(w, e, self);
            }
        }
        trec[j] = greater + by_id;
        stable[j] = greater + by_score;
        j++;
    }
    return 1;
}

static PyObject *new_bytes(Py_ssize_t n, Py_ssize_t itemsize) {
    return PyByteArray_FromStringAndSize(NULL, n * itemsize);
}

PyDoc_STRVAR(prepare_dicts_doc,
             "prepare_dicts(inner, qids, qrels, drop_identical) -> tuple | None\n\n"
             "inner[i] is the run's {doc: score} of query qids[i]; qrels the {qid: {doc: label}} dict.\n"
             "The queries with judgments are scored. Returns bytearrays (int64 unless said) of: the scored\n"
             "queries' indices, their kept lengths, their dropped own-id positions (-1: none), their\n"
             "judgment counts, the kept float32 scores, and per judgment (qrels order) the float64 label,\n"
             "the float64 score (NaN: not retrieved) and the 0-based ranks in the trec and stable orders\n"
             "(-1: not retrieved); then the list of retrieved judged ids. None: an input this scan does\n"
             "not take.");

static PyObject *prepare_dicts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *inner, *qids, *qrels;
    int drop;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyList_Type, &inner, &PyList_Type, &qids, &PyDict_Type, &qrels, &drop))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(inner);
    if (PyList_GET_SIZE(qids) != n) {
        PyErr_SetString(PyExc_ValueError, "inner and qids differ in length");
        return NULL;
    }
    if (!PyDict_CheckExact(qrels)) Py_RETURN_NONE;
    /* Pass 1: each query's judgments. Strong references: a lookup in qrels may run a key's own __eq__. */
    PyObject **held = PyMem_Calloc(3 * (size_t)(n ? n : 1), sizeof(PyObject *));
    /* Per scored query: its index, and its run's and judgments' sizes as pass 1 counted them. */
    Py_ssize_t *index = PyMem_Malloc(3 * (size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    PyObject *result = NULL, *out[9] = {NULL}, *pair_doc = NULL;
    Py_ssize_t ns = 0, n_scores = 0, n_judged = 0;
    int status = 1;
    Work w;
    memset(&w, 0, sizeof w);
    if (!held || !index) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject **runs = held, **names = held + n, **judged = held + 2 * n;
    for (Py_ssize_t i = 0; i < n && status == 1; i++) {
        if (PyList_GET_SIZE(inner) != n || PyList_GET_SIZE(qids) != n) { /* changed by a key's __eq__ */
            status = 0;
            break;
        }
        PyObject *run = PyList_GET_ITEM(inner, i), *qid = PyList_GET_ITEM(qids, i);
        if (!PyDict_CheckExact(run) || !PyUnicode_CheckExact(qid)) {
            status = 0;
            break;
        }
        Py_INCREF(run);
        Py_INCREF(qid);
        PyObject *qrel = PyDict_GetItemWithError(qrels, qid);
        Py_XINCREF(qrel);
        runs[ns] = run, names[ns] = qid, judged[ns] = qrel;
        if (qrel == NULL && PyErr_Occurred()) {
            ns++;
            goto done;
        }
        if (qrel != NULL && !PyDict_CheckExact(qrel)) {
            ns++;
            status = 0;
            break;
        }
        if (qrel == NULL || PyDict_GET_SIZE(qrel) == 0) { /* unjudged: not scored */
            Py_DECREF(run);
            Py_DECREF(qid);
            Py_XDECREF(qrel);
            continue;
        }
        index[ns] = i;
        index[n + ns] = PyDict_GET_SIZE(run);
        index[2 * n + ns] = PyDict_GET_SIZE(qrel);
        ns++;
        n_scores += PyDict_GET_SIZE(run);
        n_judged += PyDict_GET_SIZE(qrel);
    }
    if (status != 1) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    Py_ssize_t sizes[9][2] = {{ns, 8}, {ns, 8}, {ns, 8}, {ns, 8}, {n_scores, 4},
                              {n_judged, 8}, {n_judged, 8}, {n_judged, 8}, {n_judged, 8}};
    for (int b = 0; b < 9; b++)
        if (!(out[b] = new_bytes(sizes[b][0], sizes[b][1]))) goto done;
    if (!(pair_doc = PyList_New(0))) goto done;
    int64_t *idx = (int64_t *)PyByteArray_AS_STRING(out[0]), *lengths = (int64_t *)PyByteArray_AS_STRING(out[1]);
    int64_t *own = (int64_t *)PyByteArray_AS_STRING(out[2]), *counts = (int64_t *)PyByteArray_AS_STRING(out[3]);
    float *scores = (float *)PyByteArray_AS_STRING(out[4]);
    double *labels = (double *)PyByteArray_AS_STRING(out[5]), *found = (double *)PyByteArray_AS_STRING(out[6]);
    int64_t *trec = (int64_t *)PyByteArray_AS_STRING(out[7]), *stable = (int64_t *)PyByteArray_AS_STRING(out[8]);
    /* Pass 2: read, look up and rank each scored query (no Python code runs: exact str keys). */
    Py_ssize_t at = 0, jat = 0;
    for (Py_ssize_t k = 0; k < ns && status == 1; k++) {
        Py_ssize_t written = 0, size = PyDict_GET_SIZE(judged[k]);
        if (PyDict_GET_SIZE(runs[k]) != index[n + k] || size != index[2 * n + k]) {
            status = 0; /* a dict changed size since pass 1 (a qrels key's __eq__): every buffer is sized by it */
            break;
        }
        status = rank_query(&w, runs[k], judged[k], names[k], drop, scores + at, &written, own + k, labels + jat,
                            found + jat, trec + jat, stable + jat, pair_doc);
        idx[k] = index[k];
        lengths[k] = written;
        counts[k] = size;
        at += written;
        jat += size;
    }
    if (status < 0) goto done;
    if (status == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if (PyByteArray_Resize(out[4], at * 4) < 0) goto done; /* without the dropped own ids */
    result = PyTuple_Pack(10, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8], pair_doc);
done:
    for (int b = 0; b < 9; b++) Py_XDECREF(out[b]);
    Py_XDECREF(pair_doc);
    if (held)
        for (Py_ssize_t k = 0; k < ns; k++) {
            Py_DECREF(held[k]);
            Py_DECREF(held[n + k]);
            Py_XDECREF(held[2 * n + k]);
        }
    PyMem_Free(held);
    PyMem_Free(index);
    work_free(&w);
    return result;
}

PyDoc_STRVAR(flat_values_doc,
             "flat_values(inner, out) -> bool\n\n"
             "Every value of the dicts inner, in order, into the float64 buffer out (sized to their total).\n"
             "False: a dict that is not exactly a dict, an id that is not exactly a str, or a value that is\n"
             "not a finite float or an int within 2**53 (the Python path then reads and names it).");

static PyObject *flat_values(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *inner;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "O!w*", &PyList_Type, &inner, &out)) return NULL;
    Py_ssize_t n_out = out.len / (Py_ssize_t)sizeof(double), at = 0;
    int ok = check_buffer(&out, sizeof(double), n_out, "out") == 0;
    if (!ok) {
        PyBuffer_Release(&out);
        return NULL;
    }
    double *values = out.buf;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(inner) && ok; i++) {
        PyObject *d = PyList_GET_ITEM(inner, i), *key, *value;
        if (!PyDict_CheckExact(d) || at + PyDict_GET_SIZE(d) > n_out) {
            ok = 0;
            break;
        }
        Py_ssize_t pos = 0;
        while (PyDict_Next(d, &pos, &key, &value)) {
            /* exact floats only: numpy's conversion of a float subclass is the Python path's to decide */
            if (!PyUnicode_CheckExact(key) || (!PyFloat_CheckExact(value) && !PyLong_CheckExact(value)) ||
                as_double(value, values + at) < 0) {
                ok = 0;
                break;
            }
            at++;
        }
    }
    PyBuffer_Release(&out);
    return PyBool_FromLong(ok && at == n_out);
}

static PyMethodDef methods[] = {
    {"prepare_dicts", prepare_dicts, METH_VARARGS, prepare_dicts_doc},
    {"flat_values", flat_values, METH_VARARGS, flat_values_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rank", "Optional compiled scan of dict runs (see _rank.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
