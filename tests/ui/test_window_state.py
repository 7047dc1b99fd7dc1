"""Issue 21, stale and confusing state: what the window shows always belongs to what is selected and loaded.

Each test reproduces one thing the analyst saw in a real window and fails without its fix.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.findings import make_finding
from app.ui import messages as M
from tests.ui.conftest import sample, wait_loaded


def lpar_keys(w) -> list[tuple]:
    return [tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "lpar" and not n.info.get("partition_only")]


# ------------------------------------------------------------------ the table's sort arrow
def test_sort_arrow_goes_with_a_new_selection(qtbot, loaded):
    w = loaded
    header = w.table.view.horizontalHeader()
    col = w.table.model.column_index("CPI")
    w.table.view.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    assert header.sortIndicatorSection() == col
    other = [k for k in lpar_keys(w) if k not in w.selection.value.nodes][0]
    w.tree.select_keys([other])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.table.model.rowCount() > 0 and w.selection.value.nodes == (other,), timeout=30_000)
    # the new rows are in time order: no arrow says otherwise
    assert header.sortIndicatorSection() == -1
    ends = [w.table.model.frame.iloc[w.table.model.frame_row(r)]["interval_end"]
            for r in range(w.table.model.rowCount()) if not w.table.model.is_summary_row(r)]
    assert ends == sorted(ends)


# ------------------------------------------------------------------ the SMT tab while it computes
def test_smt_tab_never_shows_another_nodes_rows(qtbot, window, smf_a, monwrite):
    w = window
    w.open_files([smf_a, monwrite])
    wait_loaded(qtbot, w)
    w.tabs.setCurrentWidget(w.smt)
    wait_loaded(qtbot, w)
    vm = [k for k in lpar_keys(w) if k[2] == "VMPROD"][0]
    w.tree.select_keys([vm])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.smt.type_model.rowCount() > 0, timeout=30_000)
    assert set(w.smt.type_model.frame["lpar"]) == {"VMPROD"}
    other = [k for k in lpar_keys(w) if k != vm][0]
    w.tree.select_keys([other])          # the job starts; until it ends, no VMPROD rows and a busy bar
    assert w.smt.busy() and w.smt.type_model.rowCount() == 0 and w.smt.core_model.rowCount() == 0
    assert other[2] in w.smt.placeholder.text() and "Computing" in w.smt.placeholder.text()
    assert M.PLACEHOLDER.split(" (")[0] not in w.smt.placeholder.text()
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: not w.smt.busy(), timeout=30_000)
    rows = w.smt.type_model.frame
    assert not len(rows) or set(rows["lpar"]) == {other[2]}
    assert w.errors == []


# ------------------------------------------------------------------ while files load
def test_status_bar_tree_and_progress_labels_during_a_load(qtbot, window):
    w = window
    names = ["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz", "after_z16_ZOSC_smf113.bdw.gz"]
    w.open_files([sample(names[0])])
    wait_loaded(qtbot, w)
    assert w.load_summary.text().startswith("1 of 1 files read")
    w2_started = w.open_files([sample(n) for n in names[1:]])
    assert w2_started == 2
    # the last load's "1 of 1 files read" gives way at once; the progress labels show what differs
    assert w.load_summary.text() == M.STATUS_LOAD_RUNNING.format(n=2)
    labels = [j.widget.label.text() for j in w.loader.jobs.values()]
    assert sorted(labels) == ["ZOSB_smf113.vbs", "ZOSC_smf113.bdw"], labels
    assert {j.widget.label.toolTip() for j in w.loader.jobs.values()} == set(names[1:])
    # the CEC rows show no busy while their LPARs are still coming (z16: ZOSA in, ZOSB and ZOSC loading)
    from app.ui.tree_model import COL_BUSY, COL_CPI

    cec = next(n for n in w.tree.model.all_nodes() if n.level == "cec")
    idx = w.tree.model.index_of_key(tuple(cec.key))
    assert w.tree.model.loading and w.tree.model.partial(cec)
    for col in (COL_BUSY, COL_CPI):
        assert w.tree.model.data(idx.siblingAtColumn(col)) == M.TREE_CEC_PENDING
    assert M.TREE_CEC_PENDING_TIP in w.tree.model.data(idx, Qt.ItemDataRole.ToolTipRole)
    wait_loaded(qtbot, w)
    assert w.load_summary.text().startswith("2 of 2 files read")
    assert not w.tree.model.loading
    # once in, the CEC's busy is its LPARs' sum (LPARCPU adds up over the LPARs of one time range)
    qtbot.waitUntil(lambda: bool(w.tree.model._values), timeout=30_000)
    cec = next(n for n in w.tree.model.all_nodes() if n.level == "cec" and n.key[1] == "3931-123F5")
    busy = w.tree.model.value(cec, "busy")
    lpars = sum(w.tree.model.value(n, "busy") or 0 for n in cec.children if n.level == "lpar")
    assert busy is not None and abs(busy - lpars) <= 0.05 * lpars, (busy, lpars)


def test_tree_says_loading_not_no_files(qtbot, window, smf_a):
    assert window.tree.placeholder.text() == M.TREE_PLACEHOLDER
    window.open_files([smf_a])
    assert window.tree.placeholder.text() == M.TREE_LOADING.format(n=1)
    assert window.smt.placeholder.text() == M.LOADING and window.smt.busy()      # not "Open files (Ctrl+O)"
    assert window.table.placeholder.text() == M.LOADING
    wait_loaded(qtbot, window)
    assert window.tree.placeholder.text() == M.TREE_PLACEHOLDER and window.tree.stack.currentIndex() == 1


def test_short_progress_names():
    from app.ui.loader import LABEL_CHARS, short_names

    assert short_names(["after_z16_ZOSA_smf113.rdw.gz"]) == ["after_z16_ZOSA_smf113..."]   # 24 characters
    got = short_names(["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz"])
    assert got == ["ZOSA_smf113.rdw", "ZOSB_smf113.vbs"]
    got = short_names(["after_VMSYS1_monwrite.mondata.gz", "before_z15_ZOSA_smf113.rdw.gz"])
    assert all(len(g) <= LABEL_CHARS for g in got) and len(set(got)) == 2


def test_new_roots_drop_stale_values():
    """Values computed before new files came are not shown beside the new tree's nodes."""
    from app.engine.tree import TreeNode
    from app.ui.tree_model import MachineTreeModel

    lpar = TreeNode(("lpar", "C", "A"), "lpar", "A", [], {"busy": 600.0})
    cec = TreeNode(("cec", "C"), "cec", "C", [lpar], {"busy": 600.0})
    model = MachineTreeModel()
    model.set_roots([cec])
    model.set_values({("cec", "C"): {"busy": 300.0}, ("lpar", "C", "A"): {"busy": 300.0}}, False)
    assert model.value(cec, "busy") == 300.0
    lpar_b = TreeNode(("lpar", "C", "B"), "lpar", "B", [], {"busy": 700.0})
    cec2 = TreeNode(("cec", "C"), "cec", "C", [lpar, lpar_b], {"busy": 1300.0})
    model.set_roots([cec2])
    assert model.value(cec2, "busy") == 1300.0 == model.value(lpar, "busy") + model.value(lpar_b, "busy")


