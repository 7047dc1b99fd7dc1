"""SMT tab: tables over ws.smt(by="type"/"core") follow the tree selection; placeholder without MT data; copy."""

from __future__ import annotations

import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.ui import messages as M
from app.ui.frames import fmt_number
from app.ui.roles import Role
from tests.ui.conftest import wait_loaded


@pytest.fixture
def with_vm(qtbot, window, smf_a, monwrite):
    window.open_files([smf_a, monwrite])
    wait_loaded(qtbot, window)
    window.tabs.setCurrentWidget(window.smt)
    wait_loaded(qtbot, window)
    return window


def _key(window, level: str, *parts: str) -> tuple:
    for n in window.tree.model.all_nodes():
        if n.level == level and [str(k) for k in n.key[2:2 + len(parts)]] == list(parts):
            return tuple(n.key)
    raise AssertionError(f"no {level} node {parts}")


def _select(qtbot, window, key) -> None:
    window.tree.select_keys([key])
    wait_loaded(qtbot, window)


def test_type_table_matches_engine(qtbot, with_vm):
    w = with_vm
    key = _key(w, "lpar", "VMPROD")
    _select(qtbot, w, key)
    assert w.smt.stack.currentIndex() == 1
    model = w.smt.type_model
    want = w.ws.smt(by="type", nodes=[key])
    assert model.rowCount() == len(want)
    # mean row pinned on top, bold, labelled "mean"
    assert model.is_mean_row(0)
    assert model.data(model.index(0, model.column_index("interval_end"))) == M.SMT_MEAN
    assert model.data(model.index(0, 0), Qt.ItemDataRole.FontRole).bold()
    mean = want[want["mean"]].iloc[0]
    for cid in ("productivity", "capacity_factor", "mt_utilization", "thread_density"):
        col = model.column_index(cid)
        assert model.data(model.index(0, col)) == fmt_number(mean[cid], model.columns[col].decimals), cid
    # an interval row
    row = 5
    got_end = model.frame.iloc[model.frame_row(row)]["interval_end"]
    exp = want[want["interval_end"] == got_end].iloc[0]
    col = model.column_index("productivity")
    assert model.data(model.index(row, col)) == fmt_number(exp["productivity"], model.columns[col].decimals)
    end_idx = model.index(row, model.column_index("interval_end"))
    assert model.data(end_idx) == pd.Timestamp(got_end).strftime("%m-%d %H:%M")          # compact, as the table
    assert model.data(end_idx, Qt.ItemDataRole.ToolTipRole) == pd.Timestamp(got_end).strftime("%Y-%m-%d %H:%M UTC")
    assert model.data(model.index(row, model.column_index("source"))) == exp["source"]
    headers = [c.header for c in model.columns]
    assert headers == ["LPAR", "Interval end", "Core type", "Seconds", "Cores", "Productivity %", "Capacity factor %",
                       "Max capacity factor %", "MT utilization %", "Avg thread density", "Source"]
    core = w.smt.core_model
    assert core.rowCount() == len(w.ws.smt(by="core", nodes=[key]))
    assert [c.header for c in core.columns] == ["Interval end", "Core id", "Core type", "Seconds", "Productivity %",
                                                "MT utilization %", "Avg thread density", "Core busy %", "Source"]


def test_placeholder_without_mt_data(qtbot, with_vm):
    w = with_vm
    key = _key(w, "class", "ZOSA", "GCP")
    _select(qtbot, w, key)
    assert w.ws.smt(by="type", nodes=[key]).empty
    assert w.smt.stack.currentIndex() == 0
    assert "No multithreading data for this selection" in w.smt.placeholder.text()
    assert "PROCVIEW CORE" in w.smt.placeholder.text()


def test_follows_window_and_sorts_with_mean_on_top(qtbot, with_vm):
    w = with_vm
    key = _key(w, "lpar", "VMPROD")
    _select(qtbot, w, key)
    n_all = w.smt.type_model.rowCount()
    ends = pd.to_datetime(w.ws.smt(by="type", nodes=[key])["interval_end"].dropna())
    start, end = ends.min() + pd.Timedelta(hours=1), ends.min() + pd.Timedelta(hours=2)
    w.selection.set_window(pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC"))
    wait_loaded(qtbot, w)
    model = w.smt.type_model
    assert 0 < model.rowCount() < n_all
    col = model.column_index("mt_utilization")
    model.sort(col, Qt.SortOrder.DescendingOrder)
    assert model.is_mean_row(0)
    vals = [model.data(model.index(r, col), Role.SORT) for r in range(1, model.rowCount())]
    vals = [v for v in vals if v is not None]
    assert vals == sorted(vals, reverse=True)


def test_smt_copy(qtbot, with_vm):
    w = with_vm
    _select(qtbot, w, _key(w, "lpar", "VMPROD"))
    w.actions_.copy.trigger()
    text = QGuiApplication.clipboard().mimeData().text()
    assert text.startswith("LPAR\tInterval end\tCore type")
    assert "<table>" in QGuiApplication.clipboard().mimeData().html()


def test_tree_and_health_copy(qtbot, with_vm):
    w = with_vm
    key = _key(w, "lpar", "VMPROD")
    _select(qtbot, w, key)
    tsv = w.tree.copy_selection()
    lines = tsv.strip().split("\n")
    assert lines[0] == "Node\tCPUs\tBusy %\tCPI"
    assert len(lines) == 2 and lines[1].startswith("VMPROD")
    assert "<th>Node</th>" in QGuiApplication.clipboard().mimeData().html()
    w.tabs.setCurrentWidget(w.health)
    w.health.view.setFocus()
    w.actions_.copy.trigger()
    mime = QGuiApplication.clipboard().mimeData()
    lines = mime.text().strip().split("\n")
    assert lines[0] == "File\tOffset\tSeverity\tCode\tMessage"
    assert len(lines) >= 2 and "<th>Message</th>" in mime.html()

