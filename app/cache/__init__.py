"""The workspace cache: decoded files (and the intervals built from them) kept as Parquet.

Opening a file again in a new process reads its counter samples from the cache instead of decoding the
bytes again.  An entry is keyed by the file's absolute path, size, modification time (ns), inode, change time
(ns) and the reader version (a digest of the reader sources), and every one of those is checked again when the
entry is read: an entry is never trusted when any of them changed.  Every part of an entry is checksummed
(:mod:`app.cache.entry`); an entry failing a check is removed, the file decoded again and an info finding
(``cache-damaged``) says so.  Entries are plain folders under the user's cache
directory (platformdirs), written to a temporary folder first and renamed into place, so a cache that is
deleted, cut short or corrupted costs only a new decode, never wrong numbers: a damaged entry is removed
and the file is read again.  The cache keeps to a size cap (least recently used entries go first).

Environment:

* ``NESTSCOPE_CACHE_DIR``: the cache folder (default: platformdirs' user cache dir of ``nestscope``).
* ``NESTSCOPE_CACHE=0``: do not use the cache at all.
* ``NESTSCOPE_CACHE_MAX_MB``: size cap in MB (default 4096).
* ``NESTSCOPE_CACHE_BACKGROUND=0``: write entries on the reading thread instead of the background writer.

The package: :mod:`app.cache.entry` (the entry format: identity, versions, Parquet frames),
:mod:`app.cache.store` (the cache folder, its size cap and the read results it serves) and
:mod:`app.cache.writer` (the background writer).  Callers use the names below.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from app.cache.entry import (DEFAULT_MAX_MB, FORMAT, CacheError, DamagedEntry, _file_identity, _key, _versions,
                             counters_tag, damaged_finding, engine_version, reader_version)
from app.cache.store import _LAZY, Cache, CachedReadResult, CacheInfo
from app.cache.writer import WritePause, pause_writes, wait_for_writes, writes_paused
from app.formats.schema import ReadResult

__all__ = ["Cache", "CacheError", "DamagedEntry", "CacheInfo", "CachedReadResult", "WritePause", "default_cache", "read_file",
           "read_with_digest", "samples_not_kept", "let_go_samples", "settle_intervals", "reader_version", "engine_version", "counters_tag", "intervals_key",
           "pause_writes", "writes_paused", "wait_for_writes", "FORMAT", "DEFAULT_MAX_MB", "_LAZY", "_versions",
           "_key"]


def default_cache() -> Cache | None:
    """The user's cache (None when ``NESTSCOPE_CACHE=0``)."""
    from app.userdirs import user_cache_dir

    d = user_cache_dir()
    if d is None:
        return None
    try:
        cap = int(float(os.environ.get("NESTSCOPE_CACHE_MAX_MB", DEFAULT_MAX_MB)) * (1 << 20))
    except ValueError:
        cap = DEFAULT_MAX_MB << 20
    background = os.environ.get("NESTSCOPE_CACHE_BACKGROUND", "1").strip().lower() not in ("0", "no", "off", "false")
    return Cache(d, cap, background=background)


def read_file(path: str | Path, progress: Callable[[float], None] | None = None,
              cancel: Callable[[], bool] | None = None, cache: Cache | None | bool = True,
              digest: str = "", counters: Collection[str] | None = None) -> ReadResult:
    """:func:`app.formats.read_file` through the workspace cache (same result, same findings).

    ``cache=True`` uses :func:`default_cache`, ``False``/``None`` decodes without a cache.  ``counters``: the
    counter columns needed (None: all; a workspace asks for ``Workspace.counters_needed()``).
    """
    from app.formats import read_file as decode

    c = default_cache() if cache is True else (cache or None)
    if c is None:
        return decode(path, progress=progress, cancel=cancel, counters=counters)
    hit, damage = c.lookup(path, counters)
    if hit is not None:
        if progress:
            progress(1.0)
        return hit
    ident = _file_identity(path)
    res = decode(path, progress=progress, cancel=cancel, counters=counters)
    _store_fresh(c, path, res, ident, digest, counters, damage)
    return res


def _store_fresh(c: Cache | None, path: str | Path, res: ReadResult, ident: dict | None, digest: str,
                 counters: Collection[str] | None = None, damage: str = "") -> None:
    """Store a fresh read unless the file changed while it was read (identity taken before the read); ``damage``:
    why the file's entry was removed (an info finding on this read, not stored with the new entry)."""
    if c is not None and ident is not None and ident == _file_identity(path):
        key = c.store_result(path, res, ident, digest=digest, counters=counters)
        if key:
            res.meta["cache_key"] = key
            res.__dict__["_stored_in"] = (c, str(path), counters)     # not a field: what let_go_samples reads
    if damage:
        res.findings = [*res.findings, damaged_finding(res.file, damage)]


def intervals_key(results: list[ReadResult], extra: Any) -> str | None:
    """Cache key of the intervals of these files (None unless every file came through the cache)."""
    keys = [r.meta.get("cache_key") for r in results]
    if not keys or any(not k for k in keys):
        return None
    return _key("iv", keys, extra, engine_version())


