"""Profiles, pools, peaks and rankings (issue 26): counter sums, then formulas; checked against hand sums of the
interval deltas (CPI = sum of cycles B0 / sum of instructions B1, per metrics.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.views import WEEKDAYS, peaks, pools, profile, ranking

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


@pytest.fixture(scope="module")
def ws(sample_result):
    w = Workspace()
    w.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_z16_ZOSB_smf113.vbs.gz"),
               sample_result("after_VMSYS1_monwrite.mondata.gz")])
    return w


def _mid(iv):
    a = iv["interval_start"].to_numpy(dtype="datetime64[ns]")
    return pd.DatetimeIndex(a + (iv["interval_end"].to_numpy(dtype="datetime64[ns]") - a) // 2)


def test_hour_profile_is_a_ratio_of_sums(ws):
    p = profile(ws, by="hour", level="lpar")
    iv = ws.intervals
    zosa = iv[iv["lpar"].astype(str) == "ZOSA"]
    hours = _mid(zosa).hour
    for h in (0, 8, 13, 23):
        sub = zosa[hours == h]
        want = sub["B0"].sum() / sub["B1"].sum()          # cycles / instructions of the hour, all days, all CPUs
        got = p[(p["lpar"] == "ZOSA") & (p["hour"] == h)]
        assert len(got) == 1 and got["CPI"].iloc[0] == pytest.approx(want, rel=1e-12)
        # never the mean of the intervals' CPIs (they differ: the CPUs' and intervals' weights)
        per = sub.groupby("interval_end", observed=True)[["B0", "B1"]].sum()
        assert abs((per["B0"] / per["B1"]).mean() - want) > 0 or len(per) == 1
    assert sorted(p.loc[p["lpar"] == "ZOSA", "hour"]) == list(range(24))


def test_weekday_and_hour_weekday_profiles(ws):
    w = profile(ws, by="weekday", level="cec")
    iv = ws.intervals
    days = _mid(iv).day_of_week
    for d in np.unique(days):
        sub = iv[days == d]
        for cec, part in sub.groupby("cec", observed=True):
            row = w[(w["cec"] == cec) & (w["weekday"] == WEEKDAYS[d])]
            assert row["CPI"].iloc[0] == pytest.approx(part["B0"].sum() / part["B1"].sum(), rel=1e-12)
    hw = profile(ws, by="hour-weekday", level="lpar")
    assert list(hw.columns[:2]) == ["weekday", "hour"]
    zosb = iv[iv["lpar"].astype(str) == "ZOSB"]
    m = _mid(zosb)
    sub = zosb[(m.day_of_week == 0) & (m.hour == 9)]                 # Monday 09:00-10:00
    row = hw[(hw["lpar"] == "ZOSB") & (hw["weekday"] == "Mon") & (hw["hour"] == 9)]
    assert row["CPI"].iloc[0] == pytest.approx(sub["B0"].sum() / sub["B1"].sum(), rel=1e-12)


def test_pools_sum_every_lpar_of_a_type(ws):
    p = pools(ws)
    iv = ws.intervals
    z16 = iv[iv["cec"].astype(str) == "3931-123F5"]
    types = z16["class"].astype(str).replace({"CP": "GCP"})
    for t in ("GCP", "zIIP", "IFL"):
        sub = z16[types == t]
        row = p[(p["cec"] == "3931-123F5") & (p["class"] == t)]
        assert len(row) == 1, t
        assert row["CPI"].iloc[0] == pytest.approx(sub["B0"].sum() / sub["B1"].sum(), rel=1e-12)
        assert row["n_lpars"].iloc[0] == sub["lpar"].astype(str).nunique()
        # the CPUs of every LPAR of the type (ZOSA's CPU 0 and ZOSB's CPU 0 are two)
        assert row["n_cpus"].iloc[0] == len(sub.groupby(["lpar", "cpu"], observed=True))
    # GCP holds ZOSA's and ZOSB's general CPs; IFL is VMPROD's alone
    assert p.loc[p["class"] == "GCP", "n_lpars"].iloc[0] == 2
    assert set(p["lpar"]) == {"(pool)"}


def test_peaks_are_the_largest_intervals(ws):
    top = peaks(ws, "CPI", level="lpar", top=5)
    li = ws.metrics(by="lpar_interval")
    want = np.sort(li["CPI"].dropna().to_numpy())[::-1][:5]
    assert top["CPI"].to_numpy() == pytest.approx(want, rel=0)
    assert list(top["rank"]) == [1, 2, 3, 4, 5]
    mid = _mid(top)
    assert list(top["hour"]) == list(mid.hour)


def test_ranking_of_a_cecs_lpars(ws):
    r = ranking(ws, ("cec", "3931-123F5"), "CPI")
    assert list(r["CPI"]) == sorted(r["CPI"], reverse=True)
    iv = ws.intervals
    z16 = iv[iv["cec"].astype(str) == "3931-123F5"]
    busy = z16["B0"] / z16["cpu_speed"]                   # CPU time each row was busy (cycles / speed)
    for row in r.to_dict("records"):
        want = busy[z16["lpar"].astype(str) == row["lpar"]].sum() / busy.sum() * 100
        assert row["busy_share_pct"] == pytest.approx(want, rel=1e-12)
    assert r["busy_share_pct"].sum() == pytest.approx(100.0, rel=1e-9)
