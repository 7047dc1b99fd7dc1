"""Independent computations of the engine on two threads.

The levels of the tree and the prepared level frames are computed from the same intervals, each on its own;
their grouped sums, sorts and array arithmetic run in numpy and pandas' compiled loops, which release the GIL,
so two of them overlap on two cores.  ``NESTSCOPE_THREADS`` sets the number of threads (1: one after the other).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["threads", "parallel_map", "start_map"]

T = TypeVar("T")
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def threads() -> int:
    """Threads used by :func:`parallel_map` (``NESTSCOPE_THREADS``, default: the CPUs, at most 2): the reader's
    rule (:func:`app.formats.pages.threads`), one setting for both."""
    from app.formats.pages import threads as setting

    return setting()


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < n:    # noqa: SLF001 - grown when more threads are asked for
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="nestscope-engine")
        return _pool


def parallel_map(fn: Callable[[Any], T], items: Iterable[Any]) -> list[T]:
    """``[fn(x) for x in items]``, computed by the calling thread and ``threads() - 1`` pool threads, each taking
    the next item when it is free; results in the order of ``items``.  The first exception is raised once every
    call has ended (no call is left running behind the caller)."""
    return start_map(fn, items)()


def start_map(fn: Callable[[Any], T], items: Iterable[Any]) -> Callable[[], list[T]]:
    """Start :func:`parallel_map` on the pool threads alone and return the call that finishes it: the calling
    thread does other work meanwhile, then (by that call) takes the items no pool thread has taken yet, waits
    for every call to end and gets the results (or the first exception).  With one thread every item is
    computed by that call."""
    items = list(items)
    n = min(threads(), len(items))
    results: list[Any] = [None] * len(items)
    errors: list[BaseException] = []
    order = iter(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                i = next(order, None)
                if i is None or errors:
                    return
            try:
                results[i] = fn(items[i])
            except BaseException as exc:  # noqa: BLE001 - raised on the calling thread below
                with lock:
                    errors.append(exc)

    futures = [_executor(n - 1).submit(work) for _ in range(n - 1)] if n >= 2 else []

    def finish() -> list[T]:
        work()
        for f in futures:       # one not started yet has nothing left to take: never waited for (a call made
            if not f.cancel():  # on a pool thread, its pool busy with that very call, would wait for itself)
                f.result()
        if errors:
            raise errors[0]
        return results

    return finish
