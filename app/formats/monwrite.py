"""z/VM MONWRITE (MONDATA) reader: bytes -> counter samples, MT rows, partitions.

File = blocks of one 4 KB control record (MWTBK) + the DCSS pages its control
area entries describe (monwrite.md §1.3-1.7).  Records are walked by MRHDRLEN,
D1R13 jumps to the next 4 KB frame, D1R11 ends a sample interval.  Byte layouts
live in :mod:`app.formats.monwrite_records` (shared with the writer).

Decoded: D1R4 (system, CEC, LPAR), D1R5 (CPU type, core), D5R13 (CPU MF
counters, P-bit series concatenated), D5R20 (MT-diagnostic counters), D0R2 (MT
metrics -> ``ReadResult.mt``), D0R15/D0R16 (-> ``ReadResult.partitions``).

D5R20 choice: MT-diagnostic counters (M448...) are attached to the D5R13 sample
row of the same CPU and interval (``sets`` gets ``SET_MT``).  Because the set
is core-wide and every thread reports it, M counters are kept only on the
thread-0 row of each core (the lowest CPU address of the core, core ids from
D1R5/D0R2); the other threads' D5R20 values are dropped (counted in
``records``, one info finding).  So the engine can sum M448/M449 per core over
rows without double counting.  When core ids are unknown every CPU keeps its
own M counters (core = -1).  A D5R20 without a D5R13 partner becomes a row with
only M counters.

Reading never raises for bad data: every inconsistency becomes a finding with
the file and the byte offset, and the walk continues at the next frame / block.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pandas as pd

from app.findings import make_finding
from app.formats import monwrite_records as R
from app.formats.common import cec_id, normalize_serial, to_ebcdic, tod_to_datetime64
from app.formats.monwrite_records import build_mt, build_partitions, build_samples
from app.formats.schema import SET_MT, Cancelled, ReadResult, empty_samples
from app.formats.smf_framing import _last_nonzero

__all__ = ["looks_like_monwrite", "read_monwrite"]

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


def _deblock(data: bytes) -> tuple[bytes, list[int], list[tuple[int, str]]]:
    """Strip RDWs (and BDWs) of 4100-byte records; -> stream, file offset per page, problems.

    A damaged RDW whose record is followed by a good RDW keeps its 4096 bytes;
    otherwise the walk resynchronises on the next pair of RDWs 4100 bytes apart.
    Each problem is (file offset, sentence)."""
    out: list[bytes] = []
    where: list[int] = []
    bad: list[tuple[int, str]] = []
    pos, n = 0, len(data)
    step = 4 + R.PAGE
    while pos < n:
        if data[pos:pos + 4] == R.RDW_4100:
            out.append(data[pos + 4:pos + 4 + R.PAGE])
            where.append(pos + 4)
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
            out.append(data[pos + 4:pos + 4 + R.PAGE])
            where.append(pos + 4)
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
    return b"".join(out), where, bad


# ------------------------------------------------------------------ walker
class _Walk:
    def __init__(self, data: bytes, file: str, pages: list[int] | None,
                 progress: Callable[[float], None] | None, cancel: Callable[[], bool] | None):
        self.data, self.file, self.pages = data, file, pages
        self.progress, self.cancel = progress, cancel
        self.findings: list = []
        self._codes: dict[str, int] = {}
        self.counts: dict[tuple[int, int], int] = {}
        self.interval = 0
        self.stop = False
        self.mode: str | None = None
        self.sys: dict | None = None
        self.cpu_cfg: dict[int, tuple] = {}        # D1R5: cpu -> (type, core)
        self.prp: dict[int, dict] = {}             # D0R2 last seen: cpu -> decoded
        self.mt_rows: list[tuple] = []
        self.cup: list[tuple] = []
        self.npar: int | None = None
        self.pending: dict[tuple[int, int], list] = {}
        self.last_mfc: tuple | None = None         # (offset, length, series item) of the last counter record
        self.lnz = _last_nonzero(data)             # offset of the last non-zero byte: zero padding after it
        self.series: list[tuple] = []              # completed (mt, interval, fo, cpu, speed, mask, cfvn, csvn, tod, flg, buf)

    # findings ------------------------------------------------------------
    def fo(self, o: int) -> int:
        if self.pages is None:
            return o
        i = o // R.PAGE
        return self.pages[i] + o % R.PAGE if i < len(self.pages) else self.pages[-1] + R.PAGE + 4

    def find(self, o: int | None, sev: str, code: str, what: str, meaning: str = "", **key) -> None:
        c = self._codes[code] = self._codes.get(code, 0) + 1
        if c <= _MAX_PER_CODE:
            self.findings.append(make_finding(self.file, None if o is None else self.fo(o), sev, code,
                                              what, meaning, **key))

    def close_findings(self) -> None:
        for code, c in self._codes.items():
            if c > _MAX_PER_CODE:
                self.findings.append(make_finding(self.file, None, "info", code + "-more",
                                                  f"{c - _MAX_PER_CODE} more '{code}' findings not listed"))

    # blocks --------------------------------------------------------------
    def run(self) -> None:
        data, n, off, nblk = self.data, len(self.data), 0, 0
        prev_off = -1
        while off < n and not self.stop:
            nblk += 1
            if nblk % 16 == 0:
                if self.cancel is not None and self.cancel():
                    raise Cancelled()
                if self.progress is not None:
                    self.progress(off / n)
            ents = _control_entries(data, off) if n - off >= R.PAGE else None
            if ents is None and n - off >= R.PAGE:
                ents = _control_entries(data, off, lenient=True)
                s0 = ents[0][3] if ents else 0
                if ents and (_hdr_ok(data, off + R.PAGE + (s0 & 0xFFF), s0) or _hdr_ok(data, off + R.PAGE, s0)):
                    self.find(off, "warning", "bad-control-record", f"MONWRITE control record has a damaged "
                              f"interrupt type byte ({data[off + 3]:02X}, not 08 or 09) but valid control-area "
                              "entries", "its block was read")
                else:
                    ents = None
            if ents is None:
                if n - off < R.PAGE:
                    self.find(off, "warning", "truncated", f"file ends {n - off} bytes into a block "
                              "(less than a 4096-byte control record)", "the data after the last full block is lost")
                    break
                self.find(off, "error", "bad-control-record", "invalid MONWRITE control record (MWTBK)",
                          "its block is skipped; reading resumes at the next valid control record")
                nxt = _next_block(data, max(prev_off + 1, off - BACK_OFF))
                if nxt is None:
                    self.find(off, "error", "no-resync", "no further valid control record",
                              f"{n - off} bytes at the end of the file were not read")
                    break
                off = nxt
                continue
            claimed = off + R.PAGE + sum(((t >> 12) - (s >> 12) + 1) * R.PAGE for _f, _a, _b, s, t in ents)
            # entries consistent when a control record (or the end of the file) follows the claimed pages;
            # otherwise look inside them for a control record (damaged entries claiming too many pages)
            inner = None if claimed == n or _block_ok(data, claimed) else \
                _next_block(data, off + 1, min(claimed - BACK_OFF, n))
            if inner is not None:                     # (a block a few bytes early: bytes lost in its pages)
                self.find(off, "error", "bad-control-record", f"MONWRITE control record's entries claim "
                          f"{claimed - off - R.PAGE} bytes of pages, but a valid control record starts inside them "
                          f"at offset {self.fo(inner)}", "the entries are damaged: this block was skipped and "
                          f"reading resumed at offset {self.fo(inner)}")
                off = inner
                continue
            prev_off = off
            pos = off + R.PAGE
            for fl, _d1, _d2, s, t in ents:
                span = ((t >> 12) - (s >> 12) + 1) * R.PAGE
                if self.mode is None and s & 0xFFF:
                    self._decide_mode(pos, s)
                if self.mode == "contiguous":
                    base, span = pos - s, -(-(t - s + 1) // R.PAGE) * R.PAGE
                else:
                    base = pos - (s & ~0xFFF)
                self._entry(base, s, t, min(pos + span, n), fl == R.ENTRY_SAMPLE)
                pos += span
                if pos > n and not self.stop:
                    self.find(n, "warning", "truncated", f"file ends {pos - n} bytes before the end of the "
                              "pages of the last block", "all records present before the end were read")
                    self.stop = True
                if self.stop:
                    break
            off = pos
        if self.progress is not None:
            self.progress(1.0)

    def _decide_mode(self, pos: int, s: int) -> None:
        if _hdr_ok(self.data, pos + (s & 0xFFF), s):
            self.mode = "page"
        elif _hdr_ok(self.data, pos, s):
            self.mode = "contiguous"
            self.find(pos, "info", "contiguous-entries", "control-area entries are stored contiguously, "
                      "not page-aligned (monwrite.md §1.3 fallback)", "records were read with that mapping")
        else:
            self.mode = "page"

    # records -------------------------------------------------------------
    def _entry(self, base: int, s: int, t: int, limit: int, sample: bool) -> None:
        data, counts, hdr, mfc = self.data, self.counts, R.HDR_NOTOD.unpack_from, self._mfc
        hdr_len, max_dom, page = R.HDR_LEN, R.MAX_DOMAIN, R.PAGE
        a = s
        while a <= t:
            fo = base + a
            if fo + hdr_len > limit:
                self._short(fo, limit)
                return
            ln, z, dom, flg, rc = hdr(data, fo)
            if ln == 0 and a < t and fo > self.lnz:
                self._zero_cut(fo)
                return
            if ln < hdr_len or z or dom > max_dom or (a & 0xFFF) + ln > page:
                nxt = self._next_header(base, a, t, limit)
                where = (f"reading resumes at the next valid record, offset {base + nxt}" if nxt & 0xFFF
                         else "the rest of this 4 KB frame is skipped; reading resumes at the next frame")
                self.find(fo, "warning", "bad-record-header",
                          f"invalid monitor record header (MRHDRLEN {ln}, MRHDRZER {z}, domain {dom})", where)
                a = nxt
                continue
            if fo + ln > limit:
                self._short(fo, limit)
                return
            if (dom, rc) not in _NAMES and rc in (13, 20) and self._looks_mfc(fo, ln):
                self.find(fo, "warning", "damaged-domain", f"record with domain {dom} and record code {rc} has "
                          f"the exact layout of a D5R{rc} (CPU MF counters): its domain byte is most likely damaged",
                          f"it was read as D5R{rc}")
                dom = 5
            elif dom == 1 and rc == 13 and ln != hdr_len:
                self.find(fo, "warning", "bad-record-header", f"record header says D1R13 (end of frame) but its "
                          f"length is {ln}, not {hdr_len}: a damaged domain or record code",
                          "the record was skipped and the rest of the frame was read")
                a += ln
                continue
            key = (dom, rc)
            counts[key] = counts.get(key, 0) + 1
            if dom == 5:
                if rc == 13 or rc == 20:
                    mfc(fo, ln, flg, rc == 20)
            elif dom == 1:
                if rc == 13:
                    a = (a | 0xFFF) + 1
                    continue
                if rc == 11 and sample:
                    self._interval_end(fo)
                elif rc == 4 and self.sys is None:
                    self.sys = R.decode_d1r4(data[fo:fo + ln]) | {"offset": fo}
                elif rc == 5:
                    cpu, typ, core = R.decode_d1r5(data[fo:fo + ln])
                    self.cpu_cfg[cpu] = (typ, core)
            elif dom == 0:
                if rc == 2:
                    self._d0r2(fo, ln)
                elif rc == 16:
                    self._d0r16(fo, ln)
                elif rc == 15 and ln > R.CUG_NPAR:
                    self.npar = data[fo + R.CUG_NPAR]
            a += ln
        if a > t + 1 and (a - 1) & 0xFFF != 0xFFF:
            self.find(base + a - 1, "warning", "entry-overrun", f"last record ends {a - t - 1} bytes past "
                      "the control-area end address", "the record was read; the entry end may be damaged")

    def _next_header(self, base: int, a: int, t: int, limit: int) -> int:
        """DCSS address of the next plausible record header after a bad one in the same frame.

        A candidate must look like a header (length fits the frame, zero field 0, known
        domain) and be followed by another such header or end exactly at the entry end,
        so a stray byte pattern inside a damaged record is not taken for a record.
        """
        frame_end = (a | 0xFFF) + 1
        for c in range(a + 1, min(frame_end, t + 1) - R.HDR_LEN + 1):
            fo = base + c
            if fo + R.HDR_LEN > limit:
                break
            if self._plausible(c, fo):
                ln = int.from_bytes(self.data[fo:fo + 2], "big")
                after = c + ln
                if after == t + 1 or after == frame_end or (base + after + R.HDR_LEN <= limit
                                                            and self._plausible(after, base + after)):
                    return c
        return frame_end

    def _looks_mfc(self, fo: int, ln: int) -> bool:
        if ln < _MFC_FIXED + 8 or fo + ln > len(self.data):
            return False
        _cpu, _speed, _mask, cfvn, csvn, coff, clen = _MFC(self.data, fo + 20)
        return 1 <= cfvn <= 8 and 1 <= csvn <= 8 and coff >= _MFC_FIXED and clen and not clen % 8 and coff + clen == ln

    def _zero_cut(self, fo: int) -> None:
        """Zeros from ``fo`` to the end of the file although the entry goes on: the file was cut and
        zero-padded.  A counter record whose own tail is zeros up to here was cut too: it is dropped."""
        cut = self.lnz + 1
        dropped = ""
        last = self.last_mfc
        if last is not None and last[0] + last[1] == fo and fo - cut >= 8:
            if self.series and self.series[-1] is last[2]:
                self.series.pop()
                dropped = f"; the counter record at offset {self.fo(last[0])} ends in {fo - cut} zero bytes and " \
                          "was cut too: it was not loaded"
        self.find(cut, "warning", "truncated", f"the file is cut at about offset {self.fo(cut)} and padded with "
                  "zeros to the end although the block's records go on",
                  "records before the cut were read; the rest of the interval is lost" + dropped)
        self.stop = True

    def _plausible(self, a: int, fo: int) -> bool:
        ln, z, dom, _flg, rc = R.HDR_NOTOD.unpack_from(self.data, fo)
        return (R.HDR_LEN <= ln and (a & 0xFFF) + ln <= R.PAGE and not z and dom <= R.MAX_DOMAIN
                and rc < 64)

    def _short(self, fo: int, limit: int) -> None:
        fo = min(fo, len(self.data))          # a start address past the end of a cut file
        if limit >= len(self.data):
            self.find(fo, "warning", "truncated", "file ends inside a monitor record",
                      "records before this offset were read; the rest of the interval is lost")
            self.stop = True
        else:
            self.find(fo, "warning", "entry-overrun", "monitor record runs past the pages of its "
                      "control-area entry", "the rest of this entry is skipped")

    def _interval_end(self, fo: int) -> None:
        for (cpu, mt), p in list(self.pending.items()):
            self.find(p[0][0], "warning", "incomplete-series", f"{'D5R20' if mt else 'D5R13'} continuation "
                      f"series of CPU {cpu} has no last record (P bit never 0) before the interval end",
                      "the counters of this CPU are missing for the interval", cpu=cpu)
        self.pending.clear()
        self.interval += 1

    def _mfc(self, fo: int, ln: int, flg: int, mt: bool) -> None:
        data = self.data
        if ln < _MFC_FIXED:
            self.find(fo, "warning", "short-record", f"{'D5R20' if mt else 'D5R13'} of {ln} bytes is shorter "
                      "than its fixed part", "record skipped")
            return
        cpu, speed, mask, cfvn, csvn, coff, clen = _MFC(data, fo + 20)
        if coff < _MFC_FIXED or coff + clen > ln or clen % 8 or not (1 <= cfvn <= 8 and 1 <= csvn <= 8):
            self.find(fo, "warning", "counter-layout", f"{'D5R20' if mt else 'D5R13'} CPU {cpu}: implausible "
                      f"fields (CFVN {cfvn}, CSVN {csvn}, counter offset {coff}, length {clen}, record length {ln})",
                      "record skipped; the inferred field layout (monwrite.md §3.1) may not match this release",
                      cpu=cpu)
            return
        piece = data[fo + coff:fo + coff + clen]
        pending = self.pending
        if pending:                                   # continuation of an open P-bit series?
            key = (cpu, mt)
            pend = pending.get(key)
            if pend is not None:
                first = pend[0]
                if first[3] != mask or first[4] != cfvn or first[5] != csvn:
                    self.find(fo, "warning", "series-mismatch", f"{'D5R20' if mt else 'D5R13'} continuation "
                              f"of CPU {cpu} changes mask/CFVN/CSVN", "the series is dropped", cpu=cpu)
                    del pending[key]
                    return
                pend[1].append(piece)
                if not flg & _P_BIT:
                    item = (mt, self.interval, first, b"".join(pend[1]))
                    self.series.append(item)
                    self.last_mfc = (fo, ln, item)
                    del pending[key]
                return
        meta = (fo, cpu, speed, mask, cfvn, csvn, _TOD(data, fo + 8)[0], flg)
        if not flg & _P_BIT:
            item = (mt, self.interval, meta, piece)
            self.series.append(item)
            self.last_mfc = (fo, ln, item)
        else:
            pending[(cpu, mt)] = [meta, [piece]]

    def _d0r2(self, fo: int, ln: int) -> None:
        d = _decode_d0r2_at(self.data, fo, ln)
        self.prp[d["cpu"]] = d
        for name in _MT_NAMES:
            if d[name] is not None:
                self.mt_rows.append((_TOD(self.data, fo + 8)[0], d))
                break

    def _d0r16(self, fo: int, ln: int) -> None:
        part, cpus, problem = R.decode_d0r16(self.data[fo:fo + ln])
        if problem:
            self.find(fo, "warning", "partition-record", problem, "CPU entries that do not fit were ignored")
        if part:
            self.cup.append((self.interval, int.from_bytes(self.data[fo + 8:fo + 16], "big"), fo, part, cpus))


# ------------------------------------------------------------------ clean fast path
# A clean file (every control record valid, every record header plausible, every P-bit series closed in
# its interval, counter fields plausible) is read in two steps: a tight loop that only records the offset
# of each monitor record, then numpy gathers of the fields of all records of one kind.  Anything the
# careful walk (_Walk) would report as a finding makes the fast path give up (None), and the careful walk
# reads the file instead, so results are identical either way.

class _Irregular(Exception):
    """The fast path met something only the careful walk handles."""


def _be(u: np.ndarray, p: np.ndarray, k: int) -> np.ndarray:
    """Big-endian unsigned k-byte integers (k = 1, 2 or 4) at byte offsets ``p`` of ``u`` (int64): one
    gather per alignment residue over a '>u{k}' view of the bytes."""
    if k == 1:
        return u[p].astype(np.int64)
    dt = ">u2" if k == 2 else ">u4"
    n = len(u)
    res = p & (k - 1)
    out = np.empty(len(p), np.int64)
    for r in np.flatnonzero(np.bincount(res, minlength=k)).tolist():
        view = np.frombuffer(u, dt, count=(n - r) // k, offset=r)
        sel = res == r
        if sel.all():
            return view[(p - r) // k].astype(np.int64)
        out[sel] = view[(p[sel] - r) // k]
    return out


def _frame_records(w: _Walk) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of every monitor record in stream order and the record indexes after each sample D1R11.

    A Python loop over the control records only; the records are walked on all 4 KB frames at once (each
    frame of an entry starts a record chain at its first byte, the first frame at the entry start), one
    numpy step per record position in a frame."""
    data, n = w.data, len(w.data)
    page = R.PAGE
    pg: list[int] = []              # per entry: stream offset of its first page, pages, start, end, sample
    npg: list[int] = []
    first: list[int] = []
    last: list[int] = []
    smp: list[bool] = []
    off, nblk = 0, 0
    while off < n:
        nblk += 1
        if nblk % 16 == 0 and w.cancel is not None and w.cancel():
            raise Cancelled()
        if n - off < page:
            raise _Irregular
        ents = _control_entries(data, off)
        if ents is None:
            raise _Irregular
        claimed = off + page + sum(((t >> 12) - (s >> 12) + 1) * page for _f, _a, _b, s, t in ents)
        if claimed != n and not _block_ok(data, claimed):
            raise _Irregular
        pos = off + page
        for fl, _d1, _d2, s, t in ents:
            k = (t >> 12) - (s >> 12) + 1
            if w.mode is None and s & 0xFFF:
                if not _hdr_ok(data, pos + (s & 0xFFF), s):
                    raise _Irregular
                w.mode = "page"
            pg.append(pos)
            npg.append(k)
            first.append(s & 0xFFF)
            last.append((t & 0xFFF) + 1)
            smp.append(fl == R.ENTRY_SAMPLE)
            pos += k * page
            if pos > n:
                raise _Irregular
        off = pos
    u = np.frombuffer(data, np.uint8)
    npg_a = np.asarray(npg, np.int64)
    if not len(npg_a):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ent = np.repeat(np.arange(len(npg_a)), npg_a)
    k0 = np.zeros(len(npg_a), np.int64)
    np.cumsum(npg_a[:-1], out=k0[1:])
    inent = np.arange(len(ent)) - k0[ent]                  # page number inside its entry
    base = np.asarray(pg, np.int64)[ent] + inent * page    # stream offset of each frame
    loc = np.where(inent == 0, np.asarray(first, np.int64)[ent], 0)
    end = np.where(inent == npg_a[ent] - 1, np.asarray(last, np.int64)[ent], page)
    sample = np.asarray(smp, bool)[ent]
    idx = np.flatnonzero(loc < end)
    fos, d11 = [], []
    while len(idx):
        li = loc[idx]
        if np.any(li + R.HDR_LEN > page):
            raise _Irregular
        fo = base[idx] + li
        ln, z = _be(u, fo, 2), _be(u, fo + 2, 2)
        dom, rc = u[fo + 4], _be(u, fo + 6, 2)
        if np.any((ln < R.HDR_LEN) | (z != 0) | (dom > R.MAX_DOMAIN) | (li + ln > page)):
            raise _Irregular
        fos.append(fo)
        d1 = dom == 1
        d11.append(d1 & (rc == 11) & sample[idx])
        jump = d1 & (rc == 13)
        nl = np.where(jump, page, li + ln)
        loc[idx] = nl
        e = end[idx]
        go = nl < e
        if np.any(~go & ~jump & (nl != e) & (nl != page)):
            raise _Irregular                            # last record runs past the entry end
        idx = idx[go]
    fo = np.concatenate(fos)
    order = np.argsort(fo, kind="stable")
    fo = fo[order]
    marks = np.flatnonzero(np.concatenate(d11)[order]) + 1
    return fo, marks


