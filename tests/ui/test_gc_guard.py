"""Garbage collection on the GUI thread only while a window lives (app.ui.gc_guard)."""

from __future__ import annotations

import gc

import pytest
from PySide6.QtWidgets import QWidget

from app.ui import gc_guard


@pytest.fixture
def _gc_on_gui_thread():
    """Not the suite's guard (tests/ui/conftest.py): these tests install and release the guard themselves."""
    yield


def test_collection_moves_to_the_gui_thread_while_a_window_lives(qtbot):
    was = gc.isenabled()
    w = QWidget()
    timer = gc_guard.install(w)
    assert not gc.isenabled() and timer.isActive() and timer.interval() == gc_guard.INTERVAL_MS
    # a cycle made while automatic collection is off is collected by the window's timer
    gc.collect()
    limits = gc.get_threshold()
    junk = []
    for _ in range(limits[0] + 50):
        a: list = []
        a.append(a)
        junk.append(a)
    del junk
    assert gc.get_count()[0] > limits[0]
    qtbot.waitUntil(lambda: gc.get_count()[0] <= limits[0], timeout=5000)
    w.deleteLater()
    qtbot.waitUntil(lambda: gc.isenabled(), timeout=5000)
    assert gc.isenabled() == (was or True)


def test_collect_due_follows_the_thresholds():
    gc.collect()
    assert gc_guard.collect_due() == -1          # nothing counted since the full collection
