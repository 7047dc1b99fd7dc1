"""Issue 20: Save Workspace, quit, Open Workspace gives exactly the numbers the window showed.

Opening a workspace replaces what is open: the bundled demo (or anything else) is closed, never left under the
workspace's files (where its records of the same CPUs and times were taken as the originals and moved the
workspace's numbers).  Unsaved changes are offered for saving first.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.commands.gui import sample_files
from tests.ui.conftest import wait_loaded

Button = QMessageBox.StandardButton


@pytest.fixture(scope="module")
def other_zosa(tmp_path_factory) -> str:
    """A ZOSA of the demo's z16 over the demo's first two hours, other values (seed): the demo holds records of the
    same CPUs and times, so a demo left open under it changes its numbers."""
    from app.sample.build import AFTER_START, Z16_SEQ, write_zos, zos_lpars
    from app.sample.model import CecModel

    out = tmp_path_factory.mktemp("ws_files")
    cec = CecModel("z16", Z16_SEQ, zos_lpars(cpi_scale=1.05))
    return str(write_zos(out, cec, AFTER_START, 8, "other", {"ZOSA": ((1,), "rdw")}, seed=99)[0])


def _demo(qtbot, w) -> list[str]:
    files = sample_files()
    if not files:
        pytest.skip("bundled samples not generated")
    w.open_files(files)
    w.mark_unchanged(files)          # as `nestscope gui` does for the demo
    wait_loaded(qtbot, w)
    return files


def _numbers(w) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The LPAR metrics of the workspace and the interval table the window shows."""
    m = w.ws.metrics(by="lpar").reset_index(drop=True)
    t = w.table.model.frame.reset_index(drop=True)
    return m, t


def _new_window(qtbot):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = MainWindow(Workspace())
    qtbot.addWidget(w)
    w.show()
    return w


def _no_question(monkeypatch):
    def ask(*_a, **_k):
        raise AssertionError("asked to save although nothing was changed")
    monkeypatch.setattr(QMessageBox, "question", ask)


def _opened(qtbot, w, path) -> None:
    assert w.open_workspace(str(path))
    qtbot.waitUntil(lambda: not w.busy() and w._ws_pending is None and w.loaded(), timeout=60_000)
    wait_loaded(qtbot, w)


def test_reopened_workspace_shows_the_saved_numbers_over_the_demo(qtbot, window, other_zosa, tmp_path,
                                                                   monkeypatch):
    window.open_files([other_zosa])
    wait_loaded(qtbot, window)
    key = next(tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "lpar")
    window.tree.select_keys([key])
    qtbot.waitUntil(lambda: [tuple(k) for k in window.selection.value.nodes] == [key])
    wait_loaded(qtbot, window)
    saved_m, saved_t = _numbers(window)
    assert len(saved_t) > 0
    path = tmp_path / "mine.nsw.json"
    window.save_workspace(str(path))
    assert not window.has_unsaved_changes()

    w2 = _new_window(qtbot)                         # "quit" and start again: the demo opens
    _demo(qtbot, w2)
    assert not w2.has_unsaved_changes()             # the demo counts as saved: no question
    _no_question(monkeypatch)
    _opened(qtbot, w2, path)
    assert [Path(r.file).resolve() for r in w2.ws.files] == [Path(other_zosa).resolve()]   # the demo is gone
    assert [tuple(k) for k in w2.selection.value.nodes] == [key]
    got_m, got_t = _numbers(w2)
    pd.testing.assert_frame_equal(got_m, saved_m, check_exact=True)
    pd.testing.assert_frame_equal(got_t, saved_t, check_exact=True)
    assert not w2.has_unsaved_changes()
    assert w2.errors == [] and window.errors == []
    w2.loader.cancel_all()


