"""The inflate on a second thread (app/formats/gunzip_ahead.py) gives what the one-thread gunzip gives: the same
kept bytes, findings (offsets included), stop sentence and filter state, for clean, repeated, damaged, cut and
capped gzip data; a repeat removed on the way sends the file through the one-thread path."""

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
    """Pieces of 512 compressed bytes (a few hundred per file; the clean inflate's too) and the second thread from
    any size on."""
    monkeypatch.setattr(FM, "_IN_CHUNK", 512)
    monkeypatch.setattr(CI, "IN_CHUNK", 512)
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    monkeypatch.setattr(FM, "_gunzip_clean", lambda *a, **k: None)   # below PIPELINE_FROM: the ordinary path


def both(raw: bytes, monkeypatch, **kw):
    """(one thread, two threads): each (kept bytes, findings, stop, (count, marks, cum, first)), and how many times
    the two-thread run went through gunzip_ahead and whether that gave the result."""
    out = []
    calls: list[bool] = []
    real = GA.gunzip_ahead

    def spy(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got
    monkeypatch.setattr(GA, "gunzip_ahead", spy)
    for start in (1 << 40, 0):
        monkeypatch.setattr(GA, "PIPELINE_FROM", start)
        dd = StreamDedup()
        data, found, stop = FM.gunzip(raw, "t.gz", dedup=dd, **kw)
        out.append((bytes(data), [(f.code, f.offset, f.message) for f in found], stop,
                    (dd.count, dd.marks, dd.cum, dd.first)))
    return out, calls


def distinct(n: int) -> bytes:
    """``n`` records, none repeating another (the corpus' 40, each made distinct by its interval number)."""
    recs = []
    for i in range(n):
        r = bytearray(RECS[i % len(RECS)])
        r[-8:] = i.to_bytes(8, "big")                 # the last counter: the record's own value
        recs.append(bytes(r))
    return W.frame_rdw(recs)


def test_clean_data_is_inflated_ahead_with_the_same_result(monkeypatch):
    raw = gzip.compress(distinct(400), mtime=0)
    (one, two), calls = both(raw, monkeypatch)
    assert one == two and calls == [True] and one[3][0] == 0 and one[2] is None


def test_repeats_send_the_file_through_the_one_thread_path(monkeypatch):
    """Records 0..599, then records 50..99 again (50 repeats removed by the filter, before the last piece): the
    second thread gives up at the first removal and the one-thread gunzip gives the result."""
    data = distinct(600)
    raw = gzip.compress(data + data[50 * 244:100 * 244], mtime=0)
    (one, two), calls = both(raw, monkeypatch)
    assert one == two and calls == [False] and one[3][0] == 50 and one[0] == data


@pytest.mark.parametrize("how", ["damaged", "cut", "members", "capped"])
def test_damage_cuts_members_and_the_cap_give_the_same_findings_and_stop(monkeypatch, how):
    data = distinct(300)
    raw = bytearray(gzip.compress(data, mtime=0))
    kw = {}
    if how == "damaged":
        raw[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)
    elif how == "cut":
        raw = raw[:len(raw) * 2 // 3]
    elif how == "members":
        raw = raw + gzip.compress(distinct(20), mtime=0) + b"garbage!" + gzip.compress(data[:2440], mtime=0)
    else:
        kw["cap"] = len(data) // 3                    # the size limit stops it a third of the way in
    (one, two), _calls = both(bytes(raw), monkeypatch, **kw)
    assert one == two
    codes = {c for c, _o, _m in one[1]}
    if how == "capped":
        assert "limit" in one[2] and len(one[0]) == len(data) // 3
    else:
        assert codes & {"damaged": {"gzip-damaged", "gzip-checksum"}, "cut": {"gzip-cut"},
                        "members": {"gzip-trailing-garbage"}}[how]


def test_a_cancel_on_the_second_thread_is_raised_here(monkeypatch):
    monkeypatch.setattr(GA, "PIPELINE_FROM", 0)
    raw = gzip.compress(distinct(300), mtime=0)
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 2
    with pytest.raises(Cancelled):
        FM.gunzip(raw, "t.gz", dedup=StreamDedup(), cancel=cancel)
    assert len(raw) > 3 * 512 and len(asked) == 3
