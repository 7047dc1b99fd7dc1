/*
 * Optional compiled TERSE loops (app.formats.terse drives them; app/formats/terse_codec.py is the pure-Python
 * twin and documents the format and the state vector).
 *
 *   step(state, raw, out, olen) -> olen
 *     state  writable int64 buffer: the state vector of terse_codec (header words, four dictionary tables,
 *            the SPACK expansion stack);
 *     raw    the tersed bytes (read only; codes start at state[BASE]);
 *     out    writable output buffer whose first ``olen`` bytes are kept.
 *   Decodes until ``out`` is nearly full or the stream stops (state[STATUS] != 0) and returns the new output
 *   length.  Every index read back from the dictionary is checked before use, exactly where the Python loop
 *   checks it, so damaged input gives the same status and the same bytes on both paths.
 *
 * The tables are copied into local arrays for the call and written back at its end: PACK's as one 8-byte record
 * per node (the dictionary fits the first-level cache), SPACK's as one 16-byte record per pair.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { MODE, VAR, MAXREC, CODE, BASE, STATUS, RECSTART, RECORDS, PREV, AVAIL, STARTED, SP, CUR, PEND, CURCODE };
#define HEAD 16
#define TREE 4097
#define STACK_MAX 4200
#define SIZE (HEAD + 4 * TREE + STACK_MAX)
#define CODESIZE 257
#define RECORD_MARK 257
#define NONE (-1)
#define PACK_ROOM (5 * 4100)
#define SPACK_ROOM 8
#define CHAIN_MAX 4096
enum { RUN = 0, END = 1, CUT = 2, BAD_CODE = -1, BAD_CHAIN = -2, LONG_RECORD = -3 };

typedef struct {
    unsigned char *buf;
    Py_ssize_t n;
    int var;
    int64_t maxrec, rs, recs;
} Out;

/* Write symbol x; 0 when a variable record grew past its maximum length. */
static inline int put(Out *o, int32_t x)
{
    if (x == 0)
        return 1;
    if (x == RECORD_MARK) {
        if (o->var) {
            if (o->rs >= 0) {
                int64_t ln = o->n - o->rs;
                o->buf[o->rs] = (unsigned char)(ln >> 8);
                o->buf[o->rs + 1] = (unsigned char)(ln & 255);
                o->buf[o->rs + 2] = 0;
                o->buf[o->rs + 3] = 0;
                o->rs = -1;
            } else {
                o->buf[o->n] = 0;
                o->buf[o->n + 1] = 4;
                o->buf[o->n + 2] = 0;
                o->buf[o->n + 3] = 0;
                o->n += 4;
            }
            o->recs++;
        }
        return 1;
    }
    if (o->var && o->rs < 0) {
        o->rs = o->n;
        o->n += 4;
    }
    o->buf[o->n++] = (unsigned char)(x - 1);
    return !(o->var && o->n - o->rs - 4 > o->maxrec);
}

/* The k-th 12-bit code, or -1 when the input ends first. */
static inline int32_t code_at(const unsigned char *raw, Py_ssize_t n, int64_t base, int64_t k)
{
    int64_t b = base + ((3 * k) >> 1);
    if (b + 1 >= n)
        return -1;
    if (k & 1)
        return ((raw[b] & 15) << 8) | raw[b + 1];
    return (raw[b] << 4) | (raw[b + 1] >> 4);
}

#define BAD(i) ((i) < 0 || (i) >= TREE)

/* One PACK node in 8 bytes (every value is below 4,097), so the whole dictionary (32 KB) stays in L1. */
typedef struct {
    int16_t fa, ext, bw, fw;
} Node;

