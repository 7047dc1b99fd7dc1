"""Profile and Rankings & peaks tabs (issue 26): the tables are engine.views' frames, the heat map's cells are the
hour x weekday profile (empty cells stay empty), rankings and busy shares, a peak click sets the time window."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from app.engine.views import peaks, profile, ranking
from app.ui.frames import fmt_number
from app.ui.views_model import DAYS
from tests.ui.conftest import wait_loaded


def _idle(qtbot, w) -> None:
    qtbot.waitUntil(lambda: not w.busy() and not w.views.busy() and not w.compare.jobs.busy(), timeout=60_000)




def _show(qtbot, w, tab, key) -> None:
    w.tree.select_keys([key])
    _idle(qtbot, w)
    w.tabs.setCurrentWidget(tab)
    _idle(qtbot, w)


@pytest.fixture
def zosa(qtbot, loaded):
    w = loaded
    wait_loaded(qtbot, w)
    key = next(tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "lpar" and n.key[2] == "ZOSA")
    _show(qtbot, w, w.views.profile, key)
    return w, key


def _mid_hours(iv: pd.DataFrame) -> pd.DatetimeIndex:
    a = iv["interval_start"].to_numpy(dtype="datetime64[ns]")
    return pd.DatetimeIndex(a + (iv["interval_end"].to_numpy(dtype="datetime64[ns]") - a) // 2)


def test_profile_table_is_the_engines_profile(qtbot, zosa):
    w, key = zosa
    tab = w.views.profile
    want = profile(w.ws, by="hour", level="lpar", nodes=[key])
    m = tab.model
    assert m.rowCount() == len(want) == 24
    cols = {c.id: i for i, c in enumerate(m.columns)}
    assert "hour" in cols and "CPI" in cols and "LPARCPU" in cols
    for r in range(m.rowCount()):
        row = want.iloc[m.frame_row(r)]
        assert m.text(r, cols["hour"]) == str(int(row["hour"]))
        for mid in ("CPI", "L1MP", "LPARCPU"):
            assert m.text(r, cols[mid]) == fmt_number(row[mid], m.columns[cols[mid]].decimals), (r, mid)
    # hand check of one hour: 08:00 of ZOSA is all its cycles over all its instructions of the intervals whose
    # midpoint falls in 08:00-08:59, both days, every CPU summed (metrics.md: CPI = B0 / B1), not a mean of CPIs
    iv = w.ws.intervals
    part = iv[iv["lpar"].astype(str) == "ZOSA"]
    part = part[_mid_hours(part).hour == 8]
    cpi8 = part["B0"].sum() / part["B1"].sum()
    r8 = next(r for r in range(m.rowCount()) if m.text(r, cols["hour"]) == "8")
    assert float(m.frame["CPI"].iloc[m.frame_row(r8)]) == pytest.approx(cpi8, rel=1e-12)
    assert m.text(r8, cols["CPI"]) == fmt_number(cpi8, m.columns[cols["CPI"]].decimals)


def test_profile_by_weekday_and_both(qtbot, zosa):
    w, key = zosa
    tab = w.views.profile
    heat = tab.data.heat
    assert heat is not None and len(heat) == 48              # the heat map's job followed the table's
    tab.by.setCurrentIndex(tab.by.findData("weekday"))
    _idle(qtbot, w)
    assert tab.data.heat is heat                             # same selection and window: not computed again
    ids = [c.id for c in tab.model.columns]
    assert "weekday" in ids and "hour" not in ids
    want = profile(w.ws, by="weekday", level="lpar", nodes=[key])
    assert tab.model.rowCount() == len(want) == 2            # the sample holds a Monday and a Tuesday
    assert sorted(tab.model.frame["weekday"]) == ["Mon", "Tue"]
    tab.by.setCurrentIndex(tab.by.findData("hour-weekday"))
    _idle(qtbot, w)
    assert tab.model.rowCount() == 48
    assert {"weekday", "hour"} <= {c.id for c in tab.model.columns}


def test_heat_map_cells_are_the_hour_weekday_profile(qtbot, zosa):
    w, key = zosa
    tab = w.views.profile
    hw = profile(w.ws, by="hour-weekday", level="lpar", nodes=[key])
    hm = tab.heat_model
    for metric in ("CPI", "L1MP", "LPARCPU"):
        tab.metric.setCurrentIndex(tab.metric.findData(metric))
        assert hm.metric == tab.metric.currentText()
        for _, row in hw.iterrows():
            d, h = DAYS.index(row["weekday"]), int(row["hour"])
            assert hm.value(d, h) == pytest.approx(float(row[metric]), rel=1e-12)
            assert hm.data(hm.index(d, h)) == fmt_number(row[metric], hm.decimals)
            assert metric in hm.data(hm.index(d, h), Qt.ItemDataRole.ToolTipRole) or \
                tab.metric.currentText() in hm.data(hm.index(d, h), Qt.ItemDataRole.ToolTipRole)
        # the scale spans the grid's values
        vals = hw[metric].to_numpy(dtype=float)
        assert (hm.lo, hm.hi) == pytest.approx((np.nanmin(vals), np.nanmax(vals)))
        assert tab.bar.labels()[0] == fmt_number(np.nanmin(vals), hm.decimals)
    # Wednesday to Sunday have no intervals: empty, hatched, said so -- never 0
    for d in range(2, 7):
        for h in (0, 12, 23):
            idx = hm.index(d, h)
            assert np.isnan(hm.value(d, h))
            assert hm.data(idx) == ""
            assert hm.data(idx, Qt.ItemDataRole.BackgroundRole).style() == Qt.BrushStyle.BDiagPattern
            assert "no intervals" in hm.data(idx, Qt.ItemDataRole.ToolTipRole)
    assert hm.headerData(0, Qt.Orientation.Vertical) == "Mon" and hm.headerData(23, Qt.Orientation.Horizontal) == "23"


def test_ranking_orders_children_with_busy_shares(qtbot, loaded):
    w = loaded
    cec = next(tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "cec")
    _show(qtbot, w, w.views.rank, cec)
    tab = w.views.rank
    tab.rank_metric.setCurrentIndex(tab.rank_metric.findData("CPI"))
    _idle(qtbot, w)
    m = tab.rank_model
    got = [m.value(r, "lpar") for r in range(m.rowCount())]
    cpi = [float(m.value(r, "CPI")) for r in range(m.rowCount())]
    assert got == ["ZOSA", "ZOSB"] and cpi == sorted(cpi, reverse=True)     # largest CPI first
    want = ranking(w.ws, cec, "CPI")
    assert got == want["lpar"].tolist()
    # share of the CEC's busy: each LPAR's sum of cycles / CPU speed over the whole CEC's (hand sum)
    iv = w.ws.intervals
    busy = (iv["B0"] / iv["cpu_speed"]).groupby(iv["lpar"].astype(str)).sum()
    shares = [float(m.value(r, "busy_share_pct")) for r in range(m.rowCount())]
    assert shares == pytest.approx([100 * busy[n] / busy.sum() for n in got])
    assert sum(shares) == pytest.approx(100.0)
    # a double-click selects the row's node in the tree
    view = tab.rank_view
    rect = view.visualRect(m.index(1, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())   # a click, then the double
    _idle(qtbot, w)
    assert w.selection.value.nodes == (("lpar", cec[1], "ZOSB"),)
    assert w.tree.selected_keys() == [("lpar", cec[1], "ZOSB")]


def test_clicking_a_peak_sets_the_time_window(qtbot, loaded):
    w = loaded
    cec = next(tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "cec")
    _show(qtbot, w, w.views.rank, cec)
    tab = w.views.rank
    assert tab.peak_level.currentData() == "lpar"          # a CEC selected: its LPARs' intervals
    tab.peak_metric.setCurrentIndex(tab.peak_metric.findData("L1MP"))
    tab.top.setValue(5)
    _idle(qtbot, w)
    want = peaks(w.ws, "L1MP", level="lpar", top=5, nodes=[cec])
    m = tab.peak_model
    assert m.rowCount() == 5
    assert [m.value(r, "lpar") for r in range(5)] == want["lpar"].tolist()
    assert [float(m.value(r, "L1MP")) for r in range(5)] == pytest.approx(want["L1MP"].tolist())
    view = tab.peak_view
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(m.index(2, 1)).center())
    _idle(qtbot, w)
    start = pd.Timestamp(want["interval_start"].iloc[2]).tz_localize("UTC")
    end = pd.Timestamp(want["interval_end"].iloc[2]).tz_localize("UTC")
    sel = w.selection.value
    assert (sel.start, sel.end) == (start, end)
    assert w.timeline.window == (start.timestamp(), end.timestamp())      # the timelines shade the interval
    assert w.chip.active
    # the list stays (the next peak is one click away) though the window changed
    assert m.rowCount() == 5 and float(m.value(0, "L1MP")) == pytest.approx(want["L1MP"].iloc[0])
    # the window's own views follow: the interval table shows that one interval
    assert set(pd.to_datetime(w.table.model.frame["interval_end"].dropna()).dt.tz_localize(None)) <= \
        {pd.Timestamp(want["interval_end"].iloc[2])}
    assert not w.errors


def test_highest_rni_and_when_from_the_tree_menu(qtbot, window):
    """The issue's question, "which LPAR had the highest RNI, and when": right-click the CEC, Peak intervals by >
    RNI (the answer is the first row), a click on it moves the time window there."""
    from tests.ui.conftest import sample

    w = window
    w.open_files([sample("before_z15_ZOSA_smf113.rdw.gz"), sample("before_z15_ZOSB_smf113.rdw.gz")])
    _idle(qtbot, w)
    cec = next(tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "cec")
    view = w.tree.view
    idx = w.tree.proxy.mapFromSource(w.tree.model.index_of_key(cec))
    menu = w.compare.tree_menu(view.visualRect(idx).center())                      # click 1: right-click
    sub = next(a.menu() for a in menu.actions() if a.text() == "Peak intervals by")
    next(a for a in sub.actions() if a.text() == "RNI").trigger()                  # click 2: RNI
    _idle(qtbot, w)
    tab = w.views.rank
    assert w.tabs.currentWidget() is tab and w.selection.value.nodes == (cec,)
    want = peaks(w.ws, "RNI", level="lpar", top=10, nodes=[cec])
    iv = w.views.rank.peak_model
    assert iv.rowCount() == 10 and iv.value(0, "lpar") == want["lpar"].iloc[0]
    # the top row is the largest RNI of every LPAR interval of the CEC
    every = w.ws.metrics(by="lpar_interval")
    assert float(iv.value(0, "RNI")) == pytest.approx(float(every["RNI"].max()))
    pv = tab.peak_view
    qtbot.mouseClick(pv.viewport(), Qt.MouseButton.LeftButton, pos=pv.visualRect(iv.index(0, 1)).center())  # 3
    _idle(qtbot, w)
    assert (w.selection.value.start, w.selection.value.end) == (
        pd.Timestamp(want["interval_start"].iloc[0]).tz_localize("UTC"),
        pd.Timestamp(want["interval_end"].iloc[0]).tz_localize("UTC"))
    # Rank children by > RNI: the LPARs by RNI, largest first
    menu = w.compare.tree_menu(view.visualRect(idx).center())
    sub = next(a.menu() for a in menu.actions() if a.text() == "Rank children by")
    next(a for a in sub.actions() if a.text() == "RNI").trigger()
    _idle(qtbot, w)
    rm = tab.rank_model
    rni = [float(rm.value(r, "RNI")) for r in range(rm.rowCount())]
    assert rm.rowCount() == 2 and rni == sorted(rni, reverse=True)
    assert not w.errors


def test_export_dialog_offers_the_profile(qtbot, loaded, tmp_path):
    w = loaded
    dlg = w.compare.export_dialog("table")
    dlg.path.setText(str(tmp_path / "p.xlsx"))
    dlg.profile.setCurrentIndex(dlg.profile.findData("hour-weekday"))
    assert dlg.profile.isEnabled() and dlg.request().profile == "hour-weekday"
    dlg.path.setText(str(tmp_path / "p.csv"))            # a CSV has no profile sheet
    assert not dlg.profile.isEnabled() and dlg.request().profile is None
    dlg.close()


def test_double_clicking_a_peak_shows_it_on_the_timelines(qtbot, loaded):
    w = loaded
    cec = next(tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "cec")
    _show(qtbot, w, w.views.rank, cec)
    tab = w.views.rank
    _idle(qtbot, w)
    m, view = tab.peak_model, tab.peak_view
    first = [m.value(r, "interval_end") for r in range(m.rowCount())]
    lpar = m.value(0, "lpar")
    rect = view.visualRect(m.index(0, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    _idle(qtbot, w)
    qtbot.waitUntil(lambda: w.views._zoom_to is None, timeout=30_000)
    start, end = tab.peak_span(0)
    assert w.tabs.currentWidget() is w.timeline
    assert w.selection.value.nodes == (("lpar", cec[1], lpar),)                  # the peak's LPAR
    assert (w.selection.value.start, w.selection.value.end) == (start, end)
    lo, hi = w.timeline.base_vb.viewRange()[0]                                    # a few hours around the peak
    assert lo <= start.timestamp() and end.timestamp() <= hi and hi - lo <= 2 * 3 * 3600 + (end - start).seconds
    assert [m.value(r, "interval_end") for r in range(m.rowCount())] == first    # the peak list stays


def test_copy_on_the_new_tabs(qtbot, zosa):
    from PySide6.QtGui import QGuiApplication

    w, _key = zosa
    w.views.profile.table.setFocus()
    w.actions_.copy.trigger()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert lines[0].split("\t")[:3] == ["Node", "Hour (UTC)", "CPI"] and len(lines) == 25
    w.views.profile.heat.setFocus()
    w.actions_.copy.trigger()
    grid = [r.split("\t") for r in QGuiApplication.clipboard().text().splitlines()]
    assert [r[0] for r in grid[1:]] == list(DAYS) and grid[3][1:] == [""] * 24     # Wednesday: empty
    assert "heat map" in w.statusBar().currentMessage()


def test_tabs_before_any_file(qtbot, window):
    w = window
    for tab in (w.views.profile, w.views.rank):
        w.tabs.setCurrentWidget(tab)
        _idle(qtbot, w)
    assert w.views.profile.model.rowCount() == 0 and "Open files" in w.views.profile.what.text()
    assert w.views.rank.peak_model.rowCount() == 0 and "Select a CEC" in w.views.rank.rank_title.text()
    assert not w.views.busy() and not w.errors


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.just(float("nan"))), max_size=30),
       st.booleans())
def test_frame_model_sorts_by_value_missing_last(qapp, values, ascending):
    from app.ui.views_model import FrameCol, FrameModel

    m = FrameModel()
    m.set_frame(pd.DataFrame({"v": values}), [FrameCol("v", "V", 2)])
    m.sort(0, Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder)
    got = [m.value(r, "v") for r in range(m.rowCount())]
    finite = [v for v in got if v == v]
    assert finite == sorted(finite, reverse=not ascending)
    assert all(v != v for v in got[len(finite):])                 # every missing value after the numbers
    assert sorted(map(str, got)) == sorted(map(str, values))        # a permutation of the rows
