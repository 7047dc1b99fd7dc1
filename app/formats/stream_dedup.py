"""Drop records repeated byte for byte while a gzip file is decompressed (issue 20).

8 MB of gzip can hold one valid record repeated to 2 GB; fully decompressed it
would take gigabytes of memory before the reader's duplicate check ever saw it.  :class:`StreamDedup` walks the RDW records of the output as
it grows (between the decompressor's input pieces) and removes every record whose
bytes equal a record it has seen among the last :data:`WINDOW` distinct ones,
so the data kept in memory is the distinct records only.

Deflate can only repeat what lies within its 32 KiB window, so a file that
decompresses to far more than its size repeats records a few dozen records apart
at most: the window of 65,536 distinct records (16-byte digests, about 8 MiB)
catches every such repeat.  Repeats further apart are left to the reader's
duplicate check, as before.

Only SMF data in RDW framing (variant a, detected on the first 64 KiB) is
filtered; at the first record whose header does not validate the filter stops for
the rest of the file, and the framing walk handles the damage as before.  File
offsets stay those of the unfiltered stream: :meth:`StreamDedup.original` maps an
offset of the filtered data back.

Memory bound while decompressing such a file: the distinct records (at most
``NESTSCOPE_MAX_BYTES``), plus what one 64 KiB piece of gzip expands to before it
is filtered (deflate expands at most about 1032 times: under 66 MiB), plus the
digest window (under 10 MiB).  Measured: 2 GB of one record in 9.5 MB of gzip
peaks at 196 MB RSS, 37 MB above a process that only imports the reader
(bench/damage_campaign.py).
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools

import numpy as np

from app.findings import Finding, make_finding
from app.formats import kernel
from app.formats.smf_resync import _NP_DIGITS, _NP_END, MAX_LEN, MIN_LEN

WINDOW = 65536                # distinct records remembered (16-byte digest each, ~120 bytes with the dict)
DECIDE_AT = 1 << 16           # output bytes looked at before deciding whether the data is in RDW framing
DIGEST = 16                   # BLAKE2b digest size: a false match is a 1 in 2**128 event
RECENT = 256                  # record starts looked back at for a run of repeats (deflate's 32 KiB window)


class StreamDedup:
    """Duplicate-record filter over a growing ``bytearray`` of decompressed data (see the module docstring)."""

    def __init__(self) -> None:
        self.state = "undecided"          # 'rdw' while filtering, 'off' when the data is not (or no longer) RDW
        self.pos = 0                      # offset in the filtered data up to which records were checked
        self.seen: dict[int, int] = {}    # fingerprint -> offset (filtered data) of the kept record that has it
        self.twins: dict[bytes, None] = {}   # BLAKE2b digests of kept records whose fingerprint another one has
        self.marks: list[int] = []        # filtered offsets where records were removed (ascending)
        self.cum: list[int] = []          # bytes removed up to and including each mark
        self.count = 0
        self.first: int | None = None     # unfiltered offset of the first record removed
        self.recent: list[int] = []       # starts of the last distinct records kept (offsets in the data)

    def step(self, out: bytearray, final: bool = False) -> None:
        """Check the complete records of ``out`` after :attr:`pos` and remove the repeats (in place)."""
        if self.state == "off":
            return
        if self.state == "undecided":
            if len(out) < DECIDE_AT and not final:
                return
            from app.formats.smf_framing import _chain_rdw   # local: smf_framing is the heavier module

            self.state = "rdw" if out[:2] != b"\x1f\x8b" and _chain_rdw(bytes(out[:DECIDE_AT])) >= 2 else "off"
            if self.state == "off":
                return
        offs, ends, turn_off = _records(out, self.pos, len(out))
        if len(offs):
            fps = _fingerprints(out, offs, ends).tolist()
            if len(set(fps)) == len(fps) and self.seen.keys().isdisjoint(fps):
                # no fingerprint seen before (the rule): every record is new, all into the window at once
                self.seen.update(zip(fps, offs.tolist()))
                self._evict()
                self.recent.extend(offs[-RECENT:].tolist())
                self.pos = int(ends[-1])
            else:
                self._walk(out, offs, ends, fps)
        if turn_off:
            self.state = "off"    # damage or another framing: the walk deals with it from here
        self.recent = self.recent[-RECENT:]

    def _evict(self) -> None:
        """The oldest distinct records leave the window beyond :data:`WINDOW`."""
        for table in (self.seen, self.twins):
            extra = len(table) - WINDOW
            if extra > 0:
                for key in list(itertools.islice(table, extra)):
                    del table[key]

    def _repeat(self, mv: memoryview, p: int, end: int, fp: int, added: list[int]) -> bool:
        """The record ``[p, end)`` repeats one of the window byte for byte; else it joins the window (its
        fingerprint appended to ``added``) and False.  A fingerprint match is checked on the bytes; a record whose
        fingerprint a different record holds is looked up by its BLAKE2b digest (:attr:`twins`)."""
        q = self.seen.get(fp)
        if q is None:
            self.seen[fp] = p
            added.append(fp)
            self._evict()
            return False
        if mv[q:q + end - p] == mv[p:end]:
            return True
        h = hashlib.blake2b(mv[p:end], digest_size=DIGEST).digest()
        if h in self.twins:
            return True
        self.twins[h] = None
        self._evict()
        return False

    def _walk(self, out: bytearray, offs: np.ndarray, ends: np.ndarray, fps: list[int]) -> None:
        """Record by record over ``offs`` (the checked records from :attr:`pos`): the repeats, and the runs of
        repeats after them, are removed."""
        n, p = len(out), self.pos
        p0 = p
        a = np.frombuffer(out, np.uint8)
        mv = memoryview(out)
        keep: list[tuple[int, int]] = []
        drops: list[tuple[int, int]] = []          # (offset, length) spans removed in this pass
        recent = self.recent                       # starts of the last records before p, in this pass' offsets
        added: list[int] = []                      # fingerprints put in the window in this pass
        run = p
        stop, k, i = int(ends[-1]), len(offs), 0
        while p < stop:
            end = int(ends[i])
            if not self._repeat(mv, p, end, fps[i], added):
                recent.append(p)
                p = end
                i += 1
                continue
            span, nrec = self._periodic(a, mv, recent, p, end, n, (offs, p0))
            if run < p:
                keep.append((run, p))
            drops.append((p, span))
            self.count += nrec
            p += span
            run = p
            i = int(np.searchsorted(offs, p))
            if i >= k or int(offs[i]) != p:     # not a record start of this pass (whole periods always are)
                break
        del a
        mv.release()
        if drops:
            self._compact(out, keep, run, p, drops)
            added = [fp for fp in added if fp in self.seen]   # the window's records of this pass moved too
            self.seen.update(zip(added, _moved([self.seen[fp] for fp in added], drops)))
        else:
            self.pos = p

    def _periodic(self, a: np.ndarray, mv: memoryview, recent: list[int], p: int, end: int, n: int,
                  starts: tuple[np.ndarray, int]) -> tuple[int, int]:
        """The record at ``p`` repeats an earlier one.  When the bytes from one of the last :data:`RECENT` record
        starts ``s`` on equal it, the data from ``p`` may repeat the whole stretch ``[s, p)`` several times (a
        run of repeats, as deflate makes them): the longest such stretch is found with one vectorised compare.
        Returns (bytes, records) to drop: whole periods, or just this record.  A period's records are every
        record start in ``[s, p)``: the kept ones of earlier passes (in ``recent``, before the pass' start) and
        all of this pass (``starts``: the pass' record starts and its first offset), repeats already dropped in
        this pass included (they are still in the data until the pass ends; counting only the kept ones counted
        a record too few for each)."""
        ln = end - p
        for j in range(len(recent) - 1, -1, -1):
            s = recent[j]
            if mv[s:s + ln] != mv[p:end]:
                continue
            per = p - s
            m = n - p
            diff = np.flatnonzero(a[p:n] != a[s:s + m])
            same = int(diff[0]) if len(diff) else m
            k = same // per
            if k >= 1:
                offs, p0 = starts
                before = sum(1 for r in recent[j:] if r < p0)       # kept in earlier passes
                here = int(np.searchsorted(offs, p) - np.searchsorted(offs, max(s, p0)))
                return k * per, k * (before + here)
            break
        return ln, 1

    def _compact(self, out: bytearray, keep: list[tuple[int, int]], run: int, p: int,
                 drop_at: list[tuple[int, int]]) -> None:
        start = self.pos
        if run < p:
            keep.append((run, p))
        removed_before = self.cum[-1] if self.cum else 0
        if self.first is None:
            self.first = drop_at[0][0] + removed_before
        # the filtered offset of each removal: its unfiltered place minus what was removed before it in this pass
        gone = 0
        for at, ln in drop_at:
            gone += ln
            if self.marks and self.marks[-1] == at - (gone - ln):
                self.cum[-1] = removed_before + gone      # a run of repeats: one mark (bounded by distinct records)
            else:
                self.marks.append(at - (gone - ln))
                self.cum.append(removed_before + gone)
        kept = b"".join(bytes(out[a:b]) for a, b in keep)
        out[start:p] = kept
        self.pos = start + len(kept)
        self.recent = _moved(self.recent[-RECENT:], drop_at)

    def original(self, off: int) -> int:
        """The unfiltered offset of filtered offset ``off``."""
        i = bisect.bisect_right(self.marks, off)
        return off + (self.cum[i - 1] if i else 0)

    def finding(self, file: str) -> Finding | None:
        if not self.count:
            return None
        return make_finding(file, self.first, "warning", "duplicate-record", f"{self.count:,} records repeat an "
                            f"earlier record byte for byte ({self.cum[-1]:,} bytes of decompressed data)",
                            "each was kept once and the repeats dropped while decompressing (offsets are those "
                            "of the decompressed file)")

    def apply(self, result) -> None:
        """Give the offsets of ``result`` (a ReadResult of the filtered data) in the unfiltered stream and put
        the finding first."""
        if not self.count:
            return
        s = result.samples
        if len(s) and "offset" in s:
            o = s["offset"].to_numpy(np.int64)
            add = np.r_[0, np.asarray(self.cum, np.int64)][np.searchsorted(np.asarray(self.marks, np.int64), o,
                                                                            side="right")]
            s["offset"] = (o + add).astype(s["offset"].dtype)
        result.findings = [self.finding(result.file), *(self._moved(f) for f in result.findings)]
        result.meta["duplicates_dropped"] = self.count

    def _moved(self, f: Finding) -> Finding:
        if f.offset is None or f.offset < 0:
            return f
        new = self.original(f.offset)
        if new == f.offset:
            return f
        old = f"offset {f.offset} (0x{f.offset:X}): "
        return dataclasses.replace(f, offset=new, message=f.message.replace(old, f"offset {new} (0x{new:X}): ", 1))


# random odd multipliers, fixed (the same fingerprints in every run): one per 8-byte word of a record up to MAX_LEN
_KEYS = np.random.default_rng(0x113D).integers(1, 1 << 63, size=(MAX_LEN + 8) // 8, dtype=np.uint64) | np.uint64(1)


def _records(buf: bytearray, p: int, n: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(offsets, ends, off) of the records from ``p`` on that are whole in ``buf[:n]`` and whose RDW headers pass
    the reader's check (:func:`app.formats.smf_resync._hdr_ok`, here on all headers at once), up to the first that
    does not; ``off``: that one's header fails with its 14 bytes there (damage or another framing).  The chain is
    walked by the compiled kernel (:func:`app.formats.kernel.rdw_offsets`)."""
    offs, q, status = kernel.rdw_offsets(buf, p, n, MIN_LEN)
    ends = offs
    if len(offs):
        h = kernel.rows_at(buf, offs, 14)                 # zero past the end
        ln = (h[:, 0].astype(np.int64) << 8) | h[:, 1]
        ends = offs + ln
        d, e = h[:, 12], h[:, 13]
        day = (d >> 4).astype(np.int64) * 100 + (d & 0xF) * 10 + (e >> 4)
        ok = (offs + 14 <= n) & (h[:, 2] == 0) & (h[:, 3] == 0) & (ln <= MAX_LEN) & (h[:, 10] <= 2) \
            & _NP_DIGITS[h[:, 11]] & _NP_DIGITS[d] & _NP_END[e] & (day >= 1) & (day <= 366)
        bad = ~ok | (ends > n)
        if bad.any():
            i = int(np.argmax(bad))
            return offs[:i], ends[:i], bool(not ok[i] and offs[i] + 14 <= n)
    # the walk stopped at q: fewer than 4 bytes left, or a length under MIN_LEN (a header that fails)
    return offs, ends, status == -1 and q + 14 <= n


def _fingerprints(buf: bytearray, offs: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A 64-bit fingerprint of every record's bytes (records of one length at a time: their bytes gathered as
    8-byte words, each word times its key, summed).  Equal records have equal fingerprints; a match is checked
    on the bytes (:meth:`StreamDedup._repeat`)."""
    ln = ends - offs
    out = np.empty(len(offs), np.uint64)
    for size in np.unique(ln).tolist():
        idx = np.flatnonzero(ln == size)
        w = (size + 7) // 8
        mat = kernel.rows_at(buf, offs[idx], w * 8)
        mat[:, size:] = 0
        out[idx] = (mat.view(np.uint64) * _KEYS[:w]).sum(axis=1, dtype=np.uint64)
    return out


def _moved(offs: list[int], drops: list[tuple[int, int]]) -> list[int]:
    """Offsets ``offs`` (of kept bytes) of a pass' data once the spans ``drops`` (offset, length; ascending) went."""
    if not offs:
        return []
    at = np.array([a for a, _ln in drops], np.int64)
    gone = np.r_[0, np.cumsum([ln for _a, ln in drops])]
    o = np.asarray(offs, np.int64)
    return (o - gone[np.searchsorted(at, o, side="right")]).tolist()
