"""Issue 23: the tree's levels and the prepared level frames computed together (per-row arrays shared by the
levels of one intervals frame, two threads) give exactly what one level at a time gives."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import Workspace
from app.engine import aggregate as agg
from app.engine.parallel import parallel_map
from app.engine.prepared_levels import SLICED_LEVELS

FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz", "after_VMSYS1_monwrite.mondata.gz"]


@pytest.fixture(scope="module")
def results(sample_result):
    return [sample_result(f) for f in FILES]      # decoded once per test process (tests/conftest.py)


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", None]), st.integers(0, 2)),
                min_size=0, max_size=60))
@settings(max_examples=60, deadline=None)
def test_node_codes_number_groups_in_order_of_appearance(rows):
    # any columns, categorical or not, NaN included: the group numbers groupby(..., sort=False).ngroup() gives
    df = pd.DataFrame(rows, columns=["x", "y", "z"])
    df["y"] = df["y"].astype("category")
    got = agg._node_codes(df, ["x", "y", "z"])
    want = df.groupby(["x", "y", "z"], sort=False, observed=True, dropna=False).ngroup().to_numpy()
    assert np.array_equal(got, want)


@given(st.lists(st.integers(-50, 50), max_size=40), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_parallel_map_is_map_in_order(items, threads):
    import os

    old = os.environ.get("NESTSCOPE_THREADS")
    os.environ["NESTSCOPE_THREADS"] = str(threads)
    try:
        assert parallel_map(lambda x: x * x - 3, items) == [x * x - 3 for x in items]
    finally:
        if old is None:
            os.environ.pop("NESTSCOPE_THREADS")
        else:
            os.environ["NESTSCOPE_THREADS"] = old


def test_parallel_map_raises_after_every_call_ended(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    ended: list[int] = []
    lock = threading.Lock()

    def fn(x: int) -> int:
        if x == 0:
            raise ValueError("item 0")
        with lock:
            ended.append(x)
        return x
    with pytest.raises(ValueError, match="item 0"):
        parallel_map(fn, [0, 1])
    assert ended in ([1], [])        # item 1 ran on the pool (or was never started): nothing left running


def test_levels_together_equal_levels_one_by_one(results, monkeypatch):
    monkeypatch.setattr(agg, "_ROWS_MIN", 1)      # the sample set is small: keep its per-row arrays too
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    together, alone = Workspace(cache=False), Workspace(cache=False)
    together.add_all(results)
    alone.add_all(results)
    wm = together.window_metrics(("cec", "lpar", "class", "cpu_window"))
    assert together.prepare_levels(SLICED_LEVELS)
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    agg._ROWS.clear()
    for lv in ("cec", "lpar", "class", "cpu_window"):
        pd.testing.assert_frame_equal(wm[lv], alone.window_metrics((lv,))[lv], check_exact=True)
    for lv in SLICED_LEVELS:
        assert alone.prepare_level(lv)
        pd.testing.assert_frame_equal(together.metrics(by=lv, summary=True), alone.metrics(by=lv, summary=True),
                                      check_exact=True)
    # and a workspace that never prepared anything computes the same rows from the intervals
    plain = Workspace(cache=False)
    plain.add_all(results)
    for lv in SLICED_LEVELS:
        pd.testing.assert_frame_equal(together.metrics(by=lv, summary=True), plain.metrics(by=lv, summary=True),
                                      check_exact=True)


def test_prepare_levels_reports_what_it_cannot_prepare(results):
    ws = Workspace(cache=False)
    ws.add_all(results)
    assert not ws.prepare_levels(("lpar_interval", "class"))      # "class" is not a sliced level
    assert ws.prepared("lpar_interval")
    assert not ws.prepare_levels(("cec_interval",), cached_only=True)   # no cache: nothing computed
    assert not ws.prepared("cec_interval")


def test_parallel_map_inside_parallel_map_ends(monkeypatch):
    """An item that itself calls parallel_map (the workspace computes intervals beside the records' UTC offsets,
    and the intervals copy their counters with parallel_map) ends wherever it runs: on the pool thread its inner
    call cannot wait for that same busy thread.  Run on a thread of its own, so a deadlock fails the test
    instead of hanging the run."""
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    got: list = []

    def outer(x: int) -> list[int]:
        return parallel_map(lambda y: x * 10 + y, range(5))

    def run() -> None:
        for _ in range(20):         # either thread may take either item: both placements come up
            got.append(parallel_map(outer, [1, 2]))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), "nested parallel_map did not end"
    assert got == [[[10, 11, 12, 13, 14], [20, 21, 22, 23, 24]]] * 20


def test_pools_prepared_beside_the_levels_equal_pools_prepared_after(results, monkeypatch):
    """prepare_levels with "pool" and levels still to compute: the pools' rows are one more item of the levels'
    parallel_map (issue 23: the window's idle job had them after the levels, one core idle), computed once,
    and equal to prepare_pools' own rows in a workspace that prepared the levels first."""
    import app.engine.node_rows as nr
    import app.engine.prepared_levels as wsm

    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    inside, calls = [], []
    real_map, real_pools = wsm.parallel_map, nr.pool_level_frame

    def spy_map(fn, items):
        inside.append(True)
        try:
            return real_map(fn, items)
        finally:
            inside.pop()

    def spy_pools(*a, **k):
        calls.append(bool(inside))
        return real_pools(*a, **k)
    monkeypatch.setattr(wsm, "parallel_map", spy_map)
    monkeypatch.setattr(nr, "pool_level_frame", spy_pools)
    together = Workspace(cache=False)
    together.add_all(results)
    assert together.prepare_levels(("class_interval", "cec_interval", "pool"))
    assert calls == [True]       # once, inside the levels' parallel_map
    monkeypatch.setattr(wsm, "parallel_map", real_map)
    after = Workspace(cache=False)
    after.add_all(results)
    assert after.prepare_levels(("class_interval", "cec_interval"))
    assert after.prepare_pools()
    assert calls == [True, False]
    key = ("pool", "None", "None")
    pd.testing.assert_frame_equal(together._lv[key].frame, after._lv[key].frame, check_exact=True)
    # a second call finds everything prepared: nothing computed again
    assert together.prepare_levels(("class_interval", "cec_interval", "pool"))
    assert calls == [True, False]
