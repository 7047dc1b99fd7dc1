"""The Qt window: models over engine results, plots, workers.  No formulas, no bytes."""

from __future__ import annotations

import sys


def _pin_singletons() -> None:
    """Make None/True/False effectively immortal on CPython < 3.12.

    PySide6 6.12's abi3 wheels return ``None`` from void methods without taking a
    reference (correct only on 3.12+, where None is immortal, PEP 683).  On 3.11
    every Qt call then drops one reference of ``None`` and the process aborts with
    "none_dealloc" after a few thousand calls.  Measured with PySide6-Essentials
    6.12.0 / Python 3.11.7: 200 000 ``QGraphicsItem.setPos`` calls abort.
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    import ctypes

    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40


_pin_singletons()


def release_clipboard() -> None:
    """Leave plain text on the clipboard instead of our QMimeData.

    With PySide6 6.12 a QMimeData given to ``QClipboard.setMimeData`` is deleted
    twice when the application object is torn down, and the process ends with a
    segmentation fault (seen offscreen on every run).  Clearing the clipboard while
    the application is still alive avoids it; the TSV text is put back so that a
    table copied just before quitting still pastes into Excel.  Called when the
    application is about to quit, at interpreter exit, and at the end of a test run.
    """
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.instance() is None:
        return
    cb = QGuiApplication.clipboard()
    if cb.mimeData() is None or not cb.mimeData().formats():
        return
    text = cb.text()
    cb.clear()
    if text:
        cb.setText(text)


def _release_at_exit() -> None:
    import atexit

    atexit.register(release_clipboard)


_release_at_exit()
