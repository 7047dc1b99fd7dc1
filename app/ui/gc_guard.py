"""Python's cyclic garbage collection on the GUI thread only.

A collection may free the last reference to a Qt object's wrapper (a menu, a widget of a closed window); its C++
destructor then runs on the thread that collected.  Run by a worker thread (a pool job in pandas), that
destructor takes Qt's object lock and waits for the GIL, while the GUI thread holds the GIL and waits for the same
lock: the window freezes.  So while a window is open, automatic collection is off and a timer of the window
collects on the GUI thread, by the same generation thresholds Python would use; when the last window is gone,
automatic collection is on again."""

from __future__ import annotations

import gc

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

INTERVAL_MS = 250
_windows = 0


def collect_due() -> int:
    """Collect the generations whose counts passed Python's thresholds (on the calling thread); returns the
    oldest generation collected, -1 for none."""
    limits, counts = gc.get_threshold(), gc.get_count()
    if counts[0] <= limits[0]:
        return -1
    gen = 2 if counts[2] > limits[2] else 1 if counts[1] > limits[1] else 0
    gc.collect(gen)
    return gen


def _released(*_args) -> None:
    global _windows
    _windows = max(0, _windows - 1)
    if _windows == 0:
        gc.enable()


def install(window: QWidget) -> QTimer:
    """Turn automatic collection off while ``window`` lives and collect on its (the GUI) thread instead."""
    global _windows
    _windows += 1
    gc.disable()
    timer = QTimer(window)
    timer.setInterval(INTERVAL_MS)
    timer.timeout.connect(collect_due)
    timer.start()
    window.destroyed.connect(_released)
    return timer
