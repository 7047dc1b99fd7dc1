"""Issue 21, the conventions of a desktop tool: File > New, File > Close Files, what a plain start opens, shortcuts
wherever the focus is, the Open dialog's default filter, the wheel zooming time only, File > Formula Sets...
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app.ui import messages as M
from tests.ui.conftest import sample, wait_loaded

Z16 = "3931-123F5"


def lpars(w) -> set[str]:
    return {n.key[2] for n in w.tree.model.all_nodes() if n.level == "lpar" and not n.info.get("partition_only")}


# ------------------------------------------------------------------ New and Close Files
def _answer(monkeypatch, button, asked: list):
    from PySide6.QtWidgets import QMessageBox

    def question(parent, title, text, buttons, default):
        asked.append(text)
        return button
    monkeypatch.setattr(QMessageBox, "question", question)


def test_file_new_asks_to_save_and_cancel_keeps_everything(qtbot, loaded, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    w = loaded
    asked: list[str] = []
    _answer(monkeypatch, QMessageBox.StandardButton.Cancel, asked)
    n = len(w.ws.files)
    assert w.has_unsaved_changes() and not w.new_workspace()
    assert asked == [M.WS_UNSAVED_NEW_TEXT] and len(w.ws.files) == n and w.tree.model.rowCount()


def test_file_new_empties_the_window(qtbot, loaded, smf_a, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    w = loaded
    assert w.ws.files and w.tree.model.rowCount()
    asked: list[str] = []
    _answer(monkeypatch, QMessageBox.StandardButton.Discard, asked)
    assert w.new_workspace() and asked == [M.WS_UNSAVED_NEW_TEXT]
    assert w.ws.files == [] and w.tree.model.rowCount() == 0 and w.selection.value.nodes == ()
    assert w.tree.placeholder.text() == M.TREE_PLACEHOLDER and w.table.model.rowCount() == 0
    assert not w.compare.tab.is_set() and w.compare.tab.comparison is None
    # the same file opens again (it is no longer "already open")
    assert w.open_files([smf_a]) == 1
    wait_loaded(qtbot, w)
    assert lpars(w) == {"ZOSA"} and len(w.ws.files) == 1
    assert w.errors == []


def test_close_files_keeps_the_others(qtbot, loaded, smf_a, smf_b):
    w = loaded
    assert lpars(w) == {"ZOSA", "ZOSB"}
    dlg = w.close_files_dialog()
    names = [dlg.files.item(i).text() for i in range(dlg.files.count())]
    assert sorted(names) == sorted([Path(smf_a).name, Path(smf_b).name])
    chosen = [dlg.files.item(i).text() for i in range(dlg.files.count()) if dlg.files.item(i).isSelected()]
    assert chosen == [Path(smf_a).name]          # the selected LPAR (the first, ZOSA) is in smf_a
    dlg.reject()
    assert w.close_files([smf_a])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.table.model.rowCount() > 0, timeout=30_000)
    assert [Path(r.file).name for r in w.ws.files] == [Path(smf_b).name]
    assert lpars(w) == {"ZOSB"} and w.selection.value.nodes[0][2] == "ZOSB"
    # its numbers are the engine's over the file that stayed
    want = w.ws.metrics(by="lpar")
    assert list(want["lpar"]) == ["ZOSB"]
    assert w.close_files(None)
    assert w.ws.files == [] and w.errors == []


# ------------------------------------------------------------------ what a plain start opens
def test_start_plan(qtbot, window, tmp_path, smf_a):
    from app.ui import window_files as wf

    samples = wf.sample_files()
    assert samples and all(wf.is_sample(s) for s in samples)
    assert wf.start_plan([], no_sample=False) == (samples, None)      # first start: the demo
    assert wf.start_plan([], no_sample=True) == ([], None)
    assert wf.start_plan(["x.rdw"], no_sample=False) == (["x.rdw"], None)
    window.open_files(samples[:1])                                       # the demo does not count as own files
    wait_loaded(qtbot, window)
    assert wf.start_plan([], no_sample=False) == (samples, None)
    own = tmp_path / "mine_smf113.rdw.gz"
    own.write_bytes(Path(smf_a).read_bytes())
    window.open_files([str(own)])
    wait_loaded(qtbot, window)
    assert wf.start_plan([], no_sample=False) == ([], None)            # no session saved yet: an empty window
    window.close()                                                     # the session is kept for the next start
    files, session = wf.start_plan([], no_sample=False)
    assert files == [] and session is not None
    doc = json.loads(Path(session).read_text())
    assert str(own) in json.dumps(doc) and samples[0] in json.dumps(doc)


def test_help_open_sample(qtbot, window):
    from app.ui import window_files as wf

    assert window.actions_.sample in window.menuBar().actions()[-1].menu().actions()
    assert window.open_sample() == len(wf.sample_files())
    wait_loaded(qtbot, window)
    assert window.errors == []


def test_no_sample_in_help(capsys):
    from app.cli import build_parser, main

    text = build_parser().format_help()
    assert "--no-sample" in text
    with pytest.raises(SystemExit):
        main(["gui", "--help"])
    assert "--no-sample" in capsys.readouterr().out


# ------------------------------------------------------------------ shortcuts and the Open dialog
def test_ctrl_e_works_while_the_filter_has_the_focus(qtbot, loaded):
    w = loaded
    w.activateWindow()
    w.tree.filter.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.tree.filter, timeout=5000)
    assert "Ctrl+E" in w.actions_.guard.keys() and "Ctrl+C" not in w.actions_.guard.keys()
    qtbot.keyClick(w.tree.filter, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    dlg = getattr(w.compare, "dialog", None)
    assert dlg is not None and dlg.isVisible()
    dlg.close()
    # a text field keeps its own keys: Ctrl+A selects the filter's text
    w.tree.filter.setText("ZOS")
    qtbot.keyClick(w.tree.filter, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert w.tree.filter.selectedText() == "ZOS"


def test_the_shortcut_guard_watches_the_focused_text_field_only(qtbot, window):
    """Issue 23: the guard filters the events of the text field that has the focus, not every event of the
    application (thousands of calls into Python on the GUI thread during a big file's read): it follows the focus
    onto a text field and off it again (a spin box: its own line edit too), and a ShortcutOverride of one of the
    window's shortcuts sent to the focused filter box is refused (ignored: the action's shortcut gets it)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QLineEdit, QSpinBox

    w = window
    guard = w.actions_.guard
    w.activateWindow()
    w.tree.filter.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.tree.filter, timeout=5000)
    assert guard.watched == [w.tree.filter]

    def override(field) -> bool:      # True: the event was left to the window's shortcut (refused to the field)
        ev = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
        QApplication.sendEvent(field, ev)
        return not ev.isAccepted()
    assert override(w.tree.filter)              # Ctrl+E is the Compare action's: refused to the filter box
    spin = QSpinBox(w)
    spin.show()
    spin.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is spin, timeout=5000)
    assert guard.watched == [spin, spin.findChild(QLineEdit)]     # the filter box no longer
    w.table.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.table.view, timeout=5000)
    assert guard.watched == []                   # the table is no text field: nothing watched
    spin.deleteLater()


