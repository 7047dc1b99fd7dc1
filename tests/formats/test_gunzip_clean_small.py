"""A gzip file below the size the inflate runs ahead from (app/formats/gunzip_ahead.PIPELINE_FROM: every file of
the bundled sample set) is inflated by the clean-only inflate on the reader's own thread
(``app.formats._gunzip_clean``, zlib-ng when it imports); whatever is not clean goes the ordinary way.  Either
way gunzip gives what the ordinary one-thread path gives: the same kept bytes, findings (offsets included), stop
sentence and filter state."""

from __future__ import annotations

import gzip

import pytest

import app.formats as FM
from app.formats import clean_inflate as CI
from app.formats import gunzip_ahead as GA
from gzip_cases import CODES, cancelled_on_the_third_ask, distinct, gzip_case, outcome, spying


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Pieces of 512 compressed bytes (a few hundred per file) and the inflate ahead never (every file small)."""
    monkeypatch.setattr(FM, "_IN_CHUNK", 512)
    monkeypatch.setattr(CI, "IN_CHUNK", 512)
    monkeypatch.setattr(GA, "PIPELINE_FROM", 1 << 40)


def both(raw: bytes, monkeypatch, **kw):
    """(ordinary path, as gunzip runs now): each (kept bytes, findings, stop, filter state), and per run of the
    second whether the clean inflate gave the result."""
    out, calls = [], []
    for clean in (lambda *a, **k: None, spying(calls, FM._gunzip_clean)):
        monkeypatch.setattr(FM, "_gunzip_clean", clean)
        out.append(outcome(raw, **kw))
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
    raw, kw = gzip_case(data, how)                    # padded: zero padding after the last member, no finding
    (plain, now), calls = both(raw, monkeypatch, **kw)
    assert plain == now
    assert calls == [how == "padded"]
    codes = {c for c, _o, _m in now[1]}
    if how == "capped":
        assert "limit" in now[2] and len(now[0]) == len(data) // 3
    elif how == "padded":
        assert now[0] == data and not codes
    else:
        assert codes & CODES[how]


def test_a_cancel_in_the_clean_inflate_is_raised():
    raw, asked = cancelled_on_the_third_ask()
    assert len(raw) > 3 * 512 and len(asked) == 3
