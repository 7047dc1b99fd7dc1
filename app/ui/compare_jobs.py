"""Jobs over the window's Workspace, run one at a time through its SerialRunner (compare, export)."""

from __future__ import annotations

import traceback
from typing import Any

from PySide6.QtCore import QObject, QTimer


class _Tagged:
    """A compare/export job's result travelling through the window's SerialRunner (not a ViewData)."""

    def __init__(self, token: object, value: Any = None, error: tuple[str, str] | None = None) -> None:
        self.token, self.value, self.error = token, value, error


class WorkspaceJobs(QObject):
    """Run functions over the window's Workspace through its SerialRunner, one at a time.

    A job is started only when the runner is idle, so it never replaces a view request the window
    queued; the window's own requests made meanwhile wait for it.  Results come back on the GUI
    thread to ``on_done(value)`` or ``on_error(text, details)``.
    """

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.runner = window.runner
        self._queue: list[tuple[object, Any, Any, Any]] = []
        self._running: dict[object, tuple[Any, Any]] = {}
        # the window's view slot must not see our results: route them here
        try:
            self.runner.done.disconnect(window._apply)
        except (RuntimeError, TypeError):
            pass
        self.runner.done.connect(lambda r: self._on_done(r) if isinstance(r, _Tagged) else window._apply(r))
        self.runner.idle.connect(self._pump)

    def run(self, fn, on_done, on_error) -> object:
        token = object()
        self._queue.append((token, fn, on_done, on_error))
        self._pump()
        return token

    def discard(self, token: object) -> None:
        """Forget a job: taken out of the queue, or its result dropped when it already runs."""
        self._queue = [q for q in self._queue if q[0] is not token]
        if token in self._running:
            self._running[token] = (None, None)

    def busy(self) -> bool:
        return bool(self._queue or self._running)

    def _pump(self) -> None:
        if self.runner.busy() or not self._queue or self._running:
            return
        token, fn, on_done, on_error = self._queue.pop(0)
        self._running[token] = (on_done, on_error)

        def job():
            try:
                return _Tagged(token, fn())
            except Exception as exc:  # noqa: BLE001 - reported to the user by on_error
                return _Tagged(token, error=(f"{type(exc).__name__}: {exc}", traceback.format_exc()))

        self.runner.submit(lambda: job)

    def _on_done(self, result: _Tagged) -> None:
        on_done, on_error = self._running.pop(result.token, (None, None))
        if result.error is not None:
            if on_error is not None:
                on_error(*result.error)
        elif on_done is not None:
            on_done(result.value)
        QTimer.singleShot(0, self._pump)
