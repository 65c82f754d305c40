/* The compiled scan of haystack_irmetrics.core, in one C pass per query:
 *
 * - prepare_dicts / flat_values: dict runs and qrels (prepare, Qrels.from_dict);
 * - index_lists / find_ranked: ranked lists (RankedRun), of ids or of objects such as Haystack
 *   Documents read by attribute;
 * - index_judged: the judgments and rankings of Haystack Documents, in one pass per query.
 *
 * Python reaches it through haystack_irmetrics/core/native.py only. Kept where a benchmark row shows
 * it earns its keep (benchmarks/native_ops.py); the kernels' running sums and the per-query output
 * dicts, once here too, did not, and are numpy's and Python's alone.
 *
 * Optional: the package builds it when a C compiler is there and falls back to the pure-Python
 * path otherwise (and whenever this returns False). It computes exactly what that path computes
 * (ranking.py's module docstring states the two orders); tests check both paths against each
 * other and against pytrec_eval and BEIR.
 *
 * It handles the common input only: dict runs and qrels, str ids (exact str), scores that are
 * finite floats (or ints within 2**53, exact as doubles). On anything else it returns None (or
 * False) before writing a result, and the Python path reads the input, raising its typed errors.
 * No Python code runs during the dict scan (exact str keys: no user __eq__ or __hash__), so the
 * dicts cannot change under it; index_lists may run an attribute's code, and re-checks the lists.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030A0000
#error "the compiled scan needs CPython 3.10 or later (Py_NewRef); the package runs its Python path"
#endif
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

/* A buffer of n items of itemsize bytes: a typed one (numpy) must say so; bytes count as raw. Items
 * are read in place, so their address must be aligned for them; an empty buffer has no item to read,
 * and its address may be anything: every empty bytearray points at CPython's one shared empty string,
 * a char array the linker places at any address (an odd one in the 3.13.0 builds). */
static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (n < 0 || n > PY_SSIZE_T_MAX / itemsize || (b->itemsize != itemsize && b->itemsize != 1) ||
        b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes", name, n, itemsize);
        return -1;
    }
    if (n > 0 && (uintptr_t)b->buf % (uintptr_t)itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: items of %zd bytes at an address not aligned for them", name, itemsize);
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

/* A bytearray of n items of itemsize (<= 8) bytes, written in place through a typed pointer. A
 * non-empty one's storage comes from the allocator, aligned for any item: checked here rather than
 * assumed from CPython's bytearray layout. An empty one's is CPython's shared empty string, at any
 * address: nothing is read or written through it. */
static PyObject *new_bytes(Py_ssize_t n, Py_ssize_t itemsize) {
    PyObject *b = PyByteArray_FromStringAndSize(NULL, n * itemsize);
    if (b && n > 0 && (uintptr_t)PyByteArray_AS_STRING(b) % 8 != 0) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_SystemError, "bytearray storage not aligned for 8-byte items");
        return NULL;
    }
    return b;
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

/* ---- Ranked lists (RankedRun): each query's distinct ids and a table to find them ------------
 *
 * A query's table is an open-addressing hash table (linear probing, load <= 1/2) of int32 slots:
 * 0 is empty, p + 1 is the id at 0-based position p among the query's distinct ids. Keys are exact
 * str, compared by code points as dict does, so a lookup finds what RankedRun.positions[q].get
 * would find.
 */

static Py_ssize_t table_size(Py_ssize_t m) {
    if (m == 0) return 0;
    Py_ssize_t t = 2;
    while (t < 2 * m) t <<= 1;
    return t;
}

/* Position of `key` (exact str, hash h) among the distinct ids ids[start:start+count], or -1;
 * -2 when an id there is no longer an exact str (the list was edited since it was indexed). */
static Py_ssize_t probe(const int32_t *slots, Py_ssize_t size, PyObject *ids, Py_ssize_t start, Py_ssize_t count,
                        PyObject *key, Py_hash_t h) {
    if (size == 0) return -1;
    size_t mask = (size_t)size - 1, i = (size_t)h & mask;
    for (Py_ssize_t tries = 0; tries < size; tries++) {
        int32_t e = slots[i];
        if (e == 0) return -1;
        if (e < 0 || e > count) return -2;
        PyObject *cand = PyList_GET_ITEM(ids, start + e - 1);
        if (!PyUnicode_CheckExact(cand)) return -2;
        if (cand == key || (PyObject_Hash(cand) == h && same_str(cand, key))) return e - 1;
        i = (i + 1) & mask;
    }
    return -2; /* no empty slot: not a table index_lists built */
}

