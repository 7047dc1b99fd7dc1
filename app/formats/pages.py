"""The pages of a memory-mapped input file, and the readers' threads.

A reader that walks a mapped file takes one page fault per few pages it touches; asking the kernel to map a
slice at once (``MADV_POPULATE_READ``, Linux 5.14 and later) costs a fraction of that.  Once a slice's bytes
are copied out, its pages are handed back (``MADV_DONTNEED``: read from the page cache again should anything
look at them), so the file's pages do not stay resident beside what was decoded from them.  Both are hints:
elsewhere (another system, an older kernel, bytes instead of a map) they do nothing, and no result depends on
them.  A window of a map (a ``memoryview`` slice of it: the chunked reader, :mod:`app.formats.chunks`, hands
the reader one chunk of the mapped file that way, not a copy) is served as the map's own pages at its offset.

``NESTSCOPE_THREADS`` sets the threads of the reader's big gathers as it does the engine's (1: one thread).
"""

from __future__ import annotations

import mmap
import os
import sys

__all__ = ["Spool", "drop", "populate", "threads"]

# MADV_POPULATE_READ (Linux >= 5.14); Python 3.11's mmap module does not name it
_POPULATE = getattr(mmap, "MADV_POPULATE_READ", 22 if sys.platform.startswith("linux") else None)
_can_populate = _POPULATE is not None


def threads() -> int:
    """Threads of the reader's big gathers: ``NESTSCOPE_THREADS`` (default: the CPUs, at most 2), the setting
    :func:`app.engine.parallel.threads` reads for the engine (formats may not import the engine)."""
    try:
        return max(1, int(os.environ.get("NESTSCOPE_THREADS", "").strip() or min(2, os.cpu_count() or 1)))
    except ValueError:
        return 1


def _target(data) -> tuple[mmap.mmap, int] | None:
    """The map ``data`` is, or is a window of (a contiguous byte ``memoryview`` of a map), and the offset of its
    first byte in that map; None for anything else (bytes, a closed map or view)."""
    if isinstance(data, mmap.mmap):
        return data, 0
    if not isinstance(data, memoryview):
        return None
    try:
        mm = data.obj
        if not isinstance(mm, mmap.mmap) or data.itemsize != 1 or not data.c_contiguous or not len(data):
            return None
        import numpy as np

        return mm, np.frombuffer(data, np.uint8).ctypes.data - np.frombuffer(mm, np.uint8).ctypes.data
    except (ValueError, TypeError):          # released view, closed map
        return None


# Linux maps cached pages of a file beside a faulting one (MADV_POPULATE_READ faults its pages in): those of
# its fault-around window (64 KiB) and of the large folio holding it (readahead makes folios of up to 2 MiB), so
# mapping a slice brings back pages before it that were handed back already: a walk that hands back each slice
# from its first page kept them (1.7 MiB after a 33 MB chunk's framing walk of 64 slices, issue 24); handing
# back from this far before the slice returns them too (the page tables of a range not mapped cost little)
AROUND = 2 << 20


def _span(data, start: int, end: int, around: int = 0, past: int = 0) -> tuple[mmap.mmap, int, int] | None:
    """The map under ``data`` and ``[start, end)`` of ``data`` as its (offset, length) widened to whole pages
    (``around``: the start moved back by that many bytes less a page), kept inside ``data``'s pages (``past``:
    the end moved on by that many bytes, inside the map's); None when there is nothing to do."""
    got = _target(data)
    if got is None:
        return None
    mm, base = got
    try:
        end = min(end, len(data))
        if past:
            end = min(end + past, len(mm) - base)
    except ValueError:                       # a closed map
        return None
    a = max(start, 0) + base
    a -= a % mmap.PAGESIZE
    a = max(a - max(around - mmap.PAGESIZE, 0), base - base % mmap.PAGESIZE)
    return (mm, a, end + base - a) if end + base > a else None


def populate(data, start: int, end: int) -> None:
    """Map the pages of ``data[start:end]`` in one call (a memory-mapped file on Linux 5.14+; else nothing)."""
    global _can_populate
    span = _span(data, start, end) if _can_populate else None
    if span is None:
        return
    mm, *at = span
    try:
        mm.madvise(_POPULATE, *at)
    except OSError as exc:
        if exc.errno in (22, 38, 95):        # EINVAL/ENOSYS/EOPNOTSUPP: this kernel does not know the advice
            _can_populate = False
    except ValueError:                       # closed map
        pass


