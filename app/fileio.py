"""File-system steps whose behaviour differs between Linux, macOS and Windows, done one safe way for all three.

* :func:`replace` puts a finished temporary file in place of its target.  On Windows ``os.replace`` fails with
  ``PermissionError`` while another program holds the target open (Excel on a CSV or a workbook, PowerPoint on a
  deck, a viewer on a PNG) or while a virus scanner looks at the new file; the step is tried again for a moment,
  then :class:`TargetBusy` says which file is held and what to do.
* :func:`read_head` reads the first bytes of an open file without moving its position where ``os.pread``
  exists, and with a seek where it does not (Windows on Python 3.11).
* :func:`same_file`: two paths name one file (``os.path.samefile`` where both exist, else the absolute paths).
* :func:`open_read_flags`: read-only, binary on Windows, and non-blocking where the flag exists (not on
  Windows), so that opening a named pipe (FIFO) on Linux or macOS never waits for a writer (the reader then
  refuses it as not a regular file).

No Qt, no engine: every layer may use this module.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPLACE_TRIES = 8          # on Windows: about 1.3 s in all (0.02, 0.04, ... 0.64 s between tries)
REPLACE_FIRST_WAIT_S = 0.02


class TargetBusy(PermissionError):
    """The target of :func:`replace` is held open by another program (Windows); the message says so."""


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """``a`` and ``b`` name one file: by the file system where both exist, else by their absolute paths."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def open_read_flags() -> int:
    """``os.open`` flags for reading input: read-only, plus ``O_NONBLOCK`` and ``O_BINARY`` where ``os`` has
    them (computed at each call, so a test can take an attribute away as Windows does not have it)."""
    return os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def replace(src: str | os.PathLike, dst: str | os.PathLike, *, tries: int | None = None,
            sleep=time.sleep) -> None:
    """``os.replace(src, dst)``, tried again on Windows while the target is held open.

    Raises :class:`TargetBusy` (a ``PermissionError``) when the target stays held, naming it; any other
    ``OSError`` is raised as it came.  Elsewhere than Windows a ``PermissionError`` is a real permission
    problem and is raised at once."""
    n = tries if tries is not None else (REPLACE_TRIES if sys.platform == "win32" else 1)
    wait = REPLACE_FIRST_WAIT_S
    for attempt in range(n):
        try:
            os.replace(src, dst)
            return
        except PermissionError as exc:
            if sys.platform != "win32":
                raise
            if attempt == n - 1:
                raise TargetBusy(exc.errno, f"{Path(dst).name} is open in another program (or is read-only); "
                                 "close it there and try again", str(dst)) from exc
            sleep(wait)
            wait *= 2


def read_head(fd: int, n: int) -> bytes:
    """The first ``n`` bytes of the open file ``fd`` (fewer when it is shorter); its position is left at 0
    where a seek was needed."""
    if hasattr(os, "pread"):
        return os.pread(fd, n, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    head = os.read(fd, n)
    os.lseek(fd, 0, os.SEEK_SET)
    return head
