"""Reading off the GUI thread: the event loop turns, progress shows, Cancel stops within a second."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

import app.formats
from app.formats.schema import Cancelled
from app.ui.loader import JobWidget
from tests.ui.conftest import wait_loaded


def test_event_loop_turns_during_large_load(qtbot, window, large_smf):
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    t0 = time.monotonic()
    window.open_files([large_smf])
    qtbot.waitUntil(lambda: bool(window.statusBar().findChildren(JobWidget)), timeout=5000)
    wait_loaded(qtbot, window)
    timer.stop()
    elapsed = time.monotonic() - t0
    assert elapsed > 0.3, "the file should take a while to read"
    assert len(ticks) >= elapsed / 0.02 * 0.3  # the loop kept turning
    assert {n.key[2] for n in window.tree.model.all_nodes() if n.level == "lpar"} == {"ZOSA"}


def _slow_reader(seen):
    def read_file(path, progress=None, cancel=None, **_kw):
        for i in range(1000):
            if cancel is not None and cancel():
                seen.append("cancelled")
                raise Cancelled()
            if progress is not None:
                progress(i / 1000)
            time.sleep(0.01)
        raise AssertionError("not cancelled")
    return read_file


def test_cancel_stops_within_a_second(qtbot, window, monkeypatch, smf_a, smf_b):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    roots_before = [n.key for n in window.tree.model.all_nodes()]
    seen: list[str] = []
    monkeypatch.setattr(app.formats, "read_file", _slow_reader(seen))
    window.open_files([smf_b])
    qtbot.waitUntil(lambda: bool(window.statusBar().findChildren(JobWidget)), timeout=5000)
    widget = window.statusBar().findChildren(JobWidget)[0]
    qtbot.waitUntil(lambda: widget.bar.maximum() == 100 and widget.bar.value() > 0, timeout=5000)
    t0 = time.monotonic()
    widget.button.click()
    assert not window.loader.busy()
    qtbot.waitUntil(lambda: window.loader.running_workers() == 0, timeout=1000)
    assert time.monotonic() - t0 < 1.0
    assert seen == ["cancelled"]
    assert "cancelled" in window.statusBar().currentMessage()
    assert [n.key for n in window.tree.model.all_nodes()] == roots_before
    assert len(window.ws.files) == 1
    assert window.errors == []


def test_reader_crash_is_reported_not_raised(qtbot, window, monkeypatch, smf_a):
    def boom(path, progress=None, cancel=None, **_kw):
        raise RuntimeError("reader bug")

    shown = []
    monkeypatch.setattr(app.formats, "read_file", boom)
    monkeypatch.setattr("app.ui.main_window.show_error", lambda parent, what, details: shown.append((what, details)))
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert shown and "reader bug" in shown[0][0] and "Traceback" in shown[0][1]
    assert "reader bug" in window.statusBar().full_message()   # (the message shown may end in an ellipsis)
