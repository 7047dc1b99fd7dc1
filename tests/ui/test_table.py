"""Interval table: values equal the engine's, summary row, sorting, column chooser, copy, quality marks."""

from __future__ import annotations

import math
import re

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from app.ui import settings
from app.ui.frames import N_FROZEN
from app.ui.roles import Role
from app.ui.table_view import HIDDEN_KEY
from tests.ui.conftest import wait_loaded


def _select(qtbot, window, *keys):
    window.tree.select_keys(list(keys))
    assert set(window.selection.value.nodes) == set(keys)
    wait_loaded(qtbot, window)


def _key(window, level: str, *parts: str) -> tuple:
    """First node of ``level`` whose key continues with ``parts`` after the CEC (LPAR, class...)."""
    for n in window.tree.model.all_nodes():
        if n.level == level and [str(k) for k in n.key[2:2 + len(parts)]] == list(parts):
            return tuple(n.key)
    raise AssertionError(f"no {level} node {parts}")


def _cell(model, row: int, col_id: str) -> str:
    return model.data(model.index(row, model.column_index(col_id)))


def test_first_lpar_is_selected_on_load(loaded):
    assert loaded.selection.value.nodes
    assert loaded.selection.value.nodes[0][0] == "lpar"
    assert loaded.table.model.rowCount() > 1


def test_lpar_rows_match_engine(qtbot, loaded):
    key = _key(loaded, "lpar", "ZOSA")
    _select(qtbot, loaded, key)
    model = loaded.table.model
    expected = loaded.ws.metrics(by="lpar_interval", nodes=[key])
    assert model.rowCount() == len(expected) + 1  # + summary row on top
    assert model.is_summary_row(0)
    row = 1 + 5
    end = model.frame.iloc[model.frame_row(row)]["interval_end"]
    want = expected[expected["interval_end"] == end].iloc[0]
    spec = model.columns[model.column_index("CPI")]
    assert _cell(model, row, "CPI") == f"{want['CPI']:.{spec.decimals}f}"
    assert math.isclose(model.data(model.index(row, model.column_index("CPI")), Role.SORT), want["CPI"])
    align = model.data(model.index(row, model.column_index("CPI")), Qt.ItemDataRole.TextAlignmentRole)
    assert align & int(Qt.AlignmentFlag.AlignRight)


def test_summary_row_matches_engine(qtbot, loaded):
    key = _key(loaded, "class", "ZOSB", "GCP")
    _select(qtbot, loaded, key)
    model = loaded.table.model
    summ = loaded.ws.metrics(by="class_interval", nodes=[key], summary=True)
    summ = summ[summ["summary"]].iloc[0]
    assert _cell(model, 0, "_date") == "Summary"          # spans Date and End in the frozen view
    assert loaded.table.frozen.columnSpan(0, model.column_index("_date")) == 2
    assert _cell(model, 0, "_end") == ""
    tip = model.data(model.index(0, model.column_index("_date")), Qt.ItemDataRole.ToolTipRole)
    assert "Summary of" in tip                                # the window range is in the tooltip
    assert _cell(model, 0, "CPI") == f"{summ['CPI']:.2f}"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.FontRole).bold()


def test_cpu_level_and_multi_selection(qtbot, loaded):
    cpu = _key(loaded, "cpu", "ZOSA", "GCP")
    lpar_b = _key(loaded, "lpar", "ZOSB")
    _select(qtbot, loaded, cpu, lpar_b)
    model = loaded.table.model
    n_cpu = len(loaded.ws.metrics(by="cpu", nodes=[cpu]))
    n_lpar = len(loaded.ws.metrics(by="lpar_interval", nodes=[lpar_b]))
    assert model.rowCount() == n_cpu + n_lpar + 2
    nodes = {model.data(model.index(r, 1)) for r in range(model.rowCount())}
    assert any("CPU" in n for n in nodes) and "ZOSB" in nodes


def test_sorting_keeps_summary_on_top(loaded):
    model = loaded.table.model
    col = model.column_index("CPI")
    model.sort(col, Qt.SortOrder.DescendingOrder)
    assert model.is_summary_row(0)
    values = [model.data(model.index(r, col), Role.SORT) for r in range(1, model.rowCount())]
    values = [v for v in values if v is not None]
    assert values == sorted(values, reverse=True)


