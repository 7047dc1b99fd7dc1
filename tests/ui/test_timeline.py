"""Timelines: x axes linked to one base view, fixed axis width, crosshair, region -> time window."""

from __future__ import annotations

import pytest

import pandas as pd
from PySide6.QtWidgets import QApplication

from app.ui.timeline_plots import LEFT_AXIS_WIDTH
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
    assert {p.getAxis("left").width() for p in plots} == {LEFT_AXIS_WIDTH}


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


def _lpar_keys(w):
    return [tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "lpar" and not n.info.get("partition_only")]


def test_sourcing_small_multiples_one_per_node(qtbot, loaded):
    loaded.tabs.setCurrentWidget(loaded.timeline)
    tl = loaded.timeline
    keys = _lpar_keys(loaded)[:2]
    assert len(keys) == 2
    loaded.tree.select_keys(keys)
    loaded.selection.set_nodes(keys)
    qtbot.waitUntil(lambda: not loaded.busy() and len(tl.series) == 2, timeout=60_000)
    QApplication.processEvents()
    plots = tl.sourcing_plots()
    assert len(plots) == 2 and all(p.isVisible() for p in plots)
    assert not any(p.isVisible() for p in tl.sourcing_extra[1:])
    for p, s in zip(plots, tl.series):
        assert s.label in p.titleLabel.text
        assert len(p.listDataItems()) >= 2                       # a stacked area each
        assert p.getViewBox().viewRange()[1] == [0, 100]
    lo, _hi = tl.data_range()
    tl.plots["cpi"].getViewBox().setXRange(lo + 3600, lo + 7200, padding=0)
    plots[-1].getViewBox().translateBy(x=1800)
    base = tl.base_vb.viewRange()[0]
    assert abs(base[0] - (lo + 5400)) < 1
    for p in plots:
        r = p.getViewBox().viewRange()[0]
        assert abs(r[0] - base[0]) < 1e-6 and abs(r[1] - base[1]) < 1e-6
    # back to one node: one plain sourcing plot
    loaded.selection.set_nodes(keys[:1])
    qtbot.waitUntil(lambda: not loaded.busy() and len(tl.series) == 1, timeout=60_000)
    assert len(tl.sourcing_plots()) == 1 and not any(p.isVisible() for p in tl.sourcing_extra)


def test_sourcing_multiples_note_more_nodes(qtbot):
    from app.ui.timeline import TimelineView
    from app.ui.timeline_plots import MAX_SOURCING_NODES

    tl = TimelineView()
    qtbot.addWidget(tl)
    n = MAX_SOURCING_NODES + 2
    ends = pd.date_range("2026-01-01 00:15", periods=4, freq="15min", tz="UTC")
    df = pd.DataFrame([{"cec": "C", "lpar": f"L{i}", "interval_end": e, "CPI": 2.0, "L2P": 60.0, "L3P": 30.0,
                        "MEMP": 10.0} for i in range(n) for e in ends])
    tl.set_frame(df)
    plots = tl.sourcing_plots()
    assert len(plots) == MAX_SOURCING_NODES
    assert "+2 more nodes not shown" in plots[-1].titleLabel.text
    assert "more nodes" not in plots[0].titleLabel.text
    assert len(plots[0].legend.items) == 3 and not plots[1].legend.items   # one legend serves all


def test_same_lpar_name_on_two_cecs_stays_two_series():
    from app.ui.timeline_plots import split_series

    ends = pd.date_range("2026-01-01 00:15", periods=3, freq="15min", tz="UTC")
    df = pd.DataFrame([{"cec": cec, "lpar": "ZOSA", "interval_end": e, "CPI": 1.0}
                       for cec in ("3931-A", "8561-B") for e in ends])
    series = split_series(df)
    assert [s.label for s in series] == ["ZOSA (3931-A)", "ZOSA (8561-B)"]
    assert all(len(s.x) == 3 for s in series)
    df["generation"] = ["z16"] * 3 + ["z15"] * 3          # legends name the generation too, where it is known
    assert [s.label for s in split_series(df)] == ["ZOSA (3931-A z16)", "ZOSA (8561-B z15)"]


def test_linked_plots_share_the_time_range_exactly_at_any_width(qtbot):
    """pyqtgraph lined linked views up by whole screen pixels: at a view 455.5 px wide the plots' x range differed
    from the time axis' by one pixel's worth of time (4.35 s at one hour, issue 26).  The stack's views are one
    column: the same range to the microsecond at every width."""
    from app.ui.timeline import TimelineView

    tl = TimelineView()
    qtbot.addWidget(tl)
    ends = pd.date_range("2026-01-01 00:15", periods=96, freq="15min", tz="UTC")
    tl.set_frame(pd.DataFrame([{"cec": "C", "lpar": f"L{i}", "interval_end": e, "CPI": 2.0, "L1MP": 3.0,
                                "L2P": 60.0, "L3P": 30.0, "MEMP": 10.0} for i in range(2) for e in ends]))
    tl.show()
    qtbot.waitExposed(tl)
    lo, _hi = tl.data_range()
    fractional = 0
    for width in range(600, 640, 3):
        tl.resize(width, 900)
        QApplication.processEvents()
        plots = [p for p in tl._shown_plots() if p.isVisible()]
        assert len(plots) >= 4
        fractional += any(p.getViewBox().sceneBoundingRect().width() % 1 for p in plots)
        tl.plots["cpi"].getViewBox().setXRange(lo + 3600, lo + 7200, padding=0)
        plots[-1].getViewBox().translateBy(x=1800)
        base = tl.base_vb.viewRange()[0]
        assert base == pytest.approx([lo + 5400, lo + 9000], abs=1e-6), width
        for p in plots:
            assert p.getViewBox().viewRange()[0] == pytest.approx(base, abs=1e-6), (width, p.titleLabel.text)
    assert fractional      # the widths where whole-pixel alignment went wrong were met
