"""The Compare tab on the real window: z15 "before" and z16 "after" sample LPAR ZOSA.

Expected numbers are computed here from the engine's own whole-window LPAR rows
(``ws.metrics(by="lpar", nodes=[key])``): IBM's ratio row is before / after, the delta row
after - before, and the waterfall's steps add up to CPI after - CPI before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import sample, wait_loaded

BEFORE = "before_z15_ZOSA_smf113.rdw.gz"
AFTER = "after_z16_ZOSA_smf113.rdw.gz"
Z15, Z16 = "8561-45A12", "3931-123F5"   # the sample CECs (type-serial), see README's sample table


def lpar_key(window, cec: str) -> tuple:
    keys = [tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "lpar" and n.key[1] == cec]
    assert keys, f"no LPAR of {cec} in the tree"
    return keys[0]


def wait_compared(qtbot, window) -> None:
    ctl = window.compare
    qtbot.waitUntil(lambda: ctl.tab.comparison is not None and not ctl.busy() and not window.busy(),
                    timeout=60_000)


@pytest.fixture
def compared(qtbot, window):
    window.open_files([sample(BEFORE), sample(AFTER)])
    wait_loaded(qtbot, window)
    ctl = window.compare
    ctl.set_side("before", [lpar_key(window, Z15)])
    assert ctl.tab.comparison is None   # one side only: nothing computed, a hint instead
    assert "after" in ctl.tab.message.text()
    ctl.set_side("after", [lpar_key(window, Z16)])
    wait_compared(qtbot, window)
    return window


def engine_row(window, cec: str) -> dict:
    m = window.ws.metrics(by="lpar", nodes=[lpar_key(window, cec)])
    assert len(m) == 1
    return m.iloc[0].to_dict()


def col(model, col_id: str) -> int:
    i = model.column_index(col_id)
    assert i >= 0, col_id
    return i


def check_rows_ratio_and_delta(compared):
    w = compared
    tab = w.compare.tab
    assert w.tabs.currentWidget() is tab          # both sides set: the tab is shown
    model = tab.model
    assert model.rowCount() == 4
    kinds = [model.kind(r) for r in range(4)]
    assert kinds == ["before", "after", "ratio", "delta"]
    b, a = engine_row(w, Z15), engine_row(w, Z16)
    ratio = b["CPI"] / a["CPI"]                    # IBM's ratio row: old / new
    c = col(model, "CPI")
    assert model.value(2, "CPI") == pytest.approx(ratio, rel=1e-12)
    assert model.text(2, c) == f"{ratio:.2f}"
    assert model.value(3, "CPI") == pytest.approx(a["CPI"] - b["CPI"], rel=1e-12)
    assert model.value(0, "CPI") == pytest.approx(b["CPI"], rel=1e-12)
    # the z15 sample's CPI is higher than the z16's: the ratio shows the improvement (> 1)
    assert ratio > 1.0
    # row labels name CEC and generation: the two ZOSA rows never look the same
    lab = col(model, "_label")
    assert model.text(0, lab) == f"ZOSA ({Z15} z15)"
    assert model.text(1, lab) == f"ZOSA ({Z16} z16)"
    assert w.errors == []


def check_marked_columns_say_why(compared):
    tab = compared.compare.tab
    model = tab.model
    cmp = tab.comparison
    # z15 and z16 source their L1 misses from different counters: L2P's formula differs; CPI's (B0/B1) does not
    assert "L2P" in cmp.marks and "CPI" not in cmp.marks
    i, j = col(model, "L2P"), col(model, "CPI")
    assert model.headerData(i, Qt.Orientation.Horizontal).endswith("\u2020")
    assert cmp.marks["L2P"] in model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.FontRole).italic()
    assert model.headerData(j, Qt.Orientation.Horizontal, Qt.ItemDataRole.FontRole) is None
    assert model.data(model.index(0, i), Qt.ItemDataRole.FontRole).italic()
    assert cmp.marks["L2P"] in model.data(model.index(0, i), Qt.ItemDataRole.ToolTipRole)
    # the header of the tab says which ratio it is
    assert "ratio = before / after" in tab.note.text()
    # Ctrl+C (Edit > Copy) on the Compare tab copies the comparison table as TSV with headers
    from PySide6.QtGui import QGuiApplication

    compared.actions_.copy.trigger()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert lines[0].startswith("Row\t") and len(lines) == 5
    assert lines[3].startswith("Ratio\tZOSA\t")


def check_waterfall_sums_to_cpi_change(compared):
    w = compared
    tab = w.compare.tab
    wf = tab.waterfall_frame()
    b, a = engine_row(w, Z15), engine_row(w, Z16)
    assert list(wf["step"]) == ["cpi_before", "d_instr_cmplx", "d_l1mp_effect", "d_scpl1m_effect", "cpi_after"]
    deltas = wf.loc[wf["kind"] == "delta", "value"].to_numpy(dtype=float)
    assert deltas.sum() == pytest.approx(a["CPI"] - b["CPI"], abs=1e-12)
    # hand calculation of the midpoint split (L = L1MP/100, S = Est SCPL1M):
    # L1MP effect = (L1 - L0) * (S0 + S1) / 2 ; SCPL1M effect = (S1 - S0) * (L0 + L1) / 2
    l0, l1 = b["L1MP"] / 100, a["L1MP"] / 100
    s0, s1 = b["Est_SCPL1M"], a["Est_SCPL1M"]
    step = dict(zip(wf["step"], wf["value"]))
    assert step["d_l1mp_effect"] == pytest.approx((l1 - l0) * (s0 + s1) / 2, rel=1e-9)
    assert step["d_scpl1m_effect"] == pytest.approx((s1 - s0) * (l0 + l1) / 2, rel=1e-9)
    assert step["d_instr_cmplx"] == pytest.approx(a["Est_Instr_Cmplx_CPI"] - b["Est_Instr_Cmplx_CPI"], rel=1e-9)
    # the chart has the five bars and the numbers are beside it
    assert len(tab._wf_labels) == 5
    assert f"{a['CPI'] - b['CPI']:+.3f}" in tab.wf_numbers.text()


def check_overlay_on_relative_axis(compared):
    tab = compared.compare.tab
    curves = tab.ov_plot.listDataItems()
    assert len(curves) == 2                           # one line per side
    styles = {c.opts["pen"].style() for c in curves}
    assert styles == {Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine}
    # two days of 15-minute intervals each: hours 0.25 .. 48 from each selection's start
    for c in curves:
        assert float(np.nanmin(c.xData)) == pytest.approx(0.25)
        assert float(np.nanmax(c.xData)) == pytest.approx(48.0)
    assert "hours from" in tab.ov_plot.getAxis("bottom").labelText


def test_compare_tab_shows_the_comparison(compared):
    """One window load (the machine is shared), several checks of what the tab shows."""
    check_rows_ratio_and_delta(compared)
    check_marked_columns_say_why(compared)
    check_waterfall_sums_to_cpi_change(compared)
    check_overlay_on_relative_axis(compared)


def test_sides_shift_state_tree_menu_and_region(qtbot, compared, monkeypatch):
    check_per_class_and_shift_filter(qtbot, compared)
    check_state_round_trip(qtbot, compared)
    check_tree_menu_and_modifier_drag(qtbot, compared, monkeypatch)


def check_per_class_and_shift_filter(qtbot, compared):
    w = compared
    tab = w.compare.tab
    tab.set_by("class")
    wait_compared(qtbot, w)
    qtbot.waitUntil(lambda: tab.model.rowCount() == 8, timeout=30_000)   # GCP and zIIP pairs, 4 rows each
    assert tab.model.text(0, col(tab.model, "_label")) == f"ZOSA GCP ({Z15} z15)"
    tab.set_by("lpar")
    # prime shift on the before side: the before row is the engine's shifted whole-window row
    box = tab.boxes["before"]
    box.hours.setText("08-17")
    box.days.setText("mon-fri")
    old = tab.comparison
    box.changed.emit()
    qtbot.waitUntil(lambda: tab.comparison is not old and not w.compare.busy() and tab.model.rowCount() == 4,
                    timeout=30_000)
    from app.engine.shift import make_shift, shifted_metrics

    want = shifted_metrics(w.ws, by="lpar", nodes=[lpar_key(w, Z15)], shift=make_shift("08-17", "mon-fri"))
    assert tab.model.value(0, "CPI") == pytest.approx(float(want["CPI"].iloc[0]), rel=1e-12)
    assert "shift 08:00-17:00 UTC, Mon-Fri" in box.what.text()
    # a bad shift is a message, not a traceback
    box.hours.setText("25-99")
    box.changed.emit()
    assert "hours" in tab.message.text() and tab.message.isVisible()
    assert w.errors == []


def check_state_round_trip(qtbot, compared):
    tab = compared.compare.tab
    tab.boxes["after"].days.setText("sat,sun")
    state = compared.comparison_state()
    assert state["after"]["nodes"] == [list(lpar_key(compared, Z16))] and state["after"]["days"] == "sat,sun"
    tab.swap_sides()
    assert tab.boxes["before"].nodes == (lpar_key(compared, Z16),)
    compared.restore_comparison(state)
    assert tab.boxes["before"].nodes == (lpar_key(compared, Z15),)
    assert tab.boxes["after"].days.text() == "sat,sun"
    wait_compared(qtbot, compared)


def check_tree_menu_and_modifier_drag(qtbot, window, monkeypatch):
    """Set as before / after from the tree's context menu; Shift / Ctrl while dragging the timelines' region."""
    from PySide6.QtCore import QRect

    from app.ui.compare_controller import side_for_modifiers
    from app.ui.roles import Role

    from app.ui.compare_model import Side

    ctl = window.compare
    wait_compared(qtbot, window)
    for name in ("before", "after"):   # start again: nothing set
        ctl.tab.boxes[name].set_side(Side())
    view = window.tree.view
    z15 = lpar_key(window, Z15)
    window.tree.select_keys([z15])
    idx = view.selectionModel().selectedRows(0)[0]
    assert tuple(idx.data(Role.NODE_KEY)) == z15
    rect: QRect = view.visualRect(idx)
    menu = ctl.tree_menu(rect.center())
    acts = {a.text(): a for a in menu.actions() if a.text()}
    assert {"Set as before", "Set as after"} <= set(acts)
    acts["Set as before"].trigger()
    assert ctl.tab.boxes["before"].nodes == (z15,)
    assert "after" in window.statusBar().currentMessage()
    # Ctrl-drag of the region: the selected node over the dragged window becomes the after side
    assert side_for_modifiers(Qt.KeyboardModifier.ShiftModifier) == "before"
    assert side_for_modifiers(Qt.KeyboardModifier.ControlModifier) == "after"
    assert side_for_modifiers(Qt.KeyboardModifier.NoModifier) is None
    z16 = lpar_key(window, Z16)
    window.selection.set_nodes([z16])
    start = pd.Timestamp("2026-11-02 06:00", tz="UTC")
    end = pd.Timestamp("2026-11-02 18:00", tz="UTC")
    qtbot.waitUntil(lambda: not window.busy() and window.timeline.series
                    and window.timeline.series[0].label.startswith("ZOSA"), timeout=30_000)
    import app.ui.compare_controller as ct

    class CtrlHeld:   # the drag ends with Ctrl held
        @staticmethod
        def keyboardModifiers():
            return Qt.KeyboardModifier.ControlModifier

    monkeypatch.setattr(ct, "QApplication", CtrlHeld)
    region = window.timeline.region
    region.setBounds((None, None))
    region.setRegion((start.timestamp(), end.timestamp()))
    old = ctl.tab.comparison
    region.sigRegionChangeFinished.emit(region)
    qtbot.waitUntil(lambda: ctl.tab.comparison is not old and not ctl.busy(), timeout=60_000)
    box = ctl.tab.boxes["after"]
    assert box.nodes == (z16,) and box.start.text() == "2026-11-02 06:00" and box.end.text() == "2026-11-02 18:00"
    # the after row covers the 48 quarter hours ending in (06:00, 18:00]
    after = ctl.tab.comparison.table.query("row == 'after'").iloc[0]
    assert pd.Timestamp(after["interval_start"]) == pd.Timestamp("2026-11-02 06:00")
    assert pd.Timestamp(after["interval_end"]) == pd.Timestamp("2026-11-02 18:00")
    assert window.errors == []
