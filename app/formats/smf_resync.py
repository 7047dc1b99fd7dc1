"""SMF header checks and resynchronisation for :mod:`app.formats.smf_framing` (spec smf113.md 2.3).

The checks one RDW header must pass, the vectorised scan for candidate header
offsets, the zero-tail test, the length an SMF 113 record's own sections need,
and the resynchronisation rule after damage: a candidate is taken only when the
evidence that it is a real record is stronger than anything that contradicts it
(see :func:`resync`).
"""

from __future__ import annotations

import numpy as np

MAX_LEN = 32767          # 32,756 documented; allow the known over-long records (spec 2.3)
MIN_LEN = 18             # LEN SEG FLG RTY TME DTE SID

# A byte that ends a packed date 0cyydddF: high nibble a digit, low nibble C or F.
_DATE_END = bytes(sorted({(d << 4) | s for d in range(10) for s in (0xC, 0xF)}))
_DIGITS = bytes(sorted({(a << 4) | b for a in range(10) for b in range(10)}))


_IS_DIGITS = bytes(1 if x in _DIGITS else 0 for x in range(256))
_IS_END = bytes(1 if x in _DATE_END else 0 for x in range(256))
_NP_DIGITS = np.frombuffer(_IS_DIGITS, np.uint8).astype(bool)
_NP_END = np.frombuffer(_IS_END, np.uint8).astype(bool)
CAND_CHUNK = 1 << 20


def _candidates(buf, start: int, stop: int, inner: int = 0) -> np.ndarray:
    """Offsets p in [start, stop) where an RDW header could start: SEG zero, plausible length and a
    packed date at p + inner + 10 (one vectorised pass over the bytes; no per-byte Python)."""
    n = len(buf)
    stop = min(stop, n - 14 - inner)
    if stop <= start:
        return np.zeros(0, np.int64)
    u = np.frombuffer(buf, np.uint8, count=stop + 14 + inner - start, offset=start)
    m = stop - start
    d = inner + 10
    ok = (u[d:d + m] <= 2) & _NP_END[u[d + 3:d + 3 + m]]
    ok &= (u[2:2 + m] == 0) & (u[3:3 + m] == 0)
    idx = np.flatnonzero(ok)
    if len(idx):
        idx = idx[_NP_DIGITS[u[idx + d + 1]] & _NP_DIGITS[u[idx + d + 2]]]
        ln = (u[idx].astype(np.int64) << 8) | u[idx + 1]
        idx = idx[(ln >= MIN_LEN + inner) & (ln <= MAX_LEN)]
    return idx.astype(np.int64) + start


def _iter_candidates(buf, start: int, stop: int, inner: int = 0):
    """Candidate header offsets from ``start`` on, chunk by chunk (each byte examined once)."""
    p = start
    while p < stop:
        e = min(stop, p + CAND_CHUNK)
        for q in _candidates(buf, p, e, inner).tolist():
            yield q
        p = e



def be16(b, p: int) -> int:
    return (b[p] << 8) | b[p + 1]

def _hdr_ok(buf, p: int, n: int, inner: int = 0) -> bool:
    """Fast check of an RDW header at ``p`` (SEG zero, length, packed date) without bounds on the end."""
    if p + 14 + inner > n:
        return False
    q = p + inner
    length = (buf[p] << 8) | buf[p + 1]
    if buf[p + 2] or buf[p + 3] or length - inner < MIN_LEN or length > MAX_LEN:
        return False
    if inner and (((buf[q] << 8) | buf[q + 1]) != length - inner or buf[q + 2] or buf[q + 3]):
        return False
    c, y, d, e = buf[q + 10], buf[q + 11], buf[q + 12], buf[q + 13]
    if c > 2 or not (_IS_DIGITS[y] and _IS_DIGITS[d] and _IS_END[e]):
        return False
    return 1 <= (d >> 4) * 100 + (d & 0xF) * 10 + (e >> 4) <= 366     # packed_date_ok, inlined for speed


def _last_nonzero(buf) -> int:
    """Offset of the last non-zero byte of ``buf`` (-1 when all zero), scanning back from the end in chunks."""
    n = len(buf)
    end = n
    step = 1 << 16
    while end > 0:
        start = max(0, end - step)
        a = np.frombuffer(buf, np.uint8, count=end - start, offset=start)
        nz = np.flatnonzero(a)
        if len(nz):
            return start + int(nz[-1])
        end = start
        step = min(step * 4, 1 << 24)
    return -1


_LNZ: dict[int, tuple[object, int]] = {}


