"""Pool and SMT core/thread rows in the window (issue 26): the tree shows them, selecting one shows its table and
timeline rows like any node; the SMT tab's charts over time with named value axes; the MT plot's axis."""

from __future__ import annotations

import pandas as pd
import pytest

from app.engine.views import pools
from app.ui.frames import is_summary
from app.ui.roles import Role
from app.ui.smt_charts import CHARTS
from app.ui.tree_model import COL_CPI, COL_CPUS, node_label
from tests.ui.conftest import wait_loaded


@pytest.fixture
def with_vm(qtbot, window, smf_a, monwrite):
    window.open_files([smf_a, monwrite])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.tree.model.depth() == 4, timeout=60_000)
    wait_loaded(qtbot, window)
    return window


def _node(w, key):
    idx = w.tree.model.index_of_key(key)
    assert idx.isValid(), key
    return w.tree.model.node(idx), idx


def _cec(w) -> str:
    return next(n.key[1] for n in w.tree.model.all_nodes() if n.level == "cec")


def test_pool_rows_in_the_tree_and_their_table(qtbot, with_vm):
    w = with_vm
    cec = _cec(w)
    got = [n.key for n in w.tree.model.all_nodes() if n.level == "pool"]
    assert got == [("pool", cec, "GCP"), ("pool", cec, "IFL"), ("pool", cec, "zIIP")]   # z/VM's CP would be GCP
    want = pools(w.ws)
    node, idx = _node(w, ("pool", cec, "GCP"))
    assert node_label(node) == "GCP pool"
    row = want[want["class"] == "GCP"].iloc[0]
    assert idx.siblingAtColumn(COL_CPUS).data() == "8"
    assert idx.siblingAtColumn(COL_CPI).data(Role.SORT) == pytest.approx(row["CPI"], rel=1e-12)
    # selecting the pool: its interval rows and summary row, the numbers of report --by pool
    w.tree.select_keys([("pool", cec, "GCP")])
    wait_loaded(qtbot, w)
    df = w.table.model.frame
    summary = df[is_summary(df)]
    assert len(summary) == 1 and len(df) > 1
    assert summary["CPI"].iloc[0] == pytest.approx(row["CPI"], rel=1e-12)
    assert set(w.table.model._column_values(next(c for c in w.table.model.columns if c.id == "_node"))) == {"GCP pool"}
    w.tabs.setCurrentWidget(w.timeline)
    wait_loaded(qtbot, w)
    w.timeline.ensure_drawn()
    (series,) = w.timeline.series                           # one line: the pool's
    assert "GCP pool" in series.label and len(series.x) == len(df) - 1


def test_a_pool_selection_after_the_idle_jobs_is_a_slice(qtbot, with_vm, monkeypatch):
    """Idle, the window prepares every CEC pool's rows (Workspace.prepare_pools) as it does the LPAR, class and
    CEC levels: selecting a pool then sums nothing again (views.pools is not called) and shows the pool's rows."""
    import app.engine.views as views
    from app.engine import Workspace

    w = with_vm
    cec = _cec(w)
    qtbot.waitUntil(lambda: w.ws.prepared("pool"), timeout=60_000)
    calls: list[int] = []
    real = views.pools
    monkeypatch.setattr(views, "pools", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    key = ("pool", cec, "IFL")
    w.tree.select_keys([key])
    wait_loaded(qtbot, w)
    assert w.selection.value.nodes == (key,) and calls == []
    shown = w.table.model.frame
    fresh = Workspace(cache=False)    # a new workspace (tests/engine/test_pool_frames.py: the pool's own rows)
    fresh.add_all(w.ws.files)
    want = fresh.metrics(by="class_interval", nodes=[key], summary=True)
    cols = [c for c in want.columns if c in shown.columns]
    assert len(shown) == len(want) > 1
    pd.testing.assert_frame_equal(shown[cols].reset_index(drop=True), want[cols], check_exact=True)


def test_core_and_thread_rows_under_the_smt_class(qtbot, with_vm):
    w = with_vm
    cec = _cec(w)
    ifl, _ = _node(w, ("class", cec, "VMPROD", "IFL"))
    assert [c.label for c in ifl.children] == ["Core 0", "Core 1"]
    core, idx = _node(w, ("core", cec, "VMPROD", "IFL", 1))
    assert [node_label(t) for t in core.children] == ["CPU 2 (t0)", "CPU 3 (t1)"]
    assert idx.siblingAtColumn(COL_CPUS).data() == "2"
    # the core row is the sum of its threads: its busy is theirs added up
    threads = [w.tree.model.value(t, "busy") for t in core.children]
    assert w.tree.model.value(core, "busy") == pytest.approx(sum(threads), rel=1e-9)
    w.tree.select_keys([("core", cec, "VMPROD", "IFL", 1)])
    wait_loaded(qtbot, w)
    df = w.table.model.frame
    assert set(df["core"]) == {1} and set(df["n_cpus"]) == {2}


def test_smt_tab_charts_over_time_with_named_axes(qtbot, with_vm):
    w = with_vm
    cec = _cec(w)
    w.tree.select_keys([("lpar", cec, "VMPROD")])
    wait_loaded(qtbot, w)
    w.tabs.setCurrentWidget(w.smt)
    qtbot.waitUntil(lambda: w.smt.stack.currentIndex() == 1 and bool(w.smt.charts.lines["thread_density"]),
                    timeout=60_000)
    charts = w.smt.charts
    for col, _, axis in CHARTS:
        assert charts.axis_label(col) == axis                # what it draws and its unit
        assert "(" in axis and ")" in axis
        assert charts.axis_label(col, shown=True)            # a form of it fits the axis (never none)
        (name, item), = charts.lines[col]                   # one line: VMPROD's IFL cores
        assert name == "VMPROD IFL"
        x, y = item.xData, item.yData                       # every value (the display may average them)
        rows = w.ws.smt(by="type", nodes=[("lpar", cec, "VMPROD")])
        rows = rows[~rows["mean"]]
        assert len(x) == len(rows) and y == pytest.approx(rows.sort_values("interval_end")[col].to_numpy())


def test_mt_plot_axis_names_what_it_draws():
    from app.ui.timeline_axes import fitted_label
    from app.ui.timeline_plots import MT_AXIS, UNITS

    assert UNITS["mt"] == MT_AXIS and "IPC" in MT_AXIS and "thread density" in MT_AXIS
    assert "instr/cycle" in MT_AXIS and "threads/core" in MT_AXIS          # the units of both lines
    width = len                                                                # 1 px a character
    assert fitted_label(MT_AXIS, 200, width) == MT_AXIS
    assert fitted_label(MT_AXIS, 24, width) == "IPC · threads/core"
    assert fitted_label(MT_AXIS, 12, width) == "IPC/TD"
