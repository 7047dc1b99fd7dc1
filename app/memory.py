"""Give memory freed after a load back to the operating system, and read the process's resident size.

After a month is decoded and its intervals computed, the temporary blocks are freed; large numpy arrays go back
at once (glibc maps them separately), but many medium-sized frees stay in the allocator's heap and Arrow keeps
its own pool.  :func:`release` collects garbage, empties Arrow's pool and, on glibc (Linux), asks ``malloc_trim``
to return free heap pages; elsewhere it does what the platform allows and nothing more.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import os
import sys
import weakref

_libc = None


def _glibc():
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            try:
                lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                lib.malloc_trim.argtypes = [ctypes.c_size_t]
                lib.malloc_trim.restype = ctypes.c_int
                _libc = lib
            except (OSError, AttributeError):   # musl or no libc found: nothing to trim
                _libc = False
    return _libc


def rss_mb() -> float | None:
    """Resident set size of this process now, in MB (None where it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def release(collect: bool = True, gone: weakref.ref | None = None) -> bool:
    """Return freed memory to the system where the platform allows; True when the C heap was trimmed.
    ``collect``: collect cycles first (else only what reference counts freed goes back); ``gone``: a weak
    reference to what the caller let go: cycles are collected only when it is still alive (held by a cycle),
    since a full collection walks every object of the process (0.5-1 s in a window's process) and is wasted when
    reference counts freed it already.

    Cycles are collected first, but on a worker thread only while automatic collection is on: a window turns it
    off (app/ui/gc_guard.py) because a collection on a worker may run a Qt destructor there and freeze the
    window; the frames an export lets go are freed by their reference counts anyway."""
    if gone is not None and gone() is None:
        collect = False
    if collect and (gc.isenabled() or threading.current_thread() is threading.main_thread()):
        gc.collect()
    pa = sys.modules.get("pyarrow")     # only when loaded: importing it here would add ~70 MB resident, not free any
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except Exception:  # noqa: BLE001 - an old pyarrow or a half-imported one: its pool simply stays
            pass
    lib = _glibc()
    return bool(lib and lib.malloc_trim(0))


def trim() -> bool:
    """Only the C heap's free pages given back (glibc's ``malloc_trim``: free pages anywhere in the heap, not
    only at its top), nothing collected: for a loop that frees blocks under the mapping threshold while it
    allocates others (their holes would otherwise stay resident).  True when pages were returned."""
    lib = _glibc()
    return bool(lib and lib.malloc_trim(0))


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3     # glibc mallopt parameters (malloc.h)
STREAM_MMAP_THRESHOLD = 1 << 20


def streaming_heap() -> bool:
    """For work that frees and allocates blocks of megabytes again and again (the streamed extract): on glibc,
    every block of 1 MiB or more is given its own mapping (returned to the system when freed) and free heap
    pages over 1 MiB are returned at once.  glibc otherwise raises its mapping threshold to the largest block
    freed (up to 32 MiB), so a chunk's columns land in the heap and its holes keep the pages of the largest
    chunk seen.  And numpy's arrays of 4 MiB or more are no longer marked for transparent huge pages
    (:func:`small_pages`).  Process-wide and lasting; True when the heap's thresholds are set (glibc only)."""
    small_pages()
    lib = _glibc()
    if not lib:
        return False
    try:
        return bool(lib.mallopt(M_MMAP_THRESHOLD, STREAM_MMAP_THRESHOLD)
                    and lib.mallopt(M_TRIM_THRESHOLD, STREAM_MMAP_THRESHOLD))
    except AttributeError:
        return False


def small_pages() -> bool:
    """Stop numpy marking its arrays of 4 MiB or more for transparent huge pages (``madvise(MADV_HUGEPAGE)``,
    numpy's default on Linux): an array filled a part at a time (the extract's deltas, a counter column at a time
    as the samples' blocks are let go) then becomes resident 4 KiB at a time, not 2 MiB, so it holds only what
    is written (2 MiB more at the extract's peak otherwise).  Process-wide and lasting; True when numpy was
    marking them (False: it was not, or this numpy has no such switch)."""
    try:
        from numpy._core import multiarray as ma
    except ImportError:                 # numpy 1.x
        try:
            from numpy.core import multiarray as ma
        except ImportError:
            return False
    switch = getattr(ma, "_set_madvise_hugepage", None)
    return bool(switch(False)) if switch is not None else False


def reset_peak() -> bool:
    """Start this process's peak resident size (``VmHWM``, what ``getrusage``'s ``ru_maxrss`` reports) again
    from its resident size now, so a later peak measures only what follows (a benchmark that warms its code
    first: the warm-up's own peak would otherwise hide a lower one).  Linux (``/proc/self/clear_refs``) only;
    True when reset."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False
