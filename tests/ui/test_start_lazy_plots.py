"""Issue 23 (session 9): the start's window imports pyqtgraph only when a plot is first shown or used; the
Timelines tab makes its view and draws its plots when first shown; the tabs not needed for the first table
(Compare, Profile, Rankings & peaks, Open Dataset) are installed once it is shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.ui.conftest import wait_loaded

START = """
import json, sys, time
from PySide6.QtWidgets import QApplication
from app.ui.main_window import MainWindow

qapp = QApplication(sys.argv[:1])
w = MainWindow(shell=True)
w.resize(1024, 700)
w.show()
marks = {}

def rows(*_):
    if w.table.model.rowCount() and "table" not in marks:
        marks["table"] = ["pyqtgraph" in sys.modules, "compare" in w.__dict__]

def start():
    marks["built"] = ["pyqtgraph" in sys.modules, "compare" in w.__dict__, w.timeline.made, w.smt.charts.made]
    w.table.model.modelReset.connect(rows)
    w.table.model.rowsInserted.connect(rows)
    w.open_files([sys.argv[1]])

w.after_first_paint(start)
end = time.time() + 100
while time.time() < end and not ("table" in marks and getattr(w, "tabs_installed", False) and not w.busy()):
    qapp.processEvents()
    time.sleep(0.005)
marks["installed"] = [w.tabs.indexOf(w.compare.tab) > 0, w.timeline.made, w.errors]
w.tabs.setCurrentWidget(w.timeline)
end = time.time() + 30
while time.time() < end and not w.timeline.draw_count:
    qapp.processEvents()
    time.sleep(0.005)
marks["shown"] = ["pyqtgraph" in sys.modules, w.timeline.made, w.timeline.draw_count, len(w.timeline.series)]
print(json.dumps(marks))
"""


def test_start_imports_pyqtgraph_only_for_a_plot(tmp_path, smf_a):
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root),
               NESTSCOPE_SETTINGS_FILE=str(tmp_path / "s.ini"), NESTSCOPE_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-c", START, smf_a], capture_output=True, text=True, env=env, cwd=root,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    marks = json.loads(p.stdout.strip().splitlines()[-1])
    # the views built: no pyqtgraph, no Compare tab yet, neither chart made
    assert marks["built"] == [False, False, False, False]
    # the first table shown: still no pyqtgraph, the other tabs come after it
    assert marks["table"] == [False, False]
    # then the Compare tab (and its charts) is installed; the timelines are still not made, nothing went wrong
    assert marks["installed"] == [True, False, []]
    # the Timelines tab shown: its view made and drawn once, one series per node of the selection (at least one)
    shown, made, draws, series = marks["shown"]
    assert shown and made and draws == 1 and series >= 1


def test_timelines_tab_drawn_when_first_shown(qtbot, loaded):
    w = loaded
    wait_loaded(qtbot, w)
    tl = w.timeline
    assert not tl.made                              # the rows were given to the page, the view not made
    w.tabs.setCurrentWidget(tl)
    qtbot.waitUntil(lambda: tl.made and tl.draw_count >= 1, timeout=30_000)
    view = tl.view()
    assert tl.isAncestorOf(view) and view.isVisible()
    assert tl.draw_count == 1 and len(tl.series) >= 1     # the selected node drawn, once
    assert view.plots["cpi"].isVisible() and tl.glw is view.scroll.widget()
    assert tl.window == view.window and w.errors == []


def test_window_region_passed_on_from_the_view(qtbot, loaded):
    w = loaded
    wait_loaded(qtbot, w)
    got: list[tuple] = []
    w.timeline.window_requested.connect(lambda a, b: got.append((a, b)))
    w.timeline.view().window_requested.emit(None, None)      # the view's own signal reaches the window's page
    assert got == [(None, None)]


def test_tabs_asked_for_before_the_first_table_are_installed_then(qtbot, monkeypatch):
    """The start installs Compare & co. after its first table; closing the files before it (File > Close Files uses
    the Compare tab) installs them at once, once."""
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 120_000)
    w = mw.MainWindow(Workspace(), shell=True)
    qtbot.addWidget(w)
    w._build(w._ws_given)                   # as after the first paint; no file read, no table
    assert "compare" not in w.__dict__ and not w.__dict__.get("tabs_installed")
    titles = lambda: [w.tabs.tabText(i) for i in range(w.tabs.count())]   # noqa: E731
    assert "Compare" not in titles()
    assert w.close_files() is True             # uses w.compare.tab: installed now
    assert w.tabs_installed and w.compare.tab is w.__dict__["compare"].tab
    assert titles().count("Compare") == 1 and hasattr(w, "open_dataset_action") and w.errors == []
    from app.ui.window_tabs import install_now

    install_now(w)                            # the later install finds them installed: nothing twice
    assert titles().count("Compare") == 1
    with __import__("pytest").raises(AttributeError):
        w.no_such_attribute                   # noqa: B018 - other names are not found as before
