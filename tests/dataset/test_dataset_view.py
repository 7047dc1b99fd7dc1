"""File > Open Dataset: tree from the manifest, table and timeline computed by DuckDB (pytest-qt, offscreen)."""

from __future__ import annotations

import os

import pandas as pd
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import app.ui  # noqa: E402,F401  (pins None/True/False before Qt runs)

from _fleet_helpers import SAMPLES  # noqa: E402
from app.dataset import Dataset  # noqa: E402
from app.dataset.query import QuerySpec, run_query  # noqa: E402


@pytest.fixture(scope="module")
def ds_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("view") / "ds"
    ds = Dataset(root, create=True)
    for f in (SAMPLES[2], SAMPLES[5], SAMPLES[0]):   # z16 ZOSB, z15 ZOSB, z/VM VMPROD
        assert ds.extract(f).status == "added"
    return root


def test_auto_points():
    from app.ui.dataset_view import auto_points

    t = pd.Timestamp("2026-01-01")
    assert auto_points(t, t + pd.Timedelta(days=400)) == "month"
    assert auto_points(t, t + pd.Timedelta(days=30)) == "day"
    assert auto_points(t, t + pd.Timedelta(days=2)) == "interval"


def test_window_tree_table_timeline(qtbot, ds_root, tmp_path):
    from app.ui.dataset_view import NODE_ROLE, DatasetWindow

    w = DatasetWindow(ds_root)
    qtbot.addWidget(w)
    m = w.tree_model
    cecs = [m.item(i).data(NODE_ROLE) for i in range(m.rowCount())]
    assert cecs == [("cec", "3931-123F5"), ("cec", "8561-45A12")]
    z16 = m.item(0)
    assert sorted(z16.child(i).data(NODE_ROLE)[2] for i in range(z16.rowCount())) == ["VMPROD", "ZOSB"]
    # the first CEC is selected at start; data spans 2026-10-05 .. 2026-11-04: 30 days -> daily points
    assert w.points.currentText() == "auto"
    assert w.spec().every == "day" and w.spec().by == "cec"
    qtbot.waitUntil(lambda: not w.runner.busy() and len(w.result) == 2, timeout=30_000)
    assert len(w.result) == 2        # z16 data on 2026-11-02 and 2026-11-03
    # select one LPAR: the table holds what the query gives for it
    sel = w.tree.selectionModel()
    sel.clearSelection()
    lpar = z16.child([z16.child(i).data(NODE_ROLE)[2] for i in range(z16.rowCount())].index("ZOSB"))
    sel.select(lpar.index(), sel.SelectionFlag.Select | sel.SelectionFlag.Rows)
    start, end = w.period()
    want = run_query(w.ds, QuerySpec(by="lpar", every="day", start=start, end=end,
                                     nodes=[("lpar", "3931-123F5", "ZOSB")]))
    qtbot.waitUntil(lambda: not w.runner.busy() and w.spec().nodes == [("lpar", "3931-123F5", "ZOSB")]
                    and list(w.result.get("lpar", [])) == ["ZOSB", "ZOSB"], timeout=30_000)
    assert len(w.result) == len(want) == 2
    assert list(w.result["CPI"]) == list(want["CPI"])
    assert w.table_model.rowCount() == 2
    assert "computed by DuckDB" in w.status.text()
    # the timeline has one curve for the one LPAR
    assert len(w.plot.getPlotItem().listDataItems()) == 1
    # interval points when zoomed in
    w.points.setCurrentText("interval")
    assert w.spec().by == "interval"
    qtbot.waitUntil(lambda: not w.runner.busy() and len(w.result) == 2 * 192, timeout=30_000)              # two classes (GCP, zIIP) x 192 intervals
    w.resize(1280, 800)
    w.grab().save(str(tmp_path / "dataset_view.png"))
    if os.environ.get("NESTSCOPE_SAVE_PNG"):
        w.grab().save(os.environ["NESTSCOPE_SAVE_PNG"])
    w.close()


def test_main_window_menu_action(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "nestscope.ini"))   # never the user's settings
    from app.ui import dataset_view
    from app.ui.main_window import MainWindow

    mw = MainWindow()
    qtbot.addWidget(mw)
    texts = [a.text() for a in mw.menuBar().actions()[0].menu().actions()]
    assert "Open &Dataset..." in texts
    opened = []
    monkeypatch.setattr(dataset_view, "open_dataset", lambda parent: opened.append(parent))
    mw.open_dataset_action.trigger()
    assert opened == [mw]


def test_open_dataset_on_a_non_dataset_warns(qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    from app.ui import dataset_view

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: shown.append(a[2]))
    assert dataset_view.open_dataset(None, tmp_path) is None
    assert "not a NestScope dataset" in shown[0]


def test_window_says_what_a_damaged_part_leaves_out(qtbot, ds_root, tmp_path):
    import shutil

    from app.ui.dataset_view import DatasetWindow

    root = tmp_path / "ds"
    shutil.copytree(ds_root, root)
    (e,) = [e for e in Dataset(root).entries() if e["name"] == SAMPLES[2].name]      # z16 ZOSB
    (part,) = e["parts"]["intervals"]
    (root / part).write_bytes(b"PAR1 damaged")
    w = DatasetWindow(root)
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: not w.runner.busy() and "rows" in w.status.text(), timeout=30_000)
    # the first CEC (z16) still answers, from VMPROD alone; the damaged ZOSB part is named
    assert "left out: 1 damaged file(s) of the dataset" in w.status.text()
    assert str(root / part) in w.status.toolTip() and "left out of this answer" in w.status.toolTip()
    rest = run_query(Dataset(root), w.spec())
    whole = run_query(Dataset(ds_root), w.spec())
    cols = [c for c in w.result.columns if c in rest.columns]
    pd.testing.assert_frame_equal(w.result[cols].reset_index(drop=True), rest[cols].reset_index(drop=True))
    assert not rest["CPI"].equals(whole["CPI"])           # without ZOSB the CEC's numbers differ
