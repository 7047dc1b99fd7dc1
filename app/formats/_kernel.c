/*
 * Optional compiled kernel of the SMF 113 reader (app.formats.kernel wraps it).
 *
 * Loops that numpy cannot run at memory speed:
 *   rdw_walk       follows a chain of record descriptor words and records the offset of every record;
 *   gather_fields  copies big-endian unsigned fields (1 to 8 bytes) of every row of a (rows x bytes) matrix into
 *                  a native uint64 (rows x fields) block: a record shape's identity fields, or a counter set
 *                  (adjacent 8-byte fields: one straight byte-swapping copy per row);
 *   rows_at        the first bytes of every record of a file as one (records x width) byte matrix;
 *   first_other_row  whether the records of a group share some bytes (their layout fields), without copies;
 *   rdw_low_times  the earliest sample time (CTM) per system of the SMF 113 records along an RDW chain, in one
 *                  pass over their headers (the progressive open's walk of a big file's rest).
 * Both only read their input and write into buffers the caller allocated; the pure-numpy path in
 * app/formats gives the same results and is used when this module is not built (tests compare the two).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(_MSC_VER)
#include <stdlib.h>
#define bswap64(x) _byteswap_uint64(x)
#define bswap32(x) _byteswap_ulong(x)
#else
#define bswap64(x) __builtin_bswap64(x)
#define bswap32(x) __builtin_bswap32(x)
#endif

static inline uint64_t load_be(const unsigned char *p, int w)
{
    switch (w) {
    case 8: {
        uint64_t v;
        memcpy(&v, p, 8);
        return bswap64(v);
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return (uint64_t)bswap32(v);
    }
    case 2:
        return ((uint64_t)p[0] << 8) | p[1];
    case 1:
        return p[0];
    default: {
        uint64_t v = 0;
        for (int i = 0; i < w; i++)
            v = (v << 8) | p[i];
        return v;
    }
    }
}

/* rdw_walk(buf, pos, stop, least, out) -> (records, pos, status)
 *   Walks RDW-framed records from byte ``pos`` while the position is below ``stop`` and ``out`` (a writable
 *   int64 buffer) has room: each record's offset goes to ``out``, then the position moves on by the record's
 *   length (the first two bytes, big-endian).
 *   status 0: fewer than 4 bytes are left (the walk is over; ``pos`` tells whether it ended exactly);
 *   status 1: ``stop`` or the end of ``out`` was reached (call again from ``pos``);
 *   status -1: the length at ``pos`` is below ``least`` (not a clean chain; nothing recorded for it). */
static PyObject *rdw_walk(PyObject *self, PyObject *args)
{
    Py_buffer buf, out;
    Py_ssize_t pos, stop, least;
    if (!PyArg_ParseTuple(args, "y*nnnw*", &buf, &pos, &stop, &least, &out))
        return NULL;
    const unsigned char *b = (const unsigned char *)buf.buf;
    Py_ssize_t n = buf.len, k = 0, cap = out.len / (Py_ssize_t)sizeof(int64_t);
    int64_t *o = (int64_t *)out.buf;
    int status = 1;
    if (pos < 0)
        pos = 0;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        if (pos + 4 > n) {
            status = 0;
            break;
        }
        if (pos >= stop || k >= cap)
            break;
        Py_ssize_t len = ((Py_ssize_t)b[pos] << 8) | b[pos + 1];
        if (len < least) {
            status = -1;
            break;
        }
        o[k++] = (int64_t)pos;
        pos += len;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    PyBuffer_Release(&out);
    return Py_BuildValue("nni", k, pos, status);
}

/* The (rows x bytes) matrix and the int64 (offset, width) spans that gather_fields and first_other_row take,
 * checked: 0 with ``m`` held, or -1 with an exception set and ``m`` not held.  Widths must lie in
 * [wmin, wmax] and every span inside a row. */
