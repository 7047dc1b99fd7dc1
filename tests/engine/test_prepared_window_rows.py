"""A level prepared before the tree's values (issue 23: a big file's table after its part is sliced from its
level's rows of every node): the level's whole-range summary rows are kept as the tree's whole-window rows
(``Workspace.window_metrics``), equal to those computed by the tree, and not computed again; with cached
intervals they are in the workspace cache as the tree's own would be."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from app import cache as wc
from app.engine import Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
NAMES = ("after_z16_ZOSA_smf113.rdw.gz", "after_VMSYS1_monwrite.mondata.gz")
LEVELS = {"lpar_interval": "lpar", "cec_interval": "cec", "class_interval": "class"}


@pytest.fixture
def files(tmp_path):
    if not all((SAMPLES / n).exists() for n in NAMES):
        pytest.skip("sample set not generated")
    d = tmp_path / "data"
    d.mkdir()
    for name in NAMES:
        shutil.copy(SAMPLES / name, d / name)
    return [d / n for n in NAMES]


def _open(files, cache) -> Workspace:
    ws = Workspace(cache=cache)
    ws.add_all([wc.read_file(p, cache=cache) for p in files])
    return ws


def _no_window_frames(monkeypatch) -> list[str]:
    """Counts the whole-window frames the workspace computes (Workspace._window_frame)."""
    calls: list[str] = []
    real = Workspace._window_frame

    def spy(self, iv, lv):
        calls.append(lv)
        return real(self, iv, lv)
    monkeypatch.setattr(Workspace, "_window_frame", spy)
    return calls


@pytest.mark.parametrize("by", list(LEVELS))
def test_a_prepared_levels_summary_rows_are_the_trees_window_rows(files, by, monkeypatch):
    tree_first, level_first = _open(files, False), _open(files, False)
    want = tree_first.window_metrics((LEVELS[by],))[LEVELS[by]]
    calls = _no_window_frames(monkeypatch)
    assert level_first.prepare_level(by)
    got = level_first.window_metrics((LEVELS[by],))[LEVELS[by]]
    assert calls == []                                   # kept by prepare_level, not computed again
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert not got["summary"].any() and len(got) > 0     # the tree's rows: not flagged as summary rows
    # the prepared frame itself is the one prepared after the tree's rows (those reused as its summary rows)
    assert tree_first.prepare_level(by)
    key = (by, "None", "None")
    pd.testing.assert_frame_equal(level_first._lv[key].frame, tree_first._lv[key].frame, check_exact=True)


def test_a_windowed_level_keeps_no_window_rows(files):
    """Only the whole range's summary rows are the tree's window rows (the tree's values have no time window)."""
    ws = _open(files, False)
    ends = ws.intervals["interval_end"].sort_values().unique()
    start, end = pd.Timestamp(ends[len(ends) // 4]), pd.Timestamp(ends[len(ends) // 2])
    assert ws.prepare_level("lpar_interval", start, end)
    assert "lpar" not in ws._wm


def test_the_kept_window_rows_are_cached_as_the_trees(files, tmp_path, monkeypatch):
    cache = wc.Cache(tmp_path / "cache")
    first = _open(files, cache)
    assert first.prepare_level("lpar_interval")
    want = first.window_metrics(("lpar",))["lpar"]
    wc.wait_for_writes()
    second = _open(files, cache)                          # a second open: every frame from the cache
    calls = _no_window_frames(monkeypatch)
    got = second.window_metrics(("lpar",))["lpar"]
    assert calls == []
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_the_trees_pool_rows_come_with_the_pools_level_frame(files, monkeypatch):
    """The tree's whole-window pool rows (``window_metrics``) are computed with the pools' level frame (issue 23:
    the window's idle job prepares it next; one frame of pool rows for both): each equal, exactly, to the one
    computed alone, and prepare_pools then computes nothing."""
    from app.engine import node_rows

    key = ("pool", "None", "None")
    ws, alone = _open(files, False), _open(files, False)
    got = ws.window_metrics(("pool",))["pool"]
    assert key in ws._lv and len(got) > 0
    want_rows = node_rows.window_frame(alone, "pool")
    assert alone.prepare_pools()
    pd.testing.assert_frame_equal(got, want_rows, check_exact=True)
    pd.testing.assert_frame_equal(ws._lv[key].frame, alone._lv[key].frame, check_exact=True)
    frame = ws._lv[key].frame
    assert frame["summary"].any() and not frame["summary"].all()
    monkeypatch.setattr(node_rows, "pool_level_frame", lambda *a, **k: pytest.fail("computed again"))
    assert ws.prepare_pools() and ws.prepare_levels(["pool"])


def test_prepared_pools_are_not_computed_again_with_the_trees_rows(files, monkeypatch):
    from app.engine import node_rows

    ws = _open(files, False)
    assert ws.prepare_pools()
    before = ws._lv[("pool", "None", "None")]
    monkeypatch.setattr(node_rows, "pool_frames", lambda *a, **k: pytest.fail("the pools' frame again"))
    assert len(ws.window_metrics(("pool",))["pool"]) > 0
    assert ws._lv[("pool", "None", "None")] is before


def test_the_trees_values_ask_for_the_cores_with_the_pools(files, monkeypatch):
    """The tree with values asks for the cores' whole-window rows in the call that computes the pools' (on the two
    threads together), so the window's tree values (node_rows.extra_values) compute nothing after it."""
    from app.engine import node_rows

    ws = _open(files, False)
    asked: list[tuple] = []
    real = Workspace.window_metrics

    def spy(self, levels=("cec", "lpar", "class", "cpu_window")):
        asked.append(tuple(levels))
        return real(self, levels)
    monkeypatch.setattr(Workspace, "window_metrics", spy)
    ws.tree()
    assert any("pool" in lv and "core" in lv for lv in asked)
    calls = _no_window_frames(monkeypatch)
    node_rows.extra_values(ws)
    assert calls == []
