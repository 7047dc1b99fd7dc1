"""Shift filter with a comma list of hour ranges (``--hours 08-12,13-17``, ``0-6,22-24``) for every command."""

from __future__ import annotations

import pandas as pd
import pytest

from app.engine.shift import ShiftError, ShiftFilter, make_shift, parse_hour_ranges, shift_mask


def _iv(first_end: str, n: int, minutes: int) -> pd.DataFrame:
    ends = pd.date_range(first_end, periods=n, freq=f"{minutes}min")
    return pd.DataFrame({"interval_start": ends - pd.Timedelta(minutes=minutes), "interval_end": ends})


def test_parse_hour_ranges():
    assert parse_hour_ranges("08-17") == ((480, 1020),)
    assert parse_hour_ranges("08-12, 13:30-17") == ((480, 720), (810, 1020))
    assert parse_hour_ranges("0-6,22-24") == ((0, 360), (1320, 1440))
    for bad in ("", ",", "08-12,", "08-12,x", "08-12,9", "08-12,13-13"):
        with pytest.raises(ShiftError, match="hours"):
            parse_hour_ranges(bad)


def test_make_shift_list_and_texts():
    s = make_shift("08-12,13-17", "mon-fri")
    assert s == ShiftFilter(480, 720, frozenset(range(5)), ((780, 1020),))
    assert s.hour_ranges == ((480, 720), (780, 1020))
    assert s.describe() == "08:00-12:00,13:00-17:00 UTC, Mon-Fri"
    assert s.to_dict()["hours"] == "08:00-12:00,13:00-17:00"
    # one range: the filter (and its texts) as before
    one = make_shift("08-17", None)
    assert one == ShiftFilter(480, 1020, None) and one.more == () and one.hour_ranges == ((480, 1020),)
    assert one.describe() == "08:00-17:00 UTC, all days"
    assert ShiftFilter().hour_ranges == ()


def test_mask_of_a_list():
    # Monday 2026-11-02, 15-minute intervals ending 07:45 .. 18:00 (42); --hours 08-12,13-17 keeps midpoints in
    # [08:00, 12:00) (ends 08:15 .. 12:00: 16) or [13:00, 17:00) (ends 13:15 .. 17:00: 16) = 32 intervals;
    # the lunch hour (ends 12:15 .. 13:00, midpoints 12:07:30 .. 12:52:30) is out
    iv = _iv("2026-11-02 07:45", 42, 15)
    keep = shift_mask(iv["interval_start"], iv["interval_end"], make_shift("08-12,13-17", None))
    ends = iv["interval_end"].dt.strftime("%H:%M")[keep].tolist()
    assert len(ends) == 32 and ends[0] == "08:15" and ends[15] == "12:00" and ends[16] == "13:15" \
        and ends[-1] == "17:00"


def test_list_equals_wrapped_range():
    # 0-6,22-24 is the night 22-06: the same intervals (hourly intervals over two days, midpoints at hh:30)
    iv = _iv("2026-11-06 01:00", 48, 60)
    a = shift_mask(iv["interval_start"], iv["interval_end"], make_shift("0-6,22-24", "fri,sat"))
    b = shift_mask(iv["interval_start"], iv["interval_end"], make_shift("22-06", "fri,sat"))
    assert (a == b).all()
    # midpoints 00:30 .. 05:30 and 22:30, 23:30 on Friday and Saturday: 8 a day
    assert int(a.sum()) == 16