static int take_spans(const char *who, PyObject *mobj, const Py_buffer *offs, const Py_buffer *widths,
                      int64_t wmin, int64_t wmax, Py_buffer *m)
{
    if (widths->len != offs->len) {
        PyErr_Format(PyExc_ValueError, "%s: offsets and widths differ in length", who);
        return -1;
    }
    if (PyObject_GetBuffer(mobj, m, PyBUF_STRIDES) < 0)
        return -1;
    if (m->ndim != 2 || m->itemsize != 1 || m->strides[1] != 1) {
        PyErr_Format(PyExc_ValueError, "%s: need a 2-D byte matrix with adjacent bytes in a row", who);
        PyBuffer_Release(m);
        return -1;
    }
    Py_ssize_t n = offs->len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *o = (const int64_t *)offs->buf, *w = (const int64_t *)widths->buf;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (w[j] < wmin || w[j] > wmax || o[j] < 0 || o[j] + w[j] > m->shape[1]) {
            PyErr_Format(PyExc_ValueError, "%s: field outside the row", who);
            PyBuffer_Release(m);
            return -1;
        }
    }
    return 0;
}

/* gather_fields(matrix, offsets, widths, out)
 *   ``matrix``: a 2-D byte buffer whose rows may be strided but whose bytes within a row are adjacent (a numpy
 *   uint8 view); ``offsets`` and ``widths``: int64 buffers of nf entries; ``out``: a writable C-contiguous
 *   buffer of rows * nf uint64.  out[r * nf + j] = the big-endian unsigned widths[j]-byte value at
 *   matrix[r, offsets[j]].  One pass over the rows for all the fields. */
static PyObject *gather_fields(PyObject *self, PyObject *args)
{
    PyObject *mobj;
    Py_buffer offs, widths, out;
    if (!PyArg_ParseTuple(args, "Oy*y*w*", &mobj, &offs, &widths, &out))
        return NULL;
    Py_buffer m;
    PyObject *result = NULL;
    int have_m = 0;
    Py_ssize_t nf = offs.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *fo = (const int64_t *)offs.buf, *fw = (const int64_t *)widths.buf;
    if (take_spans("gather_fields", mobj, &offs, &widths, 1, 8, &m) < 0)
        goto done;
    have_m = 1;
    Py_ssize_t rows = m.shape[0], step = m.strides[0];
    if (out.len < rows * nf * (Py_ssize_t)sizeof(uint64_t)) {
        PyErr_SetString(PyExc_ValueError, "gather_fields: output buffer too small");
        goto done;
    }
    {
        /* adjacent 8-byte fields (a counter set): one straight byte-swapping copy per row */
        int run8 = nf > 0, all8 = nf > 0;
        for (Py_ssize_t j = 0; j < nf && run8; j++)
            run8 = fw[j] == 8 && fo[j] == fo[0] + 8 * j;
        for (Py_ssize_t j = 0; j < nf && all8; j++)
            all8 = fw[j] == 8;
        const unsigned char *base = (const unsigned char *)m.buf;
        uint64_t *o = (uint64_t *)out.buf;
        Py_BEGIN_ALLOW_THREADS
        if (run8) {
            for (Py_ssize_t r = 0; r < rows; r++) {
                const unsigned char *p = base + r * step + fo[0];
                uint64_t *q = o + r * nf;
                for (Py_ssize_t j = 0; j < nf; j++) {
                    uint64_t v;
                    memcpy(&v, p + 8 * j, 8);
                    q[j] = bswap64(v);
                }
            }
        } else if (all8) {
            /* 8-byte fields here and there (the counters a caller asked for): a byte-swapping load each */
            for (Py_ssize_t r = 0; r < rows; r++) {
                const unsigned char *p = base + r * step;
                uint64_t *q = o + r * nf;
                for (Py_ssize_t j = 0; j < nf; j++) {
                    uint64_t v;
                    memcpy(&v, p + fo[j], 8);
                    q[j] = bswap64(v);
                }
            }
        } else {
            for (Py_ssize_t r = 0; r < rows; r++) {
                const unsigned char *p = base + r * step;
                uint64_t *q = o + r * nf;
                for (Py_ssize_t j = 0; j < nf; j++)
                    q[j] = load_be(p + fo[j], (int)fw[j]);
            }
        }
        Py_END_ALLOW_THREADS
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    if (have_m)
        PyBuffer_Release(&m);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&widths);
    PyBuffer_Release(&out);
    return result;
}

