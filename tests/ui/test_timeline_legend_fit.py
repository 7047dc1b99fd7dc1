"""Issue 26: the timelines' legends fit beside their titles when the tree panel is dragged to its widest at 1024x700:
the CPI plot keeps its height and its labelled ticks, every plot keeps a readable value axis, and the stack is no
wider than its view (nothing clipped on the right)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.timeline import LEGEND_ROW_HEIGHT, MIN_PLOT_HEIGHT
from app.ui.timeline_axes import legend_row_width, legend_rows, title_height
from tests.ui.test_analyst import _key, _select, _shown, with_vm  # noqa: F401 - the fixture


def _inner_ticks(p) -> list[float]:
    """The labelled values of the plot's value axis away from its edges (as test_readable_ticks_at_1024x700)."""
    lo, hi = p.getViewBox().viewRange()[1]
    size = p.getViewBox().height()
    edge = 3 * (hi - lo) / size
    _spacing, values = p.getAxis("left").tickValues(lo, hi, size)[0]
    return [v for v in values if lo + edge <= v <= hi - edge]


def test_cpi_plot_keeps_height_with_tree_panel_widest(qtbot, with_vm):
    w = with_vm
    w.resize(1024, 700)
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    tl = w.timeline
    cpi = tl.plots["cpi"]
    qtbot.waitUntil(lambda: cpi.getViewBox().height() > 0)
    normal = cpi.getViewBox().height()          # 70 px at the default panel width (measured)
    # drag the tree panel's splitter as far right as it goes (the dock stops where the tabs' minimum width begins)
    w.resizeDocks([w.tree.dock], [2000], Qt.Orientation.Horizontal)
    qtbot.wait(100)
    QApplication.processEvents()
    assert w.tree.dock.width() > 450            # really dragged: the timelines' plots are ~370 px wide
    assert legend_rows(cpi) == 1                 # "CPI", "Instr Cmplx", "Finite" on one row beside the title
    assert cpi.height() == MIN_PLOT_HEIGHT
    assert cpi.getViewBox().height() == normal   # was 56 px (then 42) with the legend wrapped
    for p in _shown(w):
        assert len(_inner_ticks(p)) >= 3, p.titleLabel.text
        assert p.getViewBox().height() >= 65, p.titleLabel.text
    # the stack fits its view: its minimum width (titles with their legends) is no wider than the view
    view = tl.scroll.viewport().width()
    assert tl.glw.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() <= view
    assert tl.glw.width() <= view


def test_wrapped_legend_grows_the_plot_not_squeezes_it(qtbot, with_vm):
    """Where a legend must wrap (the sourcing stack's 5-8 entries on a narrow plot), it goes under the title and
    the plot grows by what the title row takes beyond the two legend rows its height allows for (52 px); its data
    area keeps its ticks (tests/ui/test_sourcing_legend.py measures the rest)."""
    w = with_vm
    w.resize(1024, 700)
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, _key(w, "lpar", "ZOSB"))
    w.resizeDocks([w.tree.dock], [2000], Qt.Orientation.Horizontal)
    qtbot.wait(100)
    src = w.timeline.plots["sourcing"]
    rows = legend_rows(src)
    assert rows >= 2 and src.legend_under
    assert src.minimumHeight() == 125 + max(0, math.ceil(title_height(src)) - 24 - 2 * LEGEND_ROW_HEIGHT)
    assert src.minimumHeight() > 125                 # grown: title (22 px) and two rows under it are 60 px
    assert len(_inner_ticks(src)) >= 3


def test_legend_row_width_by_columns():
    # hand calculation: labels 20, 50, 30 px; one row: 100 + 3 * (20 + 12 + 6) - 6 + 4 = 212
    assert legend_row_width([20, 50, 30], 3) == 212
    # two columns: widest of (20, 30) and 50 -> 80 + 2 * 38 - 6 + 4 = 154
    assert legend_row_width([20, 50, 30], 2) == 154


def test_two_nodes_stack_fits_its_view(qtbot, with_vm):
    """Two nodes at 1024x700 with the tree panel widest: the sourcing plot titled with the node's name and its
    legend (one column) was 378 px at least in a 369 px view, clipping every plot's right side."""
    w = with_vm
    w.resize(1024, 700)
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, _key(w, "lpar", "ZOSB"), _key(w, "lpar", "VMPROD"))
    w.resizeDocks([w.tree.dock], [2000], Qt.Orientation.Horizontal)
    qtbot.wait(100)
    QApplication.processEvents()
    tl = w.timeline
    view = tl.scroll.viewport().width()
    assert tl.glw.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() <= view
    plots = _shown(w)
    assert len(plots) >= 6                      # CPI, L1MP, two sourcing plots, LPARCPU, MT (VMPROD's SMT data)
    for p in plots:
        assert p.getViewBox().sceneBoundingRect().right() <= view, p.titleLabel.text
        assert len(_inner_ticks(p)) >= 3, p.titleLabel.text
    assert legend_rows(tl.plots["cpi"]) == 1 and legend_rows(tl.plots["mt"]) == 1
