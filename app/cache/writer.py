"""The workspace cache's background writer: one daemon thread writes queued entries in order.

While any caller is inside :func:`writes_paused` (the window until its first table is shown, a benchmark until its
first table) queued writes wait.  Reading an entry, listing or clearing the cache first completes the writes it
would see, on the reader's thread if the writer has not started them; at exit every queued write is completed.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["WritePause", "pause_writes", "writes_paused", "wait_for_writes", "write_while", "PAUSE_LIMIT_S"]

_PENDING: dict[Path, "_Write"] = {}
_PENDING_LOCK = threading.Lock()
_GATE = threading.Condition()
_PAUSES: dict[int, float] = {}     # id of each active pause -> when it began (time.monotonic)
_EXITING = False
_QUEUE: "queue.Queue[_Write]" = queue.Queue()
_WRITER: threading.Thread | None = None


class _Write:
    """One queued entry write; runs once, on the writer thread or on a reader's thread that needs it first."""

    def __init__(self, dest: Path, job: Callable[[], Any]) -> None:
        self.dest, self.job = dest, job
        self.lock = threading.Lock()
        self.done = False

    def run(self, wait: bool = True) -> None:
        """Write the entry unless it is written already; ``wait=False``: nothing either when another thread is
        writing it now (that thread completes it)."""
        if not self.lock.acquire(blocking=wait):
            return
        try:
            if self.done:
                return
            try:
                self.job()
            except Exception:  # noqa: BLE001 - a failed write only means no entry, as a synchronous one
                pass
            finally:
                self.done = True
                self.job = None      # drop the frames
                with _PENDING_LOCK:
                    if _PENDING.get(self.dest) is self:
                        del _PENDING[self.dest]
        finally:
            self.lock.release()


PAUSE_LIMIT_S = 120.0     # a pause nobody released (a window closed mid-load) stops holding the writer after this


def _held() -> bool:
    now = time.monotonic()
    return not _EXITING and any(now - t < PAUSE_LIMIT_S for t in _PAUSES.values())


def _writer_loop() -> None:
    while True:
        w = _QUEUE.get()
        with _GATE:
            while _held():
                _GATE.wait(timeout=1.0)
        w.run(wait=False)           # (one another thread writes now is theirs to complete: on to the next)
        if _QUEUE.empty() and not _EXITING:     # the load's writes are done: hand freed memory back to the system
            from app import memory

            memory.release()


def _finish_writes() -> None:
    global _EXITING
    with _GATE:
        _EXITING = True
        _GATE.notify_all()
    wait_for_writes()


def _submit(dest: Path, job: Callable[[], Any]) -> None:
    global _WRITER
    w = _Write(dest, job)
    with _PENDING_LOCK:
        _PENDING[dest] = w
        if _WRITER is None:
            _WRITER = threading.Thread(target=_writer_loop, name="nestscope-cache-writer", daemon=True)
            _WRITER.start()
            atexit.register(_finish_writes)
    _QUEUE.put(w)


class WritePause:
    """A hold on the background writer until :meth:`release` (idempotent); see :func:`pause_writes`."""

    def __init__(self) -> None:
        with _GATE:
            _PAUSES[id(self)] = time.monotonic()

    def release(self) -> None:
        with _GATE:
            if _PAUSES.pop(id(self), None) is not None:
                _GATE.notify_all()


def pause_writes() -> WritePause:
    """Hold queued cache writes until the returned pause is released (the window: until the first table of a
    load is shown); a pause left unreleased stops holding after :data:`PAUSE_LIMIT_S` seconds."""
    return WritePause()


@contextmanager
def writes_paused() -> Iterator[None]:
    """Hold the background writer while the block runs (e.g. until the first table is shown)."""
    p = pause_writes()
    try:
        yield
    finally:
        p.release()


def wait_for_writes(dest: Path | None = None) -> None:
    """Complete the queued writes of ``dest`` (every entry when None) before going on."""
    with _PENDING_LOCK:
        ws = list(_PENDING.values()) if dest is None else [w for w in (_PENDING.get(dest),) if w is not None]
    # first the writes no thread has started, on this thread, from the last queued (the writer thread goes on from
    # the first, skipping those taken here): at exit both threads write instead of this one waiting for the writer
    # to do them one by one (issue 23: a cold comparison deck's last entries were written 0.1-0.16 s after the
    # deck, by the writer alone); then the ones other threads are writing, waited for
    for w in reversed(ws):
        w.run(wait=False)
    for w in ws:
        w.run()


def write_while(busy: Callable[[], bool]) -> int:
    """Write queued entries no thread has started, first queued first, on this thread (held ones too: a pause
    holds only the writer thread), one at a time for as long as ``busy()`` is true; the number written.  For a
    thread whose own work is done while another still works (a comparison deck's before side, its second core
    free while the after side is read and its intervals computed)."""
    done = 0
    while busy():
        with _PENDING_LOCK:
            ws = list(_PENDING.values())
        w = next((w for w in ws if not w.done and not w.lock.locked()), None)
        if w is None:
            return done
        w.run(wait=False)           # (nothing when another thread took it meanwhile)
        done += 1
    return done
