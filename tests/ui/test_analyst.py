"""Issue 12 on the real window: time-window chip and shading, tree following the window, partition-only LPARs,
readout reset, colours per node across plots, CEC view, workspace round trip, load summary, glossary truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtWidgets import QApplication

from app.ui import messages as M
from tests.ui.conftest import sample, wait_loaded

W_START = pd.Timestamp("2026-11-02 06:00", tz="UTC")
W_END = pd.Timestamp("2026-11-03 02:00", tz="UTC")   # spans midnight: both dates must be written


@pytest.fixture
def with_vm(qtbot, window, smf_b, monwrite):
    """ZOSB (SMF 113) and VMPROD (MONWRITE, with the D0R16 data of every partition incl. CF01 and ZOSD)."""
    window.open_files([smf_b, monwrite])
    wait_loaded(qtbot, window)
    return window


def _key(w, level: str, *parts: str) -> tuple:
    for n in w.tree.model.all_nodes():
        if n.level == level and [str(k) for k in n.key[2:2 + len(parts)]] == list(parts):
            return tuple(n.key)
    raise AssertionError(f"no {level} node {parts}")


def _node(w, key):
    return next(n for n in w.tree.model.all_nodes() if tuple(n.key) == tuple(key))


def _select(qtbot, w, *keys):
    w.tree.select_keys(list(keys))
    qtbot.waitUntil(lambda: set(w.selection.value.nodes) == set(keys))
    wait_loaded(qtbot, w)


def _shown(w):
    return [p for p in w.timeline._shown_plots() if p.isVisible()]


def test_window_chip_and_shading(qtbot, with_vm):
    w = with_vm
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    w.tabs.setCurrentWidget(w.timeline)
    assert w.chip.label.text() == M.CHIP_WHOLE_RANGE and not w.chip.clear.isVisibleTo(w)
    assert not any(s.isVisible() for s in w.timeline.shades.values())
    w.selection.set_window(W_START, W_END)
    # the status line is set at once and times out after 8 s: read it before waiting for the tables (on a loaded
    # machine the wait alone can outlast it)
    status = w.statusBar().currentMessage()
    wait_loaded(qtbot, w)
    # start and end each with their date (the status bar used to drop the end date)
    assert w.chip.label.text() == "2026-11-02 06:00 - 2026-11-03 02:00 UTC"
    assert w.chip.clear.isVisibleTo(w)
    assert "2026-11-03 02:00" in status
    plots = _shown(w)
    assert len(plots) >= 3
    for p in plots:   # the window is shaded in every plot on screen
        shade = next(s for s in w.timeline.shades.values() if s.getViewBox() is p.getViewBox())
        assert shade.isVisible()
        lo, hi = shade.getRegion()
        assert (lo, hi) == (W_START.timestamp(), W_END.timestamp())
    w.chip.clear.click()
    wait_loaded(qtbot, w)
    assert not w.selection.value.has_window
    assert w.chip.label.text() == M.CHIP_WHOLE_RANGE
    assert not any(s.isVisible() for s in w.timeline.shades.values())


def test_tree_follows_window(qtbot, with_vm):
    w = with_vm
    key = _key(w, "lpar", "ZOSB")
    _select(qtbot, w, key)
    model, node = w.tree.model, _node(w, key)
    whole = model.value(node, "busy")
    assert w.tree.note.text() == M.TREE_WHOLE_NOTE
    w.selection.set_window(W_START, W_END)
    wait_loaded(qtbot, w)
    windowed = model.value(node, "busy")
    # the tree's Busy over the window is the table's summary-row LPARCPU (same window, same node)
    frame = w.table.model.frame
    summary = frame.loc[frame["summary"].astype(bool), "LPARCPU"]
    assert len(summary) == 1
    assert windowed == pytest.approx(float(summary.iloc[0]), rel=1e-9)
    assert windowed != pytest.approx(whole, rel=1e-3)   # 06:00-02:00 is busier than the day-night average
    assert "2026-11-02 06:00 - 2026-11-03 02:00" in w.tree.note.text()
    # displayed with the Busy column's one decimal
    idx = w.tree.proxy.mapFromSource(model.index_of_key(key)).siblingAtColumn(2)
    assert idx.data() == f"{windowed:.1f}"
    w.selection.clear_window()
    wait_loaded(qtbot, w)
    assert model.value(node, "busy") == pytest.approx(whole)
    assert w.tree.note.text() == M.TREE_WHOLE_NOTE


def test_partition_only_lpar_view(qtbot, with_vm):
    w = with_vm
    key = _key(w, "lpar", "CF01")
    assert _node(w, key).info.get("partition_only")
    _select(qtbot, w, key)
    w.tabs.setCurrentWidget(w.table)
    view = w.table.partition
    assert w.table.stack.currentWidget() is view
    assert "no counters" in view.title.text() and "CF01" in view.title.text()
    facts = view.facts
    assert facts.processors == {"ICF": 2} and facts.weights == {"ICF": 0} and facts.capped is False
    # busy by hand from the D0R16 rows: per-CPU busy x CPUs, mean over the intervals
    parts = w.ws.partitions
    cf = parts[(parts["lpar"].astype(str) == "CF01")]
    expected = float((cf["busy_pct"].astype(float) * cf["cpus"]).mean())
    assert facts.busy_mean == pytest.approx(expected, rel=1e-9)
    assert f"{expected:.1f} % of one CPU" in view.facts_label.text()
    curve = view.plot.getPlotItem().listDataItems()[0]
    assert len(curve.yData) == len(cf) and np.nanmean(curve.yData) == pytest.approx(expected, rel=1e-9)
    # the tree's Busy of CF01 is in the same unit as LPARCPU
    assert w.tree.model.value(_node(w, key), "busy") == pytest.approx(expected, rel=1e-6)
    # the Timelines tab says the same and where to look
    assert "no counters" in w.timeline.placeholder.text() and w.timeline.stack.currentIndex() == 0
    # back to an LPAR with counters: the table again
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    assert w.table.stack.currentIndex() == 1


def test_readout_resets_on_selection_change(qtbot, with_vm):
    w = with_vm
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    tl = w.timeline
    lo, hi = tl.data_range()
    tl.show_cursor_at((lo + hi) / 2)
    assert "ZOSB" in tl.readout.text()
    _select(qtbot, w, _key(w, "lpar", "VMPROD"))
    assert tl.readout.text() == M.READOUT_EMPTY


def _pen_colors(plot):
    return [item.opts["pen"].color().name() for item in plot.listDataItems()]


def test_one_colour_per_node_across_plots(qtbot, with_vm):
    from app.ui.timeline_plots import lighter, node_color

    w = with_vm
    keys = [_key(w, "lpar", "ZOSB"), _key(w, "lpar", "VMPROD")]
    _select(qtbot, w, *keys)
    w.tabs.setCurrentWidget(w.timeline)   # a hidden timeline tab is drawn when shown (issue 11)
    tl = w.timeline
    assert len(tl.series) == 2 and {"ZOSB", "VMPROD"} <= set(" ".join(s.label for s in tl.series).split())
    c0, c1 = node_color(0), node_color(1)
    assert c0 != c1
    for pid in ("l1mp", "lparcpu"):
        assert _pen_colors(tl.plots[pid]) == [c0, c1], pid
    # CPI and its parts: the node's colour for CPI, lighter shades of it (dashed / dotted) for the parts
    cpi = _pen_colors(tl.plots["cpi"])
    assert cpi[0] == c0 and cpi[3] == c1
    assert cpi[1] == lighter(c0, 0.45) and cpi[2] == lighter(c0, 0.25)
    styles = [item.opts["pen"].style() for item in tl.plots["cpi"].listDataItems()[:3]]
    assert len(set(styles)) == 3
    # one shared legend names the nodes in their colours; the CPI plot's legend names only the parts
    legend = tl.legend.text()
    assert f"color:{c0}" in legend and f"color:{c1}" in legend
    assert legend.index(tl.series[0].label) < legend.index(f"color:{c1}") < legend.index(tl.series[1].label)
    # (the full names where one row of them fits beside the title, else the short ones: timeline_axes.LEGEND_LONG)
    from app.ui.timeline_axes import LEGEND_LONG

    labels = [label for _s, label in tl.plots["cpi"].legend.items]
    short = [getattr(label, "short_text", label.text) for label in labels]
    assert short == ["CPI", "Instr Cmplx", "Finite"]
    assert [label.text for label in labels] in ([*short], [LEGEND_LONG.get(t, t) for t in short])
    # the overview and the readout use the same colours
    assert _pen_colors(tl.overview)[:2] == [c0, c1]
    lo, hi = tl.data_range()
    tl.show_cursor_at(lo + 3600 * 12)
    assert f"color:{c0}" in tl.readout.text()


def test_cec_view_stacks_lpars_with_partition_only(qtbot, with_vm):
    w = with_vm
    cec = _key(w, "cec")
    _select(qtbot, w, cec)
    w.tabs.setCurrentWidget(w.timeline)   # a hidden timeline tab is drawn when shown (issue 11)
    tl = w.timeline
    assert tl.has_cec() and tl.cec_plot.isVisible()
    names = [t for t, _c in tl._cec_names]       # in the shared legend, with their colours
    assert "ZOSB" in names and "VMPROD" in names
    assert all(f"color:{c}" in tl.legend.text() and t in tl.legend.text() for t, c in tl._cec_names)
    assert M.CEC_PARTITION_ONLY.format(lpar="CF01") in names and M.CEC_PARTITION_ONLY.format(lpar="ZOSD") in names
    # the top of the stack is the sum of the LPARs' busy on the common grid
    from app.ui.partition_data import stack_grid

    x, stacks = stack_grid(tl.cec_stack)
    top = tl.cec_plot.listDataItems()[-1]
    np.testing.assert_allclose(top.yData, sum(stacks.values()), rtol=1e-12)


def test_workspace_round_trip(qtbot, with_vm, tmp_path):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = with_vm
    keys = [_key(w, "lpar", "ZOSB"), _key(w, "class", "VMPROD", "IFL")]
    _select(qtbot, w, *keys)
    w.selection.set_window(W_START, W_END)
    wait_loaded(qtbot, w)
    path = tmp_path / "ws.nsw.json"
    w.save_workspace(str(path))
    assert path.exists()
    w2 = MainWindow(Workspace())
    qtbot.addWidget(w2)
    w2.show()
    assert w2.open_workspace(str(path))
    qtbot.waitUntil(lambda: not w2.busy() and w2.selection.value.has_window, timeout=60_000)
    wait_loaded(qtbot, w2)
    assert sorted(r.file for r in w2.ws.files) == sorted(r.file for r in w.ws.files)
    assert set(w2.selection.value.nodes) == set(keys)
    assert (w2.selection.value.start, w2.selection.value.end) == (W_START, W_END)
    assert set(w2.tree.selected_keys()) == set(keys)
    assert w2.chip.label.text() == w.chip.label.text()
    from app.ui import settings

    assert settings.recent_workspaces()[0] == str(path)
    w2.fill_recent_menu()          # recent workspaces beside the recent files
    texts = [a.text() for a in w2.actions_.recent_menu.actions()]
    assert M.RECENT_WORKSPACES in texts and str(path) in texts
    w2.loader.cancel_all()


def test_bad_workspace_file_is_a_message(qtbot, window, tmp_path):
    bad = tmp_path / "bad.nsw.json"
    bad.write_text("{not json")
    assert window.open_workspace(str(bad)) is False
    assert "bad.nsw.json" in window.statusBar().currentMessage()
    assert window.errors == []


def test_load_summary_and_health_tab_colour(qtbot, window, smf_b):
    from app.ui.window_session import ERROR_TAB_COLOR

    broken = sample("broken/corrupt_length_smf113.rdw")   # readable, with an error finding
    pdf = sample("broken/report.pdf")                      # nothing readable
    window.open_files([smf_b, broken, pdf])
    wait_loaded(qtbot, window)
    text = window.load_summary.text()
    assert text.startswith("2 of 3 files read: 2 with errors, 0 with warnings"), text
    assert "corrupt_length_smf113.rdw" in text and "report.pdf" in text
    i = window.tabs.indexOf(window.health)
    assert window.tabs.tabBar().tabTextColor(i) == ERROR_TAB_COLOR
    assert not window.tabs.tabIcon(i).isNull()


def test_glossary_tells_the_truth_about_z16_rni(qtbot, window):
    dlg = window.show_glossary()
    dlg.generation.setCurrentText("z16")
    rows = {dlg.table.item(r, 0).text(): dlg.table.item(r, 2).text() for r in range(dlg.table.rowCount())}
    assert "computed by the analyzer" not in rows["RNI"]
    assert "No formula configured" in rows["RNI"] and "--formulas" in rows["RNI"]
    assert "--formulas FILE" in dlg.note.text() and dlg.note.isVisibleTo(dlg)
    dlg.generation.setCurrentText("z13")   # RNI has a formula there: no note
    assert not dlg.note.isVisibleTo(dlg)
    dlg.close()


def test_readable_ticks_at_1024x700(qtbot, with_vm):
    w = with_vm
    w.resize(1024, 700)
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    QApplication.processEvents()
    for p in _shown(w):
        ax = p.getAxis("left")
        lo, hi = p.getViewBox().viewRange()[1]
        size = p.getViewBox().height()
        # the labelled level (maxTextLevel=0: the first) inside the plot, away from the edges where labels would
        # overhang and be hidden, at least 12 px apart
        edge = 3 * (hi - lo) / size
        spacing, values = ax.tickValues(lo, hi, size)[0]
        inner = [v for v in values if lo + edge <= v <= hi - edge]
        assert len(inner) >= 3, (p.titleLabel.text, size, lo, hi, inner)
        assert spacing * size / (hi - lo) >= 12


def test_axes_from_zero_is_remembered(qtbot, with_vm):
    from app.ui.timeline import TimelineView

    w = with_vm
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    QApplication.processEvents()
    tl = w.timeline
    cpi = tl.plots["cpi"].getViewBox()
    qtbot.waitUntil(lambda: cpi.viewRange()[1][0] > 0.3)           # fitted to the data (the parts are ~0.8 and up)
    tl.zero.setChecked(True)
    top = max(float(np.nanmax(c.yData)) for c in tl.plots["cpi"].listDataItems() if c.yData is not None
              and len(c.yData))
    assert cpi.viewRange()[1] == pytest.approx([0.0, top * 1.05])
    assert tl.plots["sourcing"].getViewBox().viewRange()[1] == [0, 100]
    again = TimelineView()                       # a new window starts with the remembered choice
    qtbot.addWidget(again)
    assert again.zero.isChecked()


def test_user_guide_in_the_app(qtbot, window):
    from pathlib import Path

    from PySide6.QtGui import QTextDocument

    dlg = window.show_guide()
    text = dlg.browser.toPlainText()
    for section in ("Open files", "Read the tree", "Choose a time window", "Compare before and after",
                    "Export for a deck", "Check data health", "Add IBM coefficients"):
        assert section in text
    # every screenshot the guide names exists and loads
    doc = dlg.browser.document()
    guide = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
    names = [line.split("](")[1].rstrip(")") for line in guide.read_text().splitlines() if line.startswith("![")]
    assert len(names) >= 3
    for name in names:
        assert (guide.parent / name).exists(), name
        img = doc.resource(QTextDocument.ResourceType.ImageResource, dlg.browser.source().resolved(name)
                           if not dlg.browser.source().isEmpty() else doc.baseUrl().resolved(name))
        assert img is not None and not img.isNull(), name
    dlg.close()


def test_one_rounding_per_metric_everywhere(qtbot, with_vm):
    """Table, readout, SMT tab and CLI use the presentation's rounding through one formatter."""
    import re

    from app.commands.report import _fmt
    from app.engine.layout import format_value, metric_decimals
    from app.ui.smt import CORE_COLS, TYPE_COLS

    assert (metric_decimals("L2P"), metric_decimals("CPI"), metric_decimals("Thread_Density")) == (1, 2, 2)
    assert format_value(78.04999, 1) == "78.0" and format_value(float("nan"), 1) == "" and _fmt(None, 1) == "n/a"
    assert _fmt(78.04999, 1) == format_value(78.04999, 1)
    assert {c.decimals for c in (*TYPE_COLS, *CORE_COLS) if c.id == "thread_density"} == {2}
    w = with_vm
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    tl = w.timeline
    lo, hi = tl.data_range()
    tl.show_cursor_at((lo + hi) / 2)
    text = tl.readout.text()
    assert re.search(r"L2P \d+\.\d,", text) and re.search(r"CPI \d+\.\d\d,", text), text
    model = w.table.model
    assert re.fullmatch(r"\d+\.\d", model.text(1, model.column_index("L2P")))


