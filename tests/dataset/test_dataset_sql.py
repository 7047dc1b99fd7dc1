"""The --where validator and the shift filter written as SQL."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

import pandas as pd

from app.dataset.query import shift_sql
from app.dataset.sql import DUCKDB, SPARK, WhereError, parse_where
from app.engine.shift import ShiftError, ShiftFilter, make_shift, shift_mask


def test_where_is_rewritten_from_its_parse_tree():
    assert parse_where("lpar IN ('ZOSA','ZOSB') AND class = 'GCP'", DUCKDB) == \
        "(\"lpar\" IN ('ZOSA', 'ZOSB') AND \"class\" = 'GCP')"
    assert parse_where("cpu >= 2 or not (os = 'z/VM')", SPARK) == "(`cpu` >= 2 OR (NOT (`os` = 'z/VM')))"
    assert parse_where("lpar NOT IN ('O''Brien')", DUCKDB) == "\"lpar\" NOT IN ('O''Brien')"


@pytest.mark.parametrize("bad, why", [
    ("lpar = 'x'; DROP TABLE iv", "not allowed"),
    ("lpar = 'x' -- comment", "not allowed"),
    ("password = 'x'", "unknown column"),
    ("lpar = upper('x')", "expected"),
    ("cpu = 'one'", "is a number"),
    ("lpar = 5", "holds text"),
    ("lpar IN ('a'", "ends too early"),
    ("(lpar = 'a'", "ends too early"),
    ("lpar = 'a' lpar", "unexpected"),
    ("", "empty"),
])
def test_where_rejects(bad, why):
    with pytest.raises(WhereError, match=why):
        parse_where(bad, DUCKDB)


def _iv(first_end: str, n: int, minutes: int) -> pd.DataFrame:
    ends = pd.date_range(first_end, periods=n, freq=f"{minutes}min")
    return pd.DataFrame({"interval_start": ends - pd.Timedelta(minutes=minutes), "interval_end": ends})


def _sql_kept(iv: pd.DataFrame, shift) -> list[str]:
    """Interval ends (YYYY-MM-DD HH:MM) the DuckDB condition of ``shift_sql`` keeps, in order."""
    con = duckdb.connect()
    t = pd.DataFrame({"t_start": iv["interval_start"].to_numpy(dtype="datetime64[ns]").view(np.int64),
                      "t_end": iv["interval_end"].to_numpy(dtype="datetime64[ns]").view(np.int64)})
    con.register("t", t)
    conds = shift_sql(shift, DUCKDB)
    got = con.execute("SELECT t_end FROM t" + (" WHERE " + " AND ".join(conds) if conds else "")
                      + " ORDER BY t_end").fetchall()
    return [pd.Timestamp(r[0], unit="ns").strftime("%Y-%m-%d %H:%M") for r in got]


def _mask_kept(iv: pd.DataFrame, shift) -> list[str]:
    keep = shift_mask(iv["interval_start"], iv["interval_end"], shift)
    return iv["interval_end"][keep].dt.strftime("%Y-%m-%d %H:%M").tolist()


def test_shift_sql_hourly_intervals_ending_at_quarter_past():
    # 2026-11-02 is a Monday. 60-minute intervals ending 06:15 .. 19:15, --hours 08-17 (midpoint in [08:00, 17:00)):
    # 07:15-08:15 has its midpoint at 07:45 (out), 08:15-09:15 at 08:45 (in) ... 16:15-17:15 at 16:45 (in),
    # 17:15-18:15 at 17:45 (out): ends 09:15 .. 17:15, 9 intervals.  (query's former rule, the hour of the end,
    # kept ends 08:15 .. 16:15 instead.)
    iv = _iv("2026-11-02 06:15", 14, 60)
    shift = make_shift("08-17", None)
    want = [f"2026-11-02 {h:02d}:15" for h in range(9, 18)]
    assert _sql_kept(iv, shift) == want == _mask_kept(iv, shift)


def test_shift_sql_half_hour_start():
    # 15-minute intervals ending 08:00 .. 17:30, --hours 08:30-17:00: midpoint = end - 7.5 min, in [08:30, 17:00)
    # for ends 08:45 (08:37:30) .. 17:00 (16:52:30): (17:00 - 08:45) / 15 min + 1 = 34 intervals
    iv = _iv("2026-11-02 08:00", 39, 15)
    shift = make_shift("08:30-17:00", None)
    got = _sql_kept(iv, shift)
    assert len(got) == 34 and got[0] == "2026-11-02 08:45" and got[-1] == "2026-11-02 17:00"
    assert got == _mask_kept(iv, shift)


@pytest.mark.parametrize("hours, days, n", [
    # hourly intervals ending Fri 2026-11-06 21:00 .. Sat 08:00: midpoints Fri 20:30 .. 23:30 (4), Sat 00:30 .. 07:30 (8)
    ("22-06", None, 8),       # 22:30, 23:30, 00:30 .. 05:30
    (None, "fri", 4),
    (None, "sat", 8),
    ("22-06", "sat", 6),      # 00:30 .. 05:30 on Saturday
    ("22-06", "mon-fri", 2),  # 22:30, 23:30 on Friday
    ("00-24", "sat,sun", 8),
    ("0-6,22-24", None, 8),   # the night as a list: the same 8 as 22-06
    ("21-22,02-04", "fri,sat", 3),   # 21:30 (Fri), 02:30, 03:30 (Sat)
])
def test_shift_sql_night_and_days(hours, days, n):
    iv = _iv("2026-11-06 21:00", 12, 60)
    shift = make_shift(hours, days)
    got = _sql_kept(iv, shift)
    assert len(got) == n
    assert got == _mask_kept(iv, shift)


def test_shift_sql_edges():
    iv = _iv("2026-11-02 08:00", 3, 60)         # midpoints 07:30, 08:30, 09:30
    assert shift_sql(None, DUCKDB) == [] and shift_sql(ShiftFilter(), DUCKDB) == []
    assert _sql_kept(iv, None) == ["2026-11-02 08:00", "2026-11-02 09:00", "2026-11-02 10:00"]
    assert _sql_kept(iv, ShiftFilter(None, None, frozenset())) == []          # no day at all: nothing
    # a missing start (NaT, stored as the smallest int64) counts the end as the midpoint, as shift_mask does
    iv.loc[0, "interval_start"] = pd.NaT
    shift = make_shift("08-09", None)
    assert _sql_kept(iv, shift) == ["2026-11-02 08:00", "2026-11-02 09:00"] == _mask_kept(iv, shift)
    # Spark: the same condition with its integer division
    sp = shift_sql(make_shift("22-06", "mon-fri"), SPARK)
    assert len(sp) == 2 and " div " in sp[0] and "//" not in " ".join(sp)
    # minute of the day of the midpoint: >= 22:00 (1320) or < 06:00 (360); weekday Monday..Friday
    assert "div (60000000000)) % 1440) >= 1320 OR" in sp[0] and sp[0].endswith("% 1440) < 360)")
    assert sp[1].endswith("+ 3) % 7) IN (0, 1, 2, 3, 4)")


def test_one_parser_for_hours_and_days():
    # query reads --hours/--days with the engine's parser (app/engine/shift.py), as report does
    assert make_shift("08-17", "mon-fri") == ShiftFilter(480, 1020, frozenset({0, 1, 2, 3, 4}))
    assert make_shift("08:30-17:00", None) == ShiftFilter(510, 1020, None)
    assert make_shift("22-06", "fri-mon") == ShiftFilter(1320, 360, frozenset({4, 5, 6, 0}))
    # the former query list form, now read by the engine's parser for every command
    assert make_shift("0-6,22-24", None) == ShiftFilter(0, 360, None, ((1320, 1440),))
    for bad in ("25-26", "9", "x-y"):
        with pytest.raises(ShiftError, match="hours"):
            make_shift(bad, None)
    with pytest.raises(ShiftError, match="days"):
        make_shift(None, "someday")