static void run_pack(int64_t *s, Node *t, const unsigned char *raw, Py_ssize_t n, Out *o, Py_ssize_t cap)
{
    int64_t k = s[CODE], base = s[BASE];
    int32_t x = (int32_t)s[PREV];
    int32_t path[CHAIN_MAX];
    Py_ssize_t limit = cap - PACK_ROOM;
    int status = RUN;
    while (o->n <= limit) {
        int32_t d = code_at(raw, n, base, k);
        s[CURCODE] = k;
        if (d < 0) {
            status = CUT;
            break;
        }
        k++;
        if (d == 0) {
            status = END;
            break;
        }
        int32_t y = t[0].bw, q = t[y].bw, r, h = y, code = d, np = 0;
        t[0].bw = (int16_t)q;
        t[q].fw = 0;
        while (d > CODESIZE) {        /* walk up to the root, moving each node of the path to the front */
            if (np >= CHAIN_MAX) {
                status = BAD_CHAIN;
                break;
            }
            q = t[d].fw;
            r = t[d].bw;
            t[r].fw = (int16_t)q;
            t[q].bw = (int16_t)r;
            t[d].fw = (int16_t)h;
            t[h].bw = (int16_t)d;
            h = d;
            path[np++] = d;
            d = t[d].fa;
        }
        if (status)
            break;
        q = t[0].fw;
        t[y].fw = (int16_t)q;
        t[q].bw = (int16_t)y;
        t[0].fw = (int16_t)h;
        t[h].bw = 0;
        t[x].ext = (int16_t)d;
        int ok = put(o, d);
        while (np > 0)
            ok = put(o, t[path[--np]].ext) && ok;
        x = y;
        t[y].fa = (int16_t)code;
        if (!ok) {
            status = LONG_RECORD;
            break;
        }
    }
    s[CODE] = k;
    s[PREV] = x;
    s[STATUS] = status;
}

/* One SPACK entry in 16 bytes: left and right parts, and the links / reference count of the LRU list. */
typedef struct {
    int32_t l, r, b, c;
} Pair;

typedef struct {
    Pair *n;
    int32_t *stk;
    int64_t *s;
    int64_t sp;
} Spack;

/* Push the right parts down the left spine of x; the leaf reached, or -1 when damaged. */
static inline int32_t descend(Spack *z, int32_t x)
{
    while (x > CODESIZE) {
        if (BAD(x) || z->n[x].l < 0 || z->sp >= STACK_MAX)
            return -1;
        z->stk[z->sp++] = z->n[x].r;
        x = z->n[x].l;
    }
    return x;
}

static inline int lru_add(Spack *z, int32_t m)
{
    int32_t back = z->n[0].b;
    if (BAD(back))
        return 0;
    z->n[m].c = 0;
    z->n[0].b = m;
    z->n[m].b = back;
    z->n[back].c = m;
    return 1;
}

static inline int delete_ref(Spack *z, int32_t m)
{
    if (BAD(m))
        return 0;
    if (z->n[m].c == NONE)
        return lru_add(z, m);
    z->n[m].c += 1;
    return 1;
}

static inline int bump_ref(Spack *z, int32_t m)
{
    if (z->n[m].c < 0) {
        z->n[m].c -= 1;
        return 1;
    }
    int32_t f = z->n[m].c, pv = z->n[m].b;
    if (BAD(f) || BAD(pv))
        return 0;
    z->n[pv].c = f;
    z->n[f].b = pv;
    z->n[m].c = NONE;
    return 1;
}

static inline int lru_kill(Spack *z)
{
    int32_t p = z->n[0].c;
    if (BAD(p) || p == 0)
        return 0;
    int32_t q = z->n[p].c, r = z->n[p].b;
    if (BAD(q) || BAD(r))
        return 0;
    z->n[q].b = r;
    z->n[r].c = q;
    if (!(delete_ref(z, z->n[p].l) && delete_ref(z, z->n[p].r)))
        return 0;
    z->n[p].c = (int32_t)z->s[AVAIL];
    z->s[AVAIL] = p;
    return 1;
}

static void run_spack(int64_t *s, Pair *t, int32_t *stk, const unsigned char *raw, Py_ssize_t n, Out *o,
                      Py_ssize_t cap)
{
    Spack z = {t, stk, s, s[SP]};
    int64_t k = s[CODE], base = s[BASE];
    Py_ssize_t limit = cap - SPACK_ROOM;
    int status = RUN;
    int32_t cur = (int32_t)s[CUR];
    for (;;) {
        if (cur >= 0) {
            if (o->n > limit)
                break;
            if (!put(o, cur)) {
                status = LONG_RECORD;
                break;
            }
            if (z.sp) {
                z.sp--;
                cur = descend(&z, z.stk[z.sp]);
                if (cur < 0) {
                    status = BAD_CODE;
                    break;
                }
                continue;
            }
            cur = -1;
            int32_t g = (int32_t)(s[PEND] >> 1);
            if (s[PEND] & 1) {
                int64_t node = s[AVAIL];
                if (BAD(node)) {
                    status = BAD_CODE;
                    break;
                }
                s[AVAIL] = z.n[node].c;
                int32_t h = (int32_t)s[PREV];
                z.n[node].l = h;
                z.n[node].r = g;
                if (!(bump_ref(&z, h) && bump_ref(&z, g) && lru_add(&z, (int32_t)node))) {
                    status = BAD_CODE;
                    break;
                }
            }
            s[PREV] = g;
            s[PEND] = 0;
            continue;
        }
        int32_t g = code_at(raw, n, base, k);
        s[CURCODE] = k;
        if (g < 0) {
            status = CUT;
            break;
        }
        k++;
        if (g == 0) {
            status = END;
            break;
        }
        if (s[STARTED]) {
            if (s[AVAIL] == NONE && !lru_kill(&z)) {
                status = BAD_CODE;
                break;
            }
            s[PEND] = ((int64_t)g << 1) | 1;
        } else {
            s[STARTED] = 1;
            s[PEND] = (int64_t)g << 1;
        }
        cur = descend(&z, g);
        if (cur < 0) {
            status = BAD_CODE;
            break;
        }
    }
    s[CODE] = k;
    s[STATUS] = status;
    s[CUR] = cur;
    s[SP] = z.sp;
}