def _fast_walk(data, file: str, pages: list[int] | None, progress, cancel) -> _Walk | None:
    """The clean fast path: a finished walk with ``fast`` set (series as arrays), or None when the file
    has anything irregular (then the careful walk reads it)."""
    w = _Walk(data, file, pages, progress, cancel)
    try:
        fos, marks = _frame_records(w)
        w.fast = _gather(w, fos, marks)
    except _Irregular:
        return None
    if progress is not None:
        progress(1.0)
    return w


_KNOWN = np.array(sorted(d * 65536 + r for d, r in _NAMES), dtype=np.int64)


def _gather(w: _Walk, fo: np.ndarray, marks: np.ndarray) -> dict:
    data = w.data
    u = np.frombuffer(data, np.uint8)
    ln = _be(u, fo, 2)
    dom = u[fo + 4].astype(np.int64)
    flg = u[fo + 5].astype(np.int64)
    rc = _be(u, fo + 6, 2)
    key = dom * 65536 + rc
    iv = np.searchsorted(marks, np.arange(len(fo)), side="right")
    w.interval = len(marks)
    known = np.isin(key, _KNOWN)
    if np.any(~known & ((rc == 13) | (rc == 20))):      # maybe a damaged domain byte: careful walk decides
        raise _Irregular
    if np.any((dom == 1) & (rc == 13) & (ln != R.HDR_LEN)):
        raise _Irregular                                  # a D1R13 of the wrong length: damaged header
    keys, cnt = np.unique(key, return_counts=True)
    w.counts = {(int(k) >> 16, int(k) & 0xFFFF): int(c) for k, c in zip(keys, cnt)}
    # rare records, in file order, as the careful walk decodes them
    for i in np.flatnonzero(((dom == 1) & ((rc == 4) | (rc == 5))) | ((dom == 0) & ((rc == 15) | (rc == 16)))).tolist():
        f, L, d, r = int(fo[i]), int(ln[i]), int(dom[i]), int(rc[i])
        if d == 1 and r == 4:
            if w.sys is None:
                w.sys = R.decode_d1r4(data[f:f + L]) | {"offset": f}
        elif d == 1:
            cpu, typ, core = R.decode_d1r5(data[f:f + L])
            w.cpu_cfg[cpu] = (typ, core)
        elif r == 16:
            pass                                          # D0R16: gathered below (_gather_d0r16)
        elif L > R.CUG_NPAR:
            w.npar = data[f + R.CUG_NPAR]
    w.interval = len(marks)
    out = {"mfc": _gather_mfc(w, u, fo, ln, dom, flg, rc, iv)}
    out["d0r2"] = _gather_d0r2(w, u, fo[(dom == 0) & (rc == 2)], ln[(dom == 0) & (rc == 2)])
    c16 = (dom == 0) & (rc == 16)
    out["d0r16"] = _gather_d0r16(u, fo[c16], ln[c16], iv[c16])
    return out