def _zero_tail(buf, p: int) -> bool:
    """True when every byte from ``p`` to the end is zero (the last non-zero offset is cached per buffer)."""
    key = id(buf)
    hit = _LNZ.get(key)
    if hit is None or hit[0] is not buf:
        _LNZ.clear()
        hit = _LNZ[key] = (buf, _last_nonzero(buf))
    return p > hit[1]


def _stripped113_length(buf, p: int) -> int | None:
    """Largest end of all sections (record offsets that assume the RDW) minus 4 (spec 2.3)."""
    r = p - 4                                  # virtual record start
    n = len(buf)

    def u(off: int, k: int) -> int:
        a = r + off
        if a < p or a + k > n:
            raise IndexError
        return int.from_bytes(bytes(buf[a:a + k]), "big")

    try:
        ends = [28 + u(26, 2)]
        for t in (28, 36, 44):
            o, ln, num = u(t, 4), u(t + 4, 2), u(t + 6, 2)
            if num:
                ends.append(o + ln * num)
        dof, sty = u(44, 4), u(22, 2)
        if sty == 2:
            cs = dof + 24
            ends += [u(cs, 4) + u(cs + 4, 2) * u(cs + 6, 2), u(cs + 8, 4) + u(cs + 12, 2) * u(cs + 14, 2)]
        elif sty == 1:
            csof, csln, cson = u(dof + 52, 4), u(dof + 56, 2), u(dof + 58, 2)
            ends.append(csof + csln * cson)
            if cson > 64:
                raise IndexError
            for i in range(cson):
                e = csof + i * csln
                ends.append(u(e + 4, 4) + u(e + 8, 2) * u(e + 10, 2))
    except IndexError:
        return None
    length = max(ends) - 4
    return length if 14 <= length <= MAX_LEN else None


STRAY = 8                # stray bytes between records that resynchronisation steps over


def resync(w, start: int, inner: int = 0) -> int | None:
    """Next position >= ``start`` where reading resumes after damage (``w``: the framing walker), or None.

    A candidate is a valid header (:func:`_hdr_ok`) whose record fits the file.  It is *confirmed* when another
    valid header follows its end (directly or after up to :data:`STRAY` stray bytes): two headers chained by
    one length field.  A candidate whose end only reaches the end of the file or a zero tail is *weak*: a
    false header inside damaged bytes has a random length, and a random length often lands in the zero
    padding at the end of a file, where it would swallow every real record after it.  So a weak candidate is
    taken only when no confirmed candidate follows it (it is then the file's last record).

    Candidates come from one vectorised scan per 1 MiB chunk (cached by the walker), so resynchronising over
    damaged data stays linear in its size: the scan goes past a weak candidate at most once, to the end.
    """
    buf, n = w.buf, w.n
    weak: int | None = None
    p = start
    while p < n:
        for q in w.candidates_from(p, inner).tolist():
            if not _hdr_ok(buf, q, n, inner):
                continue
            end = q + be16(buf, q)
            if end > n:
                continue
            if any(_hdr_ok(buf, end + k, n, inner) for k in range(STRAY + 1)):
                return q
            if weak is None and (n - end <= STRAY or _zero_tail(buf, end)):
                weak = q
        lo, hi, _c = w._cand[inner]
        if hi >= n - 14 - inner:
            return weak
        p = hi
        w.poll(p)
    return weak


def header_but_length(buf, p: int, n: int, inner: int = 0) -> bool:
    """Does a record header start at ``p`` whose fields pass :func:`_hdr_ok` except the length (SEG zero, a
    record type, a packed date)?  That is a record whose length field alone is damaged (X'0000', X'FFFF',
    X'0003'...): random bytes pass this with a chance of about 1 in 10 million."""
    if p + 14 + inner > n or buf[p + 2] or buf[p + 3] or (inner and (buf[p + inner + 2] or buf[p + inner + 3])):
        return False
    q = p + inner
    c, y, d, e = buf[q + 10], buf[q + 11], buf[q + 12], buf[q + 13]
    return (c <= 2 and bool(_IS_DIGITS[y] and _IS_DIGITS[d] and _IS_END[e])
            and 1 <= (d >> 4) * 100 + (d & 0xF) * 10 + (e >> 4) <= 366)


def whole_before(buf, p: int, end: int, inner: int = 0) -> bool:
    """Was the record at ``p`` (ending at ``end``, where no valid header starts) read whole?  Yes when a header
    with only its length damaged starts at ``end`` and, for an SMF 113 record, its own sections fill it exactly.
    Resynchronisation then resumes after it, never at a header-like pattern inside it; without that evidence
    (e.g. a record cut short and followed at once by the next), a valid chain inside it wins."""
    if not header_but_length(buf, end, len(buf), inner):
        return False
    r, length = p + inner, end - p - inner
    if length < 52 or buf[r + 5] != 113:
        return True
    sl = _stripped113_length(memoryview(buf)[:end], r + 4)
    return sl is not None and sl + 4 == length


