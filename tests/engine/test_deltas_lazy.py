"""compute_intervals(lazy=True) (the fleet extract, issue 24): no counter columns are made, and the deltas it gives
for any rows later (:class:`app.engine.counter_blocks.DeltaRows`) are exactly the counter columns of the frame the
eager call makes, with the same identity columns and findings: on running totals with resets, partial sets and
first flags drawn by hypothesis (cut into frames of either layout), on both kinds of the same intervals (rows
dropped after the deltas are made), on MT counters of a core's other CPUs and of lost MT data, on CFVN/CSVN
versions that install fewer counters, and on the bundled sample files; read whole, in any order, or in pieces."""

from __future__ import annotations

import numpy as np
import pandas as pd
from factory import ALL_SETS, frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_deltas_consume import blocky, columnar, records
from test_deltas_fast import KEEP, ROOT, SETS, recs

from app.engine.counter_blocks import DeltaRows
from app.engine.deltas import compute_intervals
from app.formats.schema import SET_MT, is_counter_column


def lazy_same(frames: list[pd.DataFrame], keep=KEEP, pick: np.ndarray | None = None) -> pd.DataFrame:
    """The eager frame of copies of ``frames`` against the lazy call on other copies (handed over, as the extract
    does): the same identity columns and findings, and ``rows`` of every row (and of ``pick``) equal to the
    eager counter columns, NaN where they are NaN.  Returns the eager frame."""
    exp, ef = compute_intervals([f.copy() for f in frames], SETS, keep)
    handed = [f.copy() for f in frames]
    ident, gf, later = compute_intervals(handed, SETS, keep, consume=True, lazy=True)
    assert handed == [] and isinstance(later, DeltaRows)
    assert gf == ef
    start = list(exp.columns).index("qbits") + 1
    counters = list(exp.columns[start:])
    assert later.counters == counters and later.n == len(exp)
    assert list(ident.columns) == list(exp.columns[:start])        # no counter column made
    pd.testing.assert_frame_equal(ident, exp.iloc[:, :start], check_exact=True)
    want = exp[counters].to_numpy(dtype=np.float64) if counters else np.zeros((len(exp), 0))
    got = later.rows(slice(None))
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_array_equal(got, want)                          # NaN at the same places
    assert all(got[:, j].flags.c_contiguous for j in range(got.shape[1]))   # each counter contiguous
    for idx in ([pick] if pick is not None else []) + [np.arange(len(exp))[::-1], np.arange(len(exp))[1::3]]:
        np.testing.assert_array_equal(later.rows(idx), want[idx])
    return exp


def drawn_pieces(data, layouts) -> tuple[list[pd.DataFrame], list]:
    """Drawn running totals or deltas of 1-4 CPUs over 2-6 intervals, cut into up to 4 frames, each with a layout
    drawn from ``layouts`` (functions giving a frame's counters in another memory layout): (frames, layouts)."""
    n, cpus = data.draw(st.integers(2, 6), label="intervals"), data.draw(st.integers(1, 4), label="cpus")
    f = frame(records(data, n, cpus, data.draw(st.booleans(), label="running totals")))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(f) - 1), max_size=3), label="cuts")) if len(f) > 1 else []
    parts = [f.iloc[a:b].reset_index(drop=True) for a, b in zip([0, *cuts], [*cuts, len(f)])]
    return parts, [data.draw(st.sampled_from(layouts), label=f"layout {i}") for i in range(len(parts))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_drawn_running_totals_and_deltas_in_pieces(data):
    parts, layouts = drawn_pieces(data, [columnar, blocky])
    exp, _ = compute_intervals([p.copy() for p in parts], SETS, KEEP)
    pick = np.array(data.draw(st.lists(st.integers(0, max(0, len(exp) - 1)), max_size=8), label="rows"),
                    np.int64) if len(exp) else None
    lazy_same([lay(p) for lay, p in zip(layouts, parts)], pick=pick)


def test_both_kinds_rows_dropped_after_the_deltas():
    d = recs(4, kind="delta")
    a = recs(6, kind="absolute")
    a[0]["first"] = a[1]["first"] = True
    exp = lazy_same([frame(d + a)])
    # 2 CPUs: 4 delta intervals each (ending at steps 1-4), and 5 running-total intervals each (ending at steps
    # 2-6: the first record is a baseline) of which the 3 ending at steps 2-4 are dropped (the delta rows are
    # used): 2 x 4 + 2 x 2 = 12 rows
    assert len(exp) == 12
    lazy_same([frame(d), frame(a)])


def test_mt_counters_of_a_cores_other_cpus_and_lost_mt_data():
    r = recs(4, cpus=(0, 1, 2, 3), sets=ALL_SETS | SET_MT, M448=100, M449=50)
    for x in r:
        x["core"] = x["cpu"] // 2
    r[4]["mt_lost"] = True     # CPU 0's second record (records go CPU 0-3 per interval)
    exp = lazy_same([frame(r)], keep=None)
    # per core the lowest CPU keeps its MT counters (CPUs 1 and 3 NaN in all 4 intervals), and CPU 0's lost one
    assert exp["M448"].isna().sum() == 2 * 4 + 1


def test_versions_that_install_fewer_counters():
    r = recs(3, cpus=(0, 1))
    for x in r[::2]:
        x["csvn"] = 1          # CSVN 1: fewer extended counters installed than the z16's
    lazy_same([frame(r)], keep=None)


def test_bundled_samples():
    from app.formats import read_file

    frames = [read_file(p).samples for p in sorted((ROOT / "resources" / "samples").glob("*.gz"))]
    exp = lazy_same(frames)
    assert len(exp) and any(is_counter_column(c) for c in exp.columns)
    for f in frames:
        lazy_same([f])