def _gather_d0r16(u: np.ndarray, p: np.ndarray, L: np.ndarray, iv: np.ndarray) -> dict:
    """D0R16 records -> per-CPU entries merged per (interval, partition) as :func:`build_partitions` merges
    them; irregular (short record, implausible CPU entry layout, one CPU twice) -> careful walk."""
    if np.any(L < R.CUP_FIXED):
        raise _Irregular
    ncpu, cpuof, cpuln = u[p + 30].astype(np.int64), _be(u, p + 32, 2), _be(u, p + 34, 2)
    has = ncpu > 0
    if np.any(has & ((cpuln < 38) | (cpuof < R.CUP_FIXED))):
        raise _Irregular
    avail = np.where(L > cpuof, (L - cpuof) // np.maximum(cpuln, 1), 0)
    if np.any(has & (avail < ncpu)):
        raise _Irregular
    names: dict[bytes, str] = {}
    lpar = []
    for b in (u[q + 20:q + 28].tobytes() for q in p.tolist()):
        t = names.get(b)
        if t is None:
            t = names[b] = R.ebcdic(b)
        lpar.append(t)
    pnum = u[p + 28].astype(np.int64)
    hdr_tod, ptod = _be_u64(u, p + 8), _be_u64(u, p + 36)
    htod = np.where(ptod != 0, ptod, hdr_tod)
    # merged keys (interval, lpar, pnum) in order of first appearance, tod/htod of their first record
    code = {}
    kid = np.fromiter((code.setdefault((i, nm, q), len(code)) for i, nm, q in
                       zip(iv.tolist(), lpar, pnum.tolist())), np.int64, len(p))
    nkeys = len(code)
    first_rec = np.full(nkeys, len(p), np.int64)
    np.minimum.at(first_rec, kid, np.arange(len(p)))
    rec = np.repeat(np.arange(len(p)), ncpu)
    k0 = np.zeros(len(p), np.int64)
    np.cumsum(ncpu[:-1], out=k0[1:])
    e = p[rec] + cpuof[rec] + (np.arange(len(rec)) - k0[rec]) * cpuln[rec]
    cpu = _be(u, e, 2)
    ekey = kid[rec]
    if len(np.unique(ekey * 65536 + cpu)) != len(rec):
        raise _Irregular                                  # one CPU twice in a partition's interval
    order = np.lexsort((np.arange(len(rec)), ekey))       # key order, then record order (= insertion order)
    e, rec, cpu, ekey = e[order], rec[order], cpu[order], ekey[order]
    typ = np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(u, 16)[e + 22]) if len(e) else \
        np.zeros((0, 16), np.uint8)
    utyp, tinv = np.unique(typ.view("V16").ravel(), return_inverse=True)
    tclass = [R.type_class(R.ebcdic(bytes(t)).upper()) for t in utyp.tolist()]
    ktod = hdr_tod[first_rec]
    khtod = htod[first_rec]
    kl = [None] * nkeys
    for (i, nm, q), k in code.items():
        kl[k] = (nm, q)
    return {"nkeys": nkeys, "key_interval": np.asarray([k[0] for k in code], np.int64),
            "key_lpar": kl, "key_tod": ktod, "key_has": np.bincount(ekey, minlength=nkeys) > 0,
            "tod": ktod[ekey], "htod": khtod[ekey], "lpar": [kl[k][0] for k in ekey.tolist()],
            "pnum": np.asarray([kl[k][1] for k in ekey.tolist()], np.int64), "cpu": cpu,
            "weight": _be(u, e + 2, 2), "flags": u[e + 4].astype(np.int64), "actm": _be_u64(u, e + 6),
            "lptm": _be_u64(u, e + 14), "class": [tclass[t] for t in tinv.ravel().tolist()]}


