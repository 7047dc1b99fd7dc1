"""z/VM MONWRITE blocks: what a control record (MWTBK) and its DCSS pages look like, how a MONWRITE file is told
from other data (ASCII transfers, VMARC/PACK), and how an RDW-wrapped copy is deblocked (monwrite.md 1.3-1.7).
Shared by the careful walk (:mod:`app.formats.monwrite`) and the clean fast path (:mod:`app.formats.monwrite_fast`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from app.formats import monwrite_records as R
from app.formats.common import to_ebcdic


_NAMES = {(5, 13): "D5R13", (5, 20): "D5R20", (0, 2): "D0R2", (0, 15): "D0R15", (0, 16): "D0R16",
          (1, 4): "D1R4", (1, 5): "D1R5", (1, 11): "D1R11", (1, 13): "D1R13"}
_MAX_PER_CODE = 25
# hot-path bindings (the record loop runs once per monitor record)
_MFC = R.MFC.unpack_from
_MFC_FIXED = R.MFC_FIXED
_P_BIT = R.P_BIT
_TOD = struct.Struct(">Q").unpack_from
_MT_NAMES = tuple(name for name, _o in R.MT_FIELDS)
_decode_d0r2_at = R.decode_d0r2_at
_RETRANSFER = ("transfer it again in binary (image) mode, e.g. ftp> binary then "
               "GET fn MONDATA fm, and load the new copy")


# ------------------------------------------------------------------ detection
def _control_entries(data: bytes, off: int, lenient: bool = False) -> list[tuple[int, int, int, int, int]] | None:
    """Validate the control record at ``off`` (monwrite.md §1.2, §1.4); ``lenient`` ignores the IPTYPE byte."""
    if off + R.CA_OFF + 12 > len(data):
        return None
    _p, _f, typ, _m, _c, m1, m2 = R.IPARML.unpack_from(data, off)
    size = m2 - m1 + 1
    if (typ not in R.IPTYPE_OK and not lenient) or size <= 0 or size % 12 or size // 12 > R.CA_MAX:
        return None
    k = size // 12
    if off + R.CA_OFF + 12 * k > len(data):
        return None
    ents = []
    for i in range(k):
        fl, d1, d2, _r, s, t = R.CA_ENTRY.unpack_from(data, off + R.CA_OFF + 12 * i)
        if fl not in (R.ENTRY_SAMPLE, R.ENTRY_EVENT) or not (d1 or d2) or t < s or (t - s) >> 28:
            return None
        ents.append((fl, d1, d2, s, t))
    return ents


def _hdr_ok(data: bytes, fo: int, a: int) -> bool:
    """Is there a plausible MRRECHDR at file offset ``fo`` (DCSS address ``a``)?"""
    if fo < 0 or fo + R.HDR_LEN > len(data):
        return False
    ln, z, dom, _f, _rc = R.HDR_NOTOD.unpack_from(data, fo)
    return ln >= R.HDR_LEN and z == 0 and dom <= R.MAX_DOMAIN and (a & 0xFFF) + ln <= R.PAGE


def _block_ok(data: bytes, off: int) -> bool:
    """Control record valid and (if present in ``data``) its first record too."""
    ents = _control_entries(data, off)
    if ents is None:
        return False
    s = ents[0][3]
    fo = off + R.PAGE + (s & 0xFFF)
    return fo + R.HDR_LEN > len(data) or _hdr_ok(data, fo, s) or _hdr_ok(data, off + R.PAGE, s)


def _ascii_evidence(data: bytes) -> bool:
    """A MONWRITE file pulled in ASCII mode: X'E2'/X'C5' became 'S'/'E', CR LF added."""
    if len(data) < 64 or data[40] not in (0x53, 0x45) or not (data[41] or data[42]):
        return False
    line_end = data[R.PAGE:R.PAGE + 2] == b"\r\n" or data[R.PAGE:R.PAGE + 1] == b"\n"
    return line_end or (data[3] in (0x8D, 0x97) and len(data) % R.PAGE != 0)


def _packed_evidence(data: bytes) -> str | None:
    """CMS packed / archived container of a MONDATA file (heuristics, UNCONFIRMED)."""
    if data[:2] in (b"\xcb\xff", b"\xcb\xfe"):
        return "a CMS packed file (COPYFILE PACK)"
    if data[:4] == b"\x02" + to_ebcdic("CMS", 3):
        return "a CMS TAPE DUMP image"
    if data[2:4] != b"\x00\x00" and to_ebcdic("MONDATA", 7) in data[:512]:
        return "an archive (VMARC or similar) holding a MONDATA file"
    return None


BACK_OFF = 64               # a control record may start up to this many bytes early (bytes lost before it)
LOOK_PAST_PAGES = 256       # how many 4 KB records detection looks at past a damaged start


def looks_like_monwrite(data: bytes) -> bool:
    """True when ``data`` starts like a MONWRITE file (raw, RDW-wrapped, or damaged by transfer).

    A damaged first block does not hide the file: any of the first
    :data:`LOOK_PAST_PAGES` 4 KB records that is a valid control record, or two
    RDWs of 4100-byte records 4100 bytes apart, is enough.
    """
    if _block_ok(data, 0):
        return True
    for o in (4, 8):                        # RDW, or BDW + RDW, before each 4096-byte record
        if data[o - 4:o] == R.RDW_4100 and (o == 4 or data[2:4] == b"\x00\x00"):
            if _block_ok(data[o:o + R.PAGE] + data[o + R.PAGE + 4:o + 2 * R.PAGE + 4], 0):
                return True
    if _ascii_evidence(data) or _packed_evidence(data) is not None:
        return True
    return _late_block(data) is not None or _rdw_stride(data)


def _late_block(data) -> int | None:
    """Offset of the first valid control record after a damaged start (at any byte offset, within the
    first LOOK_PAST_PAGES x 4 KB)."""
    q = _next_block(memoryview(data)[:min(len(data), (LOOK_PAST_PAGES + 1) * R.PAGE)], 1)
    return q


def _next_block(data, start: int, stop: int | None = None) -> int | None:
    """First offset >= start (at any byte, so inserted or lost bytes do not hide it) where a valid control
    record starts; one vectorised pass over the bytes (IPTYPE byte and first entry flag), then validation."""
    n = len(data)
    chunk = 1 << 20
    p = start
    last = n - R.PAGE + 1 if stop is None else min(n - R.PAGE + 1, stop)
    while p < last:
        e = min(last, p + chunk)
        u = np.frombuffer(data, np.uint8, count=e - p + 41, offset=p)
        m = e - p
        t, f = u[3:3 + m], u[40:40 + m]
        cand = np.flatnonzero(((t == 8) | (t == 9)) & ((f == R.ENTRY_SAMPLE) | (f == R.ENTRY_EVENT)))
        for c in cand.tolist():
            if _block_ok(data, p + c):
                return p + c
        p = e
    return None


def _rdw_stride(data) -> bool:
    """Two RDWs of 4100-byte records 4100 bytes apart near the start (at any offset): an RDW-wrapped copy
    whose first RDW may be damaged."""
    step = 4 + R.PAGE
    limit = min(len(data), LOOK_PAST_PAGES * step)
    q = data.find(R.RDW_4100, 0, limit)
    while q >= 0:
        if data[q + step:q + step + 4] == R.RDW_4100:
            return True
        q = data.find(R.RDW_4100, q + 1, limit)
    return False


def rdw_framed(data) -> bool:
    """True when ``data`` (a MONWRITE file, or its first :data:`DETECT_BYTES`: the answer is the same) is an
    RDW-wrapped copy: no valid block at offset 0 but an RDW (or BDW + RDW) of a 4100-byte record there, or, with
    no valid block in the first pages, RDWs 4100 bytes apart (a damaged first RDW)."""
    if _block_ok(data, 0):
        return False
    return data[:4] == R.RDW_4100 or (data[2:4] == b"\x00\x00" and data[4:8] == R.RDW_4100) or (
        _late_block(data) is None and _rdw_stride(data))


DETECT_BYTES = (LOOK_PAST_PAGES + 2) * (R.PAGE + 4)      # what :func:`rdw_framed` looks at, at most


def _deblock(data: bytes) -> tuple[bytes, list[int], list[tuple[int, str]]]:
    """Strip RDWs (and BDWs) of 4100-byte records; -> stream, file offset per page, problems
    (:func:`deblocked`)."""
    out: list[bytes] = []
    where: list[int] = []
    bad: list[tuple[int, str]] = []
    for fo, page in deblocked(data, bad):
        out.append(page)
        where.append(fo)
    return b"".join(out), where, bad


def deblocked(data, bad: list[tuple[int, str]]) -> Iterator[tuple[int, bytes]]:
    """The 4096-byte records of an RDW-wrapped ``data`` (bytes or a read-only map), each with the offset of its
    first byte in ``data``, RDWs (and BDWs) of 4100-byte records stripped; the problems met are appended to
    ``bad`` as (file offset, sentence) as they are met.

    A damaged RDW whose record is followed by a good RDW keeps its 4096 bytes;
    otherwise the walk resynchronises on the next pair of RDWs 4100 bytes apart."""
    pos, n = 0, len(data)
    step = 4 + R.PAGE
    while pos < n:
        if data[pos:pos + 4] == R.RDW_4100:
            yield pos + 4, data[pos + 4:pos + 4 + R.PAGE]
            pos += step
            continue
        bl = int.from_bytes(data[pos:pos + 2], "big")
        if data[pos + 2:pos + 4] == b"\x00\x00" and bl >= 8 and data[pos + 4:pos + 8] == R.RDW_4100:
            pos += 4
            continue
        if n - pos <= 8 and not any(data[pos:]):
            break
        if data[pos + step:pos + step + 4] == R.RDW_4100 or (pos + step == n and n - pos == step):
            bad.append((pos, f"record descriptor word {bytes(data[pos:pos + 4]).hex().upper()} is not X'10040000' "
                        "but a good one follows 4100 bytes later; the 4096 bytes of its record were read"))
            yield pos + 4, data[pos + 4:pos + 4 + R.PAGE]
            pos += step
            continue
        q = pos + 1
        while True:
            q = data.find(R.RDW_4100, q)
            if q < 0 or q + step >= n or data[q + step:q + step + 4] == R.RDW_4100:
                break
            q += 1
        if q < 0:
            bad.append((pos, f"record descriptor word {bytes(data[pos:pos + 4]).hex().upper()} is not X'10040000' "
                        f"and no good one follows; {n - pos} bytes to the end of the file were not read"))
            break
        bad.append((pos, f"record descriptor word {bytes(data[pos:pos + 4]).hex().upper()} is not X'10040000' "
                    f"(4100-byte record); {q - pos} bytes were skipped, reading resumed at offset {q}"))
        pos = q


