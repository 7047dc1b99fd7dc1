"""Samples handed over to compute_intervals (issue 23, the month workbook's peak): the intervals and findings are
exactly those of the same frames not handed over, for any width of the column groups, any cut of the rows into
frames and frames of either layout (a column an array as read from Parquet, or a decoder's row block); the list
handed over is emptied and the columns are let go; and a fresh read stored in the cache is let go only inside
``app.cache.samples_not_kept`` and reads the same samples back."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
import pytest
from factory import frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_deltas_fast import KEEP, SETS, recs

from app.engine import deltas
from app.engine.deltas import compute_intervals
from app.formats.schema import SET_BASIC, SET_PROBLEM, is_counter_column


def columnar(f: pd.DataFrame) -> pd.DataFrame:
    """``f`` with every column an array of its own, as the cache reads samples back (pyarrow's split blocks)."""
    import pyarrow as pa

    from app.cache.entry import _dtypes, _restore_dtypes
    out = _restore_dtypes(pa.Table.from_pandas(f, preserve_index=False).to_pandas(split_blocks=True), _dtypes(f))
    assert all(b.values.ndim == 1 or b.values.shape[0] == 1 for b in out._mgr.blocks)
    return out


def blocky(f: pd.DataFrame) -> pd.DataFrame:
    """``f`` with its counters as one row-major block (a decoder's layout: a row a record)."""
    names = [c for c in f.columns if is_counter_column(c)]
    block = np.ascontiguousarray(f[names].to_numpy(dtype=np.uint64))
    out = f.drop(columns=names)
    return pd.concat([out, pd.DataFrame(block, columns=names, copy=False)], axis=1)


def same(a: tuple[pd.DataFrame, list], b: tuple[pd.DataFrame, list]) -> None:
    pd.testing.assert_frame_equal(a[0], b[0], check_exact=True)
    assert a[1] == b[1]


def records(data, n: int, cpus: int, absolute: bool) -> list[dict]:
    """Running totals (or deltas) with resets, partial sets and missing counters drawn by hypothesis."""
    r = recs(n, cpus=tuple(range(cpus)), kind="absolute" if absolute else "delta")
    for i in data.draw(st.lists(st.integers(0, len(r) - 1), max_size=4), label="reset rows"):
        r[i]["B0"] = r[i]["B1"] = 1                       # counters going backwards: a new run
    for i in data.draw(st.lists(st.integers(0, len(r) - 1), max_size=4), label="partial rows"):
        r[i]["sets"] = data.draw(st.sampled_from([SET_BASIC, SET_BASIC | SET_PROBLEM]))
    if data.draw(st.booleans(), label="first flags"):
        for x in r[:cpus]:
            x["first"] = True
    return r


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_handed_over_any_groups_and_cuts_give_the_same_intervals(data, monkeypatch):
    n, cpus = data.draw(st.integers(2, 6), label="intervals"), data.draw(st.integers(1, 4), label="cpus")
    f = frame(records(data, n, cpus, data.draw(st.booleans(), label="running totals")))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(f) - 1), max_size=3), label="cuts")) if len(f) > 1 else []
    parts = [f.iloc[a:b].reset_index(drop=True) for a, b in zip([0, *cuts], [*cuts, len(f)])]
    if data.draw(st.booleans(), label="a counter missing from the first frame") and len(parts) > 1:
        parts[0] = parts[0].drop(columns=["E143"])
    layouts = [data.draw(st.sampled_from([columnar, blocky]), label=f"layout {i}") for i in range(len(parts))]
    keep = data.draw(st.sampled_from([KEEP, None]), label="keep")
    expected = compute_intervals([p.copy() for p in parts], SETS, keep)
    monkeypatch.setattr(deltas, "_GROUP", data.draw(st.integers(1, 12), label="group width"))
    calls = []
    handed = [lay(p) for lay, p in zip(layouts, parts)]
    got = compute_intervals(handed, SETS, keep, consume=True, released=lambda: calls.append(1))
    assert handed == []                                   # the list handed over is emptied
    same(got, expected)


def test_bundled_samples_handed_over(monkeypatch):
    from test_deltas_fast import ROOT

    from app.formats import read_file
    frames = [read_file(p).samples for p in sorted((ROOT / "resources" / "samples").glob("*.gz"))]
    expected = compute_intervals([f.copy() for f in frames], SETS, KEEP)
    for width in (1, 8, 100):
        monkeypatch.setattr(deltas, "_GROUP", width)
        same(compute_intervals([columnar(f) for f in frames], SETS, KEEP, consume=True), expected)
    same(compute_intervals([f.copy() for f in frames], SETS, KEEP, consume=True, released=lambda: None), expected)