/* rows_at(buf, offsets, width, out)
 *   Copies ``width`` bytes of ``buf`` from every offset of the int64 buffer ``offsets`` into the writable
 *   (len(offsets) x width) byte buffer ``out``; bytes past the end of ``buf`` are zero (record headers of a
 *   whole file in one pass, for checks done column by column). */
static PyObject *rows_at(PyObject *self, PyObject *args)
{
    Py_buffer buf, offs, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*nw*", &buf, &offs, &width, &out))
        return NULL;
    Py_ssize_t n = offs.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *result = NULL;
    if (width < 0 || out.len < n * width) {
        PyErr_SetString(PyExc_ValueError, "rows_at: output buffer too small");
        goto done;
    }
    {
        const unsigned char *b = (const unsigned char *)buf.buf;
        const int64_t *o = (const int64_t *)offs.buf;
        unsigned char *q = (unsigned char *)out.buf;
        Py_ssize_t len = buf.len;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++, q += width) {
            int64_t a = o[i];
            Py_ssize_t have = (a < 0 || a >= len) ? 0 : (len - a < width ? len - a : width);
            if (have)
                memcpy(q, b + a, (size_t)have);
            memset(q + have, 0, (size_t)(width - have));            /* past the end of buf: zeros */
        }
        Py_END_ALLOW_THREADS
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&out);
    return result;
}

/* first_other_row(matrix, offsets, widths) -> int
 *   ``matrix``: as for gather_fields.  The first row whose bytes in the spans (offsets[j], widths[j]) differ
 *   from row 0's, or -1 when every row has row 0's bytes there (one record shape: the usual file), found in one
 *   pass over the rows without copying them. */
static PyObject *first_other_row(PyObject *self, PyObject *args)
{
    PyObject *mobj;
    Py_buffer offs, widths, m;
    if (!PyArg_ParseTuple(args, "Oy*y*", &mobj, &offs, &widths))
        return NULL;
    PyObject *result = NULL;
    int have_m = 0;
    Py_ssize_t ns = offs.len / (Py_ssize_t)sizeof(int64_t), found = -1;
    const int64_t *so = (const int64_t *)offs.buf, *sw = (const int64_t *)widths.buf;
    if (take_spans("first_other_row", mobj, &offs, &widths, 0, PY_SSIZE_T_MAX, &m) < 0)
        goto done;
    have_m = 1;
    {
        const unsigned char *base = (const unsigned char *)m.buf;
        Py_ssize_t rows = m.shape[0], step = m.strides[0];
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 1; r < rows && found < 0; r++) {
            const unsigned char *p = base + r * step;
            for (Py_ssize_t j = 0; j < ns; j++) {
                if (memcmp(p + so[j], base + so[j], (size_t)sw[j]) != 0) {
                    found = r;
                    break;
                }
            }
        }
        Py_END_ALLOW_THREADS
    }
    result = PyLong_FromSsize_t(found);
done:
    if (have_m)
        PyBuffer_Release(&m);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&widths);
    return result;
}

/* rdw_low_times(buf, pos, stop, least, layout, sids, lows, nsid) -> (nsid, pos, status)
 *   Walks RDW-framed records of ``buf`` from ``pos`` while the position is below ``stop``.  ``layout``: an int64
 *   buffer of 7 entries (record type, offsets of its type byte, subtype, system id and data-section offset,
 *   offsets of the sample time in the data section of subtypes 1 and 2).  Of every record of that type, the
 *   8-byte big-endian time at data offset + the subtype's time offset is taken (a time of 0: none) and the
 *   lowest per 4-byte system id is kept in ``sids`` (uint32) / ``lows`` (uint64), whose first ``nsid`` entries
 *   are in use; the new count is returned.
 *   status 0: fewer than 4 bytes are left; 1: ``stop`` was reached (call again from ``pos``); 2: the record at
 *   ``pos`` runs past the end of ``buf`` (call again with more bytes from ``pos``); -1: the length at ``pos``
 *   is below ``least``; -2: a record of the type this walk cannot take apart (a subtype other than 1 and 2, a
 *   data offset inside the header, the time past the record's end); -3: more systems than ``sids`` holds. */