def test_only_the_workspace_files_remain(qtbot, window, other_zosa, tmp_path, monkeypatch):
    from app.ui import workspace_file as wsf

    path = tmp_path / "one.nsw.json"
    wsf.save(wsf.WorkspaceState([other_zosa]), path)
    demo = _demo(qtbot, window)
    assert len(window.ws.files) == len(demo)
    zosb = [tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "lpar" and n.key[2] == "ZOSB"]
    window.compare.set_side("before", zosb[:1])
    window.compare.set_side("after", zosb[1:2])
    qtbot.waitUntil(lambda: window.compare.tab.comparison is not None, timeout=60_000)
    _no_question(monkeypatch)                 # a comparison made on the demo is no change to save either
    _opened(qtbot, window, path)
    assert len(window.ws.files) == 1 and len(window.loader.opened) == 1
    assert window.compare.tab.comparison is None and window.compare.tab.state() is None
    assert window.compare.tab.model.rowCount() == 0
    cecs = {n.key[1] for n in window.tree.model.all_nodes() if n.level == "lpar"}
    lpars = {n.key[2] for n in window.tree.model.all_nodes() if n.level == "lpar"}
    assert cecs == {"3931-123F5"} and lpars == {"ZOSA"}     # no z15, no ZOSB/ZOSC/VMPROD of the demo
    assert not [f for f in window.ws.findings if f.code == "duplicate-record"]


def test_unsaved_changes_are_offered_for_saving(qtbot, window, other_zosa, tmp_path, monkeypatch):
    from app.ui import workspace_file as wsf

    target = tmp_path / "target.nsw.json"
    wsf.save(wsf.WorkspaceState([other_zosa]), target)
    demo = sample_files()
    if not demo:
        pytest.skip("bundled samples not generated")
    window.open_files(demo[:2])                      # opened by the analyst: not saved anywhere
    wait_loaded(qtbot, window)
    assert window.has_unsaved_changes()
    asked = []

    def answer(button):
        def ask(parent, title, text, buttons, default):
            asked.append(text)
            return button
        return ask

    monkeypatch.setattr(QMessageBox, "question", answer(Button.Cancel))
    assert window.open_workspace(str(target)) is False
    assert len(asked) == 1 and "target.nsw.json" in asked[0]
    assert len(window.ws.files) == 2                  # cancelled: nothing closed

    saved = tmp_path / "before.nsw.json"
    monkeypatch.setattr(QMessageBox, "question", answer(Button.Save))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(saved), wsf.FILTER))
    _opened(qtbot, window, target)
    assert len(asked) == 2
    kept = wsf.load(saved)                            # the two files were saved before they were closed
    assert sorted(Path(f).resolve() for f in kept.files) == sorted(Path(f).resolve() for f in demo[:2])
    assert [Path(r.file).resolve() for r in window.ws.files] == [Path(other_zosa).resolve()]

    window.selection.set_window(pd.Timestamp(dt.datetime(2026, 11, 2, 1), tz="UTC"),
                                pd.Timestamp(dt.datetime(2026, 11, 2, 2), tz="UTC"))
    assert window.has_unsaved_changes()               # a new time window is a change of a saved workspace
    monkeypatch.setattr(QMessageBox, "question", answer(Button.Discard))
    _opened(qtbot, window, saved)
    assert len(asked) == 3
    assert sorted(Path(r.file).resolve() for r in window.ws.files) == sorted(Path(f).resolve() for f in demo[:2])
    assert window.errors == []


def test_views_of_a_closed_workspace_are_never_shown(qtbot, window, other_zosa):
    from app.ui.render import ViewData
    from app.ui.selection import Selection

    window.open_files([other_zosa])
    wait_loaded(qtbot, window)
    old = window._epoch
    stale_roots = list(window.ws.tree())
    assert window.close_all() == 1
    assert window.tree.model.rowCount() == 0 and window.ws.files == []
    window._apply(ViewData(selection=Selection(), roots=stale_roots, findings=[], files=[], loaded=True, epoch=old))
    assert window.tree.model.rowCount() == 0          # a late view of the old Workspace was dropped


def test_a_finding_naming_its_machine_selects_that_machines_lpar(qtbot, window):
    """The z15 and the z16 of the demo both run ZOSB: a finding keyed by machine goes to its own machine's node."""
    _demo(qtbot, window)
    for cec in ("8561-45A12", "3931-123F5"):
        assert window.tree.key_for_finding({"system": "ZOSB", "cec": cec}) == ("lpar", cec, "ZOSB")