#define AHEAD 8

#if defined(__GNUC__)
#define HOT __attribute__((always_inline)) inline /* per item: inlined into the loops that read */
#else
#define HOT inline
#endif

/* getattr(item, attr) of an item of exactly item_type (any type when None), the caller holding item,
 * into *key when it is an exact str (a new reference): 1; 0 to fall back (another type, a failed
 * getattr, a key that is not exactly a str); -1 on any other error. */
HOT static int item_key(PyObject *item, PyObject *attr, PyObject *item_type, PyObject **key) {
    if (item_type != Py_None && (PyObject *)Py_TYPE(item) != item_type) return 0;
    PyObject *k = PyObject_GetAttr(item, attr);
    if (k == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    if (!PyUnicode_CheckExact(k)) {
        Py_DECREF(k);
        return 0;
    }
    *key = k;
    return 1;
}

/* The key of seq[at] (a new reference, exact str) into *key: 1; 0 to fall back; -1 on an error. */
HOT static int fetch_key(PyObject *seq, Py_ssize_t expected, Py_ssize_t at, PyObject *attr, PyObject *item_type,
                         PyObject **key) {
    /* seq is held by the caller and is exactly a list or a tuple (a builtin's type cannot change) */
    int is_list = PyList_CheckExact(seq);
    if ((is_list ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq)) != expected) return 0; /* changed by a getattr */
    PyObject *item = is_list ? PyList_GET_ITEM(seq, at) : PyTuple_GET_ITEM(seq, at), *k;
    if (attr == Py_None) {
        if (!PyUnicode_CheckExact(item)) return 0;
        k = Py_NewRef(item);
    } else {
        Py_INCREF(item); /* a getattr may run code that drops it from seq */
        int status = item_key(item, attr, item_type, &k);
        Py_DECREF(item);
        if (status != 1) return status;
    }
#if defined(__GNUC__)
    __builtin_prefetch(k); /* the header and the cached hash share its first cache line */
#endif
    *key = k;
    return 1;
}

/* The hash cached in an exact str, or -1 when not computed yet: the one read of CPython's str layout.
 * 3.15 has an API for it; 3.10-3.13 (the tested range) keep it in PyASCIIObject.hash, the field that
 * API reads; a free-threaded build writes that field atomically, so it is not read plainly there
 * (this module is not imported there either); elsewhere (3.14) PyObject_Hash answers. */
#if PY_VERSION_HEX >= 0x030F00A1
#define CACHED_STR_HASH(s) PyUnstable_Unicode_GET_CACHED_HASH(s)
#elif PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define CACHED_STR_HASH(s) (((PyASCIIObject *)(s))->hash)
#else
#define CACHED_STR_HASH(s) ((Py_hash_t)-1)
#endif

/* The hash of an exact str: the one cached in the object, computed once otherwise (never fails). */
HOT static Py_hash_t str_hash(PyObject *s) {
    Py_hash_t h = CACHED_STR_HASH(s);
    return h != -1 ? h : PyObject_Hash(s);
}

/* Keys read AHEAD items early, their str objects prefetched: the hash read then rarely waits on
 * memory (each key is a separate object, usually not in cache). key[i % AHEAD] holds a reference
 * for every item i in [from, to): read, not yet taken. */
typedef struct {
    PyObject *key[AHEAD];
    Py_ssize_t from, to;
} Ring;

/* The key of item base + j of seq (m items from base; `expected` is seq's length) into *key, a new
 * reference: 1; 0 to fall back; -1 on an error. Items are taken in order, j = 0, 1, ... */
HOT static int ring_take(Ring *r, PyObject *seq, Py_ssize_t expected, Py_ssize_t base, Py_ssize_t m, Py_ssize_t j,
                         PyObject *attr, PyObject *item_type, PyObject **key) {
    while (r->to < m && r->to < j + AHEAD) {
        PyObject *k = NULL;
        int status = fetch_key(seq, expected, base + r->to, attr, item_type, &k);
        if (status != 1) return status;
        r->key[r->to % AHEAD] = k;
        r->to++;
    }
    *key = r->key[j % AHEAD];
    r->from = j + 1;
    return 1;
}

