"""Shift filter (app/engine/shift.py): parsing, the midpoint rule, and metrics of a shift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.shift import (ShiftError, ShiftFilter, apply_shift, make_shift, parse_days, parse_hours,
                              shift_mask, shifted_metrics)

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_parse_hours():
    assert parse_hours("08-17") == (480, 1020)
    assert parse_hours("8-17") == (480, 1020)
    assert parse_hours("08:00-17:30") == (480, 1050)
    assert parse_hours("22-06") == (1320, 360)           # wraps midnight
    assert parse_hours("00-24") == (0, 1440)
    for bad in ("8", "08-08", "25-26", "08:75-09", "a-b", "1-2-3"):
        with pytest.raises(ShiftError):
            parse_hours(bad)


def test_parse_days():
    assert parse_days("mon-fri") == frozenset({0, 1, 2, 3, 4})
    assert parse_days("sat,sun") == frozenset({5, 6})
    assert parse_days("Mon,Wed-Fri") == frozenset({0, 2, 3, 4})
    assert parse_days("fri-mon") == frozenset({4, 5, 6, 0})   # wraps the week end
    assert parse_days("monday") == frozenset({0})
    for bad in ("", "xyz", "mon-xyz", "mon-tue-wed"):
        with pytest.raises(ShiftError):
            parse_days(bad)


def test_make_shift_and_describe():
    assert make_shift(None, None) is None
    s = make_shift("08-17", "mon-fri")
    assert s == ShiftFilter(480, 1020, frozenset(range(5)))
    assert s.describe() == "08:00-17:00 UTC, Mon-Fri"
    assert make_shift(None, "sat,sun").describe() == "all hours, Sat-Sun"
    assert s.to_dict()["days"] == ["mon", "tue", "wed", "thu", "fri"]


def _intervals(first: str, n: int, minutes: int = 15) -> pd.DataFrame:
    ends = pd.date_range(first, periods=n, freq=f"{minutes}min")
    return pd.DataFrame({"interval_start": ends - pd.Timedelta(minutes=minutes), "interval_end": ends})


def test_midpoint_rule_prime_shift():
    # 2026-11-02 is a Monday; 15-minute intervals ending 07:45 .. 17:30
    iv = _intervals("2026-11-02 07:45", 40)
    keep = shift_mask(iv["interval_start"], iv["interval_end"], make_shift("08-17", "mon-fri"))
    ends = iv["interval_end"].dt.strftime("%H:%M")[keep].tolist()
    # 07:45-08:00 (midpoint 07:52:30) is out, 08:00-08:15 (08:07:30) in, 16:45-17:00 (16:52:30) in,
    # 17:00-17:15 (17:07:30) out: 36 intervals, the end of the first is 08:15, of the last 17:00
    assert ends[0] == "08:15" and ends[-1] == "17:00" and len(ends) == 36


def test_days_and_night_shift():
    # Friday 2026-11-06 20:00 to Saturday 2026-11-07 08:00, hourly intervals
    iv = _intervals("2026-11-06 21:00", 12, minutes=60)
    night = shift_mask(iv["interval_start"], iv["interval_end"], make_shift("22-06", None))
    # midpoints 20:30, 21:30, 22:30 ... 07:30: in are 22:30 .. 05:30 = 8 intervals
    assert int(night.sum()) == 8
    fri = shift_mask(iv["interval_start"], iv["interval_end"], make_shift(None, "fri"))
    # Friday midpoints 20:30, 21:30, 22:30, 23:30
    assert int(fri.sum()) == 4
    assert shift_mask(iv["interval_start"], iv["interval_end"], None).all()


@pytest.fixture(scope="module")
def ws(sample_result):
    w = Workspace()
    w.add(sample_result("after_z16_ZOSB_smf113.vbs.gz"))
    return w


def test_shifted_metrics_are_ratios_of_the_shift_sums(ws):
    shift = make_shift("08-17", "mon-fri")
    m = shifted_metrics(ws, by="lpar", shift=shift)
    rows = apply_shift(ws.intervals, shift)
    assert 0 < len(rows) < len(ws.intervals)
    cpi = rows["B0"].sum() / rows["B1"].sum()          # CPI = sum(B0) / sum(B1) over the shift's rows
    assert float(m["CPI"].iloc[0]) == pytest.approx(cpi, rel=1e-12)
    # LPARCPU of the shift: busy time of the shift / time the shift covers
    busy_s = (rows["B0"] / rows["cpu_speed"] / 1e6).sum()
    covered = rows["bucket"].nunique() * float(rows["bucket_s"].iloc[0])
    assert float(m["LPARCPU"].iloc[0]) == pytest.approx(busy_s / covered * 100, rel=1e-9)


def test_empty_shift_is_the_plain_metrics(ws):
    a = shifted_metrics(ws, by="lpar", shift=None)
    b = ws.metrics(by="lpar")
    pd.testing.assert_frame_equal(a, b)
    assert np.isfinite(a["CPI"]).all()


def test_shared_shift_rows_one_frame_per_shift_inside_the_block(ws):
    """Inside shared_shift_rows() every ask of one frame and shift gives the same rows (one mask and copy for
    every level an export computes); outside, a new frame each time; the rows are those of the plain call."""
    from app.engine.shift import shared_shift_rows

    day, night = make_shift("08-17", "mon-fri"), make_shift("22-06")
    plain = apply_shift(ws.intervals, day)
    assert apply_shift(ws.intervals, day) is not plain
    with shared_shift_rows():
        a = apply_shift(ws.intervals, day)
        assert apply_shift(ws.intervals, day) is a
        n = apply_shift(ws.intervals, night)
        assert n is not a and len(n) != len(a)
        with shared_shift_rows():                          # nested: the outer block's rows
            assert apply_shift(ws.intervals, day) is a
        pd.testing.assert_frame_equal(a, plain)
        # the metrics of a level computed inside equal those computed outside
        inside = shifted_metrics(ws, by="class", shift=day)
    ws._mcache.clear()
    outside = shifted_metrics(ws, by="class", shift=day)
    pd.testing.assert_frame_equal(inside, outside)
    assert apply_shift(ws.intervals, day) is not a         # the block's rows are let go
