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

typedef struct {
    Py_buffer scores, own, found, trec, stable;
} Out;

static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (b->itemsize != itemsize || b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes", name, n, itemsize);
        return -1;
    }
    return 0;
}

/* Rank one query's judged documents. Returns 1 when done, 0 to fall back, -1 on a Python error. */
static int rank_query(Work *w, PyObject *run, PyObject *qrel, PyObject *qid, int drop, float *scores_out,
                      Py_ssize_t *n_written, int64_t *own_out, double *found, int64_t *trec, int64_t *stable) {
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
        if (!PyUnicode_CheckExact(key)) return 0;
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

PyDoc_STRVAR(rank_dicts_doc,
             "rank_dicts(inner, qids, judged, drop_identical, scores, own, found, trec, stable) -> bool\n\n"
             "Per query i: inner[i] the run's {doc: score}, judged[i] its qrels {doc: label}. Writes the\n"
             "kept float32 scores (query by query), each query's dropped own-id position (-1: none),\n"
             "and per judgment (qrels order) the float64 score (NaN: not retrieved) and 0-based ranks\n"
             "in the trec and stable orders (-1: not retrieved). False: an input this scan does not take.");

static PyObject *rank_dicts(PyObject *self, PyObject *args) {
    PyObject *inner, *qids, *judged;
    int drop;
    Out o;
    memset(&o, 0, sizeof o);
    if (!PyArg_ParseTuple(args, "O!O!O!pw*w*w*w*w*", &PyList_Type, &inner, &PyList_Type, &qids, &PyList_Type,
                          &judged, &drop, &o.scores, &o.own, &o.found, &o.trec, &o.stable))
        return NULL;
    PyObject *result = NULL;
    Work w;
    memset(&w, 0, sizeof w);
    Py_ssize_t n = PyList_GET_SIZE(inner);
    Py_ssize_t n_scores = o.scores.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t n_found = o.found.len / (Py_ssize_t)sizeof(double);
    if (PyList_GET_SIZE(qids) != n || PyList_GET_SIZE(judged) != n) {
        PyErr_SetString(PyExc_ValueError, "inner, qids and judged differ in length");
        goto done;
    }
    if (check_buffer(&o.scores, sizeof(float), n_scores, "scores") < 0 ||
        check_buffer(&o.own, sizeof(int64_t), n, "own") < 0 ||
        check_buffer(&o.found, sizeof(double), n_found, "found") < 0 ||
        check_buffer(&o.trec, sizeof(int64_t), n_found, "trec") < 0 ||
        check_buffer(&o.stable, sizeof(int64_t), n_found, "stable") < 0)
        goto done;
    Py_ssize_t at = 0, jat = 0;
    int status = 1;
    for (Py_ssize_t i = 0; i < n && status == 1; i++) {
        PyObject *run = PyList_GET_ITEM(inner, i), *qrel = PyList_GET_ITEM(judged, i);
        PyObject *qid = PyList_GET_ITEM(qids, i);
        if (!PyDict_CheckExact(run) || !PyDict_CheckExact(qrel) || !PyUnicode_CheckExact(qid)) {
            status = 0;
            break;
        }
        /* Bounds before writing: the buffers were sized from the same dicts' lengths. */
        if (at + PyDict_GET_SIZE(run) > n_scores || jat + PyDict_GET_SIZE(qrel) > n_found) {
            status = 0;
            break;
        }
        Py_ssize_t written = 0;
        status = rank_query(&w, run, qrel, qid, drop, (float *)o.scores.buf + at, &written, (int64_t *)o.own.buf + i,
                            (double *)o.found.buf + jat, (int64_t *)o.trec.buf + jat, (int64_t *)o.stable.buf + jat);
        at += written;
        jat += PyDict_GET_SIZE(qrel);
    }
    if (status < 0) goto done;
    result = PyBool_FromLong(status == 1 && jat == n_found);
done:
    work_free(&w);
    PyBuffer_Release(&o.scores);
    PyBuffer_Release(&o.own);
    PyBuffer_Release(&o.found);
    PyBuffer_Release(&o.trec);
    PyBuffer_Release(&o.stable);
    return result;
}

static PyMethodDef methods[] = {
    {"rank_dicts", rank_dicts, METH_VARARGS, rank_dicts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rank", "Optional compiled scan of dict runs (see _rank.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
