"""``views.profile`` computes every hour / weekday bucket in one grouped pass: its frames must be those of the
per-bucket loop it replaced (kept here as the reference: one ``level_metrics`` call per bucket of the interval
midpoints, in the same zone), on the bundled samples, on a local-time file across the Berlin switch and on small
hypothesis-built frames."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factory import MIN15, T0, result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tz_builders as T  # noqa: E402

from app.engine import Workspace  # noqa: E402
from app.engine.metrics import level_metrics  # noqa: E402
from app.engine.views import _IDENT, _WINDOW_LEVEL, PROFILES, WEEKDAYS, _midpoints, _rows, profile  # noqa: E402


def loop_profile(ws, by="hour", level="lpar", start=None, end=None, nodes=None, shift=None, tz="utc"):
    """The per-bucket profile (before the one-pass change): one aggregation per hour / weekday bucket."""
    rows = _rows(ws, start, end, nodes, shift)
    cols = ["weekday"] * (by != "hour") + ["hour"] * (by != "weekday")
    mid = _midpoints(rows, ws, tz)
    hour, day = mid.hour.to_numpy(), mid.day_of_week.to_numpy()
    key = hour if by == "hour" else day if by == "weekday" else day * 24 + hour
    frames = []
    for k in np.unique(key):
        m = level_metrics(rows.loc[key == k], ws.formula_sets, ws.counters, _WINDOW_LEVEL[level])
        m = m.drop(columns=["summary"], errors="ignore")
        if by != "weekday":
            m.insert(0, "hour", int(k % 24) if by == "hour-weekday" else int(k))
        if by != "hour":
            m.insert(0, "weekday", WEEKDAYS[int(k // 24) if by == "hour-weekday" else int(k)])
        frames.append(m)
    out = pd.concat(frames, ignore_index=True)
    ident = [c for c in _IDENT if c in out.columns]
    order = {d: i for i, d in enumerate(WEEKDAYS)}
    sort = out.assign(_d=out["weekday"].map(order) if "weekday" in out.columns else 0)
    sort = sort.sort_values(ident + ["_d"] + (["hour"] if "hour" in out.columns else []), kind="stable")
    return sort.drop(columns="_d").reset_index(drop=True)[[*cols, *[c for c in out.columns if c not in cols]]]


def same(ws, **kw):
    got, want = profile(ws, **kw), loop_profile(ws, **kw)
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want) and len(got) > 0
    # identity, bucket and every metric: the same sums in the same order give the same floats (rel 1e-12 for the
    # float summation order of pandas' grouped sums)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=0)
    for c in ("hour", "n_cpus", "left_out"):
        if c in got.columns:
            assert np.array_equal(got[c].to_numpy(np.int64), want[c].to_numpy(np.int64)), c
    return got


@pytest.fixture(scope="module")
def samples(sample_result):
    w = Workspace()
    w.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_z16_ZOSB_smf113.vbs.gz"),
               sample_result("after_VMSYS1_monwrite.mondata.gz")])
    return w


@pytest.mark.parametrize("level", ["cec", "lpar", "class"])
@pytest.mark.parametrize("by", PROFILES)
def test_one_pass_equals_the_bucket_loop_on_the_samples(samples, by, level):
    got = same(samples, by=by, level=level)
    assert "_profile_bucket" not in samples.intervals.columns          # the bucket column is the copy's alone
    # LPARCPU of a bucket: its busy over its time (the z/VM CEC holds 1-minute intervals in 15-minute buckets)
    assert got["LPARCPU"].notna().any()


def test_one_pass_equals_the_loop_for_a_node_and_a_window(samples):
    iv = samples.intervals
    start, end = iv["interval_end"].min(), iv["interval_end"].max() - pd.Timedelta(hours=5)
    same(samples, by="hour-weekday", level="class", start=start, end=end, nodes=[("lpar", "3931-123F5", "ZOSA")])


@pytest.fixture(scope="module")
def berlin(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tz-prof")
    ws = Workspace()
    ws.add(T.read(T.write_zos(tmp, T.zos_samples())))
    return ws


@pytest.mark.parametrize("by", PROFILES)
def test_one_pass_equals_the_loop_in_local_time(berlin, by):
    got = same(berlin, by=by, level="lpar", tz="local")
    if by == "hour":
        # 3 days of 15-minute intervals: every local hour has intervals (the switch day has 23 hours)
        assert sorted(got["hour"]) == list(range(24))
    utc = profile(berlin, by=by, level="lpar")
    assert not utc[["LPARCPU"]].equals(got[["LPARCPU"]]) or by == "weekday"


_rec = st.tuples(st.sampled_from(["SYSA", "SYSB"]), st.sampled_from(["GCP", "zIIP"]), st.integers(0, 2),
                 st.integers(1, 400), st.integers(1, 10**9), st.integers(1, 10**8))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.lists(_rec, min_size=1, max_size=40), st.sampled_from(PROFILES), st.sampled_from(["cec", "lpar", "class"]))
def test_one_pass_equals_the_loop_on_built_frames(recs, by, level):
    """Any CPUs of two LPARs, two classes and 15-minute intervals over four days (hours and weekdays mixed)."""
    seen = set()
    rows = []
    for lpar, cls, cpu, step, b0, b1 in recs:
        cpu = cpu + (10 if cls == "zIIP" else 0)            # a CPU number has one class
        if (lpar, cpu, step) in seen:
            continue
        seen.add((lpar, cpu, step))
        rows.append(dict(lpar=lpar, system=lpar, cpu=cpu, time=T0 + MIN15 * step, B0=b0, B1=b1, B2=b1 // 50,
                         B4=b1 // 25, **{"class": cls}))
    ws = Workspace(keep_implausible=True)    # arbitrary counts: kept, the sums are the point
    ws.add(result(rows))
    same(ws, by=by, level=level)