def test_open_dialog_default_filter(window, monkeypatch):
    got = {}

    def fake(parent, title, start, filters, *a, **k):
        got["filters"] = filters
        return [], ""
    monkeypatch.setattr("app.ui.main_window.QFileDialog.getOpenFileNames", fake)
    window.open_dialog()
    first = got["filters"].split(";;")[0]
    for suffix in (".rdw", ".bdw", ".vbs", ".mondata", ".smf", ".gz", ".trs"):
        assert suffix in first, suffix
    assert first.endswith("(*)")          # names without an extension match too


# ------------------------------------------------------------------ the wheel zooms time only
def test_wheel_zooms_time_and_keeps_y_fitted(qtbot, loaded):
    w = loaded
    w.tabs.setCurrentWidget(w.timeline)
    qtbot.waitUntil(lambda: not w.busy() and len(w.timeline.series) > 0, timeout=30_000)
    w.timeline.ensure_drawn()
    plots = [p for pid, p in w.timeline._data_plots().items() if not pid.startswith(("sourcing", "cec"))]

    def points(p) -> int:
        return sum(int(np.isfinite(np.asarray(c.yData, dtype=float)).sum()) for c in p.listDataItems()
                   if c.yData is not None)
    plot = max(plots, key=points)
    assert points(plot) > 10
    vb = plot.getViewBox()
    assert vb.state["mouseEnabled"] == [True, False]   # drags and the wheel move time only
    (x0, x1), _ = vb.viewRange()
    view = w.timeline.glw
    at = view.mapFromScene(vb.sceneBoundingRect().center())
    ev = QWheelEvent(QPointF(at), QPointF(view.mapToGlobal(at)), QPoint(0, 0), QPoint(0, 240),
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), ev)
    QApplication.processEvents()
    vb.updateAutoRange()
    (n0, n1), (y0, y1) = vb.viewRange()
    assert n1 - n0 < x1 - x0                     # time zoomed in
    assert vb.state["autoRange"][1]               # the value axis still follows the data in view
    ys = np.concatenate([np.asarray(c.yData, dtype=float)[(np.asarray(c.xData) >= n0) & (np.asarray(c.xData) <= n1)]
                         for c in plot.listDataItems() if c.yData is not None and len(c.yData)])
    ys = ys[np.isfinite(ys)]
    if len(ys):                                   # every line in view is on the chart
        assert y0 <= ys.min() and ys.max() <= y1, (y0, y1, ys.min(), ys.max())
    # Shift+wheel zooms the value axis and pins it; time stays; a double click gives it back to the data
    ev = QWheelEvent(QPointF(at), QPointF(view.mapToGlobal(at)), QPoint(0, 0), QPoint(0, 240),
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.ShiftModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), ev)
    QApplication.processEvents()
    (p0, p1), (q0, q1) = vb.viewRange()
    assert (p0, p1) == pytest.approx((n0, n1)) and q1 - q0 < y1 - y0
    assert not vb.state["autoRange"][1] and vb.state["mouseEnabled"] == [True, False]

    class DoubleClick:
        accepted = False

        def double(self):
            return True

        def button(self):
            return Qt.MouseButton.LeftButton

        def accept(self):
            self.accepted = True
    click = DoubleClick()
    vb.mouseClickEvent(click)
    assert click.accepted and vb.state["autoRange"][1]


