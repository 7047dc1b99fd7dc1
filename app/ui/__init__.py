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