def test_columns_let_go_group_by_group(monkeypatch):
    """Columns of a frame nobody else holds are freed as their group is made; ``released`` once per group."""
    f = columnar(frame(recs(6, cpus=(0, 1, 2))))
    names = [c for c in f.columns if is_counter_column(c) and c in KEEP]
    refs = [weakref.ref(f[c].to_numpy()) for c in names]
    monkeypatch.setattr(deltas, "_GROUP", 3)
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")          # groups one after the other: counts in their order
    alive = []

    def released():
        gc.collect()
        alive.append(sum(r() is not None for r in refs))
    handed = [f]
    del f
    iv, _ = compute_intervals(handed, SETS, KEEP, consume=True, released=released)
    assert len(alive) == -(-len(names) // 3)               # one call per group of 3 counters
    assert alive[-1] == 0 and alive == sorted(alive, reverse=True) and alive[0] < len(names)
    assert len(iv) == 18                                   # subtype 1: each of 6 records of 3 CPUs an interval


# -- the workspace and the cache ---------------------------------------------------------------------------------
@pytest.fixture
def stored(tmp_path):
    """A sample file and a cache that writes on the reading thread."""
    from test_deltas_fast import ROOT

    from app.cache import Cache
    src = sorted((ROOT / "resources" / "samples").glob("*.gz"))[0]
    return src, Cache(tmp_path / "cache")


def test_fresh_read_let_go_only_inside_samples_not_kept(stored):
    import app.cache as wc
    from app.engine import Workspace

    src, cache = stored
    need = Workspace(cache=False).counters_needed()
    r = wc.read_file(src, cache=cache, counters=need)
    decoded = r.samples
    assert wc.let_go_samples([r]) == 0 and r.samples is decoded          # outside: kept
    with wc.samples_not_kept():
        assert wc.let_go_samples([r]) == 1
    assert isinstance(r, wc.CachedReadResult) and r.meta["cache_key"]
    back = r.samples                                                      # read back from the entry
    assert back is not decoded
    pd.testing.assert_frame_equal(back, decoded, check_exact=True)
    with wc.samples_not_kept():                                           # now a cached read: let go again
        assert wc.let_go_samples([r]) == 1


def test_fresh_read_kept_when_its_entry_is_not_there(stored):
    import shutil

    import app.cache as wc

    src, cache = stored
    r = wc.read_file(src, cache=cache)
    decoded = r.samples
    for d in cache.dir.iterdir():
        shutil.rmtree(d)
    with wc.samples_not_kept():
        assert wc.let_go_samples([r]) == 0
    assert r.samples is decoded and not isinstance(r, wc.CachedReadResult)


def test_workspace_inside_samples_not_kept_same_intervals(stored):
    import app.cache as wc
    from app.engine import Workspace

    src, cache = stored
    plain = Workspace(cache=False)
    plain.add(wc.read_file(src, cache=False, counters=plain.counters_needed()))
    ws = Workspace(cache=cache)
    r = wc.read_file(src, cache=cache, counters=ws.counters_needed())
    with wc.samples_not_kept():
        ws.add(r)
    assert "_samples" in r.__dict__ and r.__dict__["_samples"] is wc._LAZY   # let go, readable again
    assert ws._iv is None and ws._iv_load is not None      # the intervals read back from their entry when used
    pd.testing.assert_frame_equal(ws.intervals, plain.intervals, check_exact=True)
    assert ws.findings == plain.findings
    ws.set_keep_implausible(True)                # computed again from the samples read back
    ws.set_keep_implausible(False)
    pd.testing.assert_frame_equal(ws.intervals, plain.intervals, check_exact=True)


def test_cached_workspace_gives_intervals_after_keep_implausible_changes(stored):
    """A workspace over cached reads computes its intervals again when the implausible rows' choice changes (its
    cached entry only opened lazily before: ``intervals`` was None)."""
    import app.cache as wc
    from app.engine import Workspace

    src, cache = stored
    ws = Workspace(cache=cache)
    ws.add(wc.read_file(src, cache=cache, counters=ws.counters_needed()))
    first = ws.intervals
    ws.set_keep_implausible(True)
    assert ws.intervals is not None
    pd.testing.assert_frame_equal(ws.intervals, first, check_exact=True)   # no implausible row in the sample