static PyObject *step(PyObject *self, PyObject *args)
{
    Py_buffer sb, rb, ob;
    Py_ssize_t olen;
    if (!PyArg_ParseTuple(args, "w*y*w*n", &sb, &rb, &ob, &olen))
        return NULL;
    PyObject *res = NULL;
    if (sb.len != (Py_ssize_t)(SIZE * sizeof(int64_t)) || olen < 0 || olen > ob.len) {
        PyErr_SetString(PyExc_ValueError, "step: bad state size or output length");
        goto done;
    }
    int64_t *s = (int64_t *)sb.buf;
    int32_t *t = (int32_t *)PyMem_Malloc((4 * TREE + STACK_MAX) * sizeof(int32_t));
    Node *nodes = (Node *)PyMem_Malloc(TREE * sizeof(Node));
    if (t == NULL || nodes == NULL) {
        PyMem_Free(t);
        PyMem_Free(nodes);
        PyErr_NoMemory();
        goto done;
    }
    Out o = {(unsigned char *)ob.buf, olen, (int)s[VAR], s[MAXREC], s[RECSTART], s[RECORDS]};
    const unsigned char *r = (const unsigned char *)rb.buf;
    if (s[MODE] == 0) {               /* PACK: tables in -> nodes, run, nodes -> tables out */
        int64_t *a = s + HEAD;
        for (int i = 0; i < TREE; i++) {
            nodes[i].fa = (int16_t)a[i];
            nodes[i].ext = (int16_t)a[TREE + i];
            nodes[i].bw = (int16_t)a[2 * TREE + i];
            nodes[i].fw = (int16_t)a[3 * TREE + i];
        }
        Py_BEGIN_ALLOW_THREADS
        run_pack(s, nodes, r, rb.len, &o, ob.len);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < TREE; i++) {
            a[i] = nodes[i].fa;
            a[TREE + i] = nodes[i].ext;
            a[2 * TREE + i] = nodes[i].bw;
            a[3 * TREE + i] = nodes[i].fw;
        }
    } else {                          /* SPACK: tables in -> pairs + stack, run, back out */
        int64_t *a = s + HEAD;
        Pair *pairs = (Pair *)t;
        int32_t *stk = t + 4 * TREE;
        for (int i = 0; i < TREE; i++) {
            pairs[i].l = (int32_t)a[i];
            pairs[i].r = (int32_t)a[TREE + i];
            pairs[i].b = (int32_t)a[2 * TREE + i];
            pairs[i].c = (int32_t)a[3 * TREE + i];
        }
        for (int i = 0; i < STACK_MAX; i++)
            stk[i] = (int32_t)a[4 * TREE + i];
        Py_BEGIN_ALLOW_THREADS
        run_spack(s, pairs, stk, r, rb.len, &o, ob.len);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < TREE; i++) {
            a[i] = pairs[i].l;
            a[TREE + i] = pairs[i].r;
            a[2 * TREE + i] = pairs[i].b;
            a[3 * TREE + i] = pairs[i].c;
        }
        for (int i = 0; i < STACK_MAX; i++)
            a[4 * TREE + i] = stk[i];
    }
    PyMem_Free(t);
    PyMem_Free(nodes);
    s[RECSTART] = o.rs;
    s[RECORDS] = o.recs;
    res = PyLong_FromSsize_t(o.n);
done:
    PyBuffer_Release(&sb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&ob);
    return res;
}

static PyMethodDef methods[] = {
    {"step", step, METH_VARARGS, "step(state, raw, out, olen) -> olen: run the TERSE loop (see terse_codec)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_terse", "Compiled TERSE (PACK / SPACK) loops.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__terse(void)
{
    return PyModule_Create(&module);
}