def drop(data, start: int, end: int, past: bool = False) -> None:
    """Hand the pages of ``data[start:end]`` back to the kernel (a memory-mapped file only; they are read from
    the file again should anything look at them), with those of ``data`` the kernel mapped with them in the
    :data:`AROUND` bytes before ``start``: a walk hands back what it has read.  ``past``: also those of the
    map under ``data`` (a window of it) in the :data:`AROUND` bytes after ``end`` (a large folio of the file
    straddling the window's end is mapped whole: handing back only the window's part leaves the rest)."""
    span = _span(data, start, end, AROUND, AROUND if past else 0) if hasattr(mmap, "MADV_DONTNEED") else None
    if span is None:
        return
    mm, *at = span
    try:
        mm.madvise(mmap.MADV_DONTNEED, *at)
    except (OSError, ValueError):
        pass


def hash_into(h, data, cancel=None, step: int = 16 << 20) -> None:
    """``h.update(data)`` (a hashlib object) ``step`` bytes at a time, each slice of a mapped file mapped in one
    call before and handed back after (hashing a whole file leaves none of its pages resident); ``cancel()`` is
    asked between slices (:class:`app.formats.schema.Cancelled`)."""
    with memoryview(data) as mv:
        for a in range(0, len(mv), step):
            if cancel is not None and cancel():
                from app.formats.schema import Cancelled
                raise Cancelled()
            populate(data, a, a + step)
            h.update(mv[a:a + step])
            drop(data, a, a + step)


class Spool:
    """Bytes kept out of the heap: an unnamed temporary file (``NESTSCOPE_SPOOL_DIR`` or the system's temporary
    folder; removed when closed, whatever happens) written at its end and mapped read-only when read, so its bytes
    stay in the page cache and a reader maps them a block at a time and hands them back (:func:`populate`,
    :func:`drop`).  A decompressed stream's chunks (:mod:`app.formats.chunks`), a blocked chunk's records
    (:func:`app.formats.smf113._spooled_records`) and a compressed MONWRITE stream
    (:func:`app.formats.monwrite_stream.spooled`) go through one."""

    def __init__(self, prefix: str = "nestscope-spool-") -> None:
        self.prefix = prefix
        self.fh, self.n, self._held = self._new(), 0, []

    def _new(self):
        import tempfile

        return tempfile.TemporaryFile(prefix=self.prefix, buffering=0,
                                      dir=os.environ.get("NESTSCOPE_SPOOL_DIR") or None)

    def add(self, data) -> None:
        """Write ``data`` after the bytes so far."""
        with memoryview(data) as mv:
            done = 0
            while done < len(mv):
                done += os.pwrite(self.fh.fileno(), mv[done:], self.n + done)
        self.n += len(data)

    def map(self) -> mmap.mmap | None:
        """The bytes so far, mapped read-only (None when there are none); the map outlives :meth:`close`."""
        return mmap.mmap(self.fh.fileno(), self.n, access=mmap.ACCESS_READ) if self.n else None

    def patch(self, at: int, data: bytes) -> None:
        """Write ``data`` over the bytes at ``at`` (a map of the file sees it)."""
        os.pwrite(self.fh.fileno(), data, at)

    def keep_from(self, mm: mmap.mmap, end: int, prefix: bytes = b"") -> None:
        """Keep only ``prefix`` and the bytes from ``end`` (those after a chunk just decoded from the map ``mm``):
        copied into a new file a slice of the map at a time (their pages handed back), which takes the old one's
        place; ``mm`` is closed."""
        old, n = self.fh, self.n
        self.fh, self.n = self._new(), 0
        self.add(prefix)
        for a in range(end, n, AROUND):
            with memoryview(mm) as mv:
                self.add(mv[a:min(a + AROUND, n)])
            drop(mm, a, min(a + AROUND, n))
        try:
            mm.close()
            old.close()
        except BufferError:             # still exported (never expected): the map and its file kept as they are
            self._held.append((mm, old))

    def close(self) -> None:
        self.fh.close()
