"""What the level computations hold (issue 23, the month's workbook under 600 MB): the formulas read the aggregated
columns themselves (no block copied out of them), the metrics are one block, and the per-row frames the levels
keep share their arrays (the frame's own columns; the speeds and row numbers one array for both bucket columns).
Every value stays what it was: the references below are the former copies, computed on their own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.engine import aggregate as agg_mod
from app.engine.aggregate import aggregate
from app.engine.metrics import _apply, _floats, evaluate_set, hint_counters, metric_ids


def test_floats_are_the_frames_own_columns():
    # hand-built: a float64 block (B0, B1), an int64 column (CPSP as integer MHz) and a categorical
    df = pd.DataFrame({"B0": [10.0, 30.0], "B1": [5.0, 10.0], "CPSP": np.array([5000, 5200], dtype=np.int64),
                       "generation": pd.Categorical(["z16", "z16"])})
    got = _floats(df, ["B0", "B1", "CPSP"])
    assert list(got) == ["B0", "B1", "CPSP"]
    np.testing.assert_array_equal(got["B0"], [10.0, 30.0])
    np.testing.assert_array_equal(got["B1"], [5.0, 10.0])
    np.testing.assert_array_equal(got["CPSP"], [5000.0, 5200.0])     # converted: 5000 MHz -> 5000.0
    assert got["CPSP"].dtype == np.float64
    for c in ("B0", "B1"):      # float64 columns are the frame's arrays, not copies
        assert np.shares_memory(got[c], df[c].to_numpy())
    assert _floats(df, []) == {}


def test_floats_of_a_frame_with_a_name_twice_reads_the_public_columns():
    df = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["B0", "B0", "B1"])
    got = _floats(df, ["B1"])
    np.testing.assert_array_equal(got["B1"], [3.0])


@pytest.fixture(scope="module")
def z15(sample_result):
    ws = Workspace(cache=False)
    ws.add(sample_result("before_z15_ZOSA_smf113.rdw.gz"))
    return ws


def test_metrics_equal_the_formulas_on_a_copy_of_the_sums(z15):
    iv, sets, counters = z15.intervals, z15.formula_sets, list(z15.counters)
    hc = hint_counters(sets, counters)
    agg = aggregate(iv, "lpar_interval", counters, hc)
    ids = metric_ids(sets)
    got = _apply(agg, sets, ids, counters, True)
    assert list(got.columns) == ids + ["Workload_Hint"]
    assert got[ids]._mgr.nblocks == 1                      # the metrics are one block (no stacking copy)
    # reference: every formula set evaluated on its own copies of the summed columns (the former block copy)
    gen = agg["generation"].astype(object).to_numpy()
    checked = 0
    for g in pd.unique(gen):
        fs = sets[g]
        rows = np.flatnonzero(gen == g)
        sub = agg.iloc[rows]
        env = {c: sub[c].to_numpy(dtype=np.float64, copy=True)
               for c in [c for c in fs.counters() if c in sub.columns] + ["CPSP", "INTERVAL"]}
        for mid, v in evaluate_set(fs, env, len(rows)).items():
            if mid in ids:
                np.testing.assert_array_equal(got[mid].to_numpy()[rows], v, err_msg=mid)
                checked += 1
    assert checked > 20
    # CPI by hand on the first row: B0 / B1 of the summed counters (cycles per instruction)
    b0, b1 = float(agg["B0"].iloc[0]), float(agg["B1"].iloc[0])
    assert got["CPI"].iloc[0] == pytest.approx(b0 / b1, rel=1e-12)


def test_kept_row_frames_share_the_frames_arrays(z15, monkeypatch):
    monkeypatch.setattr(agg_mod, "_ROWS_MIN", 0)            # keep them for the sample's 2,304 rows too
    iv = z15.intervals.copy()
    counters = list(z15.counters)
    aggregate(iv, "lpar", counters)                        # buckets: bucket
    aggregate(iv, "cec", counters)                         # buckets: cec_bucket
    rows = agg_mod._row_arrays(iv)
    a, c = rows._items[("aux", "bucket")], rows._items[("aux", "cec_bucket")]
    for col in ("_cpsp_max", "_row", "_ivs", "_start", "_end"):       # one array for both bucket columns
        assert np.shares_memory(a[col].to_numpy(), c[col].to_numpy()), col
    assert np.shares_memory(a["_ivs"].to_numpy(), iv["interval_s"].to_numpy())     # the frame's own columns
    assert np.shares_memory(a["_blen"].to_numpy(), iv["bucket_s"].to_numpy())
    assert np.shares_memory(c["_blen"].to_numpy(), iv["cec_bucket_s"].to_numpy())
    np.testing.assert_array_equal(a["_row"].to_numpy(), np.arange(len(iv)))
    np.testing.assert_array_equal(a["_cpsp_max"].to_numpy(), iv["cpu_speed"].to_numpy(dtype=np.float64))
    busy_us, bf = rows._items["busy"]
    extra = rows._items[("extra", ())]
    assert np.shares_memory(extra["_busy_us"].to_numpy(), busy_us)
    assert np.shares_memory(extra["_bf"].to_numpy(), bf)
    agg_mod.forget_rows(iv)