/* Drop the keys read ahead but not taken (a fallback mid-list); the ring is empty after. */
static void ring_clear(Ring *r) {
    for (Py_ssize_t i = r->from; i < r->to; i++) Py_DECREF(r->key[i % AHEAD]);
    r->from = r->to = 0;
}

/* A query's table over its distinct keys so far, keys[e] with hash hashes[e] in slot value e + 1:
 * the position of `key` (exact str, hash h), or -1 with *empty the slot where it would go. */
HOT static Py_ssize_t table_find(const int32_t *slots, size_t mask, PyObject *const *keys, const Py_hash_t *hashes,
                                 PyObject *key, Py_hash_t h, size_t *empty) {
    size_t i = (size_t)h & mask;
    for (;; i = (i + 1) & mask) { /* load <= 1/2: an empty slot ends it */
        int32_t e = slots[i];
        if (e == 0) break;
        if (keys[e - 1] == key || (hashes[e - 1] == h && same_str(keys[e - 1], key))) return e - 1;
    }
    if (empty) *empty = i;
    return -1;
}

/* Add `key` as distinct key number `local` (the caller stores it at keys[local]): 1; 0 when an
 * equal key is there already (a repeat, which counts once at its first position). */
HOT static int table_add(int32_t *slots, size_t mask, PyObject *const *keys, Py_hash_t *hashes, Py_ssize_t local,
                         PyObject *key) {
    Py_hash_t h = str_hash(key);
    size_t i = 0;
    if (table_find(slots, mask, keys, hashes, key, h, &i) >= 0) return 0;
    slots[i] = (int32_t)(local + 1);
    hashes[local] = h;
    return 1;
}

PyDoc_STRVAR(index_lists_doc,
             "index_lists(lists, lengths, attr, item_type) -> tuple | None\n\n"
             "Ranked lists, best first: lists[i] (a list or tuple) is query i's when lengths is None; else\n"
             "lists is one flat list and query i owns the next lengths[i] items (int64 buffer). An item's\n"
             "key is the item (attr None) or getattr(item, attr), with type(item) is item_type when that is\n"
             "given. A key repeated in one list keeps its first position. Returns the distinct keys\n"
             "concatenated (list), each query's number of them (int64 bytearray), the tables (int32\n"
             "bytearray) and each query's table offset (n + 1 int64). None: an item or key this scan does\n"
             "not take (a key that is not exactly a str, an item of another type, a list that is neither\n"
             "list nor tuple, a failed getattr, a list changed while read); the Python path names it.");

