"""The user's NestScope folders that more than one layer uses (no import beyond the standard library)."""

from __future__ import annotations

import os
import tempfile

__all__ = ["user_cache_dir"]


def user_cache_dir() -> str | None:
    """The user's cache folder: ``NESTSCOPE_CACHE_DIR``, else platformdirs' user cache dir of ``nestscope`` (a
    folder in the temp dir without platformdirs); None when ``NESTSCOPE_CACHE=0`` turns the cache off."""
    if os.environ.get("NESTSCOPE_CACHE", "1").strip().lower() in ("0", "no", "off", "false"):
        return None
    d = os.environ.get("NESTSCOPE_CACHE_DIR")
    if not d:
        try:
            import platformdirs

            d = platformdirs.user_cache_dir("nestscope", appauthor=False)
        except Exception:  # noqa: BLE001 - no platformdirs: a folder in the temp dir still works
            d = os.path.join(tempfile.gettempdir(), "nestscope-cache")
    return d
