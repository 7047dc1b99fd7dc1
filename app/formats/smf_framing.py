"""SMF framing: find the logical records in a PC copy of an SMF dump.

Implements spec ``smf113.md`` section 2: RDW (variant a), BDW blocks (b), VBS
spanned segments (c), double RDW (f), and recognises RDW-stripped (d) and
ASCII-transferred (e) files.  Detection validates a *chain* of records, never
one header.  The walk is one tight loop over descriptors; records of unwanted
types are counted from their type byte (record offset 5) and never copied.

Damage never raises: a cut tail, a corrupt length or an orphan VBS segment
becomes a finding naming the byte offset, and the walk resynchronises on the
next position where a valid SMF header chain starts.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.findings import Finding, make_finding
from app.formats import kernel, pages
from app.formats.common import packed_date_ok
# (_last_nonzero is also imported from here by app.formats.monwrite)
from app.formats.smf_resync import (CAND_CHUNK, MAX_LEN, MIN_LEN, _candidates, _hdr_ok, _iter_candidates,  # noqa: F401
                                     _last_nonzero, _LNZ, _NP_DIGITS, _NP_END, _stripped113_length, _zero_tail,
                                     be16, resync, whole_before, zero_stop)
# the walk of blocks (variants b and c) and the block chain's checks
from app.formats.smf_blocked import CHAIN_N, _chain_bdw, _resync_block, walk_bdw

__all__ = ["Framed", "detect_framing", "frame_records", "valid_smf_header", "MAX_LEN"]

MAX_FINDINGS_PER_CODE = 25
HIS_WID = "HIS ".encode("cp037")   # SMF113WID: the writer id of every SMF 113 record (spec 3)
RDW_ADVICE = "re-transfer with FTP binary and `quote site rdw`"


@dataclass
class Framed:
    """Result of a framing walk.

    Attributes
    ----------
    framing : str
        'rdw', 'bdw', 'vbs', 'double-rdw', 'nordw', 'ascii' or 'unknown'.
    records : sequence of (int, bytes | memoryview)
        File offset and full record bytes (RDW included) of each wanted record (:class:`RecordSpans` after a
        clean RDW walk, else :class:`WalkedRecords`: both offsets, the bytes made on demand).
    type_counts : dict
        Records seen per SMF record type (all types).
    other_bytes : int
        Bytes of records skipped because their type was not wanted.
    findings : list of Finding
    """

    framing: str
    records: Sequence = field(default_factory=list)
    type_counts: dict = field(default_factory=dict)
    other_bytes: int = 0
    retyped: list[tuple[int, int]] = field(default_factory=list)   # (offset, type) of unwanted records written by HIS
    findings: list[Finding] = field(default_factory=list)


def valid_smf_header(buf, p: int, length: int) -> bool:
    """Spec 2.3 ``valid_smf_header``: plausible length, fits the file, packed date valid."""
    return (MIN_LEN <= length <= MAX_LEN and p + length <= len(buf)
            and packed_date_ok(bytes(buf[p + 10:p + 14])))


# ----------------------------------------------------------------------------- detection

def _chain_rdw(buf, inner: int = 0, start: int = 0) -> float:
    n, p, score = len(buf), start, 0.0
    while score < CHAIN_N and p < n:
        if not _hdr_ok(buf, p, n, inner):
            return score
        length = be16(buf, p)
        if p + length > n:
            return score + 0.5          # valid header, cut tail
        score += 1
        p += length
        if p < n and _zero_tail(buf, p):
            break
    return score


LOOK_PAST = 1 << 24       # how far detection looks for a chain after a damaged start (16 MiB)
MIN_LATE_CHAIN = 3        # records a chain that starts after a damaged start must validate (or reach EOF)


def detect_framing(buf) -> str:
    """Return 'rdw', 'bdw', 'double-rdw', 'nordw', 'ascii' or 'unknown' (spec 2.3)."""
    return detect_framing_at(buf)[0]


def detect_framing_at(buf) -> tuple[str, int]:
    """Framing and the offset where its first valid chain starts (0 unless the start is damaged).

    When no chain starts at offset 0 (a damaged first descriptor), detection looks
    for the first offset within :data:`LOOK_PAST` bytes where a chain of at least
    :data:`MIN_LATE_CHAIN` records (or one reaching the end of the file) starts,
    under each framing, and takes the framing whose chain is longest.
    """
    scores = {"rdw": _chain_rdw(buf), "bdw": _chain_bdw(buf), "double-rdw": _chain_rdw(buf, 4)}
    best = max(scores.values())
    if best >= MIN_LATE_CHAIN:
        return next(k for k, v in scores.items() if v == best), 0
    late = _late_chain(buf)
    if best > 0 and (late is None or _chain_score(buf, *late) <= best):
        return next(k for k, v in scores.items() if v == best), 0               # before the RDW-stripped test: a file whose first RDW is lost
    if late is not None:                  # also has a packed date at offset 6
        return late
    if len(buf) >= 10 and packed_date_ok(bytes(buf[6:10])):
        return "nordw", 0
    return _text_or_unknown(buf), 0


def _late_chain(buf) -> tuple[str, int] | None:
    n = len(buf)
    stop = min(n, LOOK_PAST)
    found: list[tuple[float, int, str]] = []
    for mode, inner in (("rdw", 0), ("double-rdw", 4)):
        for q in _iter_candidates(buf, 1, stop, inner):
            if not _hdr_ok(buf, q, n, inner):
                continue
            sc = _chain_rdw(buf, inner, q)
            if sc >= MIN_LATE_CHAIN or (sc >= 1 and _chain_reaches_end(buf, q, inner)):
                found.append((sc, -q, mode))
                break
    q = _resync_block(buf, 1, stop)
    if q is not None:
        sc = _chain_bdw(buf, q)
        if sc >= MIN_LATE_CHAIN or sc >= 1:
            found.append((sc, -q, "bdw"))
    if not found:
        return None
    sc, q, mode = max(found)
    return mode, -q


def _chain_score(buf, mode: str, q: int) -> float:
    return _chain_bdw(buf, q) if mode == "bdw" else _chain_rdw(buf, 4 if mode == "double-rdw" else 0, q)


def _chain_reaches_end(buf, q: int, inner: int) -> bool:
    n = len(buf)
    while q < n and _hdr_ok(buf, q, n, inner):
        q += be16(buf, q)
        if q < n and _zero_tail(buf, q):
            return True
    return q == n


def _text_or_unknown(buf) -> str:
    head = bytes(buf[:65536])
    printable = sum(1 for x in head if 32 <= x < 127 or x in (9, 10, 13))
    if head and (printable / len(head) > 0.85 or head.count(b"\r\n") >= max(2, len(head) // 2000)):
        return "ascii"
    return "unknown"


# ----------------------------------------------------------------------------- walking

class _Walker:
    """State of one walk: buffer, wanted types, findings, progress and cancel."""

    def __init__(self, buf, file: str, want: frozenset[int], progress, cancel, hand_back: bool = False) -> None:
        self.buf, self.n, self.file, self.want = buf, len(buf), file, want
        self.progress, self.cancel = progress, cancel
        self.out = Framed("unknown", WalkedRecords(buf))
        self.counts = [0] * 256
        self._next_progress = 0
        self._step = max(self.n // 64, 1 << 16)
        self._tick, self._dropped, self.hand_back = 0, 0, hand_back
        self._cand: dict[int, tuple[int, int, np.ndarray]] = {}   # inner -> (from, to, candidates)
        self._codes: dict[str, int] = {}
        self._extra: dict[str, tuple[int, int]] = {}
        self.last: tuple[int, int, bool] | None = None             # last record emitted: offset, length, wanted
        self._shape_ok: dict[bytes, int] = {}

    def emit(self, off: int, rec) -> None:
        """A record the walk put together (a spanned record's segments joined, an RDW-stripped one given its RDW):
        kept as its bytes."""
        self._emit(off, rec, len(rec), rec)

    def emit_at(self, off: int, end: int) -> None:
        """The record at ``buf[off:end]``: kept as its offsets (its bytes are read from the buffer when asked)."""
        self._emit(off, None, end - off, self.buf)

    def _emit(self, off: int, rec, ln: int, src) -> None:
        at = 0 if rec is not None else off         # (where the record starts in src)
        if ln < MIN_LEN:
            self.find("warning", "short-record", off, f"record of {ln} bytes is shorter than an SMF header "
                      f"({MIN_LEN} bytes)", "it was skipped")
            return
        rty = src[at + 5]
        self.counts[rty] += 1
        wanted = rty in self.want
        if wanted:
            self.out.records.add(off, ln, rec)
        else:
            self.out.other_bytes += ln
            if 113 in self.want and bytes(src[at + 18:at + 22]) == HIS_WID:
                self.out.retyped.append((off, rty))
        self.last = (off, ln, wanted)

    def poll(self, p: int) -> None:
        self._tick += 1
        if self.hand_back and p - self._dropped > 2 << 20:      # (pages.py)
            self._dropped = pages.drop(self.buf, self._dropped, p) or p
        if self._tick & 0xFFF == 0 and self.cancel is not None and self.cancel():
            from app.formats.schema import Cancelled
            raise Cancelled()
        if self.progress is not None and p >= self._next_progress:
            self.progress(min(p / max(self.n, 1), 1.0))
            self._next_progress = p + self._step

    def find(self, sev: str, code: str, off: int, what: str, meaning: str) -> None:
        c = self._codes[code] = self._codes.get(code, 0) + 1
        if c > MAX_FINDINGS_PER_CODE:
            first, k = self._extra.get(code, (off, 0))
            self._extra[code] = (first, k + 1)
            return
        self.out.findings.append(make_finding(self.file, off, sev, code, what, meaning))

    def candidates_from(self, start: int, inner: int) -> np.ndarray:
        """Cached candidate offsets >= start (the next chunk is computed only when the walk passes the cache)."""
        lo, hi, cand = self._cand.get(inner, (0, 0, np.zeros(0, np.int64)))
        if not (lo <= start < hi):
            lo, hi = start, min(self.n, start + CAND_CHUNK)
            cand = _candidates(self.buf, lo, hi, inner)
            self._cand[inner] = (lo, hi, cand)
        return cand[np.searchsorted(cand, start):]

    def resync(self, start: int, inner: int = 0) -> int | None:
        """Where reading resumes after damage at ``start``: :func:`app.formats.smf_resync.resync`."""
        return resync(self, start, inner)

    def zero_stop(self, p: int) -> None:
        """The rest of the file from ``p`` is zeros: :func:`app.formats.smf_resync.zero_stop`."""
        zero_stop(self, p)

    def close(self) -> None:
        for code, (off, k) in self._extra.items():
            self.out.findings.append(make_finding(self.file, off, "warning", code, f"{k} more findings "
                                                  f"'{code}' (not listed one by one; the first is at this offset)",
                                                  "see the findings above for what it means"))
        self._extra = {}

    def finish(self) -> Framed:
        self.close()
        if isinstance(self.out.records, WalkedRecords):
            self.out.records.done()
        self.out.type_counts = {t: c for t, c in enumerate(self.counts) if c}
        if self.progress is not None:
            self.progress(1.0)
        return self.out


class RecordSpans(Sequence):
    """The records of a clean walk as start/end offsets into ``buf``; items are (offset, memoryview) pairs made
    on demand, so 368,640 records cost two arrays, not 368,640 slices (the SMF 113 decoder reads the arrays)."""

    def __init__(self, buf, starts: np.ndarray, ends: np.ndarray, head: np.ndarray | None = None) -> None:
        self.buf, self.starts, self.ends, self._mv = buf, starts, ends, memoryview(buf)
        self.head = head          # optional (records x 52) first bytes of each record, as the walk read them

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        a = int(self.starts[i])
        return a, self._mv[a:int(self.ends[i])]


class WalkedRecords(Sequence):
    """The records of a careful walk (damage, blocks, spanned segments) as file offsets and lengths (two growing
    integer arrays, numpy arrays once the walk is done), not one ``memoryview`` per record (issue 24: 5 MB of
    Python objects per extract chunk of blocks); a record the walk put together (a spanned record's segments
    joined, an RDW-stripped record given its RDW) is kept as its bytes.  Items are (offset, bytes or memoryview)
    pairs, made on demand."""

    def __init__(self, buf) -> None:
        self.buf, self._mv = buf, None
        self.offs, self.lens = array("q"), array("q")
        self.made: dict[int, bytes] = {}       # index -> bytes of a record not in the buffer as it is

    def add(self, off: int, length: int, rec: bytes | None = None) -> None:
        if rec is not None:
            self.made[len(self.offs)] = rec
        self.offs.append(off)
        self.lens.append(length)

    def pop(self):
        item = self[-1]
        self.made.pop(len(self.offs) - 1, None)
        self.offs.pop()
        self.lens.pop()
        return item

    def done(self) -> None:
        """The walk is over: the offsets and lengths as int64 numpy arrays."""
        self.offs, self.lens = np.array(self.offs, np.int64), np.array(self.lens, np.int64)

    def __len__(self) -> int:
        return len(self.offs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = range(len(self.offs))[i]           # (a negative index; IndexError past the end)
        off = int(self.offs[i])
        got = self.made.get(i)
        if got is not None:
            return off, got
        if self._mv is None:
            self._mv = memoryview(self.buf)
        return off, self._mv[off:off + int(self.lens[i])]

    def pieces(self, a: int, b: int) -> list:
        """The bytes of records ``a`` to ``b - 1`` back to back, as few pieces: a run of records adjacent in the
        buffer is one view of it."""
        if self._mv is None:
            self._mv = memoryview(self.buf)
        out: list = []
        run_a = run_b = -1
        for i in range(a, b):
            got = self.made.get(i)
            o = int(self.offs[i])
            if got is None and o == run_b:
                run_b = o + int(self.lens[i])
                continue
            if run_b > run_a:
                out.append(self._mv[run_a:run_b])
            run_a = run_b = -1
            if got is not None:
                out.append(got)
            else:
                run_a, run_b = o, o + int(self.lens[i])
        if run_b > run_a:
            out.append(self._mv[run_a:run_b])
        return out

    def truncate(self, k: int) -> None:
        """Keep only the first ``k`` records (the rest's joined bytes let go)."""
        self.made = {i: r for i, r in self.made.items() if i < k}
        self.offs, self.lens = self.offs[:k], self.lens[:k]


def _clean_rdw(w: _Walker, inner: int) -> bool:
    """Fast path of :func:`walk_rdw` for a clean file: a Python loop that only records offsets, then every
    header checked at once with numpy (as :func:`_hdr_ok` does) and the records emitted in bulk.  Returns False,
    having done nothing, at the first irregularity (the careful walk then runs from the start), and also when an
    SMF 113 record is longer than its own sections (that walk decides whether the length field is wrong)."""
    buf, n = w.buf, w.n
    parts: list[np.ndarray] = []
    heads: list[np.ndarray] = []       # every record's first bytes, copied while the walk's step is mapped
    p, least, status = 0, MIN_LEN + inner, 1
    while status == 1:                 # progress and cancel about every 1.5 % of the bytes, as the careful walk
        if w.progress is not None:
            w.progress(min(p / n, 1.0))
        if w.cancel is not None and w.cancel():
            from app.formats.schema import Cancelled
            raise Cancelled()
        got, head, p, status = kernel.rdw_heads(buf, p, p + w._step, least, 52 + inner)
        parts.append(got)
        heads.append(head)
    if status < 0 or p != n:
        return False
    o = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if not len(o):
        return False
    if o[-1] + 14 + inner > n:
        return False
    H = np.concatenate(heads) if len(heads) > 1 else heads[0]   # every record's first bytes, checked by column
    h = H[:, inner:]                            # the SMF header (after the inner RDW of a double-RDW file)
    ln = (H[:, 0].astype(np.int64) << 8) | H[:, 1]
    q = o + inner
    ok = (H[:, 2] == 0) & (H[:, 3] == 0) & (ln <= MAX_LEN)
    if inner:
        ok &= ((((h[:, 0].astype(np.int64) << 8) | h[:, 1]) == ln - inner) & (h[:, 2] == 0) & (h[:, 3] == 0))
    d, e = h[:, 12].astype(np.int64), h[:, 13]
    ok &= (h[:, 10] <= 2) & _NP_DIGITS[h[:, 11]] & _NP_DIGITS[h[:, 12]] & _NP_END[e]
    doy = (d >> 4) * 100 + (d & 0xF) * 10 + (e >> 4)
    if not (ok & (doy >= 1) & (doy <= 366)).all():
        return False
    rty = h[:, 5]
    if 113 in w.want:                  # same rule as the careful walk, once per record shape
        i113 = np.flatnonzero((rty == 113) & (ln - inner >= 52) & (q + 52 <= n))
        if len(i113):
            hk = h if len(i113) == len(h) else h[i113]          # every record a 113 (usual): no row copy
            keys = np.ascontiguousarray(np.concatenate([hk[:, 0:2], hk[:, 22:52]], axis=1))
            if (keys == keys[0]).all():
                first = np.zeros(1, np.int64)
            else:
                _, first = np.unique(keys.view(np.dtype((np.void, keys.shape[1]))).ravel(), return_index=True)
            for j in i113[first].tolist():
                s_end = int(o[j]) + _struct_len(w, int(q[j]), int(ln[j]) - inner) + inner
                if int(q[j]) + MIN_LEN <= s_end < int(o[j] + ln[j]):
                    return False
    cnt = np.bincount(rty, minlength=256)
    for t in np.flatnonzero(cnt).tolist():
        w.counts[t] += int(cnt[t])
    wanted = np.isin(rty, np.fromiter(w.want, np.int64, len(w.want)))
    every = bool(wanted.all())         # (usual) the first bytes of every record: a view, not a copy
    w.out.records = RecordSpans(buf, q[wanted], (o + ln)[wanted], h[:, :52] if every else h[wanted, :52])
    w.out.other_bytes += int((ln - inner)[~wanted].sum())
    if 113 in w.want:                  # a record type byte damaged away from 113 (the writer id still says HIS)
        his = [] if every else np.flatnonzero(~wanted & (h[:, 18:22] == np.frombuffer(HIS_WID, np.uint8)).all(1))
        w.out.retyped = [(int(q[i]), int(rty[i])) for i in his]
    w.last = (int(q[-1]), int(ln[-1] - inner), bool(wanted[-1]))
    return True


def walk_rdw(w: _Walker, inner: int = 0) -> None:
    """Variants a (inner=0) and f (double RDW, inner=4)."""
    if _clean_rdw(w, inner):
        return
    buf, n, p = w.buf, w.n, 0
    good = -1                      # position whose header the previous step already validated
    while p < n:
        w.poll(p)
        if p != good and (n - p < 4 or (buf[p] == 0 and buf[p + 1] == 0 and _zero_tail(buf, p))):
            if not _zero_tail(buf, p):
                what = (f"record length {be16(buf, p)} runs past end of file (size {n})" if n - p >= 2 else
                        f"a record descriptor starts here but runs past end of file (size {n})")
                w.find("warning", "truncated-record", p, what, "the last record is incomplete and was skipped")
            else:
                w.zero_stop(p)
            return
        length = be16(buf, p)
        if p != good and not _hdr_ok(buf, p, n, inner):
            if p + 14 + inner > n and not buf[p + 2] and not buf[p + 3]:
                w.find("warning", "truncated-record", p, f"record length {length} runs past end of file "
                       f"(size {n})", "the last record is incomplete and was skipped")
                return
            q = w.resync(p + 1, inner)
            w.find("error", "corrupt-length", p, f"no valid SMF record header here (length field {length}, "
                   f"segment bytes {bytes(buf[p + 2:p + 4]).hex().upper()})",
                   f"skipped {(q if q is not None else n) - p} bytes" + (f"; resumed at offset {q}" if q is not None
                                                                          else " to the end of the file"))
            if q is None:
                return
            p = q
            continue
        end = p + length
        if end > n:
            q = w.resync(p + 4, inner)
            if q is None:
                w.find("warning", "truncated-record", p, f"record length {length} runs past end of file "
                       f"(size {n})", "the last record is incomplete and was skipped")
                return
            w.find("error", "corrupt-length", p, f"record length {length} runs past end of file (size {n}) "
                   f"but valid records follow at offset {q}", f"the record was skipped; resumed at offset {q}")
            p = q
            continue
        if end < n and _hdr_ok(buf, end, n, inner):
            good = end
        elif end < n and not _zero_tail(buf, end):
            q = w.resync(p + 4, inner)
            if q is not None and q < end and not whole_before(buf, p, end, inner):
                # a valid chain starts inside this record (and no header with only its length damaged follows
                # it, see whole_before): its length field is wrong
                w.find("error", "corrupt-length", p, f"record length {length} does not lead to a valid next "
                       f"record (expected a header at offset {end})",
                       f"the record was skipped; resumed at offset {q}")
                p = q
                continue
        if buf[p + inner + 5] == 113 and 113 in w.want:
            s_end = p + _struct_len(w, p + inner, length - inner) + inner
            if p + inner + MIN_LEN <= s_end < end and _hdr_ok(buf, s_end, n, inner):
                w.find("error", "corrupt-length", p, f"record length {length} is longer than the record's own "
                       f"sections ({s_end - p} bytes) and a valid record starts at offset {s_end}",
                       f"the length field is wrong: the record was read with {s_end - p} bytes and reading "
                       f"resumed at offset {s_end}")
                w.emit_at(p + inner, s_end)
                p = s_end
                good = -1
                continue
        w.emit_at(p + inner, end)
        p = end


def _plain_text(buf, sample: int = 65536) -> bool:
    """Text written as text: almost no bytes outside printable ASCII, tab, CR and LF.

    An SMF file sent in ASCII mode still carries its binary fields, translated into
    high and control bytes; a notes or CSV file does not.
    """
    head = bytes(buf[:sample])
    if not head:
        return False
    odd = sum(1 for b in head if not (32 <= b < 127 or b in (9, 10, 13)))
    return odd <= len(head) // 200           # at most 0.5 % (a stray UTF-8 character or two)


def _struct_len(w: _Walker, r: int, length: int) -> int:
    """Length an SMF 113 record at ``r`` needs for its sections (cached per record shape); ``length`` when
    it cannot be told."""
    buf = w.buf
    if length < 52 or r + 52 > w.n:
        return length
    key = bytes(buf[r:r + 2]) + bytes(buf[r + 22:r + 52])
    hit = w._shape_ok.get(key)
    if hit is None:
        sl = _stripped113_length(memoryview(buf)[:min(w.n, r + length)], r + 4)
        hit = w._shape_ok[key] = (sl + 4) if sl is not None else length
    return hit


def walk_nordw(w: _Walker) -> None:
    """Variant d degraded mode: 113-only files, record length from the section triplets."""
    buf, n, p = w.buf, w.n, 0
    while p + 24 <= n:
        w.poll(p)
        if buf[p + 1] != 113 or not packed_date_ok(bytes(buf[p + 6:p + 10])):
            if not _zero_tail(buf, p):
                w.find("error", "rdw-stripped", p, "cannot find the end of the previous record without RDWs "
                       "(the degraded mode only works for files holding nothing but SMF 113 records)",
                       f"the rest of the file was not read; {RDW_ADVICE}")
            break
        length = _stripped113_length(buf, p)
        if length is None or p + length > n:
            w.find("warning", "truncated-record", p, "stripped SMF 113 record runs past end of file or has "
                   "inconsistent section offsets", "it was skipped")
            break
        ln = length + 4
        w.emit(p, bytes((ln >> 8 & 0xFF, ln & 0xFF, 0, 0)) + bytes(buf[p:p + length]))
        p += length


def frame_records(buf, file: str, *, want: frozenset[int] | set[int] = frozenset({113}),
                  progress: Callable[[float], None] | None = None, cancel: Callable[[], bool] | None = None,
                  hand_back: bool = False) -> Framed:
    """Detect the framing of ``buf`` and return the records of the wanted types.

    Parameters
    ----------
    buf : bytes
        The whole (decompressed) file.
    file : str
        File name used in findings.
    want : set of int
        SMF record types whose bytes are returned; all others are only counted.
    progress, cancel : callables, optional
        ``progress(fraction)`` about every 1.5 % of bytes; ``cancel()`` polled every 4096 records.
    hand_back : bool, optional (a mapped buffer's pages handed back every 2 MiB walked past: the extract's chunks)

    Returns
    -------
    Framed
    """
    w = _Walker(buf, file, frozenset(want), progress, cancel, hand_back)
    mode = detect_framing(buf)
    if hand_back:           # the pages detection mapped (the chain at the start, the zero tail at the end) handed
        pages.drop(buf, 0, len(buf), past=True)     # back: the walk maps and hands back its own as it goes
    if mode == "rdw":
        walk_rdw(w)
    elif mode == "double-rdw":
        walk_rdw(w, 4)
    elif mode == "bdw":
        mode = walk_bdw(w)
    elif mode == "nordw":
        w.find("error", "rdw-stripped", 0, "the file has no record descriptor words (RDW stripped: a packed date "
               "sits at offset 6, where the record header would put it without its RDW)",
               f"{RDW_ADVICE}; SMF 113 records were read in a degraded mode that cannot skip other record types")
        walk_nordw(w)
    elif mode == "ascii" and _plain_text(buf):
        w.find("error", "text-file", 0, "the file is plain text (printable characters and line ends only), not "
               "SMF data", "nothing was read from it; if it should hold SMF records, it was transferred in ASCII "
               "mode: re-transfer the SMF data set in binary mode with `quote site rdw`")
    elif mode == "ascii":
        w.find("error", "ascii-transfer", 0, "the file looks like text: it was transferred in ASCII mode, which "
               "translates EBCDIC to ASCII and inserts line ends, destroying binary fields",
               "the data is unrecoverable; re-transfer the SMF data set in binary mode with `quote site rdw`")
    else:
        w.find("error", "unknown-framing", 0, "no chain of SMF records was found under any framing (RDW, "
               "BDW/VBS, double RDW)", f"this does not look like SMF data; if it is, {RDW_ADVICE}")
    out = w.finish()
    if hand_back:           # (the last stretch the walk read, and what a resynchronisation looked at)
        pages.drop(buf, 0, len(buf), past=True)
    out.framing = mode
    _LNZ.clear()
    return out
