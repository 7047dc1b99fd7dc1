"""Issue 26: long names in the tree panel.  The window sizes the tree's dock for its labels once, when the first
tree arrives; a file read after it (here a z/VM system whose row reads "WWWWWWWW · MWMWMWMW · z/VM", the widest
8-character names) kept that width and the row was elided even at 1440x900.  Now a later tree with longer labels
widens the dock the window sized (up to its cap, about a third of the window); a dock the user sized keeps its
width; where the cap still elides a name (1024 px), the row's tooltip gives it in full."""

from __future__ import annotations

import datetime as dt

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.formats import monwrite_writer, smf113_writer
from app.sample.build import MIX_GCP, MIX_IFL
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute
from tests.ui.conftest import wait_loaded

START = dt.datetime(2026, 3, 2)
VM_LABEL = "WWWWWWWW · MWMWMWMW · z/VM"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("widenames")
    lps = [LparModel(s, s, [ClassModel("GCP", 2, 60, 3.0, 3.0, MIX_GCP)]) for s in ("ZOSA", "ZOSB")]
    samples, _ = make_samples(CecModel("z16", "00000000000123F5", lps), START, 8, 900.0, seed=3)
    zos = tmp / "zos.smf"
    smf113_writer.write_smf_file(zos, smf113_writer.encode_samples(samples, 1), framing="rdw")
    vm = LparModel("WWWWWWWW", "MWMWMWMW", [ClassModel("IFL", 2, 50, 2.2, 2.2, MIX_IFL)], os="z/VM")
    vs, _ = make_samples(CecModel("z16", "00000000000123F5", [vm]), START, 30, 60.0, seed=4)
    zvm = tmp / "vm.mondata"
    monwrite_writer.write_samples(to_absolute(vs), path=zvm)
    return str(zos), str(zvm)


def _open(qtbot, w, path):
    w.open_files([path])
    wait_loaded(qtbot, w)
    qtbot.wait(50)
    QApplication.processEvents()


def _vm_index(w):
    m = w.tree.proxy
    for r in range(m.rowCount()):
        cec = m.index(r, 0)
        for k in range(m.rowCount(cec)):
            i = m.index(k, 0, cec)
            if m.data(i) == VM_LABEL:
                return i
    raise AssertionError("no z/VM row")


def _label_fits(w) -> bool:
    """Every shown label fits the Node column (Qt elides what does not)."""
    view = w.tree.view
    return view.sizeHintForColumn(0) <= view.columnWidth(0)


def test_later_file_with_longer_names_widens_the_dock(qtbot, window, files):
    zos, zvm = files
    window.resize(1440, 900)
    _open(qtbot, window, zos)
    first = window.tree.dock.width()
    assert _label_fits(window)
    _open(qtbot, window, zvm)
    qtbot.waitUntil(lambda: window.tree.dock.width() > first, timeout=5000)   # was: stayed at the first width
    window.tree.view.expandAll()
    assert _label_fits(window)
    assert window.tree.dock.width() <= int(1440 * 0.32)                        # the cap: the plots keep their room
    # the row's text is the full name (not elided in the model)
    assert window.tree.proxy.data(_vm_index(window)) == VM_LABEL


def test_a_dock_the_user_sized_keeps_its_width(qtbot, window, files):
    zos, zvm = files
    window.resize(1440, 900)
    _open(qtbot, window, zos)
    window.resizeDocks([window.tree.dock], [300], Qt.Orientation.Horizontal)   # the user drags the splitter
    QApplication.processEvents()
    chosen = window.tree.dock.width()
    _open(qtbot, window, zvm)
    assert window.tree.dock.width() == chosen


def test_at_1024_the_capped_dock_names_the_row_in_its_tooltip(qtbot, window, files):
    zos, zvm = files
    window.resize(1024, 700)
    _open(qtbot, window, zos)
    _open(qtbot, window, zvm)
    assert window.tree.dock.width() <= int(1024 * 0.32) + 4
    tip = window.tree.proxy.data(_vm_index(window), Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == VM_LABEL
