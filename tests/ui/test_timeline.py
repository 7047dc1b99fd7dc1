"""Timelines: x axes linked to one base view, fixed axis width, crosshair, region -> time window."""

from __future__ import annotations

import pandas as pd
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import wait_loaded


def _visible(tl):
    return [tl.plots[p] for p in tl.visible_plots()]


def test_plots_are_drawn_with_legend(loaded):
    loaded.tabs.setCurrentWidget(loaded.timeline)
    tl = loaded.timeline
    assert tl.stack.currentIndex() == 1
    plots = _visible(tl)
    assert len(plots) >= 3
    cpi = tl.plots["cpi"]
    assert len(cpi.listDataItems()) >= 1
    assert cpi.legend is not None and len(cpi.legend.items) >= 1
    assert {p.getAxis("left").width() for p in plots} == {60}


def test_linked_pan_and_range(qtbot, loaded):
    loaded.tabs.setCurrentWidget(loaded.timeline)
    tl = loaded.timeline
    plots = _visible(tl)
    lo, hi = tl.data_range()
    plots[1].getViewBox().setXRange(lo + 3600, lo + 7200, padding=0)
    qtbot.waitUntil(lambda: all(abs(p.getViewBox().viewRange()[0][0] - (lo + 3600)) < 1 for p in plots))
    ranges = [p.getViewBox().viewRange()[0] for p in plots]
    assert all(abs(r[0] - ranges[0][0]) < 1e-6 and abs(r[1] - ranges[0][1]) < 1e-6 for r in ranges)
    plots[-1].getViewBox().translateBy(x=1800)
    ranges = [p.getViewBox().viewRange()[0] for p in plots]
    assert all(abs(r[0] - ranges[0][0]) < 1e-6 for r in ranges)
    assert abs(ranges[0][0] - (lo + 5400)) < 1
    assert hi > lo


def test_plot_chooser_hides_plots(loaded):
    tl = loaded.timeline
    item = tl.chooser.item(1)  # L1MP
    item.setCheckState(item.checkState().__class__.Unchecked)
    assert "l1mp" not in tl.visible_plots()
    assert not tl.plots["l1mp"].isVisible()


def test_crosshair_readout(loaded):
    tl = loaded.timeline
    lo, hi = tl.data_range()
    x = (lo + hi) / 2
    tl.show_cursor_at(x)
    assert all(abs(line.value() - x) < 1e-6 for line in tl.vlines.values())
    assert "CPI" in tl.readout.text()


def test_region_sets_window_and_table_follows(qtbot, loaded):
    tl = loaded.timeline
    rows_before = loaded.table.model.rowCount()
    lo, hi = tl.data_range()
    tl.region.setRegion((lo + 3 * 3600, lo + 9 * 3600))
    tl.region.sigRegionChangeFinished.emit(tl.region)
    sel = loaded.selection.value
    assert sel.has_window
    wait_loaded(qtbot, loaded)
    model = loaded.table.model
    assert 0 < model.rowCount() < rows_before
    ends = pd.to_datetime(model.frame.loc[~model.frame["summary"], "interval_end"])
    start = sel.start.tz_convert("UTC").tz_localize(None)
    assert ends.min() > start - pd.Timedelta(seconds=1)
    loaded.actions_.clear_window.trigger()
    wait_loaded(qtbot, loaded)
    assert not loaded.selection.value.has_window
    assert loaded.table.model.rowCount() == rows_before


def test_dark_mode_plots_follow(loaded):
    loaded.actions_.dark.setChecked(True)
    assert loaded.timeline.dark
    loaded.actions_.dark.setChecked(False)
    assert not loaded.timeline.dark


def test_legends_outside_data_and_sourcing_fixed(loaded):
    loaded.tabs.setCurrentWidget(loaded.timeline)
    QApplication.processEvents()
    tl = loaded.timeline
    for pid in tl.visible_plots():
        p = tl.plots[pid]
        if p.legend is None or not p.legend.items:
            continue
        legend = p.legend.mapRectToScene(p.legend.boundingRect())
        data = p.getViewBox().sceneBoundingRect()
        assert not legend.intersects(data), pid    # in the title row, never over the curves
    if "sourcing" in tl.visible_plots():
        lo, hi = tl.plots["sourcing"].getViewBox().viewRange()[1]
        assert (lo, hi) == (0, 100)
