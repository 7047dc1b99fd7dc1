"""Inflate the big gzip input files a command names while the command's modules import (issue 23).

``nestscope export --before B --after A x.pptx`` spends its first second importing pandas, the engine and the
writers on one thread while the second core is idle; the reads that follow each inflate their gzip file first
(:mod:`app.formats.gunzip_ahead`).  :func:`start` is called by the command line as soon as it knows the command
and its arguments, before those imports: it opens the gzip files the command will read (the guards of
:func:`app.formats.open_data`: a regular file, never written, gzip magic; only files from
:data:`app.formats.gunzip_ahead.PIPELINE_FROM` compressed bytes, the ones whose read inflates on a second thread
anyway) and inflates them on one daemon thread, largest file first.

The reader takes the pieces instead of inflating again (:func:`take`, from
:func:`app.formats.gunzip_ahead.gunzip_ahead`).  Only clean gzip is handed over: the inflate here
(:func:`app.formats.clean_inflate.clean_pieces`, with zlib-ng when it imports) takes 1 MiB of gzip per call (the
GIL changes hands once per call: 64 KiB ones, as :func:`app.formats.gunzip_pieces` takes, would wait for the
importing thread hundreds of times) and gives up at the first thing that function would make a finding or a stop
of; the reader then decompresses the file the ordinary way, with stdlib zlib (before it took a piece: as if
nothing had been started; after: once more).  A clean gzip
stream has one decompression, so the reader gets the same bytes, no finding and no stop, as on its own.  It is
handed over only when the file the reader opened is the one inflated: same name, device, inode, size,
modification and change time (a file written or replaced in between is read fresh), and under the same size cap
and ratio.  Memory is bounded: the pieces no reader has taken yet hold at most :data:`AHEAD_BYTES` in all (the
inflate then waits); once a reader took a file, it runs at most :data:`TAKEN_BYTES` ahead of that reader.  Nothing
here imports pandas or numpy (the thread would wait for the main thread's imports instead of filling the idle
core).  An error on the thread before the hand-over is dropped (the reader then inflates the ordinary way and
meets it there); after it, the reader raises it.
"""

from __future__ import annotations

import mmap
import os
import stat
import threading
from collections import deque

from app.formats.clean_inflate import UNCLEAN, clean_pieces
from app.formats.gunzip_ahead import _END

AHEAD_BYTES = 256 << 20        # inflated bytes held for the readers that have not come yet (every file together)
TAKEN_BYTES = 32 << 20         # inflated bytes held ahead of a reader that took its file
COMMANDS = ("export", "compare")   # the commands whose --before/--after and FILE... arguments are read

_cond = threading.Condition()
_entries: list[_Entry] = []


class _Entry:
    """One file being inflated: its map, identity, pieces not yet taken, and how the inflate ended."""

    def __init__(self, word: str, path: str, data: mmap.mmap, st: os.stat_result):
        self.word = word               # the file as the command line gave it
        self.path = path               # the file as a reader names it (its findings do)
        self.data: mmap.mmap | None = data
        self.size = st.st_size
        self.ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        self.pieces: deque[bytes] = deque()
        self.held = 0
        self.cap = self.ratio = 0
        self.gen = None                # the inflate (:func:`_clean_pieces`), run by one thread at a time
        self.busy = False
        self.done = False
        self.unclean = False
        self.error: BaseException | None = None
        self.taken = False
        self.dropped = False

    def get(self, cancel=None):
        """The next piece (``_END`` after the last); raises what the inflate raised, or Cancelled on ``cancel``."""
        while True:
            if cancel is not None and cancel():
                from app.formats.schema import Cancelled

                raise Cancelled()
            with _cond:
                if self.pieces:
                    piece = self.pieces.popleft()
                    self.held -= len(piece)
                    _cond.notify_all()
                    return piece
                if self.done:
                    if self.error is not None:
                        raise self.error
                    return UNCLEAN if self.unclean else _END
                _cond.wait(0.05)

    def drop(self) -> None:
        """Let go of the pieces and stop the inflate of this file (a reader that does not want them)."""
        with _cond:
            self.dropped = True
            self.pieces.clear()
            self.held = 0
            _cond.notify_all()


def candidates(argv: list[str]) -> list[str]:
    """The arguments of an ``export``/``compare`` command line that may be input files (every word that is not
    an option; the checks of :func:`start` leave out what is not a big gzip file); none for another command."""
    if not argv or argv[0] not in COMMANDS:
        return []
    out = []
    for word in argv[1:]:
        if word == "-" or word == "--":
            continue
        if word.startswith("--before=") or word.startswith("--after="):
            word = word.split("=", 1)[1]
        elif word.startswith("-"):
            continue
        if word not in out:
            out.append(word)
    return out


def _open(word: str, name: str) -> _Entry | None:
    """The guarded opening of :func:`app.formats.open_data` for a big gzip file, mapped; None for anything else."""
    from app.fileio import open_read_flags, read_head
    from app.formats.gunzip_ahead import PIPELINE_FROM

    try:
        fd = os.open(word, open_read_flags())
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size < PIPELINE_FROM or read_head(fd, 2) != b"\x1f\x8b":
            return None
        return _Entry(word, name, mmap.mmap(fd, 0, access=mmap.ACCESS_READ), st)
    except (OSError, ValueError, MemoryError):
        return None
    finally:
        os.close(fd)


