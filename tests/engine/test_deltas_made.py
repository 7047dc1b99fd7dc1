"""DeltaRows.make_all (the fleet extract, issue 24): every interval row's deltas made at once, in any order of the
frame's rows, give exactly the counter columns of the eager ``compute_intervals`` (running totals with resets,
partial sets, first flags, counters cut into frames of any layout, both kinds of the same intervals, MT counters
of a core's other CPUs), read as a view where the rows asked for are consecutive in the order they were made;
and the samples' counter blocks are let go as their deltas are made, a block at a time."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
from factory import ALL_SETS, frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_counter_blocks_column_order import by_column
from test_deltas_consume import blocky, columnar
from test_deltas_fast import KEEP, SETS, recs
from test_deltas_lazy import drawn_pieces

from app.engine.deltas import compute_intervals
from app.formats.schema import SET_MT


def made_same(frames: list[pd.DataFrame], order: np.ndarray | None = None, keep=KEEP) -> pd.DataFrame:
    """The eager frame of copies of ``frames`` against ``make_all(order=order)`` of the lazy call on the frames
    handed over: every row's deltas equal (NaN at the same places), any rows read, and rows consecutive in
    ``order`` read as a view of the block.  Returns the eager frame."""
    exp, _ = compute_intervals([f.copy() for f in frames], SETS, keep)
    start = list(exp.columns).index("qbits") + 1
    want = exp.iloc[:, start:].to_numpy(dtype=np.float64)
    handed = list(frames)
    _, _, later = compute_intervals(handed, SETS, keep, consume=True, lazy=True)
    calls = []
    later.make_all(released=lambda: calls.append(1), order=order)
    assert later.made and (calls or not len(exp) or not want.shape[1])
    np.testing.assert_array_equal(later.rows(slice(None)), want)
    for idx in (np.arange(len(exp))[::-1], np.arange(len(exp))[1::3]):
        got = later.rows(idx)
        np.testing.assert_array_equal(got, want[idx])
        assert all(got[:, j].flags.c_contiguous for j in range(got.shape[1]))
    if len(exp) > 2 and want.shape[1]:
        o = np.arange(len(exp)) if order is None else np.concatenate(
            (order, np.setdiff1d(np.arange(len(exp)), order)))
        part = later.rows(o[1:3])           # consecutive in the block: a view of it, not a copy
        np.testing.assert_array_equal(part, want[o[1:3]])
        assert part.base is not None and np.shares_memory(part, later.rows(o[1:2]))
        at, view = later.made_rows(1, 3)
        np.testing.assert_array_equal(at, o[1:3])
        np.testing.assert_array_equal(view, want[o[1:3]])
    return exp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_drawn_running_totals_made_in_any_order(data):
    parts, layouts = drawn_pieces(data, [columnar, blocky, by_column])
    exp, _ = compute_intervals([p.copy() for p in parts], SETS, KEEP)
    order = None
    if len(exp) and data.draw(st.booleans(), label="an order"):
        perm = data.draw(st.permutations(range(len(exp))), label="order")
        order = np.array(perm[:data.draw(st.integers(0, len(exp)), label="written")], np.int64)
    made_same([lay(p) for lay, p in zip(layouts, parts)], order)


def test_both_kinds_and_mt_counters_made():
    d = recs(4, kind="delta")
    a = recs(6, kind="absolute")
    a[0]["first"] = a[1]["first"] = True
    exp = made_same([frame(d + a)], np.arange(12)[::-1].copy())
    assert len(exp) == 12          # 2 CPUs x 4 delta intervals + 2 x 2 running totals (test_deltas_lazy's count)
    r = recs(4, cpus=(0, 1, 2, 3), sets=ALL_SETS | SET_MT, M448=100, M449=50)
    for x in r:
        x["core"] = x["cpu"] // 2
    r[4]["mt_lost"] = True
    exp = made_same([by_column(frame(r))], np.array([5, 0, 9]), keep=None)
    assert exp["M448"].isna().sum() == 2 * 4 + 1     # CPUs 1 and 3 in 4 intervals, CPU 0's lost MT data once


def test_blocks_let_go_one_at_a_time():
    """Counters in blocks of 8 in column order (the SMF reader's for the extract): after the deltas of a block's
    counters are made its block is freed, before the next block's are made; all of them once made."""
    f = by_column(frame(recs(6, cpus=(0, 1, 2), kind="absolute")))
    blocks = []
    for b in f._mgr.blocks:
        if not set(f.columns[b.mgr_locs.indexer]) & KEEP:
            continue                    # counters the step does not read (not kept)
        v = b.values
        while isinstance(getattr(v, "base", None), np.ndarray):
            v = v.base
        if isinstance(v, np.ndarray) and v.dtype == np.uint64 and v.ndim == 2:
            blocks.append(weakref.ref(v))
    assert len(blocks) >= 2             # KEEP's counters the factory makes: more than a block of 8
    handed = [f]
    del f
    _, _, later = compute_intervals(handed, SETS, KEEP, consume=True, lazy=True)
    gc.collect()
    assert all(r() is not None for r in blocks)         # held by the step until its deltas are made
    alive = []
    later.TRIM_BYTES = 0                # ``released`` after every block
    later.make_all(released=lambda: alive.append(sum(r() is not None for r in blocks)))
    # a call before the first group (the setup's temporaries handed back: every block still held), then a call a
    # group of counters (a block's, and one of the counters no frame has): the first block freed after the
    # first group, one fewer after each block's group (all but at most one: the last block's group)
    assert alive[0] == len(blocks), alive
    alive = alive[1:]
    assert alive[0] == len(blocks) - 1 and alive[-1] <= 1, alive
    assert all(b <= a for a, b in zip(alive, alive[1:])) and set(range(1, len(blocks))) <= set(alive)
