"""Local time (app/engine/timezone.py): offsets derived from the records, a daylight-saving switch, shifts in a zone.

The files are built with the sample writers: one z/OS LPAR (2 GCPs) in Europe/Berlin at 15-minute intervals from
2026-03-28 00:15 UTC to 2026-03-31 00:00 UTC (288 intervals).  Berlin switches from CET (UTC+01:00) to CEST
(UTC+02:00) on Sunday 2026-03-29 at 01:00 UTC (02:00 local becomes 03:00).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tz_builders as T  # noqa: E402

from app.engine import Workspace  # noqa: E402
from app.engine.shift import apply_shift, make_shift  # noqa: E402
from app.engine.timezone import QUARTER_S, TzError, Zones, iso_time, offset_text, parse_tz, record_offsets  # noqa: E402
from app.formats import common  # noqa: E402


@pytest.fixture(scope="module")
def berlin(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tz")
    ws = Workspace()
    ws.add(T.read(T.write_zos(tmp, T.zos_samples())))
    return ws


def _one_cpu(ws):
    iv = ws.intervals
    return iv[iv["cpu"] == 0].sort_values("interval_end")


def test_offsets_and_the_switch(berlin):
    iv = _one_cpu(berlin)
    # the record ending at 01:00 UTC on 03-29 states 03:00 CEST: intervals ending 03-28 00:15 .. 03-29 00:45 are
    # +01:00 (24 x 4 + 3 = 99), the other 288 - 99 = 189 are +02:00
    assert (iv["utc_offset_s"] == 3600).sum() == 99 and (iv["utc_offset_s"] == 7200).sum() == 189
    msgs = [f.message for f in berlin.findings if f.code == "local-time-change"]
    assert len(msgs) == 1
    assert "ZOSA: local time changed from UTC+01:00 to UTC+02:00 at 2026-03-29 01:00 UTC" in msgs[0]
    z = berlin.zones
    assert z.default() == "local" and z.label("local") == "local, UTC+01:00/UTC+02:00"
    assert [(s[1], s[2], s[3]) for s in z.switches()] == [(pd.Timestamp("2026-03-29 01:00"), 3600.0, 7200.0)]


def test_hourly_profile_in_local_time_has_23_hours_on_the_switch_day(berlin):
    iv = _one_cpu(berlin)
    off = berlin.zones.midpoint_offsets("local", iv)
    mid = iv["interval_start"] + (iv["interval_end"] - iv["interval_start"]) / 2
    local = mid + pd.to_timedelta(off, unit="s")
    day = local[local.dt.date == pd.Timestamp("2026-03-29").date()]
    # 03-29 00:00 CET = 03-28 23:00 UTC .. 03-30 00:00 CEST = 03-29 22:00 UTC: 23 hours, 02:00-02:59 missing
    assert sorted(day.dt.hour.unique()) == [0, 1] + list(range(3, 24))
    assert len(day) == 23 * 4
    # the day before and after have 24 hours of 4 intervals (03-28 local starts 03-27 23:00 UTC: 1 h before data)
    after = local[local.dt.date == pd.Timestamp("2026-03-30").date()]
    assert len(after) == 24 * 4


def _ends_by_day(rows):
    e = rows["interval_end"].sort_values()
    return {d: (len(g), g.min(), g.max()) for d, g in e.groupby(e.dt.date)}


def test_shift_in_local_time_before_and_after_the_switch(berlin):
    iv = _one_cpu(berlin)
    got = _ends_by_day(apply_shift(iv, make_shift("08-17", None, tz="local"), berlin.zones))
    # 08:00-17:00 local = midpoints 07:00-16:00 UTC in CET (interval ends 07:15 .. 16:00), 06:00-15:00 UTC in
    # CEST (ends 06:15 .. 15:00): 9 hours x 4 = 36 intervals a day
    d = pd.Timestamp
    assert got == {d("2026-03-28").date(): (36, d("2026-03-28 07:15"), d("2026-03-28 16:00")),
                   d("2026-03-29").date(): (36, d("2026-03-29 06:15"), d("2026-03-29 15:00")),
                   d("2026-03-30").date(): (36, d("2026-03-30 06:15"), d("2026-03-30 15:00"))}
    utc = _ends_by_day(apply_shift(iv, make_shift("08-17", None), berlin.zones))
    assert utc[d("2026-03-29").date()] == (36, d("2026-03-29 08:15"), d("2026-03-29 17:00"))
    # New York is on EDT (UTC-04:00) since 03-08: 08-17 New York = 12:00-21:00 UTC
    ny = _ends_by_day(apply_shift(iv, make_shift("08-17", None, tz="America/New_York"), berlin.zones))
    assert ny[d("2026-03-29").date()] == (36, d("2026-03-29 12:15"), d("2026-03-29 21:00"))
    # days in local time: Sunday 03-29 local runs 03-28 23:00 .. 03-29 22:00 UTC -> 23 x 4 intervals
    sun = apply_shift(iv, make_shift(None, "sun", tz="local"), berlin.zones)
    assert len(sun) == 92


def test_shifted_metrics_apply_the_zone(berlin):
    from app.engine.shift import shifted_metrics

    loc = shifted_metrics(berlin, by="lpar", shift=make_shift("08-17", None, tz="local"))
    utc = shifted_metrics(berlin, by="lpar", shift=make_shift("08-17", None))
    assert make_shift("08-17", None, tz="local").describe() == "08:00-17:00 local time, all days"
    assert loc["interval_end"].max() == pd.Timestamp("2026-03-30 15:00")      # last local shift end (CEST)
    assert utc["interval_end"].max() == pd.Timestamp("2026-03-30 17:00")


@pytest.mark.parametrize("lag_s", [150.0, -27.0, 0.0, 449.0])
def test_offset_rounds_to_the_quarter_hour(tmp_path, lag_s):
    # TME 2.5 minutes after the interval end, or 27 s before it (a TOD running ahead by the leap seconds),
    # still states +01:00 / +02:00: the offset is rounded to the nearest 15 minutes
    s = T.zos_samples(lag_s=lag_s, days=1)
    res = T.read(T.write_zos(tmp_path, s))
    rec = record_offsets([res.samples])
    assert set(rec["offset_s"]) == {3600}          # 03-28 00:15 .. 03-29 00:00 UTC: all CET


def test_subtype2_records_give_the_same_offsets(tmp_path):
    s = T.zos_samples(days=2)
    ws = Workspace()
    ws.add(T.read(T.write_zos(tmp_path, s, subtype=2)))
    assert [(x[1], x[2], x[3]) for x in ws.zones.switches()] == [(pd.Timestamp("2026-03-29 01:00"), 3600.0, 7200.0)]


def test_a_system_without_local_time_stays_utc(tmp_path):
    def no_time(r: bytes) -> bytes:          # TME 9,000,000 hundredths = 25:00: no time of day (spec 3 note)
        return r[:6] + (9_000_000).to_bytes(4, "big") + r[10:]

    res = T.read(T.write_zos(tmp_path, T.zos_samples(days=1), mangle=no_time))
    assert res.samples["local_time"].isna().all()
    ws = Workspace()
    ws.add(res)
    f = [f for f in ws.findings if f.code == "no-local-time"]
    assert len(f) == 1 and "ZOSA (3931-123F5): the local time offset cannot be derived" in f[0].message
    z = ws.zones
    assert not z.known and z.default() == "utc" and z.label("local") == "UTC"
    assert ws.intervals["utc_offset_s"].isna().all()
    iv = ws.intervals
    assert (z.offsets("local", iv["interval_end"], iv) == 0).all()


def test_zvm_zone_offset_from_d1r4(tmp_path):
    ws = Workspace()
    ws.add(T.read(T.write_zvm(tmp_path, 3600)))
    assert set(ws.intervals["utc_offset_s"]) == {3600.0}
    assert ws.zones.label("local") == "local, UTC+01:00"
    bad = T.read(T.write_zvm(tmp_path, 60, name="bad.mondata"))     # 60: minutes? not whole quarter hours of s
    assert "local_time" not in bad.samples.columns
    assert any(f.code == "no-zone-offset" and "MTRSYS_SYSZONE holds 60" in f.message for f in bad.findings)
    ws2 = Workspace()
    ws2.add(bad)
    assert ws2.zones.default() == "utc"


def test_parse_tz_and_texts():
    assert parse_tz("local") == "local" and parse_tz("UTC") == "utc" and parse_tz(None) == "local"
    assert parse_tz("Europe/Berlin") == "Europe/Berlin"
    with pytest.raises(TzError):
        parse_tz("Mars/Olympus")
    assert offset_text(3600) == "UTC+01:00" and offset_text(-16200) == "UTC-04:30" and offset_text(None) == "UTC"
    assert iso_time(pd.Timestamp("2026-03-29 01:00"), 7200) == "2026-03-29T03:00:00+02:00"
    assert iso_time(pd.Timestamp("2026-03-29 01:00"), 0) == "2026-03-29T01:00:00Z"


def test_packed_local_time_decode():
    # spec 11.1: TME 0041EB00 = 12:00:00.00, DTE 0124075F = 2024 day 75 = 15 March; sign C is accepted too
    got = common.smf_local_datetime64(np.array([0x0041EB00, 0x0041EB00, 8_640_000, 1]),
                                      np.array([0x0124075F, 0x0124075C, 0x0124075F, 0x0125366F]))
    assert got[0] == np.datetime64("2024-03-15T12:00:00") and got[1] == got[0]
    assert np.isnat(got[2])                 # TME of 24:00:00.00 is out of range
    assert np.isnat(got[3])                 # 2025 has no day 366


@settings(max_examples=60, deadline=None)
@given(off_q=st.integers(-56, 56), lag=st.floats(-400, 400), sec=st.integers(0, 10**9))
def test_rounding_recovers_any_quarter_hour_offset(off_q, lag, sec):
    """For any offset of whole quarter hours and any lag under 7.5 minutes, the derived offset is the offset."""
    t = np.datetime64("2000-01-01T00:00:00", "ns") + np.timedelta64(sec, "s")
    loc = t + np.timedelta64(off_q * QUARTER_S, "s") + np.timedelta64(int(lag * 1e9), "ns")
    f = pd.DataFrame({"cec": ["C"], "lpar": ["L"], "system": ["L"], "time": [t], "local_time": [loc],
                      "source": ["f"], "offset": [0]})
    assert int(record_offsets([f])["offset_s"].iloc[0]) == off_q * QUARTER_S


def test_zones_without_offset_column():
    iv = pd.DataFrame({"cec": ["C"], "lpar": ["L"], "system": ["L"], "interval_end": [pd.Timestamp("2026-01-01")]})
    z = Zones(iv)
    assert not z.known and z.unknown == [("C", "L", "L")]


def test_hour_profile_in_local_time_counts_the_hours_of_each_day(berlin):
    """engine.views.profile(tz="local"): data 03-28 00:00 .. 03-31 00:00 UTC = 03-28 01:00 CET .. 03-31 02:00 CEST.
    Local 02:00 exists on 03-28 (01:00-02:00 UTC) and 03-30 (00:00-01:00 UTC) only: 03-29 skips it and 03-31
    02:00 is after the data.  Local 00:00 first on 03-29 (23:00 UTC 03-28), last on 03-31 (ending 23:00 UTC 03-30).
    Local 01:00 on all four days: 00:00 UTC 03-28 .. ending 00:00 UTC 03-31."""
    from app.engine.views import profile

    loc = profile(berlin, by="hour", level="lpar", tz="local").set_index("hour")
    utc = profile(berlin, by="hour", level="lpar", tz="utc").set_index("hour")
    ts = pd.Timestamp
    assert (loc.loc[2, "interval_start"], loc.loc[2, "interval_end"]) == (ts("2026-03-28 01:00"), ts("2026-03-30 01:00"))
    assert (loc.loc[0, "interval_start"], loc.loc[0, "interval_end"]) == (ts("2026-03-28 23:00"), ts("2026-03-30 23:00"))
    assert (loc.loc[1, "interval_start"], loc.loc[1, "interval_end"]) == (ts("2026-03-28 00:00"), ts("2026-03-31 00:00"))
    assert (utc.loc[2, "interval_start"], utc.loc[2, "interval_end"]) == (ts("2026-03-28 02:00"), ts("2026-03-30 03:00"))
    assert sorted(loc.index) == sorted(utc.index) == list(range(24))
    # CPI of local 02:00 is the counters of its 8 intervals summed: midpoints 01:00-01:59 UTC on 03-28 (CET) and
    # 00:00-00:59 UTC on 03-30 (CEST), both CPUs
    iv = berlin.intervals
    mid = iv["interval_start"] + (iv["interval_end"] - iv["interval_start"]) / 2
    pick = ((mid >= "2026-03-28 01:00") & (mid < "2026-03-28 02:00")) | ((mid >= "2026-03-30 00:00") &
                                                                         (mid < "2026-03-30 01:00"))
    assert pick.sum() == 8 * 2
    assert loc.loc[2, "CPI"] == pytest.approx(iv.loc[pick, "B0"].sum() / iv.loc[pick, "B1"].sum(), rel=1e-12)
    assert loc.loc[2, "CPI"] != pytest.approx(utc.loc[2, "CPI"], rel=1e-9)
