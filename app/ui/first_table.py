"""The first table of a load comes before everything else (issue 23).

Opening files in an empty window (the start's demo: seven files), the window reads the first file, adds it and
computes its first table while the other reads wait (:meth:`LoadController.hold_next`): a read beside that job
would take the GIL from it half of the time (the reads are Python, the two cores cannot both run it).  Once the
table has its rows, the next view job and the held reads wait until the table has been painted: a job started
at once took the GIL from the paint's many short calls into Python (its cells), and the rows reached the screen
0.3-1 s after they were set.  Either wait ends at the latest after ``PAINT_WAIT_MS`` (a window hidden or covered
gets no paint), when nothing readable was loaded, or when a view job failed.  A big file's whole table replacing
its first part's (app/ui/window_partial.py) does not hold the next job: the part's table was the first on screen,
and that job (the tree's class and CPU levels) would otherwise wait 0.2-0.4 s with both cores idle.

A helper of MainWindow (``window.loader``, ``window.runner``, ``window.table``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer

PAINT_WAIT_MS = 400   # the next job and reads start by then even when the table got no paint


def begin(window: Any) -> None:
    """Files are being opened: in an empty window with no read running, the reads after the first wait for its
    first table."""
    window.__dict__.pop("_part_replaced", None)
    window._table_first = False      # (a big file's job order, window_partial.plan_job: afresh for this load)
    if not window.loaded() and not window.loader.busy():
        window.loader.hold_next()
        window._first_table = True


def table_set(window: Any) -> None:
    """The table was given rows: the next job and the held reads wait for its paint (when it can be painted)."""
    after_part = window.__dict__.pop("_part_replaced", False)
    if not window.__dict__.pop("_first_table", False):
        return
    viewport = window.table.view.viewport()
    if not viewport.isVisible() or window.table.model.rowCount() == 0:
        release(window)
        return
    if not after_part:      # (after a part: only the held reads wait for the paint)
        window.runner.hold()
    watch = _PaintWatch(window)
    viewport.installEventFilter(watch)
    window._paint_watch = watch
    QTimer.singleShot(PAINT_WAIT_MS, watch, lambda: release(window, watch))


def release(window: Any, watch: QObject | None = None) -> None:
    """Let the held job and reads go (at once; again: nothing to do).  ``watch``: only while it is the one
    waiting (a paint or its fallback timer)."""
    if watch is not None and window.__dict__.get("_paint_watch") is not watch:
        return
    window.__dict__.pop("_first_table", None)
    watch = window.__dict__.pop("_paint_watch", None)
    if watch is not None:
        window.table.view.viewport().removeEventFilter(watch)
        watch.deleteLater()
    window.runner.release()
    window.loader.release()


class _PaintWatch(QObject):
    """Releases the window once its table's viewport has been painted (through the event loop, after the
    paint)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            QTimer.singleShot(0, self, lambda: release(self._window, self))
        return False
