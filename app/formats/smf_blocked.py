"""SMF framing of blocks (spec ``smf113.md`` section 2, variants b and c): BDW blocks of RDW records, and VBS
blocks of SDW segments whose spanned records are reassembled; the block chain detection scores, and where a
valid block starts again after damage.  Split from :mod:`app.formats.smf_framing`, which detects the framing
and walks the other variants; the walk here drives the same walker (its ``emit``, ``find``, ``poll`` and
``zero_stop``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from app.formats.smf_resync import MIN_LEN, _IS_DIGITS, _IS_END, _tiles, _zero_tail, be16, in_block

if TYPE_CHECKING:
    from app.formats.smf_framing import _Walker

__all__ = ["walk_bdw"]

CHAIN_N = 8              # records validated by detection (spec 2.3)
BACK_OFF = 32            # a bad block descriptor: the block may start up to this many bytes earlier (lost bytes)

# Candidate block start: BDW(2) 0000, SDW(2) code 00/01 then 00, then a record header
# (a block may start with a middle or last segment of a spanned record: no header date is required here;
# _resync_block validates the block chain of every candidate)
_BLOCK_RE = re.compile(b"(?s)(?=(?:[\x01-\x7f].|\x00[\x08-\xff])\x00\x00(?:[\x01-\xff].|\x00[\x05-\xff])"
                       b"[\x00-\x03]\x00)")


def _chain_bdw(buf, start: int = 0) -> float:
    n, b, score = len(buf), start, 0.0
    while score < CHAIN_N and b + 8 <= n:
        if buf[b] & 0x80 or buf[b + 2] or buf[b + 3]:
            return score
        bl = be16(buf, b)
        if bl < 8:
            return score
        end, q = min(b + bl, n), b + 4
        first = True
        while q < end:
            if q + 4 > end:
                return score
            sl, ctl = be16(buf, q), buf[q + 2]
            if ctl & 0x80:
                if sl < 5 or q + sl > end or not _tiles(buf, q + sl, end) or _zero_tail(buf, q):
                    break               # null segment: rest of block unused
                ctl &= 0x7F             # a damaged control byte: valid segments fill the block
            if sl < 5 or buf[q + 3] or ctl & 0x7C or ((ctl & 3) == 0 and sl < MIN_LEN):
                return score
            if ((first and (ctl & 3) == 1) or (ctl & 3) == 0) and not _hdr_ok_seg(buf, q, n):
                return score            # every complete record (and a first segment) starts like an SMF record
            first = False
            if q + sl > end:
                return score + (0.5 if b + bl > n else 0)
            score += 1 if (ctl & 3) in (0, 2) else 0.25
            q += sl
        if q != b + bl and b + bl <= n and not (ctl & 0x80):
            return score
        b += bl
        if b < n and _zero_tail(buf, b):
            break
    return score


def _hdr_ok_seg(buf, q: int, n: int) -> bool:
    """A complete or first segment must start like an SMF record (date at record offset 10)."""
    if q + 14 > n or buf[q + 10] > 2:
        return False
    d, e = buf[q + 12], buf[q + 13]
    return bool(_IS_DIGITS[buf[q + 11]] and _IS_DIGITS[d] and _IS_END[e]
                and 1 <= (d >> 4) * 100 + (d & 0xF) * 10 + (e >> 4) <= 366)    # packed_date_ok, inlined


def walk_bdw(w: _Walker) -> str:
    """Variants b and c: blocks with RDWs/SDWs; spanned segments are reassembled."""
    buf, n, b = w.buf, w.n, 0
    mv = memoryview(buf)
    pending: list | None = None
    pend_off = 0
    spanned = multi = False
    prev_b = -4
    while b < n:
        w.poll(b)
        if n - b < 8 or (buf[b] == 0 and buf[b + 1] == 0 and _zero_tail(buf, b)):
            if not _zero_tail(buf, b):
                w.find("warning", "truncated-record", b, f"{n - b} trailing bytes are too short for a block",
                       "they were ignored")
            else:
                w.zero_stop(b)
            break
        bl = be16(buf, b)
        if buf[b] & 0x80 and n - b >= 4:               # extended BDW (tape): 31-bit length
            bl = int.from_bytes(bytes(buf[b:b + 4]), "big") & 0x7FFFFFFF
            if bl > n - b:
                bl = 0                                 # past the end of the file: a damaged descriptor
        if bl < 8 or (not buf[b] & 0x80 and (buf[b + 2] or buf[b + 3])):
            q = _skip_to_next_block(w, b, b, f"no valid block descriptor here (BDW "
                                    f"{bytes(buf[b:b + 4]).hex().upper()})",
                                    search_from=max(prev_b + 4, b - BACK_OFF, 1))
            pending = None
            if q is None:
                break
            b = q
            continue
        end = b + bl
        if end > n:
            r = _resync_block(buf, max(prev_b + 4, b - BACK_OFF, 1))
            if r is not None and r != b:
                w.find("error", "corrupt-length", b, f"block length {bl} runs past end of file (size {n}) but a "
                       f"valid block follows at offset {r}", f"the length field is wrong; resumed at offset {r}")
                pending = None
                b = r
                continue
            w.find("warning", "truncated-record", b, f"block length {bl} runs past end of file (size {n})",
                   "the records cut by the end of file were skipped")
            end = n
        q = b + 4
        bad = False
        multi = multi or be16(buf, q) + 4 != bl if q + 2 <= n else multi
        while q < end:
            if q + 4 > end:
                bad = q < b + bl
                break
            sl, ctl = be16(buf, q), buf[q + 2]
            if ctl & 0x80:
                if _zero_tail(buf, q) or not np.frombuffer(buf, np.uint8, count=end - q - 3, offset=q + 3).any():
                    break                              # a true null segment: the rest of the block is unused
                if sl < 5 or buf[q + 3] or ctl & 0x7C or q + sl > end or not _tiles(buf, q + sl, end):
                    r = in_block(w, q, b, bl, f"null segment (control byte {ctl:02X}) with {end - q - 4} bytes "
                                 "of data after it")
                    if r is not None:
                        pending, q = None, r
                        continue
                    w.find("warning", "null-segment", q, f"null segment (control byte {ctl:02X}) with "
                           f"{end - q - 4} bytes of data after it in the block at offset {b}",
                           "the rest of the block was skipped as the null segment says")
                    break
                w.find("warning", "null-segment", q, f"segment descriptor has the null-segment bit set (control "
                       f"byte {ctl:02X}) but a valid segment chain fills the rest of the block at offset {b}",
                       "the bit was taken as damage and the segments were read")
                ctl &= 0x7F
            if sl < 5 or buf[q + 3] or ctl & 0x7C or q + sl > end or ((ctl & 3) == 0 and (
                    sl < MIN_LEN or not _hdr_ok_seg(buf, q, n))):
                if q + sl > n and end == n and sl >= 5 and not buf[q + 3]:
                    w.find("warning", "truncated-record", q, f"record length {sl} runs past end of file "
                           f"(size {n})", "the last record is incomplete and was skipped")
                    pending = None
                    break
                r = in_block(w, q, b, bl, f"segment descriptor {bytes(buf[q:q + 4]).hex().upper()} does not fit "
                             f"the block (block length {bl})")
                if r is not None:
                    pending, q = None, r
                    continue
                bad = True
                break
            code = ctl & 3
            if code == 0:
                if pending is not None:
                    w.find("warning", "orphan-segment", pend_off, "spanned record has a first segment but no last "
                           "segment", "the incomplete record was skipped")
                    pending = None
                w.emit_at(q, q + sl)
            elif code == 1:
                if pending is not None:
                    w.find("warning", "orphan-segment", pend_off, "spanned record has a first segment but no last "
                           "segment", "the incomplete record was skipped")
                pending, pend_off, spanned = [mv[q + 4:q + sl]], q, True
            else:
                spanned = True
                if pending is None:
                    w.find("warning", "orphan-segment", q, f"{'middle' if code == 3 else 'last'} segment of a "
                           "spanned record without its first segment", "the segment was skipped")
                else:
                    pending.append(mv[q + 4:q + sl])
                    if code == 2:
                        body = b"".join(pending)
                        ln = 4 + len(body)
                        rec = bytes((ln >> 8 & 0xFF, ln & 0xFF, 0, 0)) + body
                        if len(rec) >= MIN_LEN and ln <= 0xFFFF:
                            w.emit(pend_off, rec)
                        pending = None
            q += sl
        if bad:
            r = _skip_to_next_block(w, q, q, f"segment descriptor {bytes(buf[q:q + 4]).hex().upper()} does not "
                                    f"fit the block at offset {b} (block length {bl})", search_from=q)
            pending = None
            if r is None:
                break
            b = r
            continue
        prev_b = b
        b = b + bl
    if pending is not None:
        w.find("warning", "orphan-segment", pend_off, "spanned record has a first segment but no last segment "
               "before the end of the file", "the incomplete record was skipped")
    # one complete record per block, block = record + 4: the "double RDW" form of some copy tools (f)
    return "vbs" if spanned else ("bdw" if multi else "double-rdw")


def _skip_to_next_block(w: _Walker, at: int, skipped_from: int, what: str,
                        search_from: int | None = None) -> int | None:
    """Report a corrupt descriptor at ``at`` and find the next valid block after it (a bad segment
    descriptor may itself be where the next block starts: then ``search_from`` is its offset)."""
    n = len(w.buf)
    q = _resync_block(w.buf, at + 1 if search_from is None else search_from)
    if q is not None and q < skipped_from:
        w.find("error", "corrupt-length", at, what, f"a valid block starts {skipped_from - q} bytes earlier, at "
               f"offset {q} (bytes were lost before it); resumed there")
        return q
    w.find("error", "corrupt-length", at, what, f"skipped {(q if q is not None else n) - skipped_from} bytes"
           + (f"; resumed at offset {q}" if q is not None else " to the end of the file"))
    return q


def _resync_block(buf, start: int, stop: int | None = None) -> int | None:
    n = len(buf)
    for m in _BLOCK_RE.finditer(buf, start, n if stop is None else stop):
        b = m.start()
        bl = be16(buf, b)
        sl = be16(buf, b + 4)
        if bl >= 8 and 5 <= sl <= bl - 4 and (b + bl == n or _chain_bdw(buf, b) >= 1):
            return b
    return None