def _int_column(v: np.ndarray) -> np.ndarray:
    """uint64 values as pandas infers Python ints: int64 when they all fit, else uint64."""
    return v.astype(np.int64) if not len(v) or int(v.max()) < 2**63 else v


def _fast_partitions(w: _Walk, ident: dict):
    """:func:`build_partitions` for a fast walk."""
    d = w.fast["d0r16"]
    if w.npar is not None and d["nkeys"]:
        seen = int(np.bincount(np.unique(d["key_interval"], return_inverse=True)[1].ravel()).max())
        if seen != w.npar:
            w.find(None, "info", "partition-count", f"D0R15 reports {w.npar} partitions, D0R16 records "
                   f"describe {seen}", "Global Performance Data may be disabled on the HMC")
    empty = [[ident["cec"], nm, q, "", 0, 0, False, np.nan, int(t), np.nan]
             for (nm, q), t, h in zip(d["key_lpar"], d["key_tod"].tolist(), d["key_has"].tolist()) if not h]
    df = None
    if len(d["cpu"]):
        df = pd.DataFrame({"tod": _int_column(d["tod"]), "htod": _int_column(d["htod"]), "lpar": d["lpar"],
                           "pnum": d["pnum"], "cpu": d["cpu"], "weight": d["weight"], "flags": d["flags"],
                           "actm": _int_column(d["actm"]), "lptm": _int_column(d["lptm"]), "class": d["class"]},
                          columns=R.ENTRY_COLUMNS)
    return R.partitions_frame(w, ident, df, empty)


