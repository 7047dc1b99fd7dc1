"""Issue 26: the sourcing % legend on a narrow plot (the Timelines tab at 1024x700 with two or three nodes).

It wrapped beside the node's title (two rows of IBM's ids at the default tree panel, five rows of one entry with
the tree panel dragged to its widest).  Now, as the CPI legend: the names analysts say (L2, L3, L4 local,
L4 remote, Memory) where they take no more rows than the ids, the rows measured per column, and a legend that
wraps beside its title goes under it across the plot's width, the plot growing by what its title row takes.
Measured: the legend's rows, the plot's height, and the legend's rectangle clear of the data area."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.timeline import LEGEND_FRAME_HEIGHT, LEGEND_ROW_HEIGHT, MIN_SOURCING_HEIGHT
from app.ui.timeline_axes import LEGEND_LONG, legend_row_width, legend_rows, title_height
from tests.ui.conftest import SAMPLES, wait_loaded
from tests.ui.test_analyst import _key, _select
from tests.ui.test_timeline_legend_fit import _inner_ticks

FULL = ["L2", "L3", "L4 local", "L4 remote", "Memory"]      # the z16 samples' levels, as analysts say them
IDS = ["L2P", "L3P", "L4LP", "L4RP", "MEMP"]


@pytest.fixture
def after_set(qtbot, window):
    """The bundled z16 samples: ZOSA, ZOSB, ZOSC (SMF 113) and VMPROD (MONWRITE) on one CEC."""
    window.open_files(sorted(str(p) for p in SAMPLES.glob("after_*.gz")))
    wait_loaded(qtbot, window)
    return window


def _show(qtbot, w, names, widest=False):
    w.resize(1024, 700)
    w.tabs.setCurrentWidget(w.timeline)
    _select(qtbot, w, *[_key(w, "lpar", n) for n in names])
    if widest:      # the tree panel dragged as far right as it goes: the plots ~280 px wide
        w.resizeDocks([w.tree.dock], [2000], Qt.Orientation.Horizontal)
    qtbot.wait(100)
    QApplication.processEvents()
    src = w.timeline.plots["sourcing"]
    qtbot.waitUntil(lambda: src.getViewBox().height() > 0)
    return w.timeline, src


def _check_clear_of_data(src):
    legend = src.legend.sceneBoundingRect()
    data = src.getViewBox().sceneBoundingRect()
    assert not legend.intersects(data), (legend, data)          # never over the stacked areas
    assert legend.right() <= data.right() + 1                   # nor past the plot's right edge
    assert len(_inner_ticks(src)) >= 3                          # 20/40/60/80 stay labelled
    # the plot grew by what its title row takes beyond the two legend rows its height allows for
    budget = LEGEND_FRAME_HEIGHT + 2 * LEGEND_ROW_HEIGHT
    assert src.minimumHeight() == MIN_SOURCING_HEIGHT + max(0, math.ceil(title_height(src)) - budget)


@pytest.mark.parametrize("names", [["ZOSA", "ZOSB"], ["VMPROD", "ZOSA", "ZOSB"]])
def test_one_row_of_full_names_under_the_title(qtbot, after_set, names):
    tl, src = _show(qtbot, after_set, names)
    labels = [label.text for _s, label in src.legend.items]
    assert labels == FULL                               # was L2P L3P L4LP L4RP / MEMP, two rows beside the title
    assert legend_rows(src) == 1 and src.legend_under
    _check_clear_of_data(src)
    # the legend sits under the title, not beside it, and the title stays at the left (it was centred over it)
    assert src.legend.sceneBoundingRect().top() >= src.titleLabel.sceneBoundingRect().bottom() - 1
    assert src.titleLabel.item.sceneBoundingRect().left() <= src.legend.sceneBoundingRect().left() + 12
    # its data area is no smaller than with the old two rows beside the title (71.5 px measured)
    assert src.getViewBox().height() >= 71
    # the further nodes' sourcing plots repeat no legend (the colours are the same): their data areas are larger
    others = tl.sourcing_plots()[1:]
    assert len(others) == len(names) - 1 and all(not p.legend.items for p in others)
    assert "L4RP: % of L1 misses sourced from remote L4" in src.legend.toolTip()


def test_widest_tree_panel_two_rows_not_five(qtbot, after_set):
    tl, src = _show(qtbot, after_set, ["VMPROD", "ZOSA", "ZOSB"], widest=True)
    assert after_set.tree.dock.width() > 450
    assert legend_rows(src) == 2 and src.legend_under   # was 5 rows of one entry beside "Sourcing %: VMSYS1 VMPROD"
    assert [label.text for _s, label in src.legend.items] == FULL
    _check_clear_of_data(src)
    assert src.getViewBox().height() >= 71


def test_wide_plot_keeps_the_legend_beside_the_title(qtbot, after_set):
    after_set.resize(1440, 900)
    after_set.tabs.setCurrentWidget(after_set.timeline)
    _select(qtbot, after_set, _key(after_set, "lpar", "ZOSA"))
    qtbot.wait(100)
    src = after_set.timeline.plots["sourcing"]
    assert legend_rows(src) == 1 and not src.legend_under
    assert [label.text for _s, label in src.legend.items] == FULL
    assert abs(src.legend.sceneBoundingRect().center().y() - src.titleLabel.sceneBoundingRect().center().y()) < 4
    _check_clear_of_data(src)


def test_names_short_only_where_full_ones_take_more_rows():
    """Hand-measured label widths (px) at 7pt: the ids 25/25/30/31/36, the full names 19/19/43/54/46.

    One row of the ids: 147 + 5 * 38 - 6 + 4 = 335 px; of the full names: 181 + 190 - 2 = 369 px; in three
    columns (rows L2, L3, L4 local / L4 remote, Memory): 54 + 46 + 43 + 114 - 2 = 255 px."""
    ids, full = [25, 25, 30, 31, 36], [19, 19, 43, 54, 46]
    assert legend_row_width(ids, 5) == 335 and legend_row_width(full, 5) == 369
    assert legend_row_width(full, 3) == 255
    assert [LEGEND_LONG[i] for i in IDS] == FULL


def test_shared_legend_never_breaks_an_entry():
    """The CEC stack's legend wraps between entries, never inside one ("CF01" / "(D0R16)" at 1024 px)."""
    from app.ui.timeline_plots import legend_html

    html = legend_html([], "Stack of C:", [("CF01 (D0R16)", "#ff0000"), ("ZOSD (D0R16)", "#00ff00")])
    entries = html.split("&nbsp;&nbsp; ")
    assert len(entries) == 2
    assert all('<span style="white-space:nowrap">' in e and "(D0R16)</span>" in e for e in entries)