# ------------------------------------------------------------------ File > Formula Sets...
def test_formula_sets_loads_a_user_file(qtbot, window, tmp_path):
    w = window
    w.open_files([sample("after_z16_ZOSA_smf113.rdw.gz")])
    wait_loaded(qtbot, w)
    template = json.loads((Path(__file__).resolve().parents[2] / "docs" / "formulas-template.json").read_text())
    # the template as shipped does not load: its letters are placeholders (a message, no traceback)
    raw = tmp_path / "template.json"
    raw.write_text(json.dumps(template))
    assert not w.load_formulas(str(raw))
    assert "RNI" in w._formula_error and w.errors == []
    # with numbers in place of K, a, b, c, d (hand values: K=2.9, a=0.45, b=1.5, c=3.2, d=6.5)
    for gen in ("z16", "z17"):
        template[gen]["metrics"]["RNI"]["expr"] = "2.9*(0.45*L3P+1.5*L4LP+3.2*L4RP+6.5*MEMP)/100"
        template[gen]["version"] = f"{gen} / site 2026-11 (test)"
    good = tmp_path / "site.json"
    good.write_text(json.dumps(template))
    assert w.load_formulas(str(good))
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.table.model.rowCount() > 0, timeout=30_000)
    assert w.ws.formula_file == str(good)
    assert w.ws.formula_versions()["z16"] == "z16 / site 2026-11 (test)"
    frame = w.table.model.frame
    assert set(frame["formula_set"].dropna()) == {"z16 / site 2026-11 (test)"}
    m = w.ws.metrics(by="lpar").iloc[0]
    want = 2.9 * (0.45 * m["L3P"] + 1.5 * m["L4LP"] + 3.2 * m["L4RP"] + 6.5 * m["MEMP"]) / 100
    assert m["RNI"] == pytest.approx(want, rel=1e-9)
    dlg = w.formula_sets_dialog()
    assert "z16 / site 2026-11 (test)" in dlg.text.text() and str(good) in dlg.text.text()
    dlg.close()
    assert w.errors == []