def _gather_mfc(w: _Walk, u, fo, ln, dom, flg, rc, iv) -> dict:
    sel = np.flatnonzero((dom == 5) & ((rc == 13) | (rc == 20)))
    p, L = fo[sel], ln[sel]
    if np.any(L < _MFC_FIXED):
        raise _Irregular
    cpu, mask = _be(u, p + 20, 2), _be(u, p + 28, 2)
    cfvn, csvn, coff, clen = _be(u, p + 32, 2), _be(u, p + 34, 2), _be(u, p + 36, 2), _be(u, p + 38, 2)
    if np.any((coff < _MFC_FIXED) | (coff + clen > L) | (clen % 8 != 0) | (cfvn < 1) | (cfvn > 8)
              | (csvn < 1) | (csvn > 8)):
        raise _Irregular
    mt = rc[sel] == 20
    cont = (flg[sel] & _P_BIT) != 0
    m = len(sel)
    # series: per (cpu, mt) in file order, a record without the P bit closes the series
    order = np.lexsort((np.arange(m), mt, cpu))
    gk = (cpu * 2 + mt)[order]
    newgrp = np.ones(m, bool)
    newgrp[1:] = gk[1:] != gk[:-1]
    c_o = cont[order]
    start = newgrp.copy()
    start[1:] |= ~c_o[:-1]
    if m and (c_o[-1] or np.any(c_o[np.flatnonzero(newgrp[1:])])):
        raise _Irregular                                  # a series still open at the end of the file
    sid_o = np.cumsum(start) - 1
    first_o = np.flatnonzero(start)                       # sorted position of each series' first record
    last_o = np.flatnonzero(~c_o)                         # ... and last record (same count: checked above)
    if len(first_o) != len(last_o):
        raise _Irregular
    fr, la = order[first_o], order[last_o]
    for a in (mask, cfvn, csvn):
        if np.any(a[order] != a[fr][sid_o]):
            raise _Irregular                              # mask/CFVN/CSVN change inside a series
    ivs = iv[sel]
    if np.any(ivs[fr] != ivs[la]):
        raise _Irregular                                  # series cut by an interval end
    # series in completion order (position of the last record), pieces in file order inside each
    rank_of = np.empty(len(la), np.int64)
    done = np.argsort(la, kind="stable")
    rank_of[done] = np.arange(len(la))
    piece_rank = rank_of[sid_o]
    porder = np.lexsort((order, piece_rank))              # pieces sorted by (series rank, file position)
    pidx = order[porder]
    blen = np.bincount(piece_rank, weights=clen[order], minlength=len(la)).astype(np.int64)
    npieces = np.bincount(piece_rank, minlength=len(la)).astype(np.int64)
    pfirst = np.zeros(len(la), np.int64)
    np.cumsum(npieces[:-1], out=pfirst[1:])
    f, lst = fr[done], la[done]
    return {"mt": mt[f], "interval": ivs[lst], "off": p[f], "cpu": cpu[f], "speed": _be(u, p[f] + 24, 4),
            "mask": mask[f], "cfvn": cfvn[f], "csvn": csvn[f], "tod": _be_u64(u, p[f] + 8),
            "flg": flg[sel][f], "blen": blen, "pstart": (p + coff)[pidx], "pk": clen[pidx] // 8,
            "pfirst": pfirst, "npieces": npieces}