# ------------------------------------------------------------------ one warnings count
def test_status_bar_counts_what_data_health_counts(qtbot, window):
    from app.ui.render import ViewData
    from app.ui.selection import Selection

    w = window
    warn = [make_finding("/data/a_smf113.rdw", 100 * i, "warning", "counter-reset", "a reset") for i in range(11)]
    w._batch = [("a_smf113.rdw", True, ""), ("b_smf113.rdw", True, "")]   # the readers saw nothing wrong
    w._show_health(ViewData(selection=Selection(), findings=warn, files=["/data/a_smf113.rdw"], loaded=True))
    w._show_load_summary()
    text = w.load_summary.text()
    assert text.startswith("2 of 2 files read: 0 with errors, 1 with warnings"), text
    assert "11 warnings on Data health" in text
    assert w.tabs.tabText(w.tabs.indexOf(w.health)) == M.TAB_HEALTH_N.format(n=11)


# ------------------------------------------------------------------ the Export dialog opened again
def test_export_dialog_reopens_fresh(qtbot, window, smf_a, tmp_path):
    w = window
    w.open_files([smf_a])
    wait_loaded(qtbot, w)
    dlg = w.compare.export_dialog("table")
    assert dlg.path.text().endswith("nestscope_table.pptx")
    dlg.path.setText(str(tmp_path / "nestscope_table.png"))
    dlg.progress.setValue(100)
    dlg._finish("ok", f"Written: {tmp_path / 'nestscope_table.png'}")
    dlg.close()
    dlg = w.compare.export_dialog("deck")
    assert dlg.state.text() == "" and dlg.progress.value() == 0
    # the suggested name follows What; a deck is never a picture
    assert dlg.what.currentData() == "deck" and dlg.path.text() == str(tmp_path / "nestscope_deck.pptx")
    dlg.path.setText(str(tmp_path / "q4_review.xlsx"))     # a name the analyst typed stays
    dlg.close()
    dlg = w.compare.export_dialog("table")
    assert dlg.path.text() == str(tmp_path / "q4_review.xlsx") and dlg.what.currentData() == "table"
    # the size field says inline what is wrong
    dlg.path.setText(str(tmp_path / "x.png"))
    dlg.size.setText("1600x")
    assert "not WxH" in dlg.size_error.text()
    dlg.size.setText("1600x900")
    assert dlg.size_error.text() == ""
    dlg.close()


# ------------------------------------------------------------------ Data health's file names
def test_health_file_names_keep_their_end(qtbot, window):
    from PySide6.QtWidgets import QStyleOptionViewItem

    from app.ui.health import COL_FILE

    delegate = window.health.view.itemDelegateForColumn(COL_FILE)
    f = make_finding("/data/sets/after_z16_ZOSA_smf113.rdw.gz", 0, "warning", "x", "y")
    window.health.set_findings([f], [f.file], True)
    idx = window.health.proxy.index(0, COL_FILE)
    opt = QStyleOptionViewItem()
    delegate.initStyleOption(opt, idx)
    assert opt.textElideMode == Qt.TextElideMode.ElideLeft
    assert idx.data(Qt.ItemDataRole.ToolTipRole) == f.file
