"""Property tests: deltas are never negative, sums are conserved within runs, levels agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
from factory import MIN15, T0, result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import Workspace

steps = st.lists(st.tuples(st.booleans(), st.integers(0, 10**9), st.integers(1, 10**8)), min_size=2, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_deltas_never_negative_and_conserved(seq):
    """Running totals with random resets: every delta >= 0 and their sum is the growth within runs."""
    recs, b0, b1, expect = [], 0, 0, 0
    prev0 = prev1 = 0
    for i, (reset, inc0, inc1) in enumerate(seq):
        if reset and i:
            b0, b1 = inc0 // 2, inc1 // 2              # counters restart (reset) -> the interval is a gap
            if b0 >= prev0 and b1 >= prev1:
                expect += b0 - prev0                   # nothing went backwards: a normal interval after all
        else:
            b0, b1 = b0 + inc0, b1 + inc1
            if i:
                expect += inc0
        recs.append(dict(kind="absolute", first=(i == 0), time=T0 + MIN15 * (i + 1), B0=b0, B1=b1))
        prev0, prev1 = b0, b1
    ws = Workspace(keep_implausible=True)    # arbitrary increments, not physical ones (e.g. B1 > 8 x B0): kept
    ws.add(result(recs))
    iv = ws.intervals
    assert (iv["B0"] >= 0).all() and (iv["B1"] >= 0).all() if len(iv) else True
    assert float(iv["B0"].sum()) == float(expect)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**12), st.integers(1, 10**11)), min_size=1, max_size=6))
def test_levels_are_ratios_of_sums(cpus):
    recs = [dict(cpu=i, time=T0 + MIN15, B0=b0, B1=b1, B2=b1 // 50, B4=b1 // 25) for i, (b0, b1) in enumerate(cpus)]
    ws = Workspace(keep_implausible=True)    # arbitrary counts (IPC up to 10^11): kept, the sums are the point
    ws.add(result(recs))
    s0 = sum(b0 for b0, _ in cpus)
    s1 = sum(b1 for _, b1 in cpus)
    for by in ("interval", "lpar", "cec", "cec_interval"):
        r = ws.metrics(by).iloc[0]
        assert np.isclose(r["CPI"], s0 / s1, rtol=1e-12)
    lp = ws.metrics("lpar").iloc[0]["LPARCPU"]
    per = ws.metrics("cpu")["LPARCPU"].sum()
    assert np.isclose(lp, per, rtol=1e-12)


def test_first_delta_record_without_run_start_uses_usual_length():
    recs = [dict(run_start=pd.NaT, time=T0 + MIN15 * i, B0=10, B1=5) for i in (1, 2, 3)]
    ws = Workspace()
    ws.add(result(recs))
    assert list(ws.intervals["interval_s"]) == [900.0, 900.0, 900.0]
