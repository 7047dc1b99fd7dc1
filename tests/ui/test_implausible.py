"""The window and implausible CPU-intervals (issue 20): View > Keep implausible intervals (kept in the settings),
the status-bar count, the table's marks and tooltips, and a stacked sourcing plot that never hides a value."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt

from app.ui import messages as M
from app.ui import settings
from app.ui.implausible import SETTING, implausible_count, status_text
from app.ui.timeline_plots import fit_y, readout_marks
from tests.ui.conftest import wait_loaded

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from damaged import samples, write  # noqa: E402


def _summary(window) -> tuple[int, pd.Series]:
    m = window.table.model
    rows = [r for r in range(m.rowCount()) if m.is_summary_row(r)]
    assert rows
    return rows[0], m.frame.iloc[m._order[rows[0]]]


def test_switch_status_and_marks(qtbot, window, tmp_path):
    path, _ = write(tmp_path, samples(intervals=4), (5, "E149"))
    assert window.keep_implausible_action.isChecked() is False
    window.open_files([path])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.table.model.rowCount() > 0, timeout=60_000)
    qtbot.waitUntil(lambda: window.implausible_label.text() != "", timeout=60_000)
    assert window.implausible_label.text() == M.STATUS_LEFT_OUT.format(n=1)
    row, rec = _summary(window)
    assert rec["left_out"] == 1 and "left-out" in rec["quality"]
    left_l3p = rec["L3P"]
    tip = window.table.model.data(window.table.model.index(row, 0), Qt.ItemDataRole.ToolTipRole)
    assert M.LEFT_OUT_TIP.format(n=1) in tip and M.QUALITY_CODE_TIPS["implausible"] in tip

    window.keep_implausible_action.setChecked(True)
    assert settings.get_bool(SETTING) is True
    qtbot.waitUntil(lambda: _summary(window)[1]["left_out"] == 0, timeout=60_000)
    assert window.ws.keep_implausible is True
    assert _summary(window)[1]["L3P"] > left_l3p + 1          # the damaged counter is in the sums again
    assert window.implausible_label.text() == M.STATUS_KEPT.format(n=1)
    assert window.errors == []


def test_setting_is_restored(qtbot, window):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    window.keep_implausible_action.setChecked(True)
    w2 = MainWindow(Workspace())
    qtbot.addWidget(w2)
    assert w2.keep_implausible_action.isChecked() and w2.keep_implausible is True


def test_sourcing_axis_shows_values_above_100(qtbot):
    plot = pg.PlotItem()
    plot.plot(np.arange(3.0), np.array([90.0, 100.0, 99.0]))
    fit_y(plot, "sourcing", False)
    assert plot.viewRange()[1] == [0, 100]
    plot.plot(np.arange(3.0), np.array([90.0, 873.6, 99.0]))      # a kept implausible interval: not cut off
    fit_y(plot, "sourcing", False)
    assert plot.viewRange()[1][1] >= 873.6


def test_readout_and_status_texts():
    assert readout_marks(pd.Series({"quality": "implausible,left-out", "left_out": 2})) == \
        [M.READOUT_LEFT_OUT.format(n=2)]
    assert readout_marks(pd.Series({"quality": "implausible", "left_out": 0})) == [M.READOUT_IMPLAUSIBLE]
    assert readout_marks(pd.Series({"quality": "", "left_out": 0})) == []

    class F:
        def __init__(self, code, **key):
            self.code, self.key = code, key

    assert implausible_count([F("implausible"), F("implausible", count=4), F("lost-data")]) == 5
    assert status_text(0, False) == "" and status_text(3, True) == M.STATUS_KEPT.format(n=3)