def test_header_tooltips_explain_metric(loaded):
    model = loaded.table.model
    tip = model.headerData(model.column_index("CPI"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "Formula" in tip and "z16" in tip


def test_presentation_order(loaded):
    headers = [c.header for c in loaded.table.model.columns]
    assert headers[:N_FROZEN] == ["System", "Node", "Date", "End"]
    assert headers[N_FROZEN] == "CPI"
    assert headers.index("L1MP") < headers.index("LPARCPU")


def test_column_chooser_is_remembered(loaded):
    table = loaded.table
    menu = table.column_menu()
    act = next(a for a in menu.actions() if a.text() == "Est SCPL1M")
    act.setChecked(False)
    col = table.model.column_index("Est_SCPL1M")
    assert table.view.isColumnHidden(col)
    assert "Est_SCPL1M" in settings.get_list(HIDDEN_KEY)
    table.set_column_visible("Est_SCPL1M", True)
    assert not table.view.isColumnHidden(col)


def test_copy_tsv_and_html(loaded):
    table = loaded.table
    model = table.model
    sm = table.frozen.selectionModel()
    for r in (1, 2):
        for c in (model.column_index("CPI"), model.column_index("L1MP")):
            sm.select(model.index(r, c), sm.SelectionFlag.Select)
    loaded.actions_.copy.trigger()
    mime = QGuiApplication.clipboard().mimeData()
    lines = mime.text().strip().split("\n")
    header = lines[0].split("\t")
    assert "CPI" in header and "L1MP" in header and "End" in header
    assert len(lines) == 3
    assert lines[1].split("\t")[header.index("CPI")] == model.data(model.index(1, model.column_index("CPI")))
    assert "<table>" in mime.html() and "<th>CPI</th>" in mime.html()


def test_copy_everything_when_nothing_selected(loaded):
    tsv = loaded.table.copy_selection()
    # one LPAR selected: the Node column is hidden, so not copied
    assert tsv.split("\n", 1)[0].startswith("System\tDate\tEnd\tCPI")
    assert tsv.count("\n") == loaded.table.model.rowCount() + 1


def test_quality_marked(loaded):
    model = loaded.table.model
    import pandas as pd

    df = model.frame.copy()
    df.loc[df.index[3], "quality"] = "lost-counters"
    model.quality_details = {"lost-counters": "f: offset 1 (0x1): counters lost; numbers low"}
    model.set_frame(df, model.columns)
    row = next(r for r in range(model.rowCount()) if model.frame_row(r) == 3)
    assert model.data(model.index(row, 5), Qt.ItemDataRole.BackgroundRole) is not None
    tip = model.data(model.index(row, 5), Qt.ItemDataRole.ToolTipRole)
    assert "lost-counters" in tip and "counters lost" in tip
    assert isinstance(df, pd.DataFrame)


def test_compact_identification_columns(qtbot, loaded):
    key = _key(loaded, "lpar", "ZOSA")
    _select(qtbot, loaded, key)
    table, model = loaded.table, loaded.table.model
    assert table.frozen.isColumnHidden(model.column_index("_node"))  # one node: the tree says which
    assert re.fullmatch(r"20\d\d-\d\d-\d\d", _cell(model, 1, "_date"))   # the year is written
    assert re.fullmatch(r"\d\d:\d\d(:\d\d)?", _cell(model, 1, "_end"))
    assert table.frozen.width() < 260
    # long metric headers wrap onto two lines, the copy keeps the one-line header
    col = model.column_index("Est_Instr_Cmplx_CPI")
    assert model.headerData(col, Qt.Orientation.Horizontal) == "Est Instr\nCmplx CPI"
    assert table.frozen.horizontalHeader().height() == table.view.horizontalHeader().height()
    # several nodes: Node comes back
    _select(qtbot, loaded, key, _key(loaded, "lpar", "ZOSB"))
    assert not table.frozen.isColumnHidden(model.column_index("_node"))
    # one class selected: the System column names only the LPAR, so Node names the class
    _select(qtbot, loaded, _key(loaded, "class", "ZOSA", "zIIP"))
    assert not table.frozen.isColumnHidden(model.column_index("_node"))
    assert _cell(model, 1, "_node").endswith("zIIP")


def test_metric_columns_visible_at_1024(qtbot, loaded):
    loaded.resize(1024, 700)
    QApplication.processEvents()
    table, model = loaded.table, loaded.table.model
    right = table.view.viewport().width()
    for cid in ("CPI", "Prb_State" if model.column_index("Prb_State") >= 0 else "PRBSTATE", "L1MP", "L2P"):
        col = model.column_index(cid)
        if col < 0 or table.view.isColumnHidden(col):
            continue
        assert table.view.columnViewportPosition(col) + table.view.columnWidth(col) <= right, cid


def test_time_window_from_selected_rows(qtbot, loaded):
    from PySide6.QtCore import QItemSelection, QItemSelectionModel

    w = loaded
    w.tabs.setCurrentWidget(w.table)
    model = w.table.model
    rows = [r for r in range(model.rowCount()) if not model.is_summary_row(r)][3:5]
    assert len(rows) == 2
    sm = w.table.frozen.selectionModel()
    sm.clearSelection()
    for r in rows:
        sm.select(QItemSelection(model.index(r, 0), model.index(r, model.columnCount() - 1)),
                  QItemSelectionModel.SelectionFlag.Select)
    picked = model.frame.iloc[[model.frame_row(r) for r in rows]]
    want_start = pd.to_datetime(picked["interval_start"]).min()
    want_end = pd.to_datetime(picked["interval_end"]).max()
    assert w.actions_.window_from_rows in w.table.body_menu().actions()
    assert w.actions_.window_from_rows.shortcut().toString() == "Ctrl+T"
    assert w.actions_.reset_window.shortcut().toString() == "Ctrl+Shift+T"
    w.actions_.window_from_rows.trigger()
    sel = w.selection.value
    assert sel.has_window
    assert (_naive(sel.start), _naive(sel.end)) == (_naive(want_start), _naive(want_end))
    wait_loaded(qtbot, w)
    summary = model.frame[model.frame["summary"]].iloc[0]
    assert (_naive(summary["interval_start"]), _naive(summary["interval_end"])) == (_naive(want_start),
                                                                                     _naive(want_end))
    lo, hi = w.timeline.region.getRegion()
    assert abs(lo - sel.start.timestamp()) < 1 and abs(hi - sel.end.timestamp()) < 1
    w.actions_.reset_window.trigger()
    wait_loaded(qtbot, w)
    assert not w.selection.value.has_window
    dlo, dhi = w.timeline.data_range()
    assert w.timeline.region.getRegion() == (dlo, dhi)


def _naive(t) -> pd.Timestamp:
    t = pd.Timestamp(t)
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo else t