def read_with_digest(path: str | Path, digest_fn: Callable[[str | Path], str] | None,
                     progress: Callable[[float], None] | None = None,
                     cancel: Callable[[], bool] | None = None,
                     counters: Collection[str] | None = None) -> tuple[ReadResult, str]:
    """(read result, content digest) of ``path``: both from the cache when its entry is valid, else the digest
    from ``digest_fn`` and a fresh read that is stored with it (the window uses the digest to notice a file
    opened twice under another name; hashing a big file again would cost as much as reading the cache).
    ``digest_fn=None``: no digest is taken (the one stored with a cached entry is still given, else "")."""
    c = default_cache()
    if digest_fn is None:
        res = read_file(path, progress=progress, cancel=cancel, cache=c if c is not None else False,
                        counters=counters)
        return res, (res.meta.get("digest", "") if isinstance(res.meta, dict) else "")
    hit, damage = c.lookup(path, counters) if c is not None else (None, "")
    if hit is not None:             # an entry stored without a digest (none was needed then): hash the file only
        digest = hit.meta.get("digest") or digest_fn(path)
        if progress:
            progress(1.0)
        return hit, digest
    # the digest on a second thread while the file is decoded on this one (hashlib and the reader's kernel run
    # without the GIL): a month's 564 MB are hashed in the shadow of the decode instead of before it
    box: dict[str, Any] = {}

    def hash_it() -> None:
        try:
            box["digest"] = digest_fn(path)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread (e.g. Cancelled)
            box["error"] = exc
    th = threading.Thread(target=hash_it, name="nestscope-digest", daemon=True)
    th.start()
    from app.formats import read_file as decode

    ident = _file_identity(path) if c is not None else None
    try:
        res = decode(path, progress=progress, cancel=cancel, counters=counters)
    finally:
        th.join()
    if "error" in box:
        raise box["error"]
    digest = box.get("digest", "")
    _store_fresh(c, path, res, ident, digest, counters, damage)
    return res, digest



# inside samples_not_kept() (per thread): a workspace lets go of fresh reads' samples too, once they are stored
_NOT_KEPT: contextvars.ContextVar[bool] = contextvars.ContextVar("nestscope_samples_not_kept", default=False)


@contextlib.contextmanager
def samples_not_kept():
    """Inside (on this thread only): a workspace computing intervals lets go of the samples of files decoded now
    and stored in the cache, as it does for samples read back from the cache (:func:`let_go_samples`).  For a
    caller that needs the samples no more once the intervals are made (an export): its peak then holds the
    intervals, not the samples beside them; anything asking for the samples again reads them from the cache."""
    token = _NOT_KEPT.set(True)
    try:
        yield
    finally:
        _NOT_KEPT.reset(token)


def let_go_samples(results: list[ReadResult], cached: bool = True) -> int:
    """Let go of the samples the results can give again; returns how many were let go.  Samples read back from
    the cache always (read again from the entry if ever needed); inside :func:`samples_not_kept`, also those of
    a fresh read stored in the cache: its entry is written first (on this thread if the writer has not started
    it), and the result then reads its samples from that entry like a cached one (or decodes the file again when
    the entry has gone).  Decoded samples no entry holds are kept.  ``cached=False``: only fresh reads (a
    workspace then reads their samples back as the cache's columns, which it can let go one by one)."""
    n = 0
    for r in results:
        if isinstance(r, CachedReadResult):
            n += bool(cached and r.forget_samples())
        elif _NOT_KEPT.get() and "_stored_in" in r.__dict__:
            n += _read_back(r)
    if n and _NOT_KEPT.get():     # the decode's freed heap (80 MB on the month) back to the system
        from app import memory

        memory.release(collect=False)
    return n


def _read_back(r: ReadResult) -> bool:
    """Turn the fresh read ``r`` (stored by :func:`_store_fresh`) into a cached read of the entry it was stored
    in, its decoded samples let go; False (``r`` unchanged) when that entry is not there as stored."""
    c, path, counters = r.__dict__.pop("_stored_in")
    hit = c.load_result(path, counters)          # waits for the entry's write
    if hit is None or hit.meta.get("cache_key") != r.meta.get("cache_key") or hit.file != r.file \
            or int(hit._meta.get("n_samples", -1)) != len(r.samples):
        return False
    # the same object every holder of the read has (a comparison's sides share reads): made a cached read in place
    r.__class__ = CachedReadResult
    r.__dict__.pop("samples", None)
    r.__dict__["_samples"] = _LAZY
    r._bind(hit._cache, hit._dir, hit._meta, hit._path, counters)
    r._rename = hit._rename
    return True


def settle_intervals(cache: Any, key: str | None, names: list[str]) -> Callable[[], Any] | None:
    """Inside :func:`samples_not_kept`: the intervals entry ``key`` written now, while only the intervals are
    held, and the function reading them back as the cache holds them (a column an array: the level sums of the
    export that follows select counters without copying a block of all of them, as a warm export does); None
    outside, or when the entry is not there."""
    if not (_NOT_KEPT.get() and key is not None and hasattr(cache, "wait_intervals")):
        return None
    cache.wait_intervals(key)
    got = cache.open_intervals(key, names)
    return None if got is None else got[1]
