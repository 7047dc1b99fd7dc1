"""A gzip file below the size the inflate runs ahead from (app/formats/gunzip_ahead.PIPELINE_FROM: every file of
the bundled sample set) is inflated by the clean-only inflate on the reader's own thread
(``app.formats._gunzip_clean``, zlib-ng when it imports); whatever is not clean goes the ordinary way.  Either
way gunzip gives what the ordinary one-thread path gives: the same kept bytes, findings (offsets included), stop
sentence and filter state."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
import app.formats as FM  # noqa: E402
from app.formats import clean_inflate as CI  # noqa: E402
from app.formats import gunzip_ahead as GA  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.schema import Cancelled  # noqa: E402
from app.formats.stream_dedup import StreamDedup  # noqa: E402

RECS = C.smf_records(40)


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Pieces of 512 compressed bytes (a few hundred per file) and the inflate ahead never (every file small)."""
    monkeypatch.setattr(FM, "_IN_CHUNK", 512)
    monkeypatch.setattr(CI, "IN_CHUNK", 512)
    monkeypatch.setattr(GA, "PIPELINE_FROM", 1 << 40)


def distinct(n: int) -> bytes:
    recs = []
    for i in range(n):
        r = bytearray(RECS[i % len(RECS)])
        r[-8:] = i.to_bytes(8, "big")                 # the last counter: the record's own value
        recs.append(bytes(r))
    return W.frame_rdw(recs)


def both(raw: bytes, monkeypatch, **kw):
    """(ordinary path, as gunzip runs now): each (kept bytes, findings, stop, filter state), and per run of the
    second whether the clean inflate gave the result."""
    out, calls = [], []
    real = FM._gunzip_clean

    def spy(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got
    for clean in (lambda *a, **k: None, spy):
        monkeypatch.setattr(FM, "_gunzip_clean", clean)
        dd = StreamDedup()
        data, found, stop = FM.gunzip(raw, "t.gz", dedup=dd, **kw)
        out.append((bytes(data), [(f.code, f.offset, f.message) for f in found], stop,
                    (dd.count, dd.marks, dd.cum, dd.first)))
    return out, calls


def test_clean_small_gzip_is_inflated_by_the_clean_inflate_with_the_same_result(monkeypatch):
    data = distinct(400)
    (plain, now), calls = both(gzip.compress(data, mtime=0), monkeypatch)
    assert plain == now and calls == [True] and now[0] == data and now[1] == [] and now[2] is None


def test_the_clean_inflate_is_zlib_ng_when_it_imports():
    zlib_ng = pytest.importorskip("zlib_ng")
    assert CI.inflater() is zlib_ng.zlib_ng


def test_repeats_go_the_ordinary_way(monkeypatch):
    """Records 0..599 then 50..99 again: the filter removes 50 before the last piece, the clean inflate gives
    up, the ordinary path gives the result (the 600 records once)."""
    data = distinct(600)
    (plain, now), calls = both(gzip.compress(data + data[50 * 244:100 * 244], mtime=0), monkeypatch)
    assert plain == now and calls == [False] and now[3][0] == 50 and now[0] == data


@pytest.mark.parametrize("how", ["damaged", "cut", "members", "capped", "padded"])
def test_damage_cuts_members_padding_and_the_cap_give_the_ordinary_findings(monkeypatch, how):
    data = distinct(300)
    raw = bytearray(gzip.compress(data, mtime=0))
    kw = {}
    if how == "damaged":
        raw[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)
    elif how == "cut":
        raw = raw[:len(raw) * 2 // 3]
    elif how == "members":
        raw = raw + gzip.compress(distinct(20), mtime=0) + b"garbage!" + gzip.compress(data[:2440], mtime=0)
    elif how == "padded":
        raw = raw + bytes(100)                        # zero padding after the last member: clean, no finding
    else:
        kw["cap"] = len(data) // 3                    # the size limit stops it a third of the way in
    (plain, now), calls = both(bytes(raw), monkeypatch, **kw)
    assert plain == now
    assert calls == [how == "padded"]
    codes = {c for c, _o, _m in now[1]}
    if how == "capped":
        assert "limit" in now[2] and len(now[0]) == len(data) // 3
    elif how == "padded":
        assert now[0] == data and not codes
    else:
        assert codes & {"damaged": {"gzip-damaged", "gzip-checksum"}, "cut": {"gzip-cut"},
                        "members": {"gzip-trailing-garbage"}}[how]


def test_a_cancel_in_the_clean_inflate_is_raised():
    raw = gzip.compress(distinct(300), mtime=0)
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 2
    with pytest.raises(Cancelled):
        FM.gunzip(raw, "t.gz", dedup=StreamDedup(), cancel=cancel)
    assert len(raw) > 3 * 512 and len(asked) == 3