static PyObject *index_lists(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *lists, *lengths_obj, *attr, *item_type;
    if (!PyArg_ParseTuple(args, "O!OOO", &PyList_Type, &lists, &lengths_obj, &attr, &item_type)) return NULL;
    if (attr != Py_None && !PyUnicode_Check(attr)) {
        PyErr_SetString(PyExc_TypeError, "attr must be a str or None");
        return NULL;
    }
    int flat = lengths_obj != Py_None;
    Py_buffer lb = {0};
    Py_ssize_t n;
    const int64_t *given = NULL;
    if (flat) {
        if (PyObject_GetBuffer(lengths_obj, &lb, PyBUF_SIMPLE) < 0) return NULL;
        n = lb.len / 8;
        if (check_buffer(&lb, 8, n, "lengths") < 0) {
            PyBuffer_Release(&lb);
            return NULL;
        }
        given = lb.buf;
    } else {
        n = PyList_GET_SIZE(lists);
    }
    PyObject *result = NULL, *ids = NULL, *counts = NULL, *table = NULL, *toff = NULL;
    Py_ssize_t *sizes = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    /* Strong references to each query's list: a getattr may run code that replaces it in `lists`. */
    PyObject **seqs = flat ? NULL : PyMem_Calloc((size_t)(n ? n : 1), sizeof(PyObject *));
    Py_ssize_t n_held = 0;
    Py_hash_t *hashes = NULL;
    int status = 1;
    if (!sizes || (!flat && !seqs)) {
        PyErr_NoMemory();
        goto done;
    }
    if (flat && !PyList_CheckExact(lists)) goto fallback; /* a list subclass: the Python path reads it */
    /* Sizes first: the output and the tables are allocated once. */
    Py_ssize_t total = 0, longest = 0, slots_total = 0;
    for (Py_ssize_t q = 0; q < n; q++) {
        Py_ssize_t m;
        if (flat) {
            if (given[q] < 0) {
                PyErr_SetString(PyExc_ValueError, "lengths must be >= 0");
                goto done;
            }
            m = (Py_ssize_t)given[q];
        } else {
            PyObject *seq = PyList_GET_ITEM(lists, q);
            if (PyList_CheckExact(seq)) m = PyList_GET_SIZE(seq);
            else if (PyTuple_CheckExact(seq)) m = PyTuple_GET_SIZE(seq);
            else {
                status = 0;
                break;
            }
            Py_INCREF(seq);
            seqs[n_held++] = seq;
        }
        if (m > (1 << 24)) { /* RankedRun's limit; the Python path raises its error */
            status = 0;
            break;
        }
        sizes[q] = m;
        total += m;
        longest = m > longest ? m : longest;
        slots_total += table_size(m);
    }
    if (status == 1 && flat && total != PyList_GET_SIZE(lists)) {
        PyErr_SetString(PyExc_ValueError, "lengths do not sum to the number of items");
        goto done;
    }
    if (status != 1) goto fallback;
    if (!(ids = PyList_New(total)) || !(counts = new_bytes(n, 8)) || !(table = new_bytes(slots_total, 4)) ||
        !(toff = new_bytes(n + 1, 8)))
        goto done;
    /* Hidden from the cycle collector (gc.get_objects) while its slots are still NULL; tracked at the end. */
    PyObject_GC_UnTrack(ids);
    if (!(hashes = PyMem_Malloc(sizeof(Py_hash_t) * (size_t)(longest ? longest : 1)))) {
        PyErr_NoMemory();
        goto done;
    }
    int32_t *slots = (int32_t *)PyByteArray_AS_STRING(table);
    int64_t *count = (int64_t *)PyByteArray_AS_STRING(counts), *offs = (int64_t *)PyByteArray_AS_STRING(toff);
    if (slots_total) memset(slots, 0, (size_t)slots_total * 4);
    Py_ssize_t at = 0, raw = 0, sat = 0; /* distinct ids written; flat items read; table slots used */
    for (Py_ssize_t q = 0; q < n && status == 1; q++) {
        if (!flat && (PyList_GET_SIZE(lists) != n || PyList_GET_ITEM(lists, q) != seqs[q])) {
            status = 0; /* changed by code a getattr ran */
            break;
        }
        PyObject *seq = flat ? lists : seqs[q];
        Py_ssize_t m = sizes[q], base = flat ? raw : 0, size = table_size(m), local = 0;
        size_t mask = (size_t)size - 1;
        int32_t *ts = slots + sat;
        offs[q] = sat;
        Py_INCREF(seq); /* a getattr may run Python code */
        Ring ring = {{NULL}, 0, 0};
        /* The query's distinct ids so far. ids stays this size (hidden, never resized) while written. */
        PyObject *const *seen = PySequence_Fast_ITEMS(ids) + at;
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *key;
            status = ring_take(&ring, seq, flat ? total : m, base, m, j, attr, item_type, &key);
            if (status != 1) {
                ring_clear(&ring);
                break;
            }
            if (!table_add(ts, mask, seen, hashes, local, key)) {
                Py_DECREF(key);
                continue;
            }
            PyList_SET_ITEM(ids, at + local, key); /* steals the reference */
            local++;
        }
        Py_DECREF(seq);
        count[q] = local;
        at += local;
        raw += m;
        sat += size;
    }
    if (status < 0) goto done;
    if (status == 0) goto fallback;
    offs[n] = sat;
    if (at < total) { /* repeats were dropped: the list holds `at` ids (the rest are still NULL) */
        PyObject *kept = PyList_GetSlice(ids, 0, at);
        if (!kept) goto done;
        Py_DECREF(ids);
        ids = kept;
    }
    /* Packed first: on 3.10 and 3.11 a collection may run code at this allocation (see index_judged). */
    if (!(result = PyTuple_Pack(4, ids, counts, table, toff))) goto done;
    if (!PyObject_GC_IsTracked(ids)) PyObject_GC_Track(ids); /* a GetSlice copy is tracked already */
    goto done;
fallback:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(ids); /* list_dealloc skips the NULL slots a fallback left */
    Py_XDECREF(counts);
    Py_XDECREF(table);
    Py_XDECREF(toff);
    for (Py_ssize_t k = 0; k < n_held; k++) Py_DECREF(seqs[k]);
    PyMem_Free(seqs);
    PyMem_Free(sizes);
    PyMem_Free(hashes);
    if (flat) PyBuffer_Release(&lb);
    return result;
}

