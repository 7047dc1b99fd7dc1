"""The user's NestScope folders that more than one layer uses (no import beyond the standard library)."""

from __future__ import annotations

import atexit
import contextlib
import os
import posixpath
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable

__all__ = ["user_cache_dir", "user_state_file", "append_line", "write_lines", "throwaway_settings"]


def user_cache_dir() -> str | None:
    """The user's cache folder: ``NESTSCOPE_CACHE_DIR``, else platformdirs' user cache dir of ``nestscope`` (on
    Linux found without importing platformdirs, :func:`_xdg_cache_dir`; a folder in the temp dir without
    platformdirs); None when ``NESTSCOPE_CACHE=0`` turns the cache off."""
    if os.environ.get("NESTSCOPE_CACHE", "1").strip().lower() in ("0", "no", "off", "false"):
        return None
    d = os.environ.get("NESTSCOPE_CACHE_DIR") or _xdg_cache_dir()
    if not d:
        try:
            import platformdirs

            d = platformdirs.user_cache_dir("nestscope", appauthor=False)
        except Exception:  # noqa: BLE001 - no platformdirs: a folder in the temp dir still works
            d = os.path.join(tempfile.gettempdir(), "nestscope-cache")
    return d


def _xdg_cache_dir() -> str | None:
    """On Linux (not Android), what platformdirs' ``user_cache_dir("nestscope", appauthor=False)`` gives when
    ``$XDG_CACHE_HOME`` or ``$HOME`` is an absolute path: ``$XDG_CACHE_HOME/nestscope``, else
    ``$HOME/.cache/nestscope`` (the XDG base directory rule; importing platformdirs cost a query 4-5 ms).  None in
    every other case (another platform, Android, no absolute home): platformdirs decides."""
    if not sys.platform.startswith("linux") or hasattr(sys, "getandroidapilevel") \
            or os.environ.get("ANDROID_DATA") == "/data" or os.environ.get("ANDROID_ROOT") == "/system":
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if posixpath.isabs(xdg):
        return os.path.join(xdg, "nestscope")
    home = os.environ.get("HOME", "")
    if posixpath.isabs(home):
        return os.path.join(os.path.expanduser("~/.cache"), "nestscope")
    return None


def user_state_file(name: str) -> str | None:
    """A small file of what earlier NestScope processes of this user found about files (checks, columns), trusted
    only while each file's identity (size, times, inode, device) is unchanged: ``name`` in the user's cache folder;
    None when the cache is off, and on Windows, whose ``st_ctime`` is the creation time (a rewritten file would
    keep its identity)."""
    d = user_cache_dir() if os.name != "nt" else None
    return os.path.join(d, name) if d else None


def append_line(path: str, line: str) -> None:
    """One short line appended to ``path`` (its folder made when missing); best effort: nothing on an OSError."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
    except OSError:
        pass


def write_lines(path: str, lines: Iterable[str]) -> None:
    """``path`` replaced by ``lines`` (each ending with a newline) through a temporary file beside it; best effort:
    nothing on an OSError."""
    tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(lines)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


_throwaway: list[str] = []     # the folder throwaway_settings made in this process (at most one)


def throwaway_settings() -> str:
    """Point ``NESTSCOPE_SETTINGS_FILE`` at an INI file nobody keeps, unless it is set already, and return it.

    A run that must never touch the user's settings (``snapshot``, ``export --out FILE.png``, the display check)
    gets a folder of its own in the temp dir, made once per process and removed when the process exits."""
    chosen = os.environ.get("NESTSCOPE_SETTINGS_FILE")
    if chosen:
        return chosen
    if not _throwaway:
        _throwaway.append(tempfile.mkdtemp(prefix="nestscope-settings-"))
        atexit.register(shutil.rmtree, _throwaway[0], True)
    os.environ["NESTSCOPE_SETTINGS_FILE"] = path = os.path.join(_throwaway[0], "settings.ini")
    return path
