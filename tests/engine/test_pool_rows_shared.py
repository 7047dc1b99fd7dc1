"""The tree's pool rows (issue 23): computed with the other levels on the pool threads, sharing the intervals'
per-row arrays (``aggregate.share_rows``) and counting each pool's LPARs on category codes.  None of it may
change a number: the references below are the computations without the sharing (``share_rows`` a no-op) and
the former ``groupby(...).nunique()`` of the LPARs."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from app.engine import Workspace, aggregate, views
from app.engine.aggregate import _row_arrays, share_rows
from app.engine.node_rows import window_frame

FILES = ("after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz", "after_z16_ZOSC_smf113.bdw.gz",
         "after_VMSYS1_monwrite.mondata.gz")


def _ws(sample_result) -> Workspace:
    w = Workspace(cache=False)
    w.add_all([sample_result(n) for n in FILES])
    return w


def test_shared_rows_give_the_other_frames_arrays_but_own_node_codes():
    of = pd.DataFrame({"x": np.arange(aggregate._ROWS_MIN, dtype=np.float64)})
    frame = of.copy(deep=False)
    share_rows(frame, of)
    busy = _row_arrays(of).get("busy", lambda: "of's busy")
    assert _row_arrays(frame).get("busy", lambda: "frame's busy") is busy           # the same object
    assert _row_arrays(frame).get(("bucket", "bucket"), lambda: "b") == "b"
    assert _row_arrays(of).get(("bucket", "bucket"), lambda: "other") == "b"        # computed once, for both
    assert _row_arrays(frame).get(("node", ("cec",)), lambda: "frame's") == "frame's"
    assert _row_arrays(of).get(("node", ("cec",)), lambda: "of's") == "of's"        # node codes: each its own
    assert _row_arrays(frame).get("cpu_uid", lambda: 1) == 1
    assert _row_arrays(of).get("cpu_uid", lambda: 2) == 2


def test_an_array_asked_by_two_threads_at_once_is_computed_once():
    """The levels computed on two threads ask for the same arrays at the same moment: one computes, the other
    waits for it (the work is not done twice)."""
    rows = aggregate._RowArrays()
    calls, inside, asked = [], threading.Event(), threading.Event()

    def compute():
        calls.append(1)
        inside.set()
        asked.wait(5)
        time.sleep(0.05)          # the other thread is inside get meanwhile
        return "busy"

    other = []
    t = threading.Thread(target=lambda: other.append(rows.get("busy", compute)))
    t.start()
    inside.wait(5)
    asked.set()
    mine = rows.get("busy", compute)
    t.join(5)
    assert mine == "busy" and other == ["busy"]
    assert len(calls) == 1


@pytest.mark.parametrize("levels_first", [True, False])
def test_pool_rows_equal_those_without_shared_arrays(sample_result, monkeypatch, levels_first):
    monkeypatch.setattr(aggregate, "_ROWS_MIN", 0)          # the samples' rows are kept as a month's would be
    ws = _ws(sample_result)
    if levels_first:      # the intervals' arrays computed by the tree's levels before the pools use them
        ws.window_metrics(("class", "cpu_window"))
    shared = views.pool_levels(ws, ("class_interval", "class"))
    monkeypatch.setattr(views, "share_rows", lambda frame, of: None)
    alone = views.pool_levels(_ws(sample_result), ("class_interval", "class"))
    for a, b in zip(shared, alone, strict=True):
        assert len(a)
        assert_frame_equal(a, b, check_exact=True)


def test_tree_pool_and_core_values_equal_the_frames_computed_alone(sample_result):
    ws = _ws(sample_result)
    roots = ws.tree()
    ref = _ws(sample_result)
    pools, cores = window_frame(ref, "pool"), window_frame(ref, "core")
    # one z16 CEC: GCP and zIIP of ZOSA/B/C, IFL of z/VM; SMT cores: z/VM's 2 IFL cores, ZOSC's 4 zIIP cores
    assert list(pools["class"]) == ["GCP", "IFL", "zIIP"] and list(pools["n_lpars"]) == [3, 1, 3]
    assert len(cores) == 6
    assert_frame_equal(ws.window_metrics(("pool",))["pool"], pools, check_exact=True)
    assert_frame_equal(ws.window_metrics(("core",))["core"], cores, check_exact=True)
    got = {n.key: n.info["busy"] for r in roots for n in r.children if n.level == "pool"}
    want = {("pool", str(c), str(t)): float(b) for c, t, b in zip(pools["cec"], pools["class"], pools["LPARCPU"])}
    assert got == want


_names = st.sampled_from(["A", "B", None])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_names, st.sampled_from(["L1", "L2", "L3", None]),
                          st.sampled_from(["CP", "GCP", "zIIP", "IFL", None])), min_size=1, max_size=40))
def test_pool_lpars_count_like_groupby_nunique(rows):
    """Any rows (missing CEC, LPAR or class included): the LPARs per CEC and pool type as ``groupby.nunique``."""
    cec, lpar, cls = zip(*rows)
    frame = pd.DataFrame({"cec": pd.Categorical(cec, categories=["B", "A", "C"]),
                          "lpar": pd.Categorical(lpar, categories=["L1", "L2", "L3", "L9"]),
                          "class": pd.Categorical(cls, categories=["CP", "GCP", "zIIP", "IFL", "ICF"])})
    pool = views._pool_classes(frame["class"])
    want = (pd.DataFrame({"cec": frame["cec"].to_numpy(), "class": pool, "lpar": frame["lpar"].to_numpy()})
            .groupby(["cec", "class"], observed=True)["lpar"].nunique().rename("n_lpars").reset_index()
            .astype({"cec": object, "class": object}))
    got = views._pool_lpars(frame, pool)
    key = ["cec", "class"]       # rows merged on the keys: their order does not matter
    assert_frame_equal(got.sort_values(key, ignore_index=True), want.sort_values(key, ignore_index=True))