PyDoc_STRVAR(find_ranked_doc,
             "find_ranked(ids, offsets, table, table_offsets, rows, keys) -> bytearray | None\n\n"
             "For each k, the 0-based position of keys[k] among query rows[k]'s distinct ids (-1: absent),\n"
             "as int64, from index_lists' output (offsets: the n + 1 int64 bounds of each query's ids).\n"
             "None: a key that is not exactly a str, or ids whose number or bounds changed since they were\n"
             "indexed (the run is read-only: an id replaced in place is not detected); the Python path\n"
             "decides.");

static PyObject *find_ranked(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ids, *keys, *result = NULL;
    Py_buffer ob = {0}, tb = {0}, tob = {0}, rb = {0};
    if (!PyArg_ParseTuple(args, "O!y*y*y*y*O!", &PyList_Type, &ids, &ob, &tb, &tob, &rb, &PyList_Type, &keys))
        return NULL;
    Py_ssize_t n = ob.len / 8 - 1, n_keys = PyList_GET_SIZE(keys), n_ids = PyList_GET_SIZE(ids);
    const int64_t *offsets = ob.buf, *toffs = tob.buf, *rows = rb.buf;
    const int32_t *slots = tb.buf;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold n + 1 bounds");
        goto done;
    }
    if (check_buffer(&ob, 8, n + 1, "offsets") < 0 || check_buffer(&tob, 8, n + 1, "table_offsets") < 0 ||
        check_buffer(&rb, 8, n_keys, "rows") < 0 || check_buffer(&tb, 4, toffs[n], "table") < 0)
        goto done;
    for (Py_ssize_t q = 0; q < n; q++)
        if (toffs[q] < 0 || toffs[q] > toffs[q + 1]) {
            PyErr_SetString(PyExc_ValueError, "table_offsets must be non-decreasing from 0");
            goto done;
        }
    /* The ids or their bounds no longer as indexed (a caller edited them): the Python lookup decides. */
    int stale = offsets[0] != 0 || offsets[n] != n_ids;
    for (Py_ssize_t q = 0; q < n && !stale; q++) stale = offsets[q] > offsets[q + 1];
    if (stale) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    PyObject *out = new_bytes(n_keys, 8);
    if (!out) goto done;
    int64_t *pos = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t k = 0; k < n_keys; k++) {
        PyObject *key = PyList_GET_ITEM(keys, k);
        int64_t q = rows[k];
        if (!PyUnicode_CheckExact(key) || q < 0 || q >= n) {
            Py_DECREF(out);
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
        Py_ssize_t start = offsets[q], count = offsets[q + 1] - start, size = toffs[q + 1] - toffs[q];
        /* A query's table is a power of two of at least twice its distinct ids (sized before repeats
         * were dropped, so it may be larger than table_size(count)). */
        if (count < 0 || start + count > n_ids || size < 2 * count || (size & (size - 1)) != 0) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_ValueError, "offsets do not match the tables");
            goto done;
        }
        Py_ssize_t p = probe(slots + toffs[q], size, ids, start, count, key, PyObject_Hash(key));
        if (p == -2) {
            Py_DECREF(out);
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
        pos[k] = p;
    }
    result = out;
done:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&tob);
    PyBuffer_Release(&rb);
    return result;
}

/* ---- Judgments and ranked lists of the same queries (the Document path) ---------------------- */

/* A judged item's label into *label (a new reference): 1, or 0 to fall back, -1 on an error.
 * None, or an exact int or float that is finite as a double (what the Python path takes). */
static int fetch_label(PyObject *item, PyObject *label_attr, PyObject **label) {
    PyObject *v = PyObject_GetAttr(item, label_attr); /* the caller holds item */
    if (v == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = v == Py_None;
    if (PyFloat_CheckExact(v)) {
        ok = isfinite(PyFloat_AS_DOUBLE(v));
    } else if (PyLong_CheckExact(v)) {
        double x = PyLong_AsDouble(v); /* what numpy's float64 conversion does */
        if (x == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                Py_DECREF(v);
                return -1;
            }
            PyErr_Clear();
        } else {
            ok = isfinite(x);
        }
    }
    if (!ok) {
        Py_DECREF(v);
        return 0;
    }
    *label = v;
    return 1;
}

