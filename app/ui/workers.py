"""Off-GUI-thread work: the read job of one file, view jobs and the serial runner, as QRunnables with a signals
object in superqt's shape.

A read job is a thin Qt wrapper: the read itself (the workspace cache or the decoder, the progress callback, the
cancel check, the content digest) is :func:`app.analysis.reading.read_one`, the reads every front end uses; the
job forwards its progress (throttled at the source: emitted only when the percentage changes) and its outcome as
signals, received on the GUI thread.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.analysis.reading import file_digest  # noqa: F401 - the loader's (and the tests') name for it
from app.formats.schema import Cancelled


class WorkerSignals(QObject):
    """Signals of one worker, emitted from the pool thread, received on the GUI thread."""

    started = Signal()            # no payload
    progress = Signal(float)      # fraction 0..1
    finished = Signal(object)     # the worker's return value (a LoadOutcome)
    errored = Signal(str, str)    # short text, traceback
    cancelled = Signal()          # the cancel flag was honoured
    part = Signal(object)         # a big file's first part (progressive.FirstPart), before the whole file


@dataclass
class LoadOutcome:
    """What a read job hands back: the read result and the content digest of the file."""

    path: str
    digest: str
    result: Any  # formats.ReadResult


PROGRESS_EVERY = 0.125   # seconds between two progress signals of a read (issue 23: each one repainted the bar
# and the status line on the GUI thread, a call into Python taking the GIL from the read: a month's read gave one a
# percent, 67-100 of them in 2-3 s; 8 a second still move the bar smoothly)


class ReadWorker(QRunnable):
    """Read one file (:func:`app.analysis.reading.read_one`); emits progress, then exactly one of finished /
    errored / cancelled."""

    def __init__(self, path: str, counters=None, digest: bool = True, progressive: bool = False) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the job tracker owns us until a terminal signal
        self.path = path
        self.counters = counters   # the counter columns the workspace reads (None: all)
        self.digest = digest       # take the content digest beside the decode (a file of this size is open)
        self.progressive = progressive   # a big file: its first part handed over first (app/ui/progressive.py)
        self.cancel_flag = threading.Event()
        self.signals = WorkerSignals()
        self._last_pct = -1
        self._last_emit = 0.0

    def cancel(self) -> None:
        self.cancel_flag.set()

    def _progress(self, fraction: float) -> None:
        pct = int(max(0.0, min(1.0, float(fraction))) * 100)
        if pct == self._last_pct:  # throttle at the source: a new percentage ...
            return
        now = time.monotonic()
        if pct < 100 and self._last_pct >= 0 and now - self._last_emit < PROGRESS_EVERY:
            return                 # ... at most every PROGRESS_EVERY seconds (the first and 100 % always)
        self._last_pct, self._last_emit = pct, now
        self.signals.progress.emit(pct / 100.0)

    def run(self) -> None:  # noqa: D102 - QRunnable API
        from app.analysis.reading import read_one

        self.signals.started.emit()
        walker = self._first_part() if self.progressive else None
        try:
            result, digest = read_one(self.path, cached=True, counters=self.counters, progress=self._progress,
                                      cancel=self.cancel_flag.is_set, digest=self.digest)
        except Cancelled:
            self.signals.cancelled.emit()
            return
        except Exception as exc:  # unexpected: reported (dialog + a finding in Data health), never swallowed
            text = "MemoryError: out of memory" if isinstance(exc, MemoryError) else f"{type(exc).__name__}: {exc}"
            self.signals.errored.emit(text, traceback.format_exc())
            return
        finally:
            if walker is not None:
                walker.done.set()
                walker.join()
        self.signals.finished.emit(LoadOutcome(self.path, digest, result))

    def _first_part(self) -> threading.Thread | None:
        """A big file's first part (app/ui/progressive.py): its records decoded, then its rest walked, on a thread
        beside the whole file's read (which starts at once: issue 23, the part's decode no longer delays it),
        which emits ``part`` when it is done (not once the whole read ended or was cancelled)."""
        from app.ui.progressive import begin, wanted

        if not wanted(self.path, self.counters):
            return None
        done = threading.Event()
        stop = lambda: done.is_set() or self.cancel_flag.is_set()  # noqa: E731

        def walk() -> None:
            try:
                begun = begin(self.path, self.counters, checked=True)
                part = begun.walk(stop) if begun is not None else None
            except Exception:  # noqa: BLE001 - stopped (Cancelled), or a walk that failed: no part, the whole read
                part = None
            if part is not None and not stop():
                self.signals.part.emit(part)
        t = threading.Thread(target=walk, name="nestscope-rest", daemon=True)
        t.done = done
        t.start()
        return t


def failed_result(path: str, text: str, details: str = ""):
    """A read that raised: an unreadable ReadResult whose one finding names the file and the error."""
    from app.analysis import failed_result as failed

    name = str(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return failed(name, f"could not be read: unexpected error ({text})",
                  "nothing was read from it; please report this file", meta={"traceback": details})


READ_THREADS = 1  # readers are GIL-bound Python: parallel reads were 3x slower than one after the other
_read_pool: QThreadPool | None = None


def thread_pool() -> QThreadPool:
    """The pool for view computations (the global one)."""
    return QThreadPool.globalInstance()


def read_pool() -> QThreadPool:
    """The pool for file reads: files are read one after the other, results stream in."""
    global _read_pool
    if _read_pool is None:
        _read_pool = QThreadPool()
        _read_pool.setMaxThreadCount(READ_THREADS)
    return _read_pool


class CallWorker(QRunnable):
    """Run ``fn()`` in the pool; emits finished(result) or errored(text, traceback)."""

    def __init__(self, fn) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.fn = fn
        self.signals = WorkerSignals()

    def run(self) -> None:  # noqa: D102 - QRunnable API
        try:
            result = self.fn()
        except Exception as exc:
            self.signals.errored.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())
            return
        self.signals.finished.emit(result)


class SerialRunner(QObject):
    """Runs one job at a time off the GUI thread; while one runs, only the latest request waits.

    Every use of the (not thread-safe) Workspace goes through here, so it is
    never touched by two threads at once.  Requests are merged by the caller's
    ``merge`` function so nothing queued (e.g. files to add) is lost.
    """

    done = Signal(object)          # the job's result
    failed = Signal(str, str)      # short text, traceback
    idle = Signal()                # nothing running, nothing queued

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._running: CallWorker | None = None
        self._queued = None  # the make_job of the latest request waiting
        self._held = False   # the queued request waits for release() (the window's first table being painted)

    def busy(self) -> bool:
        return self._running is not None or self._queued is not None

    def hold(self) -> None:
        """Requests wait (the latest one kept) until :meth:`release`; a running job runs on."""
        self._held = True

    def release(self) -> None:
        self._held = False
        if self._running is None and self._queued is not None:
            fn, self._queued = self._queued, None
            self._start(fn)

    def submit(self, make_job) -> None:
        """Run a job now, or after the running one (replacing any queued request).

        ``make_job()`` is called on the GUI thread when the job starts and returns the
        function to run in the pool: it reads the GUI state (files to add, selection)
        at that moment, so a queued request always sees the latest state.
        """
        if self._running is not None or self._held:
            self._queued = make_job
            return
        self._start(make_job)

    def _start(self, make_job) -> None:
        worker = CallWorker(make_job())
        self._running = worker
        worker.signals.finished.connect(self._on_done)
        worker.signals.errored.connect(self._on_failed)
        thread_pool().start(worker)

    def _next(self) -> None:
        self._running = None
        if self._held:
            if self._queued is None:
                self.idle.emit()
            return
        fn, self._queued = self._queued, None
        if fn is not None:
            self._start(fn)
        else:
            self.idle.emit()

    def _on_done(self, result) -> None:
        self.done.emit(result)
        self._next()

    def _on_failed(self, text: str, details: str) -> None:
        self.failed.emit(text, details)
        self._next()
