"""The CEC pools' prepared frame (``Workspace.prepare_pools``, issue 26) in the workspace cache: the first open
computes it (``node_rows.pool_level_frame``) and stores it beside the levels' frames; a second open of the same
files reads it back and computes nothing, and the frame is equal (dtypes included); a change of what the rows
depend on (the formulas, keeping implausible rows) is a new key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from app import cache as wc
from app.engine import Workspace
from app.engine import node_rows

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
NAMES = ("after_z16_ZOSB_smf113.vbs.gz", "after_VMSYS1_monwrite.mondata.gz")   # GCP/zIIP of ZOSB, IFL of z/VM
CEC = "3931-123F5"


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    for name in NAMES:
        shutil.copy(SAMPLES / name, d / name)
    return [d / n for n in NAMES]


@pytest.fixture
def counted(monkeypatch):
    """Counts the calls of the pool frame's computation."""
    calls = []
    real = node_rows.pool_level_frame

    def spy(ws, start=None, end=None):
        calls.append((start, end))
        return real(ws, start, end)
    monkeypatch.setattr(node_rows, "pool_level_frame", spy)
    return calls


def _open(files, cache, **kw) -> Workspace:
    ws = Workspace(cache=cache, **kw)
    ws.add_all([wc.read_file(p, cache=cache) for p in files])
    return ws


def _pool_entries(cache):
    return [p for p in cache.dir.iterdir() if p.name.startswith("lv-") and p.name.endswith("-pool")]


def test_second_open_reads_the_pools_from_the_cache(files, tmp_path, counted):
    cache = wc.Cache(tmp_path / "cache")
    ws1 = _open(files, cache)
    assert ws1.prepare_pools() and len(counted) == 1
    first = ws1._lv[("pool", "None", "None")].frame
    (entry,) = _pool_entries(cache)
    assert json.loads((entry / "entry.json").read_text())["frames"]["pool"]["rows"] == len(first)

    ws2 = _open(files, cache)
    assert not ws2.prepared("pool")
    assert ws2.prepare_pools(cached_only=True)          # in the disk cache: prepared without computing
    assert len(counted) == 1 and ws2.prepared("pool")
    again = ws2._lv[("pool", "None", "None")].frame
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    # a selected pool is a slice of it: the same rows as the first open's
    keys = [("pool", CEC, "IFL"), ("pool", CEC, "GCP")]
    pd.testing.assert_frame_equal(ws2.metrics(by="class_interval", nodes=keys, summary=True),
                                  ws1.metrics(by="class_interval", nodes=keys, summary=True), check_exact=True)
    assert len(counted) == 1


def test_the_pools_of_a_window_are_not_stored(files, tmp_path, counted):
    cache = wc.Cache(tmp_path / "cache")
    ws = _open(files, cache)
    ends = ws.intervals["interval_end"]
    start, end = ends.min() + pd.Timedelta(hours=2), ends.max() - pd.Timedelta(hours=3)
    assert ws.prepare_pools(start, end) and len(counted) == 1
    assert not _pool_entries(cache)                     # only the whole range is kept, as the levels
    assert not _open(files, cache).prepare_pools(start, end, cached_only=True)


def test_the_key_includes_what_the_rows_depend_on(files, tmp_path, counted):
    cache = wc.Cache(tmp_path / "cache")
    assert _open(files, cache).prepare_pools()
    assert _open(files, cache, keep_implausible=True).prepare_pools()     # other rows in the sums: computed
    assert len(counted) == 2 and len(_pool_entries(cache)) == 2
    formulas = tmp_path / "site.json"          # z16's RNI with other weights: other pool rows
    formulas.write_text(json.dumps({"z16": {"version": "z16 / site-1", "metrics": {
        "RNI": {"expr": "2.0*(0.4*L3P+1.0*L4LP+2.0*L4RP+5.0*MEMP)/100"}}}}), encoding="utf-8")
    assert _open(files, cache, formula_file=formulas).prepare_pools()   # another formula set: computed
    assert len(counted) == 3 and len(_pool_entries(cache)) == 3
    assert _open(files, cache).prepare_pools()          # the first key again: read
    assert len(counted) == 3


def test_without_a_cache_nothing_is_stored(files, tmp_path, counted):
    ws = Workspace(cache=False)
    ws.add_all([wc.read_file(p, cache=False) for p in files])
    assert ws.prepare_pools() and len(counted) == 1
    other = Workspace(cache=False)
    other.add_all([wc.read_file(p, cache=False) for p in files])
    assert not other.prepare_pools(cached_only=True) and len(counted) == 1
