"""Look: renders at 1440x900 and 1024x700 without clipped key columns; dialogs; health navigation; shortcuts."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui import messages as M
from app.ui.frames import N_FROZEN
from tests.ui.conftest import wait_loaded


@pytest.mark.parametrize("size", [(1440, 900), (1024, 700)])
@pytest.mark.parametrize("tab", [0, 1, 2, 3])
def test_renders_without_clipping(qtbot, loaded, size, tab):
    loaded.resize(*size)
    loaded.tabs.setCurrentIndex(tab)
    QApplication.processEvents()
    image = loaded.grab()
    assert not image.isNull() and image.width() == size[0]
    table = loaded.table
    for col in range(N_FROZEN + 3):
        view = table.frozen if col < N_FROZEN else table.view
        if view.isColumnHidden(col):
            continue
        if col < N_FROZEN and table.model.columns[col].id in ("_date", "_end"):
            continue  # the bold "Summary" spans Date and End (checked below)
        assert view.columnWidth(col) >= view.sizeHintForColumn(col), col
        assert view.columnWidth(col) >= view.horizontalHeader().sectionSizeHint(col), col
    model = table.model
    date, end = model.column_index("_date"), model.column_index("_end")
    bold = table.frozen.font()
    bold.setBold(True)
    from PySide6.QtGui import QFontMetrics

    assert table.frozen.columnWidth(date) + table.frozen.columnWidth(end) > QFontMetrics(bold).horizontalAdvance(
        "Summary")
    fm = table.frozen.fontMetrics()
    for r in range(1, min(20, model.rowCount())):
        for col in (date, end):
            assert table.frozen.columnWidth(col) > fm.horizontalAdvance(model.data(model.index(r, col)))
    tree = loaded.tree.view
    assert tree.columnWidth(0) >= 120
    # the CEC labels are not elided
    proxy = loaded.tree.proxy
    for r in range(proxy.rowCount()):
        idx = proxy.index(r, 0)
        need = QFontMetrics(idx.data(Qt.ItemDataRole.FontRole) or tree.font()).horizontalAdvance(idx.data())
        assert tree.columnWidth(0) - tree.indentation() >= need, idx.data()


def test_shortcuts(loaded):
    acts = loaded.actions_
    assert acts.copy.shortcut().toString() == "Ctrl+C"
    assert acts.find.shortcut().toString() == "Ctrl+F"
    assert acts.help.shortcut().toString() == "F1"
    acts.find.trigger()
    assert loaded.tree.filter.hasFocus() or QApplication.focusWidget() is loaded.tree.filter


def test_filter_narrows_tree(loaded):
    loaded.tree.filter.setText("ZOSB")
    proxy = loaded.tree.proxy
    labels = []
    stack = [proxy.index(r, 0) for r in range(proxy.rowCount())]
    while stack:
        idx = stack.pop()
        labels.append(idx.data())
        stack += [proxy.index(r, 0, idx) for r in range(proxy.rowCount(idx))]
    assert any(lb.startswith("ZOSB") for lb in labels)
    assert not any(lb.startswith("ZOSA") for lb in labels)


def test_glossary_and_about(qtbot, loaded):
    dlg = loaded.show_glossary()
    qtbot.addWidget(dlg)
    assert dlg.table.rowCount() > 10
    texts = [dlg.table.item(r, 0).text() for r in range(dlg.table.rowCount())]
    assert "CPI" in texts and "RNI" in texts
    from app import __version__
    from app.ui.help import about_text

    text = about_text(loaded.ws)
    assert __version__ in text and "z16" in text


def test_health_double_click_selects_node(qtbot, loaded):
    finding = next((f for f in loaded.ws.findings if f.key.get("system")), None)
    if finding is None:
        from app.findings import make_finding

        finding = make_finding("x", 0, "warning", "t", "test", "", system="ZOSB")
    loaded.show_finding(finding)
    wait_loaded(qtbot, loaded)
    nodes = loaded.selection.value.nodes
    assert nodes and finding.key["system"] in nodes[0]


def test_settings_persist_geometry(qtbot, loaded, isolated_settings):
    loaded.resize(1100, 750)
    loaded.close()
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    from app.ui import settings

    assert settings.get_value("window/geometry") is not None
    again = MainWindow(Workspace())
    qtbot.addWidget(again)
    assert again._state_restored  # dock layout came back (the offscreen screen clamps the geometry itself)
    assert again.table.placeholder.text() == M.PLACEHOLDER


def test_glossary_and_about_use_formula_override(qtbot, tmp_path, smf_a):
    import json

    from app.engine import Workspace
    from app.ui.help import about_text
    from app.ui.main_window import MainWindow

    expr = "2.0*(0.4*L3P+1.0*L4LP+2.0*L4RP+5.0*MEMP)/100"
    f = tmp_path / "site.json"
    f.write_text(json.dumps({"z16": {"version": "z16 / site test", "metrics": {"RNI": {"expr": expr}}}}))
    w = MainWindow(Workspace(formula_file=f))
    qtbot.addWidget(w)
    w.show()
    w.open_files([smf_a])
    wait_loaded(qtbot, w)
    dlg = w.show_glossary()
    qtbot.addWidget(dlg)
    assert dlg.generation.currentText() == "z16"
    texts = [dlg.table.item(r, c).text() for r in range(dlg.table.rowCount()) for c in range(dlg.table.columnCount())]
    assert "z16 / site test" in " ".join(texts)
    rni = next(r for r in range(dlg.table.rowCount()) if dlg.table.item(r, 0).text() == "RNI")
    assert dlg.table.item(rni, 2).text() == expr
    for live in (True, False):      # False: Help > About while files are being read
        text = about_text(w.ws, live=live)
        assert "z16 / site test" in text and "site.json" in text
    w.loader.cancel_all()
