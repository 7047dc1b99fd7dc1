"""The SMT tab's charts read (issue 26): the legend beside the title (it sat over the lines), 1-minute values drawn
as the mean of the values under a few pixels (a solid band of noise before), the time axis and the tables' times
in the window's time zone, named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.engine.timezone import Zones
from app.ui.time_zone import ZONE
from tests.ui.conftest import wait_loaded


@pytest.fixture
def smt_shown(qtbot, window, monwrite):
    window.open_files([monwrite])
    wait_loaded(qtbot, window)
    key = next(tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "lpar"
               and str(n.key[2]) == "VMPROD")
    window.tree.select_keys([key])
    window.tabs.setCurrentWidget(window.smt)
    qtbot.waitUntil(lambda: window.smt.stack.currentIndex() == 1 and bool(window.smt.charts.lines["thread_density"]),
                    timeout=60_000)
    QApplication.processEvents()
    return window


def test_legend_beside_the_title_and_lines_readable(smt_shown):
    charts = smt_shown.smt.charts
    first = charts.plots["thread_density"]
    assert [label.text for _s, label in first.legend.items] == ["VMPROD IFL"]
    legend = first.legend.mapRectToScene(first.legend.boundingRect())
    for p in charts.plots.values():                      # over no plot's data area
        assert not legend.intersects(p.getViewBox().sceneBoundingRect())
    for col, items in charts.lines.items():
        (_name, item), = items
        width = item.getViewBox().width()
        shown_x, shown_y = item.getData()
        # 1,440 one-minute values on a plot a few hundred px wide: at most one point a pixel on screen, each the
        # mean of the values under it (inside their range, and smoother than them)
        assert len(item.xData) == 1440 and len(shown_x) <= width, (col, len(shown_x), width)
        y = item.yData[np.isfinite(item.yData)]
        assert np.nanmin(shown_y) >= y.min() and np.nanmax(shown_y) <= y.max()
        assert np.nanstd(np.diff(shown_y)) < np.std(np.diff(y)), col


def test_times_in_the_window_zone(smt_shown):
    """Local time with a z/VM system at UTC+01:00: the charts' time axes and the tables' times follow and name it
    (the axis said UTC while its ticks were local); 00:01 UTC is 01:01 local."""
    w = smt_shown
    charts, model = w.smt.charts, w.smt.type_model
    col = model.column_index("interval_end")
    assert charts.plots["mt_utilization"].getAxis("bottom").labelText == "Interval end (UTC)"
    assert model.headerData(col, Qt.Orientation.Horizontal).endswith("(UTC)")
    row = model.n_mean()                                   # the first interval row
    utc = pd.Timestamp(model.frame.iloc[model.frame_row(row)]["interval_end"])
    assert model.data(model.index(row, col)) == utc.strftime("%m-%d %H:%M")
    ends = pd.to_datetime(model.frame["interval_end"].dropna())
    iv = pd.DataFrame({"cec": "C", "lpar": "VMPROD", "system": "VMSYS1", "interval_end": ends,
                       "utc_offset_s": 3600.0})
    mode, zones = ZONE.mode, ZONE.zones
    try:
        ZONE.set_zones(Zones(iv))
        ZONE.set_mode("local")
        assert ZONE.local
        assert charts.plots["mt_utilization"].getAxis("bottom").labelText == "Interval end (local, UTC+01:00)"
        assert model.headerData(col, Qt.Orientation.Horizontal).endswith("(local, UTC+01:00)")
        local = utc + pd.Timedelta(hours=1)
        assert model.data(model.index(row, col)) == local.strftime("%m-%d %H:%M")
        assert model.data(model.index(row, col), Qt.ItemDataRole.ToolTipRole) == \
            local.strftime("%Y-%m-%d %H:%M local, UTC+01:00")
    finally:
        ZONE.set_mode(mode)
        ZONE.set_zones(zones)
    assert model.data(model.index(row, col)) == utc.strftime("%m-%d %H:%M")