CUT_ZEROS = 64           # zero bytes at a last record's end, running into zero padding, that may mean "cut"
SAME_SHAPE_BACK = 16     # earlier records looked at for the zeros a record of the same type and length ends in


def _trailing_zeros(rec) -> int:
    a = np.frombuffer(rec, np.uint8)
    nz = np.flatnonzero(a)
    return len(a) - 1 - int(nz[-1]) if len(nz) else len(a)


def _usual_zeros(records, off: int, ln: int) -> int | None:
    """Most zero bytes an earlier record of the same type and length (among the last few) ends in; None when
    there is none to compare with."""
    if not hasattr(records, "pop"):           # (a clean walk's spans: never looked at here)
        return None
    best = None
    for o, rec in reversed(records[-SAME_SHAPE_BACK - 1:]):
        if o == off or len(rec) != ln or rec[5] != records[-1][1][5]:
            continue
        z = _trailing_zeros(rec)
        best = z if best is None else max(best, z)
    return best


def zero_stop(w, p: int) -> None:
    """The rest of the file from ``p`` is zeros (``w``: the framing walker).  The last record, when it ends in
    at least :data:`CUT_ZEROS` zero bytes running into that padding, was most likely cut and padded: it is not
    loaded as complete, unless

    * fewer than 4 zero bytes follow it (too short for padding to a block: the file was cut just inside the
      next record's descriptor, whose first byte is zero for a record under 256 bytes), or
    * an earlier record of the same type and length ends in as many zero bytes (then its zeros are its normal
      content, e.g. counters that stay zero).
    """
    if w.last is None or p >= w.n:
        return
    off, ln, wanted = w.last
    end = off + ln
    lnz = _LNZ.get(id(w.buf), (None, p - 1))[1]
    if end != p or lnz >= end - CUT_ZEROS:
        return
    zeros, pad = end - lnz - 1, w.n - p
    mine = wanted and hasattr(w.out.records, "pop") and len(w.out.records) and w.out.records[-1][0] == off
    if pad < 4:
        w.find("warning", "truncated-record", p, f"{pad} zero byte(s) after the last record are too short for a "
               "record descriptor: the file was most likely cut just inside the next record's descriptor",
               f"they were ignored; the record at offset {off} (ending in {zeros} zero bytes) was loaded whole")
        return
    usual = _usual_zeros(w.out.records, off, ln) if mine else None
    if usual is not None and usual >= zeros:       # its zeros are what records of its type and length hold
        w.find("info", "zero-padding", p, f"the file ends in {pad} zero bytes after a record (at offset {off}) "
               f"that ends in {zeros} zero bytes, as earlier records of its type and length do",
               "the record was loaded as complete; should the file have been cut inside it and padded, the "
               "records after it are missing: compare the record count with the source")
        return
    if mine:
        w.out.records.pop()
    w.find("warning", "truncated-record", lnz + 1, f"the record at offset {off} ends in {zeros} zero bytes that "
           f"run on into {pad} bytes of zero padding up to the end of the file: the file was most likely cut "
           "inside this record and padded with zeros", "the record was not loaded (its counters would be partly "
           "zeros)")


def _tiles(buf, q: int, end: int) -> bool:
    """Do valid segment descriptors tile [q, end) exactly?"""
    while q < end:
        if q + 4 > end:
            return False
        sl, ctl = be16(buf, q), buf[q + 2]
        if sl < 5 or buf[q + 3] or ctl & 0xFC or q + sl > end or ((ctl & 3) == 0 and sl < MIN_LEN):
            return False
        q += sl
    return True


def in_block(w, q: int, b: int, bl: int, what: str) -> int | None:
    """A bad segment descriptor at ``q`` in the block at ``b`` of length ``bl``: the first offset after it
    from which the descriptors of complete SMF records tile the rest of the block exactly (the records after
    a damaged one are intact and are read), with a finding; None when there is none, or when the block's own
    length is in doubt (it runs past the end of the file, or no block descriptor follows it): the caller then
    skips to the next valid block as before."""
    buf, n = w.buf, w.n
    end = b + bl
    if end > n or (end < n and (end + 8 > n or buf[end + 2] or buf[end + 3] or be16(buf, end) < 8
                                or be16(buf, end + 4) < 5 or buf[end + 6] & 0xFC or buf[end + 7])):
        return None
    for r in _candidates(buf, q + 1, end).tolist():
        if _tiles(buf, r, end):
            w.find("error", "corrupt-length", q, f"{what} in the block at offset {b}", f"skipped {r - q} bytes; "
                   f"resumed at offset {r}, from where valid records fill the rest of the block")
            return r
    return None
