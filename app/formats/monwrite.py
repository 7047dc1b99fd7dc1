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

from collections.abc import Callable

import pandas as pd

from app.findings import make_finding
from app.formats import monwrite_records as R
from app.formats.common import cec_id, normalize_serial
from app.formats.monwrite_blocks import (BACK_OFF, _MAX_PER_CODE, _MFC, _MFC_FIXED, _MT_NAMES, _NAMES, _P_BIT,
                                         _RETRANSFER, _TOD, _ascii_evidence, _block_ok, _control_entries, _deblock,
                                         _decode_d0r2_at, _hdr_ok, _next_block, _packed_evidence,
                                         looks_like_monwrite, rdw_framed)  # noqa: F401 (public here)
from app.formats.monwrite_fast import _Irregular, _fast_mt, _fast_partitions, _fast_samples, _frame_records, _gather
from app.formats.monwrite_records import build_mt, build_partitions, build_samples
from app.formats.schema import Cancelled, ReadResult, empty_samples
from app.formats.smf_framing import _last_nonzero

__all__ = ["looks_like_monwrite", "read_monwrite", "walk_monwrite"]   # looks_like_monwrite: monwrite_blocks


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
        for _off in self.blocks():
            pass

    def blocks(self):
        """Walk the blocks, yielding the offset of each block before it is read (every record before it has
        been walked: :mod:`app.formats.monwrite_stream` takes the finished intervals there)."""
        data, n, off, nblk = self.data, len(self.data), 0, 0
        prev_off = -1
        while off < n and not self.stop:
            yield off
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

    def end_of_file(self) -> None:
        """The series still open when the walk ends: said."""
        for (cpu, mt), p in self.pending.items():
            self.find(p[0][0], "warning", "incomplete-series", f"{'D5R20' if mt else 'D5R13'} series of CPU {cpu} "
                      "still open at the end of the file", "its counters for the last interval are missing", cpu=cpu)

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
    _local_time(w, result)
    w.close_findings()
    result.findings = w.findings
    return result


def _local_time(w: _Walk, result: ReadResult) -> None:
    """Column ``local_time`` (naive local time) from the D1R4 time-zone offset MTRSYS_SYSZONE, as SMF 113 has
    from its header TME/DTE, so the engine derives the offset of both the same way; no usable offset: no
    column, and a finding says why the system stays in UTC."""
    s, df = w.sys or {}, result.samples
    zone = s.get("zone_offset_s")
    if not len(df) or not s:          # no D1R4: already said (no-configuration)
        return
    if R.zone_offset_ok(zone):
        df["local_time"] = df["time"] + pd.Timedelta(seconds=int(zone))
        return
    what = ("the D1R4 record is too short for MTRSYS_SYSZONE" if zone is None
            else f"D1R4 MTRSYS_SYSZONE holds {zone}, not a whole quarter hour of seconds within 14 hours")
    w.find(s.get("offset"), "info", "no-zone-offset", f"the time-zone offset of z/VM system "
           f"{s.get('system') or '?'} cannot be derived: {what}", "its times are shown in UTC")


def walk_monwrite(data, file: str, *, progress: Callable[[float], None] | None = None,
                  cancel: Callable[[], bool] | None = None, fast: bool = False):
    """Detect the container and walk every block: the finished :class:`_Walk` (records in ``series``,
    findings in ``findings``), or a ReadResult when the file cannot be read (ASCII or packed transfer).
    ``fast=True`` first tries the clean fast path (:func:`_fast_walk`: series as arrays in ``fast``, for
    :func:`read_monwrite` only) and falls back to the careful walk when the file has anything irregular."""
    framing, pages, stream, bad = "monwrite", None, data, []
    if not _block_ok(data, 0):
        if rdw_framed(data):
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
    say_bad_rdw(w, bad)
    w.run()
    w.end_of_file()
    w.framing = framing
    return w


def say_bad_rdw(w: _Walk, bad: list[tuple[int, str]]) -> None:
    """The RDW problems met deblocking (:func:`app.formats.monwrite_blocks.deblocked`) as the walk's first
    findings."""
    for off, what in bad:
        w.findings.append(make_finding(w.file, off, "warning", "bad-rdw", what,
                                       "records of the skipped bytes are lost" if "skipped" in what or "not read"
                                       in what else "check the counters of this block"))


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

