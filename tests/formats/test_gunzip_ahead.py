"""The inflate on a second thread (app/formats/gunzip_ahead.py) gives what the one-thread gunzip gives: the same
kept bytes, findings (offsets included), stop sentence and filter state, for clean, repeated, damaged, cut and
capped gzip data; a repeat removed on the way sends the file through the one-thread path."""

from __future__ import annotations

import gzip

import pytest

import app.formats as FM
from app.formats import clean_inflate as CI
from app.formats import gunzip_ahead as GA
from gzip_cases import CODES, cancelled_on_the_third_ask, distinct, gzip_case, outcome, spying


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
    monkeypatch.setattr(GA, "gunzip_ahead", spying(calls, GA.gunzip_ahead))
    for start in (1 << 40, 0):
        monkeypatch.setattr(GA, "PIPELINE_FROM", start)
        out.append(outcome(raw, **kw))
    return out, calls


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
    raw, kw = gzip_case(data, how)                    # capped: the size limit a third of the way in
    (one, two), _calls = both(raw, monkeypatch, **kw)
    assert one == two
    codes = {c for c, _o, _m in one[1]}
    if how == "capped":
        assert "limit" in one[2] and len(one[0]) == len(data) // 3
    else:
        assert codes & CODES[how]


def test_a_cancel_on_the_second_thread_is_raised_here(monkeypatch):
    monkeypatch.setattr(GA, "PIPELINE_FROM", 0)
    raw, asked = cancelled_on_the_third_ask()
    assert len(raw) > 3 * 512 and len(asked) == 3
