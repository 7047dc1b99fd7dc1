"""Deltas, runs, resets, duplicates and data-health findings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from factory import ALL_SETS, MIN15, T0, result

from app.engine import Workspace
from app.formats.schema import SET_BASIC, SET_MT


def absrow(i, b0, b1, cpu=0, **kw):
    """Running totals at the end of interval i (i = 0 is the baseline)."""
    return dict(kind="absolute", first=(i == 0), time=T0 + MIN15 * (i + 1), cpu=cpu, B0=b0, B1=b1,
                B2=b1 // 100, B4=b1 // 50, **kw)


def codes(findings):
    return [f.code for f in findings]


def test_absolute_rows_are_differenced_and_first_is_baseline():
    ws = Workspace()
    ws.add(result([absrow(0, 1000, 500), absrow(1, 3000, 1500), absrow(2, 6000, 2500)]))
    iv = ws.intervals
    assert len(iv) == 2                                  # the first record is only a baseline
    assert list(iv["B0"]) == [2000.0, 3000.0]            # 3000-1000, 6000-3000
    assert list(iv["B1"]) == [1000.0, 1000.0]
    assert iv["B0"].dtype == np.float64
    assert list(iv["interval_s"]) == [900.0, 900.0]
    assert iv["interval_start"].iloc[0] == T0 + MIN15


def test_reset_starts_new_run_no_negative_delta():
    recs = [absrow(0, 1000, 500), absrow(1, 3000, 1500), absrow(2, 100, 50),   # counters went backwards
            absrow(3, 1100, 550)]
    recs[2]["offset"] = 4242
    ws = Workspace()
    found = ws.add(result(recs))
    iv = ws.intervals
    assert (iv["B0"] >= 0).all()
    assert list(iv["B0"]) == [2000.0, 1000.0]            # interval 2 is a gap; interval 3 = 1100 - 100
    f = [x for x in found if x.code == "counter-reset"]
    assert len(f) == 1 and f[0].offset == 4242 and f[0].file == "test.smf"
    assert "offset 4242" in f[0].message


def test_run_is_joined_across_files_and_duplicates_counted_once():
    a = result([absrow(0, 1000, 500), absrow(1, 3000, 1500)], file="a.smf")
    b = result([absrow(1, 3000, 1500), absrow(2, 6000, 2500)], file="b.smf")   # overlaps a by one record
    ws = Workspace()
    ws.add(a)
    found = ws.add(b)
    assert list(ws.intervals["B0"]) == [2000.0, 3000.0]
    dup = [f for f in found if f.code == "duplicate-record"]
    assert len(dup) == 1 and dup[0].file == "b.smf" and "a.smf" in dup[0].message


def test_delta_rows_used_as_is_interval_start_from_previous_or_run_start():
    ws = Workspace()
    ws.add(result([dict(time=T0 + MIN15, B0=10, B1=5), dict(time=T0 + 2 * MIN15, B0=20, B1=5)]))
    iv = ws.intervals
    assert list(iv["B0"]) == [10.0, 20.0]
    assert list(iv["interval_start"]) == [T0, T0 + MIN15]


def test_both_kinds_same_interval_uses_delta_row_with_one_finding():
    recs = [absrow(0, 1000, 500), absrow(1, 3000, 1500), absrow(2, 6000, 2500),
            dict(kind="delta", time=T0 + 2 * MIN15, B0=2222, B1=1111)]
    ws = Workspace()
    found = ws.add(result(recs))
    iv = ws.intervals.sort_values("interval_end")
    assert list(iv["B0"]) == [2222.0, 3000.0]
    assert list(iv["kind"].astype(str)) == ["delta", "absolute"]
    assert codes(found).count("both-kinds") == 1


def test_lost_data_marked_kept():
    ws = Workspace()
    found = ws.add(result([dict(time=T0 + MIN15, B0=10, B1=5, lost=True), dict(time=T0 + 2 * MIN15, B0=10, B1=5)]))
    assert list(ws.intervals["quality"].astype(str)) == ["lost-data", ""]
    assert "lost-data" in codes(found)
    assert ws.metrics("lpar").iloc[0]["quality"] == "lost-data"


def test_set_absent_gives_nan_not_zero():
    recs = [dict(time=T0 + MIN15, B0=10, B1=5, P33=3, E143=1),
            dict(time=T0 + 2 * MIN15, B0=10, B1=5, P33=3, E143=1, sets=SET_BASIC)]
    ws = Workspace()
    ws.add(result(recs))
    iv = ws.intervals
    assert iv["P33"].iloc[0] == 3.0 and np.isnan(iv["P33"].iloc[1]) and np.isnan(iv["E143"].iloc[1])
    m = ws.metrics("cpu")
    assert np.isnan(m["PRBSTATE"].iloc[1]) and m["CPI"].iloc[1] == 2.0


def test_sets_change_in_absolute_run_is_a_gap():
    recs = [absrow(0, 1000, 500, P33=10), absrow(1, 3000, 1500, P33=20),
            absrow(2, 6000, 2500, P33=30, sets=SET_BASIC)]
    ws = Workspace()
    found = ws.add(result(recs))
    assert len(ws.intervals) == 1 and "sets-change" in codes(found)


def test_odd_length_interval():
    recs = [dict(time=T0 + MIN15 * i, B0=10, B1=5) for i in range(1, 5)]
    recs.append(dict(time=T0 + MIN15 * 4 + pd.Timedelta(minutes=5), B0=10, B1=5))
    ws = Workspace()
    found = ws.add(result(recs))
    q = ws.intervals.sort_values("interval_end")["quality"].astype(str).tolist()
    assert q == ["", "", "", "", "odd-length"]
    assert "odd-length" in codes(found)


def test_cpu_appears_and_vanishes_info():
    recs = [dict(time=T0 + MIN15 * i, cpu=0, B0=10, B1=5) for i in range(1, 5)]
    recs += [dict(time=T0 + MIN15 * i, cpu=1, B0=10, B1=5) for i in (2, 3)]
    ws = Workspace()
    found = ws.add(result(recs))
    f = {x.code: x for x in found if x.code.startswith("cpu-")}
    assert set(f) == {"cpu-appeared", "cpu-vanished"}
    assert all(x.severity == "info" for x in f.values())


def test_system_moved_between_cecs_and_machine_change():
    # SYSA runs on 3931-123F5 in interval 1, then on another CEC from interval 2: a move, not a clash -> info
    recs = [dict(time=T0 + MIN15, B0=10, B1=5),
            dict(time=T0 + 2 * MIN15, B0=10, B1=5, cec="3931-OTHER", serial="OTHER")]
    ws = Workspace()
    moved = [f for f in ws.add(result(recs)) if f.code == "lpar-moved"]
    assert len(moved) == 1 and moved[0].severity == "info"
    ws2 = Workspace()
    z15 = dict(time=T0 + 3 * MIN15, B0=10, B1=5, machine_type="8561", cfvn=3, csvn=6)
    assert "machine-change" in codes(ws2.add(result([recs[0], z15])))


def test_same_system_on_two_cecs_at_once_is_a_warning():
    # the same SMF id measured on two CECs in the same interval: two LPARs share the id
    recs = [dict(time=T0 + MIN15, B0=10, B1=5),
            dict(time=T0 + MIN15, B0=10, B1=5, cec="3931-OTHER", serial="OTHER")]
    moved = [f for f in Workspace().add(result(recs)) if f.code == "lpar-moved"]
    assert len(moved) == 1 and moved[0].severity == "warning"


def test_generation_selection_findings():
    ws = Workspace()
    found = ws.add(result([dict(time=T0 + MIN15, B0=10, B1=5, csvn=6)]))          # 3931 is z16 but CSVN 6
    assert "csvn-mismatch" in codes(found)
    assert ws.intervals["generation"].iloc[0] == "z16"
    assert "csvn-mismatch" in ws.intervals["quality"].iloc[0]
    ws = Workspace()
    found = ws.add(result([dict(time=T0 + MIN15, B0=10, B1=5, machine_type="9999", csvn=6)]))
    assert "unknown-machine-type" in codes(found) and ws.intervals["generation"].iloc[0] == "z15"
    ws = Workspace()
    found = ws.add(result([dict(time=T0 + MIN15, B0=10, B1=5, B2=1, B4=1, machine_type="9999", csvn=42)]))
    assert "no-formula-set" in codes(found)
    m = ws.metrics("cpu").iloc[0]
    assert m["generation"] == "generic" and m["CPI"] == 2.0 and m["L1MP"] == 40.0 and np.isnan(m["L2P"])


def test_mt_counters_one_cpu_per_core_and_thread_density():
    mt = ALL_SETS | SET_MT
    # two threads of core 3 both report the MT set (z/VM style): only the lower CPU id keeps it
    recs = [dict(time=T0 + MIN15, cpu=6, core=3, sets=mt, B0=10, B1=5, M448=1000, M449=3000),
            dict(time=T0 + MIN15, cpu=7, core=3, sets=mt, B0=10, B1=5, M448=1000, M449=3000)]
    ws = Workspace()
    ws.add(result(recs))
    iv = ws.intervals.sort_values("cpu")
    assert iv["M448"].iloc[0] == 1000.0 and np.isnan(iv["M448"].iloc[1])
    # TD = (1000 + 2*3000)/(1000 + 3000) = 1.75
    assert ws.metrics("lpar").iloc[0]["Thread_Density"] == pytest.approx(1.75)


def test_new_run_start_is_info_finding():
    t1 = T0 + pd.Timedelta(hours=5)
    recs = [absrow(0, 1000, 500), absrow(1, 3000, 1500),
            dict(absrow(0, 10, 5), run_start=t1, time=t1 + MIN15), dict(absrow(1, 20, 10), run_start=t1,
                                                                          time=t1 + 2 * MIN15, first=False)]
    ws = Workspace()
    found = ws.add(result(recs))
    assert "new-run" in codes(found)
    assert list(ws.intervals["B0"]) == [2000.0, 10.0]