def start(argv: list[str]) -> threading.Thread | None:
    """Start inflating the big gzip files the command line ``argv`` (command first) reads; the thread, or None
    when there is nothing to inflate (another command, no such file, a single core)."""
    words = candidates(argv)
    if not words:
        return None
    from app.formats.pages import threads

    if threads() < 2:
        return None
    from app.formats import _display, max_bytes, max_ratio

    with _cond:
        started = {e.path for e in _entries}           # a second start inflates nothing twice
    found = [e for e in (_open(w, _display(w)) for w in words if _display(w) not in started) if e is not None]
    if not found:
        return None
    found.sort(key=lambda e: -e.size)          # the biggest first: its read is the longest
    cap, ratio = max_bytes(), max_ratio()
    for e in found:
        e.cap, e.ratio = cap, ratio
    with _cond:
        _entries.extend(found)
    th = threading.Thread(target=_first_inflate, args=(found,), name="nestscope-prefetch", daemon=True)
    th.start()
    return th


def _next(entries: list[_Entry]) -> _Entry | None:
    """The file to inflate a piece of next (a taken one first) and mark it busy (one thread at a time inflates a
    file), waiting while every one is full or busy; None: all done."""
    with _cond:
        while True:
            live = [e for e in entries if not e.done and not e.dropped]
            if not live:
                return None
            pick = next((e for e in live if e.taken and not e.busy and e.held < TAKEN_BYTES), None)
            if pick is None and sum(e.held for e in live if not e.taken) < AHEAD_BYTES:
                pick = next((e for e in live if not e.taken and not e.busy), None)
            if pick is not None:
                pick.busy = True
                return pick
            _cond.wait()


def _first_inflate(entries: list[_Entry]) -> None:
    """The thread :func:`start` starts: leave out the files the workspace cache holds a read of, inflate the rest."""
    try:
        cached = _in_cache(entries)
    except Exception:  # noqa: BLE001 - a cache that cannot be looked at: every file is inflated
        cached = []
    for e in cached:
        with _cond:
            if e in _entries:
                _entries.remove(e)
        e.drop()
        e.data = None
    _inflate([e for e in entries if e not in cached])


def _in_cache(entries: list[_Entry]) -> list[_Entry]:
    """The files of ``entries`` that a read entry of the workspace cache (:mod:`app.cache`) is about: the reader
    will most likely not decode them (a warm export reads none), so inflating them would be work for nothing.
    Looked for without the cache's modules (they import pandas): the file's identity (absolute path, size,
    modification time, inode, change time) at the head of the entry's ``entry.json``.  An entry of another reader
    version or of other counters is a miss for the reader: that file is then inflated by the reader, as without
    this module."""
    import json

    from app.userdirs import user_cache_dir

    folder = user_cache_dir()
    if not folder or not os.path.isdir(folder):
        return []
    needles = {}
    for e in entries:
        dev, ino, size, mtime, ctime = e.ident
        needles[id(e)] = (json.dumps(os.path.abspath(e.word)),
                          f'"size": {size}, "mtime_ns": {mtime}, "inode": {ino}, "ctime_ns": {ctime}')
    found = []
    with os.scandir(folder) as it:
        for d in it:
            if not d.name.startswith("read-") or len(found) == len(entries):
                continue
            try:
                with open(os.path.join(d.path, "entry.json"), "rb") as fh:
                    head = fh.read(4096).decode("utf-8", "replace")
            except OSError:
                continue
            for e in entries:
                path, ident = needles[id(e)]
                if e not in found and ident in head and f'"path": {path}' in head:
                    found.append(e)
    return found


def _inflate(entries: list[_Entry]) -> None:
    while (e := _next(entries)) is not None:
        if e.gen is None:
            e.gen = _clean_pieces(e)
        try:
            piece = next(e.gen)
        except StopIteration:
            piece = _END
        except BaseException as exc:  # noqa: BLE001 - given to the reader that takes the file
            piece = _END
            e.error = exc
        with _cond:
            e.busy = False
            if piece is _END or piece is UNCLEAN:
                e.done = True
                e.unclean = piece is UNCLEAN
                e.gen = e.data = None           # the map closes once the generator's view is gone
            elif not e.dropped:
                e.pieces.append(piece)
                e.held += len(piece)
            _cond.notify_all()


def _clean_pieces(e: _Entry):
    """The clean-only inflate of ``e``'s file (:func:`app.formats.clean_inflate.clean_pieces`: zlib-ng when it
    imports), under the reader's cap and ratio; it ends when the file is dropped."""
    return clean_pieces(e.data, e.cap, e.ratio, stopped=lambda: e.dropped)


def take(raw, file: str, cap: int, ratio: int) -> _Entry | None:
    """The inflate of ``file`` started by :func:`start`, for a reader that opened it as ``raw`` (its bytes or
    map) and inflates under ``cap`` and ``ratio``; None (inflate it yourself) when none was started, when it was
    taken already or failed before, when the reader names the file otherwise (the findings name it), or when the
    file is not the one inflated (written or replaced since: another inode, size, modification or change time)."""
    with _cond:
        if not any(e.path == file for e in _entries):
            return None
    try:
        st = os.stat(file)
    except (OSError, ValueError):
        st = None
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st is not None else None
    with _cond:
        e = next((e for e in _entries if e.path == file), None)
        if e is None:
            return None
        _entries.remove(e)
        if (e.ident != ident or e.dropped or len(raw) != e.size or (cap, ratio) != (e.cap, e.ratio)
                or (e.done and (e.error is not None or e.unclean))):
            e.drop()
            return None
        e.taken = True
        _cond.notify_all()
    if not e.done:               # the rest on a thread of its own, as the reader's own inflate would run
        threading.Thread(target=_inflate, args=([e],), name="nestscope-inflate", daemon=True).start()
    return e


def forget() -> None:
    """Drop every file not taken yet (their inflate stops; a test's or a session's end)."""
    with _cond:
        left = list(_entries)
        _entries.clear()
    for e in left:
        e.drop()