static void release(PyObject **refs, Py_ssize_t k) {
    for (Py_ssize_t i = 0; i < k; i++) Py_CLEAR(refs[i]);
}

PyDoc_STRVAR(index_judged_doc,
             "index_judged(judged, lists, attr, item_type, label_attr, qids) -> tuple | None\n\n"
             "The judgments and the ranked lists of the same queries in one pass, keeping no ranked key.\n"
             "judged[i] and lists[i] (each a list or tuple of items of exactly item_type) are query\n"
             "qids[i]'s. An item's key is getattr(item, attr), an exact str; a judged item's label is\n"
             "getattr(item, label_attr): None for every judged item of the query (each then has label 1)\n"
             "or, for every one, an exact int or float finite as a double. Returns {qid: {key: label}} in\n"
             "query and judged order and the list of its dicts; then int64 bytearrays of each query's number\n"
             "of distinct ranked keys, each judgment's 0-based position among its query's distinct ranked\n"
             "keys (-1: not ranked; judged order), each query's own id's position (-1: not ranked) and each\n"
             "query's number of judgments; and the float64 bytearray of every judgment's label as a double.\n"
             "A ranked key repeated keeps its first position. None: anything else (a key given twice in one\n"
             "judged list, labels mixing None and numbers, a key that is not exactly a str, another item type,\n"
             "a getattr that raises an Exception, a query id twice, lists changed while read): the caller's\n"
             "path reads the input.");