def test_workspace_keeps_the_comparison(qtbot, with_vm, tmp_path):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = with_vm
    zosb = _key(w, "lpar", "ZOSB")
    w.compare.set_side("before", [zosb], W_START, W_START + pd.Timedelta(hours=6))
    w.compare.set_side("after", [zosb], W_END - pd.Timedelta(hours=6), W_END)
    wait_loaded(qtbot, w)
    state = w.compare.tab.state()
    assert state is not None
    path = tmp_path / "cmp.nsw.json"
    w.save_workspace(str(path))
    w2 = MainWindow(Workspace())
    qtbot.addWidget(w2)
    w2.show()
    assert w2.open_workspace(str(path))
    qtbot.waitUntil(lambda: not w2.busy() and w2.compare.tab.state() is not None, timeout=60_000)
    assert w2.compare.tab.state() == state
    w2.loader.cancel_all()


def test_open_workspace_shows_the_comparison_sides_before_the_files_are_read(qtbot, with_vm, tmp_path):
    """Issue 23: Open Workspace of a comparison: the Compare tab with its two sides is shown at once (the files
    are still being read), and the comparison is computed once, after every file is read."""
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = with_vm
    zosb = _key(w, "lpar", "ZOSB")
    w.compare.set_side("before", [zosb], W_START, W_START + pd.Timedelta(hours=6))
    w.compare.set_side("after", [zosb], W_END - pd.Timedelta(hours=6), W_END)
    wait_loaded(qtbot, w)
    state = w.compare.tab.state()
    path = tmp_path / "cmp.nsw.json"
    w.save_workspace(str(path))
    w2 = MainWindow(Workspace())
    qtbot.addWidget(w2)
    w2.show()
    asked: list[bool] = []
    w2.compare.tab.compare_requested.connect(lambda: asked.append(w2.loader.busy() or bool(w2._pending)))
    assert w2.open_workspace(str(path))
    assert w2.loader.busy()                                  # the files are being read ...
    assert w2.tabs.currentWidget() is w2.compare.tab         # ... and the Compare tab is shown with its sides
    assert w2.compare.tab.state() == state
    assert "Reading" in w2.compare.tab.message.text()
    qtbot.waitUntil(lambda: not w2.busy() and w2.compare.tab.comparison is not None, timeout=60_000)
    assert asked and not any(asked)          # computed only once every file was read and added
    assert w2.compare.tab.state() == state
    w2.loader.cancel_all()
