"""The user's NestScope folders that more than one layer uses (no import beyond the standard library)."""

from __future__ import annotations

import os
import posixpath
import sys
import tempfile

__all__ = ["user_cache_dir"]


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
