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
