"""SMT reports per core type and per core (app.engine.smt_report, Workspace.smt)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from factory import MIN15, T0, result

from app.engine import SMT_CORE_COLUMNS, SMT_TYPE_COLUMNS, Workspace, smt_report
from app.formats.monwrite_records import MT_COLUMNS
from app.formats.schema import SET_BASIC, SET_EXTENDED, SET_MT, SET_PROBLEM

MIN1 = pd.Timedelta(minutes=1)
ALL = SET_BASIC | SET_PROBLEM | SET_EXTENDED


def mt_frame(rows: list[dict]) -> pd.DataFrame:
    """A ReadResult.mt frame (z/VM D0R2 as reported): missing values NaN."""
    base = dict(system="VMSYS1", lpar="VMPROD", cec="3931-ABCDE")
    recs = []
    for r in rows:
        d = {c: np.nan for c in MT_COLUMNS}
        d.update(base)
        d.update(r)
        recs.append(d)
    df = pd.DataFrame(recs, columns=MT_COLUMNS)
    return df.astype({"cpu": "int32", "core": "int32", "time": "datetime64[ns]",
                      **{c: "float64" for c in MT_COLUMNS[5:12]}})


# ---------------------------------------------------------------- IBM's example
def ibm_mt() -> pd.DataFrame:
    # IBM's two-threads-on-a-core example: core busy 80 %, thread density 1.25, CF 113 %, mCF 156 %;
    # z/VM reports no productivity / MT utilization here, so both are derived.  Two 1-minute samples,
    # both threads (CPU 0 and 1) of core 0 carry the same per-core values.
    rows = []
    for i in (1, 2):
        for cpu in (0, 1):
            rows.append(dict(time=T0 + MIN1 * i, cpu=cpu, core=0, **{"class": "IFL"}, core_busy_pct=80.0,
                             thread_density=1.25, capacity_factor=113.0, max_capacity_factor=156.0))
    return mt_frame(rows)


def test_ibm_example_per_core():
    c = smt_report(None, [ibm_mt()], by="core")
    assert list(c.columns) == SMT_CORE_COLUMNS
    assert len(c) == 2 and list(c["core_id"]) == [0, 0]
    r = c.iloc[0]
    # productivity = CF / mCF = 113 / 156 = 0.724358974... -> 72.4358974 %   (IBM shows 73 %)
    assert r["productivity"] == pytest.approx(113.0 / 156.0 * 100, rel=1e-12)
    assert round(r["productivity"], 1) == 72.4
    # MT utilization = core busy x productivity = 80 x 0.724358974 = 57.948718 %
    # (IBM shows 59 %, from rounded inputs: 80 x 0.73 = 58.4)
    assert r["mt_utilization"] == pytest.approx(80.0 * 113.0 / 156.0, rel=1e-12)
    assert round(r["mt_utilization"], 1) == 57.9
    assert r["thread_density"] == 1.25
    assert r["core_busy"] == pytest.approx(80.0)
    assert r["seconds"] == 60.0                      # spacing of the D0R2 samples (no counter data)
    assert r["source"] == "reported+derived"         # busy, TD, CF, mCF reported; productivity, MT util derived


def test_ibm_example_per_type_and_mean():
    t = smt_report(None, [ibm_mt()], by="type")
    assert list(t.columns) == SMT_TYPE_COLUMNS
    assert list(t["mean"]) == [False, False, True]
    for _, r in t.iterrows():
        assert r["core_type"] == "IFL" and r["cores"] == 1
        assert r["capacity_factor"] == pytest.approx(113.0)
        assert r["max_capacity_factor"] == pytest.approx(156.0)
        assert r["productivity"] == pytest.approx(113.0 / 156.0 * 100, rel=1e-12)      # 72.4 %
        assert r["mt_utilization"] == pytest.approx(80.0 * 113.0 / 156.0, rel=1e-12)   # 57.9 %
        assert r["thread_density"] == pytest.approx(1.25)
    mean = t.iloc[-1]
    assert pd.isna(mean["interval_end"]) and mean["seconds"] == 120.0    # 2 intervals x 60 s


def test_single_reported_sample_of_unknown_length():
    one = ibm_mt().iloc[:2]
    t = smt_report(None, [one], by="type")
    assert t.iloc[0]["productivity"] == pytest.approx(113.0 / 156.0 * 100)
    assert math.isnan(t.iloc[0]["seconds"])


# ---------------------------------------------------------------- derived from MT-diagnostic counters
def counter_records(os_="z/OS", cls="zIIP"):
    # z16, CPSP 5200 cycles/us, 15-minute intervals (900 s): one core = 5200e6 x 900 = 4.68e12 cycles.
    # core 0 (thread 0 = CPU 0): M448 = 1.404e12 (30 %), M449 = 0.936e12 (20 %)
    #   core busy = (1.404e12 + 0.936e12) / 4.68e12 x 100 = 50 %
    #   TD = (1.404 + 2 x 0.936) / (1.404 + 0.936) = 3.276 / 2.34 = 1.4
    # core 1 (thread 0 = CPU 2): M448 = 0.468e12 (10 %), M449 = 1.404e12 (30 %)
    #   core busy = 1.872e12 / 4.68e12 x 100 = 40 %;  TD = (0.468 + 2.808) / 1.872 = 1.75
    # thread-1 rows (CPU 1, 3) have no MT set: the readers keep M counters on thread 0 only.
    recs = []
    for i in (1, 2):
        for cpu, core, m in ((0, 0, (1_404_000_000_000, 936_000_000_000)), (1, 0, None),
                             (2, 1, (468_000_000_000, 1_404_000_000_000)), (3, 1, None)):
            r = dict(time=T0 + MIN15 * i, cpu=cpu, core=core, os=os_, B0=10**12, B1=10**11)
            r["class"] = cls
            if m:
                r.update(sets=ALL | SET_MT, M448=m[0], M449=m[1])
            recs.append(r)
    return recs


@pytest.fixture
def zos():
    ws = Workspace()
    ws.add(result(counter_records()))
    return ws


def test_derived_per_core(zos):
    c = zos.smt(by="core")
    assert list(c.columns) == SMT_CORE_COLUMNS
    assert len(c) == 4                                 # 2 cores x 2 intervals
    c0 = c[c["core_id"] == 0].iloc[0]
    c1 = c[c["core_id"] == 1].iloc[0]
    assert c0["thread_density"] == pytest.approx(1.4, rel=1e-12)
    assert c0["core_busy"] == pytest.approx(50.0, rel=1e-12)
    assert c1["thread_density"] == pytest.approx(1.75, rel=1e-12)
    assert c1["core_busy"] == pytest.approx(40.0, rel=1e-12)
    assert c0["seconds"] == 900.0 and c0["core_type"] == "zIIP" and c0["source"] == "derived"


def test_zos_productivity_is_nan_not_zero(zos):
    for by in ("core", "type"):
        f = zos.smt(by=by)
        for col in ("productivity", "mt_utilization") + (("capacity_factor", "max_capacity_factor")
                                                         if by == "type" else ()):
            assert f[col].isna().all(), col
            assert not (f[col] == 0).any()


def test_derived_per_type_is_ratio_of_sums(zos):
    t = zos.smt(by="type")
    assert list(t["mean"]) == [False, False, True]
    r = t.iloc[0]
    assert r["cores"] == 2 and r["seconds"] == 900.0 and r["source"] == "derived"
    # sum the deltas of both cores first: M448 = 1.404e12 + 0.468e12 = 1.872e12, M449 = 0.936e12 + 1.404e12 = 2.34e12
    # TD = (1.872 + 2 x 2.34) / (1.872 + 2.34) = 6.552 / 4.212 = 1.5556  (not the mean of 1.4 and 1.75 = 1.575)
    assert r["thread_density"] == pytest.approx(6.552 / 4.212, rel=1e-12)
    mean = t.iloc[-1]
    assert mean["mean"] and pd.isna(mean["interval_end"])
    assert mean["seconds"] == 1800.0 and mean["cores"] == 2
    assert mean["thread_density"] == pytest.approx(6.552 / 4.212, rel=1e-12)


def test_mt_lost_interval_gives_no_derived_values():
    recs = counter_records()
    for r in recs:
        if r["time"] == T0 + MIN15 * 2 and "M448" in r:
            r["mt_lost"] = True
    ws = Workspace()
    ws.add(result(recs))
    c = ws.smt(by="core")
    assert set(c["interval_end"]) == {T0 + MIN15}


def test_window_and_nodes(zos):
    assert len(zos.smt(by="core", end=T0 + MIN15)) == 2
    assert len(zos.smt(by="core", start=T0 + MIN15)) == 2
    assert len(zos.smt(by="core", start="2030-01-01")) == 0
    cec = "3931-ABCDE"
    # CPU 3 is thread 1 of core 1: selecting it selects core 1
    c = zos.smt(by="core", nodes=[("cpu", cec, "SYSA", "zIIP", 3)])
    assert set(c["core_id"]) == {1}
    assert len(zos.smt(by="type", nodes=[("class", cec, "SYSA", "GCP")])) == 0
    assert len(zos.smt(by="type", nodes=[("lpar", cec, "SYSA")])) == 3
    with pytest.raises(ValueError):
        zos.smt(by="cpu")


# ---------------------------------------------------------------- z/VM reported values pass through
def zvm_mt(times=(1, 2)) -> pd.DataFrame:
    # core 0: busy 60 %, TD 1.5, productivity 90 %, MT util 54 %, CF 120 %, mCF 140 %
    # core 1: busy 20 %, TD 1.2, productivity 70 %, MT util 14 %, CF 110 %, mCF 150 %
    # per-type TD reported by z/VM (AVGTDBYTYPE): 1.44
    rows = []
    for i in times:
        for cpu, core, v in ((0, 0, (60.0, 1.5, 90.0, 54.0, 120.0, 140.0)), (1, 0, (60.0, 1.5, 90.0, 54.0, 120.0, 140.0)),
                             (2, 1, (20.0, 1.2, 70.0, 14.0, 110.0, 150.0)), (3, 1, (20.0, 1.2, 70.0, 14.0, 110.0, 150.0))):
            rows.append(dict(time=T0 + MIN1 * i, cpu=cpu, core=core, **{"class": "IFL"},
                             core_busy_pct=v[0], thread_density=v[1], productivity=v[2], mt_util_pct=v[3],
                             capacity_factor=v[4], max_capacity_factor=v[5], thread_density_type=1.44))
    return mt_frame(rows)


def test_reported_per_core_pass_through():
    c = smt_report(None, [zvm_mt()], by="core")
    assert (c["source"] == "reported").all()
    c0 = c[c["core_id"] == 0].iloc[0]
    assert (c0["core_busy"], c0["thread_density"], c0["productivity"], c0["mt_utilization"]) == \
        pytest.approx((60.0, 1.5, 90.0, 54.0), rel=1e-12)
    c1 = c[c["core_id"] == 1].iloc[0]
    assert c1["thread_density"] == pytest.approx(1.2)          # the per-core TD, not the per-type 1.44


def test_reported_per_type_weighted_by_core_busy():
    t = smt_report(None, [zvm_mt()], by="type")
    assert (t["source"] == "reported").all()
    for _, r in t.iterrows():
        # productivity = (60 x 90 + 20 x 70) / (60 + 20) = 6800 / 80 = 85.0
        assert r["productivity"] == pytest.approx(85.0, rel=1e-12)
        # CF = (60 x 120 + 20 x 110) / 80 = 117.5 ; mCF = (60 x 140 + 20 x 150) / 80 = 142.5
        assert r["capacity_factor"] == pytest.approx(117.5, rel=1e-12)
        assert r["max_capacity_factor"] == pytest.approx(142.5, rel=1e-12)
        # MT util = average over cores (54 + 14) / 2 = 34.0 = average core busy 40 x productivity 0.85
        assert r["mt_utilization"] == pytest.approx(34.0, rel=1e-12)
        assert r["thread_density"] == pytest.approx(1.44)          # z/VM's per-type value
        assert r["cores"] == 2


def test_reported_wins_over_counters_and_times_align():
    # counters for the same z/VM system with different (derived) values, D0R2 written 0.2 s after the interval end
    recs = counter_records(os_="z/VM", cls="IFL")
    for r in recs:
        r.update(lpar="VMPROD", system="VMSYS1", time=T0 + (r["time"] - T0) / 15)     # 1-minute intervals
        r["cpu_speed"] = 5200
    ws = Workspace(keep_implausible=True)    # 15-minute counter values in 1-minute intervals: beyond the clock, kept
    res = result(recs)
    res.mt = zvm_mt()
    res.mt["cec"] = str(res.samples["cec"].iloc[0])
    res.mt["time"] = res.mt["time"] + pd.Timedelta(milliseconds=200)
    ws.add(res)
    c = ws.smt(by="core")
    assert len(c) == 4 and (c["source"] == "reported").all()
    assert set(c["interval_end"]) == {T0 + MIN1, T0 + MIN1 * 2}    # snapped to the counter interval ends
    assert c[c["core_id"] == 1]["thread_density"].tolist() == pytest.approx([1.2, 1.2])


def test_empty():
    for by, cols in (("type", SMT_TYPE_COLUMNS), ("core", SMT_CORE_COLUMNS)):
        f = Workspace().smt(by=by)
        assert list(f.columns) == cols and len(f) == 0
