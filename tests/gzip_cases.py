"""Gzip data for the tests of the inflate paths (tests/formats/test_gunzip_ahead.py, test_gunzip_clean_small.py):
records that never repeat, and the damaged, cut, multi-member, padded and capped forms of their gzip, with the
findings each must give whatever path inflates it."""

from __future__ import annotations

import gzip

from app.formats import smf113_writer as W
from fuzz import corpus as C

RECS = C.smf_records(40)

# the findings a damaged form must give (any path)
CODES = {"damaged": {"gzip-damaged", "gzip-checksum"}, "cut": {"gzip-cut"}, "members": {"gzip-trailing-garbage"}}


def distinct(n: int) -> bytes:
    """``n`` records, none repeating another (the corpus' 40, each made distinct by its interval number)."""
    recs = []
    for i in range(n):
        r = bytearray(RECS[i % len(RECS)])
        r[-8:] = i.to_bytes(8, "big")                 # the last counter: the record's own value
        recs.append(bytes(r))
    return W.frame_rdw(recs)


def gzip_case(data: bytes, how: str) -> tuple[bytes, dict]:
    """The gzip of ``data`` in form ``how`` and gunzip's keywords for it: "damaged" (40 zero bytes in the middle
    of the compressed data), "cut" (its last third gone), "members" (two more members, with 8 bytes of garbage
    before the last), "padded" (100 zero bytes after the member: clean, no finding), "capped" (the size limit a
    third of the way in)."""
    raw = bytearray(gzip.compress(data, mtime=0))
    kw = {}
    if how == "damaged":
        raw[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)
    elif how == "cut":
        raw = raw[:len(raw) * 2 // 3]
    elif how == "members":
        raw = raw + gzip.compress(distinct(20), mtime=0) + b"garbage!" + gzip.compress(data[:2440], mtime=0)
    elif how == "padded":
        raw = raw + bytes(100)
    elif how == "capped":
        kw["cap"] = len(data) // 3
    return bytes(raw), kw


def outcome(raw: bytes, **kw) -> tuple:
    """What ``app.formats.gunzip`` gives for ``raw`` (with a fresh repeat filter): (kept bytes, findings as (code,
    offset, message), stop sentence, the filter's (count, marks, cum, first))."""
    from app.formats import gunzip
    from app.formats.stream_dedup import StreamDedup

    dd = StreamDedup()
    data, found, stop = gunzip(raw, "t.gz", dedup=dd, **kw)
    return (bytes(data), [(f.code, f.offset, f.message) for f in found], stop, (dd.count, dd.marks, dd.cum, dd.first))


def spying(calls: list[bool], real):
    """``real`` wrapped: each call's 'gave a result' (not None) appended to ``calls``."""
    def spy(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got
    return spy


def cancelled_on_the_third_ask() -> tuple[bytes, list]:
    """Gunzip of 300 records' gzip with a cancel that says yes the third time it is asked: raises ``Cancelled``;
    returns the gzip and the asks (for the caller's checks)."""
    import pytest

    from app.formats import gunzip
    from app.formats.schema import Cancelled
    from app.formats.stream_dedup import StreamDedup

    raw = gzip.compress(distinct(300), mtime=0)
    asked: list[int] = []

    def cancel():
        asked.append(1)
        return len(asked) > 2
    with pytest.raises(Cancelled):
        gunzip(raw, "t.gz", dedup=StreamDedup(), cancel=cancel)
    return raw, asked