static PyObject *index_judged(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *judged, *lists, *attr, *item_type, *label_attr, *qids;
    if (!PyArg_ParseTuple(args, "O!O!UO!UO!", &PyList_Type, &judged, &PyList_Type, &lists, &attr, &PyType_Type,
                          &item_type, &label_attr, &PyList_Type, &qids))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lists);
    if (PyList_GET_SIZE(judged) != n || PyList_GET_SIZE(qids) != n) {
        PyErr_SetString(PyExc_ValueError, "judged, lists and qids must have one entry per query");
        return NULL;
    }
    PyObject *result = NULL, *dicts = NULL, *judgments = NULL, *counts = NULL, *positions = NULL, *own = NULL,
             *one = NULL, *labels = NULL, *sizes = NULL;
    /* Strong references to every list (judged ones first) and query id: a getattr may run code. */
    PyObject **held = PyMem_Calloc((size_t)(3 * n + 1), sizeof(PyObject *));
    Py_ssize_t n_held = 0, longest = 0, longest_judged = 0, total_judged = 0;
    PyObject **rkeys = NULL, **gkeys = NULL, **glabels = NULL;
    Py_hash_t *hashes = NULL;
    int32_t *slots = NULL;
    Py_ssize_t n_rkeys = 0, n_gkeys = 0, n_glabels = 0;
    Ring ring = {{NULL}, 0, 0};
    int status = 1;
    if (!held) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *g = PyList_GET_ITEM(judged, q), *r = PyList_GET_ITEM(lists, q), *qid = PyList_GET_ITEM(qids, q);
        if (!(PyList_CheckExact(g) || PyTuple_CheckExact(g)) || !(PyList_CheckExact(r) || PyTuple_CheckExact(r)) ||
            !PyUnicode_CheckExact(qid)) {
            status = 0;
            break;
        }
        Py_ssize_t mg = Py_SIZE(g), m = Py_SIZE(r);
        if (m > (1 << 24)) { /* RankedRun's limit; the Python path raises its error */
            status = 0;
            break;
        }
        held[n_held++] = Py_NewRef(g);
        held[n_held++] = Py_NewRef(r);
        held[n_held++] = Py_NewRef(qid);
        longest = m > longest ? m : longest;
        longest_judged = mg > longest_judged ? mg : longest_judged;
        total_judged += mg;
    }
    if (status != 1) goto fallback;
    Py_ssize_t size_max = table_size(longest);
    rkeys = PyMem_Malloc(sizeof(PyObject *) * (size_t)(longest + 1));
    hashes = PyMem_Malloc(sizeof(Py_hash_t) * (size_t)(longest + 1));
    slots = PyMem_Malloc(sizeof(int32_t) * (size_t)(size_max + 1));
    gkeys = PyMem_Malloc(sizeof(PyObject *) * (size_t)(longest_judged + 1));
    glabels = PyMem_Malloc(sizeof(PyObject *) * (size_t)(longest_judged + 1));
    if (!rkeys || !hashes || !slots || !gkeys || !glabels) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(dicts = PyList_New(n)) || !(counts = new_bytes(n, 8)) || !(positions = new_bytes(total_judged, 8)) ||
        !(own = new_bytes(n, 8)) || !(labels = new_bytes(total_judged, 8)) || !(sizes = new_bytes(n, 8)))
        goto done;
    /* Out of gc.get_objects' reach until the last attribute is read: its slots are NULL until filled,
     * and code a getattr runs must not find (and edit) the dicts already built. */
    PyObject_GC_UnTrack(dicts);
    int64_t *count = (int64_t *)PyByteArray_AS_STRING(counts), *pos = (int64_t *)PyByteArray_AS_STRING(positions),
            *own_pos = (int64_t *)PyByteArray_AS_STRING(own), *judged_size = (int64_t *)PyByteArray_AS_STRING(sizes);
    double *label_at = (double *)PyByteArray_AS_STRING(labels);
    if (!(one = PyLong_FromLong(1))) goto done;
    Py_ssize_t at_judged = 0;
    for (Py_ssize_t q = 0; q < n && status == 1; q++) {
        PyObject *g = held[3 * q], *seq = held[3 * q + 1], *qid = held[3 * q + 2];
        Py_ssize_t mg = Py_SIZE(g), m = Py_SIZE(seq);
        if (m > longest || mg > longest_judged || at_judged + mg > total_judged || PyList_GET_SIZE(lists) != n ||
            PyList_GET_ITEM(lists, q) != seq || PyList_GET_SIZE(judged) != n || PyList_GET_ITEM(judged, q) != g) {
            status = 0; /* changed by code a getattr ran */
            break;
        }
        /* The judgments: keys and labels, then the query's dict. */
        Py_ssize_t n_none = 0;
        for (Py_ssize_t j = 0; j < mg && status == 1; j++) {
            if (Py_SIZE(g) != mg) { /* changed by code a getattr ran */
                status = 0;
                break;
            }
            PyObject *item = PyList_CheckExact(g) ? PyList_GET_ITEM(g, j) : PyTuple_GET_ITEM(g, j), *key, *label;
            Py_INCREF(item); /* both attributes of this item, whatever a getattr runs */
            status = item_key(item, attr, item_type, &key);
            if (status != 1) {
                Py_DECREF(item);
                break;
            }
            gkeys[n_gkeys++] = key;
            status = fetch_label(item, label_attr, &label);
            Py_DECREF(item);
            if (status != 1) break;
            glabels[n_glabels++] = label;
            n_none += label == Py_None;
        }
        if (status != 1) break;
        if (n_none && n_none != mg) { /* some graded, some not: the Python path names the query */
            status = 0;
            break;
        }
        PyObject *d = PyDict_New();
        if (!d) {
            status = -1;
            break;
        }
        PyList_SET_ITEM(dicts, q, d);
        judged_size[q] = mg;
        for (Py_ssize_t j = 0; j < mg; j++) { /* exact str keys: no Python code runs */
            PyObject *label = n_none ? one : glabels[j];
            if (PyDict_SetItem(d, gkeys[j], label) < 0) {
                status = -1;
                break;
            }
            /* as Qrels.from_dict reads it: a float's value, an int's double (checked finite above) */
            label_at[at_judged + j] = PyFloat_CheckExact(label) ? PyFloat_AS_DOUBLE(label) : PyLong_AsDouble(label);
        }
        if (status == 1 && PyDict_GET_SIZE(d) != mg) status = 0; /* a key twice: the highest label wins there */
        if (status != 1) break;
        /* Out of gc's reach like dicts until packed: 3.10-3.13 keep a dict of str keys and number values
         * untracked, which the API does not promise. */
        if (PyObject_GC_IsTracked(d)) PyObject_GC_UnTrack(d);
        /* The ranked keys into the scratch table, read AHEAD items early (see index_lists). */
        Py_ssize_t size = table_size(m), local = 0;
        size_t mask = (size_t)size - 1;
        if (size) memset(slots, 0, (size_t)size * 4);
        ring_clear(&ring); /* holds nothing between queries: this starts it at the query's first item */
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *key;
            status = ring_take(&ring, seq, m, 0, m, j, attr, item_type, &key);
            if (status != 1) break;
            if (!table_add(slots, mask, rkeys, hashes, local, key)) {
                Py_DECREF(key);
                continue;
            }
            rkeys[local++] = key;
            n_rkeys = local;
        }
        if (status != 1) break;
        count[q] = local;
        for (Py_ssize_t j = 0; j < mg; j++)
            pos[at_judged + j] = size ? table_find(slots, mask, rkeys, hashes, gkeys[j], str_hash(gkeys[j]), NULL) : -1;
        own_pos[q] = size ? table_find(slots, mask, rkeys, hashes, qid, str_hash(qid), NULL) : -1;
        at_judged += mg;
        release(rkeys, n_rkeys);
        release(gkeys, n_gkeys);
        release(glabels, n_glabels);
        n_rkeys = n_gkeys = n_glabels = 0;
    }
    /* Keys read ahead but not taken (a fallback mid-list), then the query's keys and labels. */
    ring_clear(&ring);
    release(rkeys, n_rkeys);
    release(gkeys, n_gkeys);
    release(glabels, n_glabels);
    if (status < 0 && PyErr_ExceptionMatches(PyExc_Exception)) {
        /* An attribute's code raised: the caller's path reads the items again in its own order and
         * raises what it meets first (a typed error for an earlier item, or this again). */
        PyErr_Clear();
        status = 0;
    }
    if (status < 0) goto done; /* KeyboardInterrupt and the like */
    if (status == 0 || at_judged != total_judged) goto fallback;
    /* Every attribute is read: {qid: dict} runs no Python code (exact str query ids), but on 3.10 and
     * 3.11 a collection, and code it runs (a finalizer, gc.callbacks), may start at any allocation of a
     * gc object (PyDict_New, PyTuple_Pack here): what it returns stays out of gc's reach until packed. */
    if (!(judgments = PyDict_New())) goto done;
    for (Py_ssize_t q = 0; q < n; q++)
        if (PyDict_SetItem(judgments, held[3 * q + 2], PyList_GET_ITEM(dicts, q)) < 0) goto done;
    if (PyObject_GC_IsTracked(judgments)) PyObject_GC_UnTrack(judgments); /* tracked by its dict values */
    if (PyDict_GET_SIZE(judgments) != n) goto fallback; /* a query id twice */
    if (!(result = PyTuple_Pack(7, judgments, dicts, counts, positions, own, sizes, labels))) goto done;
    for (Py_ssize_t q = 0; q < n; q++)
        if (!PyObject_GC_IsTracked(PyList_GET_ITEM(dicts, q))) PyObject_GC_Track(PyList_GET_ITEM(dicts, q));
    PyObject_GC_Track(dicts);
    PyObject_GC_Track(judgments);
    goto done;
