"""Levels, time windows, ratio of sums, LPARCPU, CEC buckets, summary rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from factory import MIN15, T0, result

from app.engine import LEVELS, Workspace

SPEED = 5000            # cycles per microsecond -> one engine = 5000e6 * 900 = 4.5e12 cycles per 15 min
ENGINE = 4_500_000_000_000


def _ws(recs, gen="z16"):
    ws = Workspace()
    ws.add(result(recs, gen=gen))
    return ws


def test_ratio_of_sums_not_average_of_ratios():
    # CPU 0: B0 = 1e12, B1 = 1e12 -> CPI 1.0 ; CPU 1: B0 = 3e11, B1 = 1e11 -> CPI 3.0
    # average of ratios = (1 + 3)/2 = 2.0 ; ratio of sums = 1.3e12 / 1.1e12 = 1.1818...
    recs = [dict(cpu=0, cpu_speed=SPEED, B0=10**12, B1=10**12, B2=10**10, B4=0),
            dict(cpu=1, cpu_speed=SPEED, B0=3 * 10**11, B1=10**11, B2=10**10, B4=0)]
    ws = _ws(recs)
    for by in ("interval", "class", "lpar", "cec", "cec_interval", "lpar_interval"):
        r = ws.metrics(by).iloc[0]
        assert r["CPI"] == pytest.approx(1.3e12 / 1.1e12), by
        assert r["CPI"] != pytest.approx(2.0)
        # L1MP: (1e10 + 1e10)/1.1e12*100 = 1.8181... (average of 1.0 and 10.0 would be 5.5)
        assert r["L1MP"] == pytest.approx(2e10 / 1.1e12 * 100), by
        assert r["n_cpus"] == 2


def test_lparcpu_sums_cpus_and_averages_time():
    # interval 1: CPU0 50 %, CPU1 100 % -> LPAR 150 % ; interval 2: CPU0 100 %, CPU1 10 % -> 110 %
    recs = [dict(cpu=0, time=T0 + MIN15, cpu_speed=SPEED, B0=ENGINE // 2, B1=1),
            dict(cpu=1, time=T0 + MIN15, cpu_speed=SPEED, B0=ENGINE, B1=1),
            dict(cpu=0, time=T0 + 2 * MIN15, cpu_speed=SPEED, B0=ENGINE, B1=1),
            dict(cpu=1, time=T0 + 2 * MIN15, cpu_speed=SPEED, B0=ENGINE // 10, B1=1)]
    ws = _ws(recs)
    assert list(ws.metrics("interval")["LPARCPU"]) == pytest.approx([150.0, 110.0])
    assert list(ws.metrics("lpar_interval")["LPARCPU"]) == pytest.approx([150.0, 110.0])
    assert list(ws.metrics("cpu")["LPARCPU"]) == pytest.approx([50.0, 100.0, 100.0, 10.0])
    # whole window: (150 + 110)/2 = 130 % of one engine
    assert ws.metrics("lpar").iloc[0]["LPARCPU"] == pytest.approx(130.0)
    assert ws.metrics("cec").iloc[0]["LPARCPU"] == pytest.approx(130.0)
    r = ws.metrics("cpu", summary=True)
    tot = r[r["summary"]]
    assert list(tot["LPARCPU"]) == pytest.approx([75.0, 55.0])
    assert ws.metrics("lpar").iloc[0]["Eff_GHz"] == pytest.approx(5.0)


def test_lparcpu_per_cpu_interval_lengths():
    # per-CPU busy then sum: CPU0 ran 900 s at 50 %, CPU1's interval is 800 s long at 50 %
    t = T0 + MIN15
    recs = [dict(cpu=0, time=t, cpu_speed=SPEED, B0=ENGINE // 2, B1=1),
            dict(cpu=1, time=t, run_start=T0 + pd.Timedelta(seconds=100), cpu_speed=SPEED,
                 B0=SPEED * 1_000_000 * 800 // 2, B1=1)]
    r = _ws(recs).metrics("interval").iloc[0]
    assert r["LPARCPU"] == pytest.approx(100.0)


def test_cec_interval_buckets_jitter_and_n_cpus():
    # two LPARs whose records end a few seconds apart fall in the same CEC bucket
    recs = []
    for i in (1, 2):
        recs.append(dict(lpar="SYSA", system="SYSA", cpu=0, time=T0 + MIN15 * i, cpu_speed=SPEED, B0=ENGINE, B1=1))
        recs.append(dict(lpar="SYSB", system="SYSB", cpu=0, time=T0 + MIN15 * i + pd.Timedelta(seconds=3),
                         run_start=T0 + pd.Timedelta(seconds=3), cpu_speed=SPEED, B0=ENGINE // 2, B1=1))
    ws = _ws(recs)
    c = ws.metrics("cec_interval")
    assert len(c) == 2
    assert list(c["n_cpus"]) == [2, 2]
    assert list(c["LPARCPU"]) == pytest.approx([150.0, 150.0])
    assert list(c["interval_end"]) == [T0 + MIN15, T0 + 2 * MIN15]
    assert len(ws.metrics("lpar_interval")) == 4


def test_time_window_cut_and_nodes():
    recs = [dict(cpu=c, time=T0 + MIN15 * i, B0=10 * i, B1=10) for i in range(1, 5) for c in (0, 1)]
    ws = _ws(recs)
    m = ws.metrics("interval", start=T0 + MIN15, end="2026-01-05T09:00:00Z")
    assert list(m["interval_end"]) == [T0 + 2 * MIN15, T0 + 3 * MIN15, T0 + 4 * MIN15]
    cec = ws.intervals["cec"].iloc[0]
    m = ws.metrics("cpu", nodes=[("cpu", cec, "SYSA", "GCP", 1)])
    assert set(m["cpu"]) == {1} and len(m) == 4
    m = ws.metrics("lpar", nodes=[("cpu", cec, "SYSA", "GCP", 1)])
    assert m.iloc[0]["n_cpus"] == 1
    assert len(ws.metrics("lpar", nodes=[("lpar", cec, "NOPE")])) == 0


def test_summary_rows_and_columns():
    recs = [dict(cpu=0, time=T0 + MIN15 * i, B0=10, B1=5) for i in (1, 2)]
    ws = _ws(recs)
    m = ws.metrics("interval", summary=True)
    assert list(m["summary"]) == [False, False, True]
    assert m.iloc[-1]["interval_start"] == T0 and m.iloc[-1]["interval_end"] == T0 + 2 * MIN15
    cols = list(m.columns)
    assert cols[:7] == ["cec", "lpar", "system", "os", "class", "interval_start", "interval_end"]
    assert cols[7:10] == ["n_cpus", "generation", "formula_set"]
    assert cols.index("Workload_Hint") == cols.index("Core_Active_Pct") + 1
    assert "cpu" not in cols and "cpu" in ws.metrics("cpu").columns
    assert list(ws.metrics("cec").columns[:3]) == ["cec", "interval_start", "interval_end"]


def test_levels_and_bad_level():
    assert set(LEVELS) >= {"interval", "cpu", "class", "lpar", "cec", "class_interval", "lpar_interval",
                           "cec_interval"}
    ws = _ws([dict(B0=1, B1=1)])
    with pytest.raises(ValueError):
        ws.metrics("galaxy")


def test_empty_workspace_metrics():
    ws = Workspace()
    for by in LEVELS:
        m = ws.metrics(by)
        assert len(m) == 0
    assert ws.tree() == []


def test_idle_cpu_metrics_are_nan_not_zero():
    ws = _ws([dict(B0=0, B1=0, B2=0, B4=0)])
    r = ws.metrics("cpu").iloc[0]
    assert np.isnan(r["CPI"]) and np.isnan(r["L1MP"]) and r["LPARCPU"] == 0.0


def test_cec_bucket_mixes_one_minute_and_fifteen_minute_systems():
    # SYSA (z/OS) 15-minute intervals at 100 % of one engine; VM1 (z/VM) 1-minute intervals at 50 %
    one_min = pd.Timedelta(minutes=1)
    recs = [dict(lpar="SYSA", system="SYSA", cpu=0, time=T0 + MIN15 * i, cpu_speed=SPEED, B0=ENGINE, B1=1)
            for i in (1, 2)]
    recs += [dict(lpar="VM1", system="VM1", os="z/VM", cpu=0, run_start=pd.NaT, kind="absolute",
                  time=T0 + one_min * i, cpu_speed=SPEED, B0=i * SPEED * 1_000_000 * 30, B1=i)
             for i in range(0, 31)]
    ws = _ws(recs)
    assert len(ws.metrics("lpar_interval").query("lpar == 'VM1'")) == 30
    c = ws.metrics("cec_interval")
    # each 15-minute CEC bucket: SYSA 100 % + VM1 fifteen 1-minute intervals at 50 % -> 150 %
    assert list(c["interval_end"]) == [T0 + MIN15, T0 + 2 * MIN15]
    assert list(c["LPARCPU"]) == pytest.approx([150.0, 150.0])
    assert ws.metrics("cec").iloc[0]["LPARCPU"] == pytest.approx(150.0)
    assert ws.metrics("lpar").set_index("lpar")["LPARCPU"].to_dict() == pytest.approx({"SYSA": 100.0, "VM1": 50.0})
