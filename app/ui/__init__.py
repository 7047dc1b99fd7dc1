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


def quick_feature_check() -> None:
    """Make PySide6's check of every module imported after it cheap (call once PySide6 is imported).

    PySide6 wraps ``__import__``: after each import, ``shibokensupport.feature`` asks whether the new module
    mentions "PySide6" (for its opt-in ``from __feature__ import ...``, which NestScope does not use) through
    ``inspect.getsource``: linecache, the file's encoding cookie, its lines, for each of the ~500 modules of
    pandas, numpy, pyarrow and the engine that the start imports after Qt.  Measured on the start: pandas and
    numpy imported after Qt took 0.69-0.72 CPU s with the check replaced, 0.86-0.94 s with PySide6's (issue 23).
    Here the same question is answered by reading the module's file as bytes (the same answers for the 826
    modules the window imports).  Left as is when PySide6's internals are not what this expects."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)) \
            or not isinstance(getattr(feature, "pyside_feature_dict", None), dict):
        return

    def mentions_pyside(module) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return False          # a built-in or compiled module: no source (PySide6's check says False too)
        try:
            with open(path, "rb") as fh:
                return b"PySide6" in fh.read()
        except OSError:
            return False
    feature._mod_uses_pyside = mentions_pyside


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