fallback:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(dicts); /* list_dealloc skips the NULL slots a fallback left */
    Py_XDECREF(judgments);
    Py_XDECREF(sizes);
    Py_XDECREF(counts);
    Py_XDECREF(positions);
    Py_XDECREF(own);
    Py_XDECREF(labels);
    Py_XDECREF(one);
    for (Py_ssize_t k = 0; k < n_held; k++) Py_DECREF(held[k]);
    PyMem_Free(held);
    PyMem_Free(rkeys);
    PyMem_Free(hashes);
    PyMem_Free(slots);
    PyMem_Free(gkeys);
    PyMem_Free(glabels);
    return result;
}

static PyMethodDef methods[] = {
    {"prepare_dicts", prepare_dicts, METH_VARARGS, prepare_dicts_doc},
    {"flat_values", flat_values, METH_VARARGS, flat_values_doc},
    {"index_lists", index_lists, METH_VARARGS, index_lists_doc},
    {"find_ranked", find_ranked, METH_VARARGS, find_ranked_doc},
    {"index_judged", index_judged, METH_VARARGS, index_judged_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_rank",
    .m_doc = "Optional compiled scan of dict runs (see _rank.c).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__rank(void) {
    PyObject *m = PyModule_Create(&module);
#ifdef Py_GIL_DISABLED
    /* It reads lists and dicts without per-object locks: it needs the GIL, and says so (the package
     * does not import it on a free-threaded build; see inputs._native). */
    if (m && PyUnstable_Module_SetGIL(m, Py_MOD_GIL_USED) < 0) Py_CLEAR(m);
#endif
    return m;
}
