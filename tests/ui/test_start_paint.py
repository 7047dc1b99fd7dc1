"""Issue 23: the start shows the window before the demo's reads begin (MainWindow.after_first_paint), and the
workspace cache writes wait until the window is all idle."""

from __future__ import annotations

from tests.ui.conftest import wait_loaded


def test_after_first_paint_waits_for_the_paint(qtbot, monkeypatch):
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 120_000)    # a loaded machine: never the fallback here
    w = mw.MainWindow(Workspace())
    qtbot.addWidget(w)
    ran: list[bool] = []
    w.after_first_paint(lambda: ran.append(w._painted))
    assert ran == []                      # never at once: the window was not even shown
    w.resize(1024, 700)
    w.show()
    qtbot.waitUntil(lambda: bool(ran), timeout=60_000)
    assert ran == [True]                  # it ran after the window's first paint
    w.after_first_paint(lambda: ran.append("again"))
    assert ran == [True]                  # painted already: through the event loop, not inside the call
    qtbot.waitUntil(lambda: len(ran) == 2, timeout=30_000)


def test_after_first_paint_runs_without_a_paint(qtbot, monkeypatch):
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 50)
    w = mw.MainWindow(Workspace())          # never shown: no paint comes
    qtbot.addWidget(w)
    ran: list[int] = []
    w.after_first_paint(lambda: ran.append(1))
    qtbot.waitUntil(lambda: ran == [1], timeout=30_000)
    qtbot.wait(100)
    assert ran == [1]                       # once


def test_cache_writes_held_until_all_idle(qtbot, window, smf_a, monkeypatch):
    from app import cache as wc

    released: list[tuple] = []
    real = wc.pause_writes

    class Spy:
        def __init__(self):
            self.p = real()

        def release(self):
            # what was done when the writes were let go: the table shown and the level frames prepared
            released.append((window.table.model.rowCount(), window.runner.busy(),
                             window.ws.prepared("lpar_interval")))
            self.p.release()
    monkeypatch.setattr(wc, "pause_writes", Spy)
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert len(released) == 1
    rows, busy, prepared = released[0]
    assert rows > 0 and not busy and prepared


# -- the start's shell (issue 23, session 9): painted before pandas, pyqtgraph and the engine are imported -------
SHELL_START = """
import sys
from PySide6.QtWidgets import QApplication
import app.commands.gui
from app.ui.main_window import MainWindow
from app.ui.window_files import start_plan
qapp = QApplication(sys.argv[:1])
w = MainWindow(shell=True)      # what `nestscope` shows first (app/commands/gui.py), before any event is processed
w.resize(1024, 700)
w.show()
print(sorted(m for m in ("pandas", "numpy", "pyqtgraph", "pyarrow", "app.engine", "app.analysis", "app.formats")
             if m in sys.modules))
"""


def test_the_start_shows_its_window_without_pandas_or_pyqtgraph(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root),
               NESTSCOPE_SETTINGS_FILE=str(tmp_path / "s.ini"))
    p = subprocess.run([sys.executable, "-c", SHELL_START], capture_output=True, text=True, env=env, cwd=root,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    # each of these costs 0.1-1.2 s of imports: none may come before the first paint
    assert json.loads(p.stdout.strip().splitlines()[-1].replace("'", '"')) == []


def test_app_pins_pandas_string_storage_when_pandas_loads_later(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, app; assert 'pandas' not in sys.modules; import pandas as pd; "
            "print(pd.Series(['ZOSA']).dtype.storage)")
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "python"       # pandas 3 with pyarrow installed would say "pyarrow"


def test_shell_window_builds_its_views_after_its_first_paint(qtbot, monkeypatch):
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 120_000)
    ws = Workspace()
    w = mw.MainWindow(ws, shell=True)
    qtbot.addWidget(w)
    assert not hasattr(w, "table") and w.busy()          # a frame only: nothing built, "busy" until it is
    seen: list[tuple] = []
    w.after_first_paint(lambda: seen.append((w._built, w.ws is ws, w.centralWidget() is w.tabs)))
    w.resize(1024, 700)
    w.show()
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert seen == [(True, True, True)]   # the start's functions see the whole window, over the workspace given
    qtbot.waitUntil(lambda: not w.busy(), timeout=30_000)
    assert w.table.model.rowCount() == 0 and w.errors == []