static PyObject *rdw_low_times(PyObject *self, PyObject *args)
{
    Py_buffer buf, lay, sidb, lowb;
    Py_ssize_t pos, stop, least, nsid;
    if (!PyArg_ParseTuple(args, "y*nnny*w*w*n", &buf, &pos, &stop, &least, &lay, &sidb, &lowb, &nsid))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t cap = sidb.len / (Py_ssize_t)sizeof(uint32_t);
    if (lowb.len / (Py_ssize_t)sizeof(uint64_t) < cap)
        cap = lowb.len / (Py_ssize_t)sizeof(uint64_t);
    if (lay.len < 7 * (Py_ssize_t)sizeof(int64_t) || nsid < 0 || nsid > cap) {
        PyErr_SetString(PyExc_ValueError, "rdw_low_times: bad layout or system table");
        goto done;
    }
    {
        const int64_t *L = (const int64_t *)lay.buf;
        const int64_t rty = L[0], o_rty = L[1], o_sty = L[2], o_sid = L[3], o_dof = L[4], ctm1 = L[5], ctm2 = L[6];
        const unsigned char *b = (const unsigned char *)buf.buf;
        uint32_t *sids = (uint32_t *)sidb.buf;
        uint64_t *lows = (uint64_t *)lowb.buf;
        Py_ssize_t n = buf.len, head = o_dof + 4;
        int status = 1;
        if (pos < 0)
            pos = 0;
        if (o_rty < 0 || o_rty >= least || o_sty < 0 || o_sid < 0 || o_dof < 0 ||
            o_sty + 2 > head || o_sid + 4 > head) {
            PyErr_SetString(PyExc_ValueError, "rdw_low_times: layout fields outside the header");
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        for (;;) {
            if (pos + 4 > n) {
                status = 0;
                break;
            }
            if (pos >= stop)
                break;
            const unsigned char *p = b + pos;
            Py_ssize_t len = ((Py_ssize_t)p[0] << 8) | p[1];
            if (len < least) {
                status = -1;
                break;
            }
            if (pos + len > n) {
                status = 2;
                break;
            }
            if (p[o_rty] == rty) {
                if (len < head) {
                    status = -2;
                    break;
                }
                uint64_t sty = load_be(p + o_sty, 2);
                int64_t dof = (int64_t)load_be(p + o_dof, 4);
                int64_t at = dof + (sty == 2 ? ctm2 : ctm1);
                if ((sty != 1 && sty != 2) || dof < head || at + 8 > len) {
                    status = -2;
                    break;
                }
                uint64_t tod = load_be(p + at, 8);
                if (tod != 0) {
                    uint32_t sid = (uint32_t)load_be(p + o_sid, 4);
                    Py_ssize_t j = 0;
                    while (j < nsid && sids[j] != sid)
                        j++;
                    if (j == nsid) {
                        if (nsid == cap) {
                            status = -3;
                            break;
                        }
                        sids[nsid] = sid;
                        lows[nsid++] = tod;
                    } else if (tod < lows[j]) {
                        lows[j] = tod;
                    }
                }
            }
            pos += len;
        }
        Py_END_ALLOW_THREADS
        result = Py_BuildValue("nni", nsid, pos, status);
    }
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&lay);
    PyBuffer_Release(&sidb);
    PyBuffer_Release(&lowb);
    return result;
}

static PyMethodDef methods[] = {
    {"first_other_row", first_other_row, METH_VARARGS, "First row differing from row 0 in some spans (see kernel.py)."},
    {"rdw_walk", rdw_walk, METH_VARARGS, "Record offsets along an RDW chain (see app/formats/kernel.py)."},
    {"gather_fields", gather_fields, METH_VARARGS, "Several big-endian fields of every row (see kernel.py)."},
    {"rows_at", rows_at, METH_VARARGS, "The first bytes of many records as one matrix (see kernel.py)."},
    {"rdw_low_times", rdw_low_times, METH_VARARGS, "Earliest SMF 113 sample time per system (see kernel.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", "Compiled loops of the SMF 113 reader.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
