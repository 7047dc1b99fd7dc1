"""Counters held as blocks in column order (the SMF reader's for the extract since issue 24: each counter's values adjacent, blocks
of at most 8 counters, a frame possibly a slice of longer blocks, as a chunk's frame is once its last time is
carried) are read by :class:`app.engine.counter_blocks.SampleCounters` as the same values as a row-order block
(a decoder's layout before) or columns of their own: any rows, one frame or several; and ``compute_intervals``
gives the same intervals, eager and lazy, on the bundled sample files in either layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_deltas_consume import blocky
from test_deltas_fast import KEEP, ROOT, SETS

from app.engine.counter_blocks import SampleCounters
from app.engine.deltas import compute_intervals
from app.formats import read_bytes
from app.formats.schema import is_counter_column


def by_column(f: pd.DataFrame, group: int = 8, pad: int = 0) -> pd.DataFrame:
    """``f`` with its counters as blocks of ``group`` in column order, each ``pad`` rows longer than the frame
    (the frame a slice of them)."""
    names = [c for c in f.columns if is_counter_column(c)]
    vals = f[names].to_numpy(dtype=np.uint64)
    n = len(f)
    parts = [f.drop(columns=names)]
    for g in range(0, len(names), group):
        block = np.full((len(names[g:g + group]), n + pad), 7, np.uint64)
        block[:, :n] = vals[:, g:g + group].T
        parts.append(pd.DataFrame(block.T, columns=names[g:g + group], copy=False).iloc[:n])
    return pd.concat(parts, axis=1)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 20), group=st.integers(1, 9), pad=st.integers(0, 5),
       cut=st.integers(0, 40), seed=st.integers(0, 2**31), data=st.data())
def test_column_order_blocks_read_as_row_order(n, k, group, pad, cut, seed, data):
    rng = np.random.default_rng(seed)
    names = [f"B{i}" for i in range(min(k, 6))] + [f"E{128 + i}" for i in range(k - min(k, 6))]
    vals = rng.integers(0, 2**64 - 1, (n, k), dtype=np.uint64)
    f = pd.concat([pd.DataFrame({"cpu": np.arange(n, dtype=np.int32)}),
                   pd.DataFrame(vals, columns=names, copy=False)], axis=1)
    cut = min(cut, n)
    asked = names + ["E200"]                                   # a counter no frame has: 0
    want = np.concatenate([vals, np.zeros((n, 1), np.uint64)], axis=1)
    rows = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=30)), np.int64)
    frames = [by_column(f, group, pad)] if not cut else [by_column(f.iloc[:cut].reset_index(drop=True), group, pad),
                                                         blocky(f.iloc[cut:].reset_index(drop=True))]
    got = SampleCounters(frames, asked).full(rows)
    np.testing.assert_array_equal(got, want[rows])
    for js, M in SampleCounters(frames, asked).blocks(rows):
        np.testing.assert_array_equal(M, want[rows][:, js])


def test_a_column_order_block_is_one_group_of_rows():
    """Its counters gathered together (a row's values taken from each counter's memory), not one by one: the
    frame is no frame of separate columns (``column_groups`` None: the row path)."""
    vals = np.arange(30, dtype=np.uint64).reshape(10, 3)
    f = by_column(pd.DataFrame(vals, columns=["B0", "B1", "B2"]), group=8, pad=4)
    C = SampleCounters([f], ["B0", "B1", "B2"])
    groups, _missing = C.parts[0]
    assert len(groups) == 1 and groups[0][0].shape == (10, 3)
    assert C.column_groups(2) is None


@pytest.mark.parametrize("path", sorted((ROOT / "resources" / "samples").glob("*smf113*")), ids=lambda p: p.name)
def test_sample_intervals_the_same_in_either_layout(path):
    f = read_bytes(path.read_bytes(), str(path), by_column=True).samples        # the extract's read
    assert all(f[c].to_numpy().flags.c_contiguous for c in f.columns if is_counter_column(c))
    exp, ef = compute_intervals([blocky(f)], SETS, KEEP)
    got, gf = compute_intervals([f.copy()], SETS, KEEP)
    pd.testing.assert_frame_equal(got, exp, check_exact=True)
    assert gf == ef
    ident, lf, later = compute_intervals([f.copy()], SETS, KEEP, lazy=True)
    start = list(exp.columns).index("qbits") + 1
    np.testing.assert_array_equal(later.rows(slice(None)), exp[list(exp.columns[start:])].to_numpy(np.float64))


def test_a_float_counter_column_with_missing_values_reads_as_uint64_without_a_warning():
    """A chunk's frame whose MT-diagnostic counters are float with NaN (a file's delta LPAR lacking the set beside
    its running-totals LPAR, joined with them: found by helper audit20) is read as uint64, NaN as 0, with no
    'invalid value encountered in cast' warning; the intervals are those of the same frame with the NaN written
    as 0 (the sets decide which deltas exist, so the 0 is never a delta)."""
    import warnings

    path = next(p for p in sorted((ROOT / "resources" / "samples").glob("*smf113*")) if "z16_ZOSC" in p.name)   # (the MT set)
    f = read_bytes(path.read_bytes(), str(path)).samples
    m = [c for c in f.columns if c.startswith("M")][:4]
    assert m
    from app.formats.schema import SET_MT

    holed = f.copy()
    for c in m:
        v = holed[c].to_numpy(dtype=np.float64)
        v[::3] = np.nan
        holed[c] = v
    sets = holed["sets"].to_numpy().copy()
    sets[::3] &= ~SET_MT            # (those rows lack the MT set: the frame's sets say so)
    holed["sets"] = sets
    zeros = holed.copy()
    for c in m:
        zeros[c] = zeros[c].fillna(0).to_numpy(dtype=np.uint64)
    exp, _ = compute_intervals([zeros], SETS, KEEP)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got, _ = compute_intervals([holed], SETS, KEEP)
    pd.testing.assert_frame_equal(got, exp, check_exact=True)
