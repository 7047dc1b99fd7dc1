"""The machine tree sorts by any column (issue 26): numbers numerically, names naturally, no value last in both
orders, children within their parent, pools after the LPARs, the sort kept over a data reload."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.engine.tree import TreeNode
from app.ui.roles import Role
from app.ui.tree_model import COL_BUSY, COL_CPI, COL_NODE, natural_key
from app.ui.tree_panel import TreePanel

ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
C = "3931-ABCDE"


def _cpu(lpar: str, cpu: int, cpi: float | None) -> TreeNode:
    return TreeNode(("cpu", C, lpar, "GCP", cpu), "cpu", f"CPU {cpu}", [], {"n_cpus": 1, "cpi": cpi, "busy": 10.0})


def _lpar(name: str, busy: float | None, cpi: float | None, cpus: list[tuple[int, float | None]]) -> TreeNode:
    cls = TreeNode(("class", C, name, "GCP"), "class", "GCP", [_cpu(name, c, v) for c, v in cpus],
                   {"n_cpus": len(cpus), "cpi": cpi, "busy": busy})
    return TreeNode(("lpar", C, name), "lpar", name, [cls], {"n_cpus": len(cpus), "busy": busy, "cpi": cpi})


def roots(scale: float = 1.0) -> list[TreeNode]:
    lpars = [_lpar("ZOSA", 300.0 * scale, 3.5, [(0, 3.1), (2, 4.0), (10, 2.2)]),
             _lpar("ZOSB", 90.0 * scale, 10.0, [(0, 10.0)]),           # 10 > 9: numeric, not text ("10" < "9")
             _lpar("ZOSC", 1200.0 * scale, 9.0, [(1, 9.0)]),
             TreeNode(("lpar", C, "CF01"), "lpar", "CF01", [], {"n_cpus": 2, "busy": None, "cpi": None,
                                                                  "partition_only": True})]
    pool = TreeNode(("pool", C, "GCP"), "pool", "GCP pool", [], {"n_cpus": 5, "busy": 5000.0, "cpi": 0.5})
    return [TreeNode(("cec", C), "cec", C, [*lpars, pool], {"n_cpus": 5, "busy": 1590.0, "cpi": 4.0})]


@pytest.fixture
def panel(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    p = TreePanel(host)
    QVBoxLayout(host).addWidget(p.dock)
    host.resize(420, 400)
    host.show()
    qtbot.waitExposed(host)
    p.set_roots(roots())
    yield p
    host.close()


def _labels(panel, parent: QModelIndex = QModelIndex()) -> list[str]:
    px = panel.proxy
    return [str(px.index(r, COL_NODE, parent).data(Role.NODE_KEY)[-1]) for r in range(px.rowCount(parent))]


def _cec(panel) -> QModelIndex:
    return panel.proxy.index(0, 0)


def test_starts_in_tree_order_and_sorts_by_a_header_click(panel, qtbot):
    assert _labels(panel, _cec(panel)) == ["ZOSA", "ZOSB", "ZOSC", "CF01", "GCP"]
    header = panel.view.header()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(COL_CPI) + 5, 5))
    assert panel.proxy.sortColumn() == COL_CPI


def test_numeric_sort_with_missing_last_in_both_orders(panel):
    panel.view.sortByColumn(COL_CPI, ASC)
    # CPI 3.5, 9.0, 10.0 (numeric order), CF01 without CPI last, the pool after the LPARs
    assert _labels(panel, _cec(panel)) == ["ZOSA", "ZOSC", "ZOSB", "CF01", "GCP"]
    panel.view.sortByColumn(COL_CPI, DESC)
    assert _labels(panel, _cec(panel)) == ["ZOSB", "ZOSC", "ZOSA", "CF01", "GCP"]
    panel.view.sortByColumn(COL_BUSY, DESC)
    assert _labels(panel, _cec(panel)) == ["ZOSC", "ZOSA", "ZOSB", "CF01", "GCP"]   # 1200, 300, 90; none last


def test_children_sorted_within_their_parent(panel):
    panel.view.sortByColumn(COL_CPI, DESC)
    cec = _cec(panel)
    zosa = next(panel.proxy.index(r, 0, cec) for r in range(panel.proxy.rowCount(cec))
                if panel.proxy.index(r, 0, cec).data(Role.NODE_KEY)[-1] == "ZOSA")
    gcp = panel.proxy.index(0, 0, zosa)
    assert _labels(panel, gcp) == ["2", "0", "10"]     # CPI 4.0, 3.1, 2.2 -- ZOSA's CPUs only
    panel.view.sortByColumn(COL_NODE, ASC)
    assert _labels(panel, gcp) == ["0", "2", "10"]     # "CPU 2" before "CPU 10"
    assert _labels(panel, cec) == ["CF01", "ZOSA", "ZOSB", "ZOSC", "GCP"]


def test_sort_survives_a_reload_and_a_third_click_gives_tree_order(panel):
    panel.view.sortByColumn(COL_BUSY, ASC)
    panel.set_roots(roots(scale=-1.0))                 # the reload turns the busy order round
    assert panel.proxy.sortColumn() == COL_BUSY and panel.proxy.sortOrder() == ASC
    assert _labels(panel, _cec(panel)) == ["ZOSC", "ZOSA", "ZOSB", "CF01", "GCP"]   # -1200, -300, -90
    panel.view.sortByColumn(-1, ASC)
    assert _labels(panel, _cec(panel)) == ["ZOSA", "ZOSB", "ZOSC", "CF01", "GCP"]


def test_proxy_passes_the_model_tester(panel, qtmodeltester):
    panel.view.sortByColumn(COL_CPI, DESC)
    qtmodeltester.check(panel.proxy)


def test_natural_key():
    assert sorted(["CPU 10", "CPU 2", "cpu 1", "Core 3"], key=natural_key) == ["Core 3", "cpu 1", "CPU 2", "CPU 10"]


def _text_width(panel, col: int) -> int:
    fm = panel.view.header().fontMetrics()
    title = str(panel.proxy.headerData(col, Qt.Orientation.Horizontal))
    cells = [str(i.data() or "") for i in _all_indexes(panel, col)]
    return max(fm.horizontalAdvance(t) for t in [title, *cells])


def _all_indexes(panel, col: int, parent: QModelIndex = QModelIndex()) -> list[QModelIndex]:
    out = []
    for r in range(panel.proxy.rowCount(parent)):
        idx = panel.proxy.index(r, col, parent)
        out.append(idx)
        out.extend(_all_indexes(panel, col, panel.proxy.index(r, 0, parent)))
    return out


def test_number_columns_keep_no_room_for_arrows_they_do_not_show(panel):
    """A sortable header sized every number column for a sort arrow (+20 px each): the dock grew by 52 px and at
    1024x700 the CPI plot's legend wrapped, the plot losing 14 px (issue 26, commit 2fc3482).  Only the sorted
    column has an arrow; every column still holds its title and values."""
    header, view = panel.view.header(), panel.view
    for col in (1, COL_BUSY, COL_CPI):
        assert view.columnWidth(col) >= _text_width(panel, col)          # nothing clipped
        assert view.columnWidth(col) < header.sectionSizeHint(col)       # the hint counts an arrow not shown
    view.sortByColumn(COL_BUSY, DESC)
    assert view.columnWidth(COL_BUSY) >= header.sectionSizeHint(COL_BUSY)   # the arrow beside "Busy %"
    assert view.columnWidth(COL_CPI) < header.sectionSizeHint(COL_CPI)
    view.sortByColumn(-1, ASC)                                               # tree order: no arrow at all
    assert view.columnWidth(COL_BUSY) < header.sectionSizeHint(COL_BUSY)


def test_sorting_a_number_column_clips_no_label(qtbot, window, smf_b, monwrite):
    """The dock keeps room for one sort arrow: sorted by Busy (its header 20 px wider for the arrow) the longest
    label, "VMPROD · VMSYS1 · z/VM", was elided at 1440x900 (issue 26)."""
    from tests.ui.conftest import wait_loaded

    window.open_files([smf_b, monwrite])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.tree.model.rowCount() > 0)
    view = window.tree.view
    view.expandToDepth(1)                       # CECs and LPARs: the labels the dock is sized for
    for col in (COL_BUSY, COL_CPI, 1):
        view.sortByColumn(col, DESC)
        qtbot.wait(50)
        assert view.columnWidth(COL_NODE) >= view.sizeHintForColumn(COL_NODE), col
        assert view.columnWidth(col) >= view.header().sectionSizeHint(col)       # the arrow has its room
