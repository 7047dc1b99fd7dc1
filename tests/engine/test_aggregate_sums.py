"""The counter sums of ``aggregate``: summed a block of columns at a time, and the workload hint's sums (over the
rows without lost data) taken from the counter sums when no row lost data: each column exactly what one pandas
groupby sum of the whole frame gives (hand reference below), whichever rows lost data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import Workspace, aggregate as agg_mod
from app.engine.aggregate import aggregate
from app.engine.metrics import hint_counters


@pytest.fixture(scope="module")
def z15(sample_result):
    ws = Workspace(cache=False)
    ws.add(sample_result("before_z15_ZOSA_smf113.rdw.gz"))
    hc = hint_counters(ws.formula_sets, ws.counters)
    assert hc                     # z15 has an RNI formula: the hint reads L1MP's and RNI's counters
    return ws.intervals.reset_index(drop=True), list(ws.counters), hc


def _reference(iv: pd.DataFrame, level_keys: list[str], counters: list[str], hc: list[str]) -> pd.DataFrame:
    """One groupby sum over the whole frame (the rule: a sum per column, NaN where a group has no value); the
    hint's sums over the rows whose quality bit 1 (lost data) is clear."""
    lost = (iv["qbits"].to_numpy(dtype=np.int64) & 1) != 0
    f = iv[level_keys + counters].copy()
    for c in hc:
        f["_h_" + c] = np.where(lost, np.nan, iv[c].to_numpy(dtype=np.float64))
    return f.groupby(level_keys, sort=True, observed=True).sum(min_count=1).reset_index()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lost=st.lists(st.integers(0, 10_000), max_size=40), cols=st.integers(4, 40))
def test_sums_by_blocks_and_hint_sums_equal_one_groupby(z15, lost, cols, monkeypatch):
    iv, counters, hc = z15
    iv = iv.copy()
    if lost:
        q = iv["qbits"].to_numpy(dtype=np.int64).copy()
        q[np.asarray(lost) % len(iv)] |= 1
        iv["qbits"] = q
    monkeypatch.setattr(agg_mod, "_SUM_COLS", cols)        # any block width gives the same sums
    keys = list(agg_mod.LEVEL_KEYS["lpar_interval"][0])            # one LPAR here: its rows in time order
    got = aggregate(iv, "lpar_interval", counters, hc).sort_values(keys + ["interval_start"], ignore_index=True)
    ref = _reference(iv, keys + ["bucket"], counters, hc).sort_values(keys + ["bucket"], ignore_index=True)
    assert len(got) == len(ref) > 100
    for c in counters + ["_h_" + c for c in hc]:
        np.testing.assert_array_equal(got[c].to_numpy(dtype=np.float64), ref[c].to_numpy(dtype=np.float64),
                                      err_msg=c)
    if not lost:                  # nothing lost: the hint's sums are the counters' own
        for c in hc:
            np.testing.assert_array_equal(got["_h_" + c].to_numpy(), got[c].to_numpy())