def _put_series_words(data, s: dict, idx: np.ndarray, full: np.ndarray, rows: np.ndarray, c0: int) -> bool:
    """Counter words of the series ``idx`` (all of one byte length, same piece sizes) straight into
    ``full[rows, c0:c0 + words]``: each piece column block is one row gather over a sliding-window view
    of the file.  False (nothing written) when the series are not cut into pieces the same way."""
    npc, pfirst, pk, pstart = s["npieces"][idx], s["pfirst"][idx], s["pk"], s["pstart"]
    if not np.all(npc == npc[0]):
        return False
    for j in range(int(npc[0])):
        if np.any(pk[pfirst + j] != pk[pfirst[0] + j]):
            return False
    contiguous = len(rows) > 0 and rows[-1] - rows[0] == len(rows) - 1 and bool(np.all(np.diff(rows) == 1))
    r0 = int(rows[0]) if len(rows) else 0
    n = len(data)
    col = c0
    for j in range(int(npc[0])):
        q = int(pk[pfirst[0] + j])
        st = pstart[pfirst + j]
        res = st & 7
        ures = np.flatnonzero(np.bincount(res, minlength=8)).tolist()
        for r in ures:
            view = np.frombuffer(data, ">u8", count=(n - r) // 8, offset=r)
            win = np.lib.stride_tricks.sliding_window_view(view, q)
            if len(ures) == 1:
                src = win[(st - r) >> 3]
                if contiguous:
                    full[r0:r0 + len(rows), col:col + q] = src
                else:
                    full[rows, col:col + q] = src
            else:
                sel = res == r
                full[rows[sel], col:col + q] = win[(st[sel] - r) >> 3]
        col += q
    return True


def _series_words(data, s: dict, idx: np.ndarray) -> np.ndarray:
    """Counter words of the series ``idx`` (all of one byte length) as a (series, words) array, pieces
    joined series by series (the general case, when :func:`_put_series_words` cannot be used)."""
    npc, pfirst, pk, pstart = s["npieces"][idx], s["pfirst"][idx], s["pk"], s["pstart"]
    k = int(s["blen"][idx[0]]) // 8
    mv = memoryview(data)
    parts = []
    for a, c in zip(pfirst.tolist(), npc.tolist()):
        parts.extend(mv[st:st + 8 * q] for st, q in zip(pstart[a:a + c].tolist(), pk[a:a + c].tolist()))
    return np.frombuffer(b"".join(parts), ">u8").reshape(len(idx), k)


def _be_u64(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Big-endian 8-byte unsigned integers at byte offsets ``p`` of ``u`` (uint64)."""
    n = len(u)
    res = p & 7
    out = np.empty(len(p), np.uint64)
    for r in np.flatnonzero(np.bincount(res, minlength=8)).tolist():
        view = np.frombuffer(u, ">u8", count=(n - r) // 8, offset=r)
        sel = res == r
        out[sel] = view[(p[sel] - r) // 8]
    return out


def _gather_d0r2(w: _Walk, u, p, L) -> dict:
    if np.any(L < R.MT_CORE + 2):
        raise _Irregular                                  # short D0R2: the careful decoder
    cpu = _be(u, p + R.PRP2_CPU, 2)
    typ = u[p + R.PRP2_CPUTY].astype(np.int64)
    core = _be(u, p + R.MT_CORE, 2)
    vals = np.stack([_be(u, p + o, 4) for _n, o in R.MT_FIELDS], axis=1) if len(p) else \
        np.zeros((0, len(R.MT_FIELDS)), np.int64)
    # last D0R2 per CPU (dict order: first appearance), as the careful walk keeps it
    ucpu, first = np.unique(cpu, return_index=True)
    last = len(cpu) - 1 - np.unique(cpu[::-1], return_index=True)[1]
    for k in np.argsort(first, kind="stable").tolist():
        i = int(last[k])
        c = int(core[i])
        d = {"cpu": int(ucpu[k]), "type": int(typ[i]), "core": None if c == 0xFFFF else c}
        for j, name in enumerate(_MT_NAMES):
            v = int(vals[i, j])
            d[name] = None if v == R.MT_NA else v / R.MT_SCALE
        w.prp[d["cpu"]] = d
    has = np.any(vals != R.MT_NA, axis=1)
    return {"tod": _be_u64(u, p[has] + 8), "cpu": cpu[has], "type": typ[has], "core": core[has],
            "vals": vals[has]}


def _fast_samples(w: _Walk, ident: dict, file: str):
    """:func:`build_samples` for a fast walk (series as arrays); same rows, columns and findings."""
    s = w.fast["mfc"]
    core_of, type_of = R._cpu_maps(w)
    first_of_core: dict[int, int] = {}
    for cpu, core in core_of.items():
        first_of_core[core] = min(cpu, first_of_core.get(core, cpu))
    mt, blen, cpu, iv = s["mt"], s["blen"], s["cpu"], s["interval"]
    mask, cfvn, csvn = s["mask"], s["cfvn"], s["csvn"]
    sets = np.zeros(len(mt), np.int64)
    keep = np.zeros(len(mt), bool)
    groups: list[tuple[np.ndarray, list[int], list[int] | None]] = []     # (series, numbers, positions)
    nm = np.flatnonzero(~mt)
    if len(nm):
        combo = (mask[nm] << 48) | (cfvn[nm] << 40) | (csvn[nm] << 32) | blen[nm]   # blen < 2**32
        ucombo, inv = np.unique(combo, return_inverse=True)
        inv = inv.ravel()
        for k, c in enumerate(ucombo.tolist()):
            mk, cf, cs, bl = c >> 48, (c >> 40) & 0xFF, (c >> 32) & 0xFF, c & 0xFFFFFFFF
            nums = R.counter_numbers(mk, cf, cs)
            if bl == 8 * len(nums):
                pos = None
            elif bl == R.CCFDATA_BYTES:
                pos = nums
            else:
                raise _Irregular                          # counter-length finding: careful path
            if not nums:
                continue
            idx = nm[inv == k]
            keep[idx] = True
            sets[idx] = sum(b for b in R.CSET_ORDER if mk & b and R.set_size(b, cf, cs))
            groups.append((idx, nums, pos))
    rows_c = np.flatnonzero(keep)                         # D5R13 rows, in series order
    rkey = iv[rows_c] * 65536 + cpu[rows_c]
    if len(np.unique(rkey)) != len(rkey):
        raise _Irregular                                  # two D5R13 of one CPU in one interval
    mi = np.flatnonzero(mt & (blen > 0))
    dropped = 0
    new_rows = np.zeros(0, np.int64)
    mt_row = np.zeros(0, np.int64)
    if len(mi):
        for c in np.unique((cfvn[mi] << 40) | (csvn[mi] << 32) | blen[mi]).tolist():
            cf, cs, bl = c >> 40, (c >> 32) & 0xFF, c & 0xFFFFFFFF
            if bl != 8 * R.set_size(SET_MT, cf, cs):
                raise _Irregular                          # mt-length finding: careful path
        ucpu = np.unique(cpu[mi])
        drop_cpu = [c for c in ucpu.tolist() if c in core_of and first_of_core[core_of[c]] != c]
        dropm = np.isin(cpu[mi], drop_cpu)
        dropped = int(dropm.sum())
        mi = mi[~dropm]
        srt = np.argsort(rkey, kind="stable")
        mkey = iv[mi] * 65536 + cpu[mi]
        j = np.searchsorted(rkey[srt], mkey)
        j = np.minimum(j, max(len(srt) - 1, 0))
        hit = (rkey[srt][j] == mkey) if len(srt) else np.zeros(len(mi), bool)
        new_rows = mi[~hit]
        mt_row = np.empty(len(mi), np.int64)
        mt_row[hit] = srt[j[hit]]
        mt_row[~hit] = len(rows_c) + np.arange(len(new_rows))
    if dropped:
        w.find(None, "info", "mt-thread-dedup", f"{dropped} D5R20 records of non-thread-0 CPUs not stored",
               "MT-diagnostic counters are core-wide; each core keeps the values of its thread-0 CPU")
    row_series = np.concatenate([rows_c, new_rows])
    n = len(row_series)
    if n == 0:
        return empty_samples()
    row_of = np.full(len(mt), -1, np.int64)
    row_of[rows_c] = np.arange(len(rows_c))
    rsets = np.concatenate([sets[rows_c], np.zeros(len(new_rows), np.int64)])
    rsets[mt_row] |= SET_MT
    if len(mi):
        for bl in np.unique(blen[mi]).tolist():
            sel = blen[mi] == bl
            groups.append((mi[sel], R.mt_numbers(0, 0, bl), None))
    numbers = sorted({x for _i, nums, _p in groups for x in nums})
    col_of = {x: j for j, x in enumerate(numbers)}
    full = np.zeros((n, len(numbers)), dtype=np.uint64)
    mrow = np.full(len(mt), -1, np.int64)
    mrow[mi] = mt_row
    for idx, nums, pos in groups:
        rows = np.where(mt[idx], mrow[idx], row_of[idx])
        cidx = np.asarray([col_of[x] for x in nums])
        if pos is None and len(cidx) and np.all(np.diff(cidx) == 1) and \
                _put_series_words(w.data, s, idx, full, rows, int(cidx[0])):
            continue
        arr = _series_words(w.data, s, idx)
        if pos is not None:
            arr = arr[:, pos]
        full[rows[:, None], cidx[None, :]] = arr
    cols = {k: s[k][row_series] for k in ("off", "cpu", "speed", "cfvn", "csvn", "tod", "flg")}
    cols["sets"] = rsets
    return R.samples_frame(w, ident, file, cols, numbers, full, core_of, type_of)


def _fast_mt(w: _Walk, ident: dict):
    """:func:`build_mt` for a fast walk."""
    d = w.fast["d0r2"]
    n = len(d["cpu"])
    if not n:
        return build_mt(w, ident)                         # no MT rows: the empty frame
    core_of, _type_of = R._cpu_maps(w)
    cpus = d["cpu"]
    utyp, tinv = np.unique(d["type"], return_inverse=True)
    classes = np.array([R.type_class(int(t)) for t in utyp.tolist()], dtype=object)[tinv.ravel()].tolist()
    ucpu, cinv = np.unique(cpus, return_inverse=True)
    fallback_core = np.array([core_of.get(int(c), -1) for c in ucpu.tolist()], dtype=np.int64)[cinv.ravel()]
    core = np.where(d["core"] == 0xFFFF, fallback_core, d["core"])
    data = {"time": tod_to_datetime64(d["tod"]), "system": [ident["system"]] * n,
            "cpu": cpus.astype(np.int32), "core": core.astype(np.int32), "class": classes}
    for c in R.MT_COLUMNS[5:12]:
        v = d["vals"][:, _MT_NAMES.index(c)]
        data[c] = np.where(v == R.MT_NA, np.nan, v / R.MT_SCALE)
    data["lpar"], data["cec"] = [ident["lpar"]] * n, [ident["cec"]] * n
    return pd.DataFrame(data, columns=R.MT_COLUMNS)


# ------------------------------------------------------------------ public API
def _unreadable(file: str, data: bytes, framing: str, code: str, what: str, meaning: str) -> ReadResult:
    return ReadResult(file=file, kind="unknown", framing=framing, records={}, samples=empty_samples(),
                      findings=[make_finding(file, 0, "error", code, what, meaning)], size=len(data),
                      meta={"detected": framing})


def read_monwrite(data: bytes, file: str, *, progress: Callable[[float], None] | None = None,
                  cancel: Callable[[], bool] | None = None) -> ReadResult:
    """Decode a MONWRITE byte stream.

    Parameters
    ----------
    data : bytes
        Whole (decompressed) file.
    file : str
        Name used in findings and in the ``source`` column.
    progress, cancel : callable, optional
        ``progress(fraction)`` by bytes; ``cancel()`` -> True raises :class:`Cancelled`.

    Returns
    -------
    ReadResult
        ``kind='monwrite'``, framing ``'monwrite'`` or ``'monwrite-rdw'``; ``kind='unknown'``
        with an error finding for ASCII-mode or packed transfers.
    """
    w = walk_monwrite(data, file, progress=progress, cancel=cancel, fast=True)
    if isinstance(w, ReadResult):
        return w
    if getattr(w, "fast", None) is not None:
        try:
            return _result(w, data, file)
        except _Irregular:                        # something only the careful walk reports: read it that way
            w = walk_monwrite(data, file, progress=progress, cancel=cancel)
    return _result(w, data, file)


def _result(w: _Walk, data, file: str) -> ReadResult:
    fast = getattr(w, "fast", None) is not None
    framing = w.framing
    records: dict[str, int] = {}
    other: dict[str, int] = {}
    for (dom, rc), c in sorted(w.counts.items()):
        name = _NAMES.get((dom, rc))
        if name:
            records[name] = c
        else:
            other[f"D{dom}R{rc}"] = c
    records["other"] = sum(other.values())
    ident = _identity(w)
    samples = _fast_samples(w, ident, file) if fast else build_samples(w, ident, file)
    mt = _fast_mt(w, ident) if fast else build_mt(w, ident)
    result = ReadResult(file=file, kind="monwrite", framing=framing, records=records, samples=samples,
                        findings=w.findings, partitions=_fast_partitions(w, ident) if fast else
                        build_partitions(w, ident), mt=mt,
                        size=len(data), meta={"other_records": other, "page_mapping": w.mode or "page",
                                              "intervals": w.interval, "d0r16_time_unit": getattr(w, "unit", None),
                                              **ident})
    w.close_findings()
    result.findings = w.findings
    return result


def walk_monwrite(data, file: str, *, progress: Callable[[float], None] | None = None,
                  cancel: Callable[[], bool] | None = None, fast: bool = False):
    """Detect the container and walk every block: the finished :class:`_Walk` (records in ``series``,
    findings in ``findings``), or a ReadResult when the file cannot be read (ASCII or packed transfer).
    ``fast=True`` first tries the clean fast path (:func:`_fast_walk`: series as arrays in ``fast``, for
    :func:`read_monwrite` only) and falls back to the careful walk when the file has anything irregular."""
    framing, pages, stream, bad = "monwrite", None, data, []
    if not _block_ok(data, 0):
        if data[:4] == R.RDW_4100 or (data[2:4] == b"\x00\x00" and data[4:8] == R.RDW_4100) or (
                _late_block(data) is None and _rdw_stride(data)):
            stream, pages, bad = _deblock(data)
            framing = "monwrite-rdw"
        elif _ascii_evidence(data):
            return _unreadable(file, data, "monwrite-ascii", "ascii-transfer",
                               "is a MONWRITE file that was transferred in ASCII (text) mode: EBCDIC bytes were "
                               "translated and line ends inserted, so the binary monitor records are destroyed",
                               "nothing can be read from it; " + _RETRANSFER)
        elif (what := _packed_evidence(data)) is not None:
            return _unreadable(file, data, "monwrite-packed", "packed-file",
                               f"is {what}, not a raw MONWRITE stream",
                               "unpack it on CMS first (COPYFILE ... (UNPACK) or VMARC UNPK), then " + _RETRANSFER)
    if fast and not bad:
        fw = _fast_walk(stream, file, pages or None, progress, cancel)
        if fw is not None:
            fw.framing = framing
            return fw
    w = _Walk(stream, file, pages or None, progress, cancel)
    for off, what in bad:
        w.findings.append(make_finding(file, off, "warning", "bad-rdw", what,
                                       "records of the skipped bytes are lost" if "skipped" in what or "not read"
                                       in what else "check the counters of this block"))
    w.run()
    for (cpu, mt), p in w.pending.items():
        w.find(p[0][0], "warning", "incomplete-series", f"{'D5R20' if mt else 'D5R13'} series of CPU {cpu} "
               "still open at the end of the file", "its counters for the last interval are missing", cpu=cpu)
    w.framing = framing
    return w


def _identity(w: _Walk) -> dict:
    s = w.sys or {}
    fast = getattr(w, "fast", None)
    series = len(fast["mfc"]["mt"]) > 0 if fast is not None else w.series
    cup = fast["d0r16"]["nkeys"] > 0 if fast is not None else w.cup
    if not s and (series or cup):
        w.find(None, "warning", "no-configuration", "no D1R4 system configuration record in the file",
               "system, LPAR and CEC are unknown (the file may start mid-run)")
    mtype, seq = s.get("machine_type") or "", s.get("seqcode") or ""
    return {"system": s.get("system") or "?", "lpar": s.get("lpar") or "?",
            "lpar_number": s.get("lpar_number"), "machine_type": mtype or "?",
            "model": s.get("model") or "?", "serial": normalize_serial(seq) if seq else "?",
            "cec": cec_id(mtype, seq)}

