"""Reading files once each, with what went wrong kept as data (:class:`ReadOutcome`): every front end's reads.

The commands read many files at once (:func:`read_files`); the window reads one file per job
(:func:`read_one`, in a Qt worker that only forwards its progress and outcome as signals), with a progress
callback, a cancel check and, when a file of the same size is open, the content digest
(:func:`file_digest`) that notices a file opened twice under another name."""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.analysis.outcome import Message


@dataclass
class ReadOutcome:
    """The read results of some paths (those whose reader raised are left out) and the messages about them."""

    results: list = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        """At least one file held CPU MF data."""
        return any(r.readable for r in self.results)

    def nothing_readable(self, what: str | None = None) -> list[Message]:
        """The messages of a side with nothing readable: each result's findings, then the summary line
        (``what``: "before", "after", "given"; None: no word)."""
        out = [Message("finding", f.message, f.severity) for r in self.results for f in r.findings]
        where = f" in the {what} files" if what else ""
        return out + [Message("problem", f"nothing readable was found{where}")]


Progress = Callable[[float], None]     # fraction 0..1 of the work done
Cancel = Callable[[], bool]            # True: stop (the read raises :class:`app.formats.schema.Cancelled`)

HASH_CHUNK = 1 << 20
MAP_SLICE = 16 << 20      # bytes hashed between two looks at the cancel check


def file_digest(path: str | Path, cancel: Cancel | None = None) -> str:
    """SHA-1 of the file content ("" for what is not a regular file, or a file that cannot be opened): how a
    file opened twice under another name is noticed.  ``cancel()`` is asked between slices of 16 MB."""
    from app.fileio import open_read_flags
    from app.formats.schema import Cancelled

    h = hashlib.sha1(usedforsecurity=False)
    try:
        # open without blocking and hash only regular files: a FIFO or a device would block or never end
        # (the reader refuses them with a message)
        fd = os.open(path, open_read_flags())
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return ""
        with os.fdopen(fd, "rb") as fh:
            try:      # hashed straight from a read-only mapping, in slices (no copies; cancel between slices;
                # each slice's pages mapped in one call and handed back once hashed: app/formats/pages.py)
                from app.formats.pages import hash_into

                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    hash_into(h, m, cancel, MAP_SLICE)
                return h.hexdigest()
            except (ValueError, OSError):   # empty file, or a file system without mmap: read it
                h = hashlib.sha1(usedforsecurity=False)
                fh.seek(0)
            while chunk := fh.read(HASH_CHUNK):
                if cancel is not None and cancel():
                    raise Cancelled()
                h.update(chunk)
    except OSError:
        return ""
    return h.hexdigest()


def read_one(path: str, *, cached: bool = False, counters: Any = None, progress: Progress | None = None,
             cancel: Cancel | None = None, digest: bool = False) -> tuple[Any, str]:
    """(read result, content digest) of one file; what the reader raises is raised (:func:`read_files` turns
    it into a message; the window reports it with its traceback), :class:`app.formats.schema.Cancelled` too.

    ``cached``: through the workspace cache (:func:`app.cache.read_with_digest`: ``counters`` as there), else the
    decoder.  ``progress(fraction)`` and ``cancel()`` are handed to the reader.  ``digest``: the file's content
    digest (:func:`file_digest`) is taken beside the decode (on a second thread, hashlib without the GIL) or
    comes with the cache entry; without it the digest is the cached entry's, if any, else "".
    """
    from app.formats.schema import Cancelled

    if cached:
        from app import cache

        hash_fn = (lambda p: file_digest(p, cancel)) if digest else None
        result, sha = cache.read_with_digest(path, hash_fn, progress=progress, cancel=cancel, counters=counters)
    else:
        from app.formats import read_file as decode

        kw = {k: v for k, v in (("progress", progress), ("cancel", cancel), ("counters", counters)) if v is not None}
        result = decode(path, **kw, **({"digest": True} if digest else {}))
        sha = str(result.meta.get("sha1", "")) if digest and isinstance(result.meta, dict) else ""
    if cancel is not None and cancel():
        raise Cancelled()
    return result, sha


def read_files(paths: list[str], cache: dict | None = None, *, cached: bool = False,
               counters: Any = None, failed: Callable[[str, Exception], Any] | None = None,
               progress: Progress | None = None, cancel: Cancel | None = None) -> ReadOutcome:
    """Read ``paths``, each once per ``cache`` (a dict shared by calls: a file of both sides is read once).

    ``cached``: through the workspace cache (:func:`app.cache.read_file`, ``counters`` as there) instead of
    the decoder (:func:`app.formats.read_file`).  A reader that raises leaves the file out with a ``problem``
    message naming it (a reader bug never becomes a traceback); its message is given once per ``cache``;
    ``failed(path, exc)``, when given, makes the read result that stands for it instead (:func:`failed_result`).
    ``progress(fraction)``: of all ``paths`` (each file an equal share); ``cancel()`` True stops the reads with
    :class:`app.formats.schema.Cancelled` (the files read so far stay in ``cache``).
    """
    from app.formats.schema import Cancelled

    out = ReadOutcome()
    cache = {} if cache is None else cache
    n = max(len(paths), 1)
    for i, path in enumerate(paths):
        if path not in cache:
            share = None if progress is None else (lambda f, i=i: progress((i + max(0.0, min(1.0, f))) / n))
            try:
                cache[path] = read_one(path, cached=cached, counters=counters, progress=share, cancel=cancel)[0]
            except Cancelled:
                raise
            except Exception as exc:  # noqa: BLE001 - a reader bug must not become a traceback
                out.messages.append(Message("problem", f"{path}: cannot be read ({type(exc).__name__}: {exc})"))
                cache[path] = failed(path, exc) if failed is not None else None
        r = cache[path]
        if r is not None:
            out.results.append(r)
    if progress is not None:
        progress(1.0)
    return out


def failed_result(path: str, what: str, hint: str, meta: dict | None = None):
    """An unreadable read result whose one ``error`` finding (code ``reader-failure``) says ``what`` happened
    to ``path`` (a read that raised) and ``hint`` what to do."""
    from app.findings import make_finding
    from app.formats.schema import ReadResult, empty_samples

    f = make_finding(str(path), None, "error", "reader-failure", what, hint)
    return ReadResult(file=str(path), kind="unknown", framing="none", records={}, samples=empty_samples(),
                      findings=[f], **({"meta": meta} if meta is not None else {}))

