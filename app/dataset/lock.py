"""The dataset lock: one writer at a time from the first dedup look-up of a file to its commit (issue 24).

Two extracts of overlapping data must not both add the overlap: each would check the dataset before the other
commits.  So ``extract`` (and ``dataset compact`` / ``vacuum``, which rewrite and remove part files) hold
``DATASET/.nestscope-lock`` while they look up and write.  Readers (``query``, other engines) never take it.

The lock is the operating system's: ``fcntl.flock`` (Linux, macOS) or ``msvcrt.locking`` of one byte past the
holder's note (Windows), released by the kernel when the holder ends, however it ends, so a killed extract
leaves no lock behind.  The file holds a note of the holder (pid, host, start, command) for the message of a
waiting process.  Where the file system refuses such locks (some network shares), an exclusively created file
``.nestscope-lock.pid`` is the lock; one whose holder no longer runs (same host, pid gone) is stale and removed,
with a message naming the pid.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["LOCK_NAME", "DatasetLocked", "DatasetLock", "lock_timeout"]

LOCK_NAME = ".nestscope-lock"
_BYTE = 1 << 16           # the byte locked on Windows: past the note, so others can read who holds the lock
_POLL_S = 0.2


class DatasetLocked(Exception):
    """The lock was not had within the timeout (the message names the holder)."""


def lock_timeout() -> float:
    """Seconds to wait for the lock: ``NESTSCOPE_LOCK_TIMEOUT`` (default 3600)."""
    try:
        return max(0.0, float(os.environ.get("NESTSCOPE_LOCK_TIMEOUT", "3600")))
    except ValueError:
        return 3600.0


def _note(command: str) -> bytes:
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                       "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": command}).encode()


def _holder(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(4096)
        d = json.loads(raw.split(b"\0", 1)[0].decode("utf-8", "replace") or "{}")
        return d if isinstance(d, dict) else {}
    except (OSError, ValueError):
        return {}


def _describe(h: dict) -> str:
    if not h.get("pid"):
        return "another process"
    return (f"process {h['pid']} on {h.get('host', '?')} ({h.get('command', 'nestscope')}, since "
            f"{h.get('since', '?')})")


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        k = ctypes.windll.kernel32                       # type: ignore[attr-defined]
        h = k.OpenProcess(0x1000, False, pid)            # PROCESS_QUERY_LIMITED_INFORMATION
        if not h:
            return False
        code = ctypes.c_ulong()
        k.GetExitCodeProcess(h, ctypes.byref(code))
        k.CloseHandle(h)
        return code.value == 259                         # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DatasetLock:
    """``with DatasetLock(root, "extract"):`` one writer at a time (module docstring).  Re-entrant within one
    object.  ``say`` is called once with a sentence when the lock is busy (who holds it) or a stale one was
    removed; :class:`DatasetLocked` is raised after ``timeout`` seconds (default :func:`lock_timeout`)."""

    def __init__(self, root: str | Path, command: str = "nestscope", timeout: float | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.path = self.root / LOCK_NAME
        self.command = command
        self.timeout = lock_timeout() if timeout is None else timeout
        self.say = say
        self._fd: int | None = None
        self._pidfile: Path | None = None
        self._depth = 0

    # -- the operating system's lock ---------------------------------------------------------------
    def _try_os(self, fd: int) -> bool | None:
        """True: locked; False: busy; None: this file system has no such locks."""
        try:
            if sys.platform == "win32":
                import msvcrt

                os.lseek(fd, _BYTE, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except (BlockingIOError, PermissionError):
            return False
        except OSError as exc:
            import errno

            if exc.errno in (errno.EACCES, errno.EAGAIN, getattr(errno, "EDEADLOCK", -1)):
                return False
            return None

    def _write_note(self, fd: int) -> None:
        note = _note(self.command)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, note + b"\0" * max(0, 256 - len(note)))

    # -- the exclusive-create fallback -------------------------------------------------------------
    def _try_pidfile(self) -> bool:
        p = self.path.with_name(LOCK_NAME + ".pid")
        try:
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            h = _holder(p)
            if h.get("host") == socket.gethostname() and h.get("pid") and not _alive(int(h["pid"])):
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
                if self.say:
                    self.say(f"{self.root}: removed a stale lock {p.name} of {_describe(h)}: that process no "
                             "longer runs")
                return self._try_pidfile()
            return False
        try:
            os.write(fd, _note(self.command))
        finally:
            os.close(fd)
        self._pidfile = p
        return True

    def acquire(self) -> None:
        if self._depth:
            self._depth += 1
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        told = fallback = False
        while True:
            got = None if fallback else self._try_os(fd)
            if got is None:                          # no OS locks here: the pid file
                fallback = True
                got = self._try_pidfile()
            if got:
                break
            pidfile = self.path.with_name(LOCK_NAME + ".pid")
            who = _describe(_holder(pidfile if fallback else self.path))
            if time.monotonic() >= deadline:
                os.close(fd)
                raise DatasetLocked(
                    f"{self.root}: the dataset is locked by {who}, which is still writing to it; waited "
                    f"{self.timeout:.0f} s (NESTSCOPE_LOCK_TIMEOUT). Try again when it has ended"
                    + (f"; if no such process runs, remove {pidfile}" if fallback else ""))
            if not told and self.say:
                self.say(f"{self.root}: waiting for {who}, which is writing to the dataset")
                told = True
            time.sleep(_POLL_S)
        if fallback:
            os.close(fd)
        else:
            self._write_note(fd)
            self._fd = fd
        self._depth = 1

    def release(self) -> None:
        if not self._depth:
            return
        self._depth -= 1
        if self._depth:
            return
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if sys.platform == "win32":
                    import msvcrt

                    os.lseek(fd, _BYTE, os.SEEK_SET)
                    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
                else:
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_UN)
            except OSError:
                pass
            os.close(fd)
        if self._pidfile is not None:
            try:
                self._pidfile.unlink()
            except FileNotFoundError:
                pass
            self._pidfile = None

    def __enter__(self) -> DatasetLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
