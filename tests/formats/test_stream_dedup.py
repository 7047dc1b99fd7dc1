"""The duplicate-record filter of gzip decompression (app/formats/stream_dedup.py) against the rule it implements,
written here record by record: a record is removed when its bytes equal one of the last ``WINDOW`` distinct
records kept; the filtered offsets where records went and the bytes removed up to each (runs of adjacent
removals one mark) map filtered offsets back.  The filter checks whole chunks of records at once (fingerprints,
headers checked together): whatever the chunks, it must give what the rule gives."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import corpus as C  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats import stream_dedup as SD  # noqa: E402

RECS = C.smf_records(12) + [W.other_record(30, 200 + 8 * i) for i in range(4)]   # 244-byte ones and 4 others


def rule(data: bytes, window: int) -> tuple[bytes, int, list[int], list[int], int | None]:
    """(kept bytes, records removed, marks, bytes removed up to each mark, first removed offset) of the rule, one
    record at a time over well-framed RDW data."""
    seen: dict[bytes, None] = {}
    kept, count, marks, cum, first = bytearray(), 0, [], [], None
    p, removed = 0, 0
    while p < len(data):
        end = p + int.from_bytes(data[p:p + 2], "big")
        h = hashlib.sha256(data[p:end]).digest()
        if h in seen:
            count += 1
            first = p if first is None else first
            at = p - removed                          # filtered offset of the removal
            removed += end - p
            if marks and marks[-1] == at:
                cum[-1] = removed
            else:
                marks.append(at)
                cum.append(removed)
        else:
            seen[h] = None
            if len(seen) > window:
                del seen[next(iter(seen))]
            kept += data[p:end]
        p = end
    return bytes(kept), count, marks, cum, first


def filtered(data: bytes, cuts: list[int]) -> SD.StreamDedup:
    """The filter fed ``data`` growing by the pieces between ``cuts`` (as gunzip feeds it), then the final step."""
    dd = SD.StreamDedup()
    out = bytearray()
    last = 0
    for c in sorted(set(cuts)) + [len(data)]:
        out += data[last:c]
        last = c
        dd.step(out)
    dd.step(out, final=True)
    dd.out = bytes(out)
    return dd


def check(data: bytes, cuts: list[int], window: int) -> SD.StreamDedup:
    dd = filtered(data, cuts)
    assert dd.state == "rdw"
    kept, count, marks, cum, first = rule(data, window)
    assert (dd.out, dd.marks, dd.cum, dd.first) == (kept, marks, cum, first)
    # the count of a run of repeats is its periods times the records of one period, a repeat removed earlier in
    # the same piece included (before, such a period counted one record less: the bytes removed were right)
    assert dd.count == count
    for i, m in enumerate(marks):       # a filtered offset maps back to the unfiltered data
        assert dd.original(m) == m + cum[i]
    return dd


@pytest.fixture
def small_window(monkeypatch):
    """A window of 8 distinct records (4 looked back at for runs), so that records leave it in these tests."""
    monkeypatch.setattr(SD, "WINDOW", 8)
    monkeypatch.setattr(SD, "RECENT", 4)
    monkeypatch.setattr(SD, "DECIDE_AT", 600)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(RECS) - 1), min_size=3, max_size=80),
       st.lists(st.integers(0, 20_000), max_size=12), st.integers(1, 6))
def test_any_records_in_any_pieces_give_what_the_rule_gives(small_window_values, order, cuts, times):
    """Records near and far repeated, runs of repeats (the sequence ``times`` over), records of 5 lengths, pieces
    cut anywhere (inside headers and records): the same kept bytes, count and marks as the rule (window 8)."""
    data = b"".join(W.frame_rdw([RECS[i]]) for i in order) * times
    check(data, [c % (len(data) + 1) for c in cuts], 8)


@pytest.fixture(scope="module")
def small_window_values():
    mp = pytest.MonkeyPatch()
    mp.setattr(SD, "WINDOW", 8)
    mp.setattr(SD, "RECENT", 4)
    mp.setattr(SD, "DECIDE_AT", 600)
    yield
    mp.undo()


def test_records_that_left_the_window_are_kept_again(small_window):
    """16 distinct records then the first one again: with a window of 8 the repeat is no longer in it (kept);
    then record 15 again, still in the window (removed): one record removed, at filtered offset 17 records in."""
    data = W.frame_rdw(RECS + [RECS[0], RECS[15]])
    dd = check(data, [1000, 3001], 8)
    assert dd.count == rule(data, 8)[1] == 1 and len(dd.out) == len(data) - len(W.frame_rdw([RECS[15]]))


def test_fingerprints_that_match_are_checked_on_the_bytes(small_window, monkeypatch):
    """Every record given the same fingerprint: a match is told from a repeat by its bytes (distinct records all
    kept, repeats removed), the twins found by their digest."""
    monkeypatch.setattr(SD, "_fingerprints", lambda buf, offs, ends: np.zeros(len(offs), np.uint64))
    order = [0, 1, 2, 1, 3, 3, 3, 0, 4, 2, 5]
    data = b"".join(W.frame_rdw([RECS[i]]) for i in order)
    dd = check(data, [700, 1900], 8)
    assert dd.count == rule(data, 8)[1] == len(order) - len(set(order)) == 5


def test_a_damaged_header_turns_the_filter_off_after_the_records_before_it(small_window):
    """Records 0 1 0 then a record whose segment bytes are not zero: the repeat before it is removed, the filter
    is off from the damaged record on (the data after it left as it is, repeats included)."""
    good = W.frame_rdw([RECS[0], RECS[1], RECS[0]])
    bad = bytearray(W.frame_rdw([RECS[2]]))
    bad[2] = 0x80
    tail = W.frame_rdw([RECS[1], RECS[1]])
    dd = filtered(good + bytes(bad) + tail, [])
    assert dd.state == "off" and dd.count == 1
    assert dd.out == W.frame_rdw([RECS[0], RECS[1]]) + bytes(bad) + tail


def test_the_compiled_walk_and_numpy_give_the_same(small_window):
    from app.formats import kernel

    order = [0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 12, 13, 12, 4]
    data = b"".join(W.frame_rdw([RECS[i]]) for i in order)
    a = check(data, [650, 2000], 8)
    with kernel.pure():
        b = check(data, [650, 2000], 8)
    assert (a.out, a.marks, a.cum) == (b.out, b.marks, b.cum)
