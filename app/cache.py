"""The workspace cache: decoded files (and the intervals built from them) kept as Parquet.

Opening a file again in a new process reads its counter samples from the cache instead of decoding the
bytes again.  An entry is keyed by the file's absolute path, size, modification time (ns) and the reader
version (a digest of the reader sources), and every one of those is checked again when the entry is read:
an entry is never trusted when any of them changed.  Entries are plain folders under the user's cache
directory (platformdirs), written to a temporary folder first and renamed into place, so a cache that is
deleted, cut short or corrupted costs only a new decode, never wrong numbers: a damaged entry is removed
and the file is read again.  The cache keeps to a size cap (least recently used entries go first).

Environment:

* ``NESTSCOPE_CACHE_DIR``: the cache folder (default: platformdirs' user cache dir of ``nestscope``).
* ``NESTSCOPE_CACHE=0``: do not use the cache at all.
* ``NESTSCOPE_CACHE_MAX_MB``: size cap in MB (default 4096).

Layout of an entry ``<dir>/<kind>-<key>/``: ``entry.json`` (identity and everything small: findings,
record counts, meta; written last, so an entry without it is incomplete) and Parquet files of the frames.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from app.findings import Finding

__all__ = ["Cache", "default_cache", "read_file", "reader_version", "engine_version", "CachedReadResult"]

FORMAT = 1                         # layout of an entry; bump when it changes
DEFAULT_MAX_MB = 4096
_ENTRY = "entry.json"
_PARQUET = {"compression": "lz4", "index": False}

# Entries written by the background writer: one daemon thread takes them in order.  While any caller is inside
# writes_paused() (the window until its first table is shown, a benchmark until its first table) queued writes
# wait.  Reading an entry, listing or clearing the cache first completes the writes it would see, on the
# reader's thread if the writer has not started them; at exit every queued write is completed.
_PENDING: dict[Path, "_Write"] = {}
_PENDING_LOCK = threading.Lock()
_GATE = threading.Condition()
_PAUSES: dict[int, float] = {}     # id of each active pause -> when it began (time.monotonic)
_EXITING = False
_QUEUE: "queue.Queue[_Write]" = queue.Queue()
_WRITER: threading.Thread | None = None


class _Write:
    """One queued entry write; runs once, on the writer thread or on a reader's thread that needs it first."""

    def __init__(self, dest: Path, job: Callable[[], Any]) -> None:
        self.dest, self.job = dest, job
        self.lock = threading.Lock()
        self.done = False

    def run(self) -> None:
        with self.lock:
            if self.done:
                return
            try:
                self.job()
            except Exception:  # noqa: BLE001 - a failed write only means no entry, as a synchronous one
                pass
            finally:
                self.done = True
                self.job = None      # drop the frames
                with _PENDING_LOCK:
                    if _PENDING.get(self.dest) is self:
                        del _PENDING[self.dest]


PAUSE_LIMIT_S = 120.0     # a pause nobody released (a window closed mid-load) stops holding the writer after this


def _held() -> bool:
    now = time.monotonic()
    return not _EXITING and any(now - t < PAUSE_LIMIT_S for t in _PAUSES.values())


def _writer_loop() -> None:
    while True:
        w = _QUEUE.get()
        with _GATE:
            while _held():
                _GATE.wait(timeout=1.0)
        w.run()
        if _QUEUE.empty():          # the load's writes are done: hand freed memory back to the system
            from app import memory

            memory.release()


def _finish_writes() -> None:
    global _EXITING
    with _GATE:
        _EXITING = True
        _GATE.notify_all()
    wait_for_writes()


def _submit(dest: Path, job: Callable[[], Any]) -> None:
    global _WRITER
    w = _Write(dest, job)
    with _PENDING_LOCK:
        _PENDING[dest] = w
        if _WRITER is None:
            _WRITER = threading.Thread(target=_writer_loop, name="nestscope-cache-writer", daemon=True)
            _WRITER.start()
            atexit.register(_finish_writes)
    _QUEUE.put(w)


class WritePause:
    """A hold on the background writer until :meth:`release` (idempotent); see :func:`pause_writes`."""

    def __init__(self) -> None:
        with _GATE:
            _PAUSES[id(self)] = time.monotonic()

    def release(self) -> None:
        with _GATE:
            if _PAUSES.pop(id(self), None) is not None:
                _GATE.notify_all()


def pause_writes() -> WritePause:
    """Hold queued cache writes until the returned pause is released (the window: until the first table of a
    load is shown); a pause left unreleased stops holding after :data:`PAUSE_LIMIT_S` seconds."""
    return WritePause()


@contextmanager
def writes_paused() -> Iterator[None]:
    """Hold the background writer while the block runs (e.g. until the first table is shown)."""
    p = pause_writes()
    try:
        yield
    finally:
        p.release()


def wait_for_writes(dest: Path | None = None) -> None:
    """Complete the queued writes of ``dest`` (every entry when None) before going on."""
    with _PENDING_LOCK:
        ws = list(_PENDING.values()) if dest is None else [w for w in (_PENDING.get(dest),) if w is not None]
    for w in ws:
        w.run()


def _digest_sources(package: str, extra: str = "") -> str:
    """A digest of the Python sources of ``package`` (falls back to the app version in a frozen bundle)."""
    import app

    h = hashlib.sha1(f"{FORMAT}/{app.__version__}/{extra}".encode(), usedforsecurity=False)
    root = Path(app.__file__).resolve().parent / package
    try:
        for p in sorted([*root.glob("*.py"), *root.glob("*.c")]):     # the reader's compiled kernel too
            h.update(p.name.encode())
            h.update(p.read_bytes())
    except OSError:
        pass
    return h.hexdigest()[:16]


_versions: dict[str, str] = {}


def reader_version() -> str:
    """Changes whenever a reader source (``app/formats``) or the package version changes."""
    if "formats" not in _versions:
        _versions["formats"] = _digest_sources("formats", f"pandas {pd.__version__}")
    return _versions["formats"]


def engine_version() -> str:
    """Changes whenever an engine source (``app/engine``, formula sets included) or the readers change."""
    if "engine" not in _versions:
        _versions["engine"] = _digest_sources("engine", reader_version() + _formula_files_digest())
    return _versions["engine"]


def _formula_files_digest() -> str:
    import app

    h = hashlib.sha1(usedforsecurity=False)
    try:
        for p in sorted((Path(app.__file__).resolve().parent / "engine" / "formulas").glob("*.json")):
            h.update(p.read_bytes())
    except OSError:
        pass
    return h.hexdigest()


def _file_identity(path: str | Path) -> dict[str, Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return {"path": os.path.abspath(str(path)), "size": int(st.st_size), "mtime_ns": int(st.st_mtime_ns)}


def _key(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode(), usedforsecurity=False).hexdigest()


def _finding_to_json(f: Finding) -> dict:
    return {"file": f.file, "offset": f.offset, "severity": f.severity, "code": f.code, "message": f.message,
            "key": {k: _plain(v) for k, v in f.key.items()}}


def _plain(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    return str(v)


def _finding_from_json(d: dict) -> Finding:
    return Finding(file=d["file"], offset=d["offset"], severity=d["severity"], code=d["code"],
                   message=d["message"], key=dict(d.get("key") or {}))


_CHUNK_ROWS = 1 << 17


def _frame_to_parquet(df: pd.DataFrame, path: Path) -> None:
    """Write ``df``; a big frame in slices of rows, so converting it to Arrow never holds a second copy of all
    of it (the month's 368,640 x 191 samples would otherwise add about 0.5 GB to the peak)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # dictionary encoding only for the categorical columns (it makes counters 2x slower to write and 4x slower to
    # read back for no gain), no column statistics (nothing filters on them)
    opts = {"compression": _PARQUET["compression"], "write_statistics": False,
            "use_dictionary": [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]}
    first = pa.Table.from_pandas(df.iloc[:_CHUNK_ROWS], preserve_index=False)
    with pq.ParquetWriter(path, first.schema, **opts) as w:
        w.write_table(first)
        for i in range(_CHUNK_ROWS, len(df), _CHUNK_ROWS):
            w.write_table(pa.Table.from_pandas(df.iloc[i:i + _CHUNK_ROWS], schema=first.schema,
                                               preserve_index=False))
    del first
    pa.default_memory_pool().release_unused()     # hand Arrow's freed buffers back before the engine runs


def _frame_from_parquet(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a frame back: pyarrow's table conversion without consolidating blocks (a quarter of the CPU time
    of ``pd.read_parquet`` on the month's intervals: 0.3 s instead of 1.0-1.6 s)."""
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=columns).to_pandas(split_blocks=True, self_destruct=True)


def _restore_dtypes(df: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    """Give every column back the dtype it had when it was stored (Parquet keeps most, not all)."""
    for c, t in dtypes.items():
        if c in df.columns and str(df[c].dtype) != t:
            df[c] = df[c].astype(t)
    return df


def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    return {str(c): str(t) for c, t in df.dtypes.items()}


class CacheError(Exception):
    """An entry that cannot be used (missing, stale, incomplete or damaged)."""


@dataclass
class CacheInfo:
    directory: str
    entries: int
    bytes: int
    max_bytes: int
    items: list[dict]


class Cache:
    """One cache folder with a size cap.  Every method is safe against a damaged or vanished folder."""

    def __init__(self, directory: str | Path, max_bytes: int = DEFAULT_MAX_MB << 20, background: bool = False) -> None:
        self.dir = Path(directory)
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        # background=True: entries are written by a writer thread while the caller goes on (the first open of a
        # month then shows its table before the Parquet files are written); every read of the cache waits for
        # the writes it would see
        self.background = background

    # -- entries -----------------------------------------------------------------------
    def _entry_dir(self, kind: str, key: str) -> Path:
        return self.dir / f"{kind}-{key}"

    def _load_entry(self, kind: str, key: str, expect: dict) -> tuple[Path, dict]:
        d = self._entry_dir(kind, key)
        wait_for_writes(d)
        try:
            meta = json.loads((d / _ENTRY).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CacheError("no entry") from None
        except (OSError, ValueError) as exc:
            self._drop(d)
            raise CacheError(f"damaged entry ({exc})") from None
        if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expect.items()):
            self._drop(d)
            raise CacheError("stale entry")
        try:
            os.utime(d / _ENTRY)          # least recently used goes first
        except OSError:
            pass
        return d, meta

    def _store_entry(self, kind: str, key: str, meta: dict, frames: dict[str, pd.DataFrame],
                     then: Callable[[], Any] | None = None) -> bool:
        """Write an entry atomically (temporary folder, then rename), then run ``then``; False when it could not
        be stored.  In background mode the write is queued and True returned at once."""
        if self.background:
            # shallow copies: with pandas' copy-on-write, later changes by the caller never reach the writer
            frames = {k: (v.copy(deep=False) if v is not None else None) for k, v in frames.items()}

            def job() -> None:
                if self._write_entry(kind, key, meta, frames) and then is not None:
                    then()
            _submit(self._entry_dir(kind, key), job)
            return True
        ok = self._write_entry(kind, key, meta, frames)
        if ok and then is not None:
            then()
        return ok

    def _write_entry(self, kind: str, key: str, meta: dict, frames: dict[str, pd.DataFrame]) -> bool:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.dir))
        except OSError:
            return False
        try:
            meta = dict(meta, format=FORMAT, stored=time.time(), frames={})
            for name, df in frames.items():
                if df is None:
                    continue
                _frame_to_parquet(df, tmp / f"{name}.parquet")
                meta["frames"][name] = {"rows": int(len(df)), "dtypes": _dtypes(df)}
            size = sum(p.stat().st_size for p in tmp.iterdir())
            if size > self.max_bytes:
                raise CacheError("entry larger than the cache cap")
            meta["bytes"] = int(size)
            (tmp / _ENTRY).write_text(json.dumps(meta, default=_plain), encoding="utf-8")
            dest = self._entry_dir(kind, key)
            with self._lock:
                self._drop(dest)
                os.replace(tmp, dest)
        except (OSError, CacheError, ValueError, TypeError, ImportError, ArithmeticError):
            shutil.rmtree(tmp, ignore_errors=True)
            return False
        except Exception:  # noqa: BLE001 - pyarrow errors (ArrowException...) must never stop a read
            shutil.rmtree(tmp, ignore_errors=True)
            return False
        self.trim(keep=dest)
        return True

    @staticmethod
    def _drop(d: Path) -> None:
        shutil.rmtree(d, ignore_errors=True)

    def _frame(self, d: Path, meta: dict, name: str) -> pd.DataFrame | None:
        info = meta.get("frames", {}).get(name)
        if info is None:
            return None
        try:
            df = _frame_from_parquet(d / f"{name}.parquet")
            if len(df) != info["rows"]:
                raise CacheError(f"{name}: {len(df)} rows instead of {info['rows']}")
            return _restore_dtypes(df, info["dtypes"])
        except CacheError:
            self._drop(d)
            raise
        except Exception as exc:  # noqa: BLE001 - any pyarrow/OS error means a damaged entry
            self._drop(d)
            raise CacheError(f"damaged {name} ({type(exc).__name__}: {exc})") from None

    # -- size cap ----------------------------------------------------------------------
    def _entries(self) -> list[tuple[Path, dict | None, float, int]]:
        out = []
        try:
            children = list(self.dir.iterdir())
        except OSError:
            return out
        for d in children:
            if not d.is_dir():
                continue
            try:
                size = sum(p.stat().st_size for p in d.iterdir())
            except OSError:
                continue
            try:
                meta = json.loads((d / _ENTRY).read_text(encoding="utf-8"))
                used = (d / _ENTRY).stat().st_mtime
            except (OSError, ValueError):
                meta, used = None, 0.0
            out.append((d, meta, used, size))
        return out

    def trim(self, keep: Path | None = None) -> int:
        """Remove least recently used entries (and leftovers of interrupted writes) until under the cap;
        returns the number of entries removed."""
        removed = 0
        now = time.time()
        entries = []
        for d, meta, used, size in self._entries():
            if meta is None:
                # an interrupted write: remove it once it is clearly not being written any more
                try:
                    age = now - d.stat().st_mtime
                except OSError:
                    continue
                if not d.name.startswith(".tmp-") or age > 3600:
                    self._drop(d)
                    removed += 1
                continue
            entries.append((used, d, size))
        total = sum(s for _, _, s in entries)
        for used, d, size in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            if keep is not None and d == keep:
                continue
            self._drop(d)
            total -= size
            removed += 1
        return removed

    def info(self) -> CacheInfo:
        wait_for_writes()
        items, total = [], 0
        for d, meta, used, size in self._entries():
            total += size
            m = meta or {}
            items.append({"entry": d.name, "kind": d.name.split("-", 1)[0], "bytes": size,
                          "file": m.get("path") or ", ".join(x.get("path", "") for x in m.get("files", [])),
                          "last_used": used, "complete": meta is not None})
        items.sort(key=lambda x: -x["last_used"])
        return CacheInfo(str(self.dir), len(items), total, self.max_bytes, items)

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        wait_for_writes()
        n = 0
        for d, *_ in self._entries():
            self._drop(d)
            n += 1
        return n

    # -- read results ------------------------------------------------------------------
    def load_result(self, path: str | Path, counters: Collection[str] | None = None) -> CachedReadResult | None:
        """The cached read of ``path`` when its entry is valid for the file as it is now, else None
        (``counters``: the counter columns the read was asked for, see :func:`app.formats.read_file`)."""
        ident = _file_identity(path)
        if ident is None:
            return None
        expect = dict(ident, reader=reader_version(), format=FORMAT, counters=counters_tag(counters))
        key = _key("read", expect)
        try:
            d, meta = self._load_entry("read", key, expect)
            partitions = self._frame(d, meta, "partitions")
            mt = self._frame(d, meta, "mt")
        except CacheError:
            return None
        findings = [_finding_from_json(f) for f in meta.get("findings", [])]
        # the entry knows the file under the name it was first opened with (the key is the absolute path):
        # results, findings and the frames' source column name it as it is opened now
        from app.formats import _display

        now = _display(path)
        mapping = {meta["file"]: now} if meta["file"] != now else {}
        if mapping:
            findings = [_renamed_finding(f, mapping) for f in findings]
            partitions, mt = _renamed_source(partitions, mapping), _renamed_source(mt, mapping)
        res = CachedReadResult(file=now, kind=meta["kind"], framing=meta["framing"],
                               records=dict(meta["records"]), samples=_LAZY, findings=findings,
                               partitions=partitions, mt=mt, size=int(meta["size"]), meta=dict(meta["meta"]))
        res._bind(self, d, meta, str(path), counters)
        res._rename = mapping
        res.meta["cache_key"] = key
        res.meta["digest"] = meta.get("digest", "")
        return res

    def store_result(self, path: str | Path, result: Any, ident: dict | None = None,
                     digest: str = "", counters: Collection[str] | None = None) -> str | None:
        """Store a fresh read of ``path``; returns its cache key (None when not stored).

        ``ident`` is the file identity taken *before* the read, so a file that changed while it was being
        read is stored under its old identity and never matches again.  ``counters``: what the read was asked
        for (an entry of some counters never answers a read of others or of all).
        """
        ident = ident or _file_identity(path)
        if ident is None or result is None or result.kind == "unknown":
            return None
        expect = dict(ident, reader=reader_version(), format=FORMAT, counters=counters_tag(counters))
        key = _key("read", expect)
        meta = dict(expect, file=result.file, kind=result.kind, framing=result.framing, records=result.records,
                    size=int(result.size), meta=_json_safe(result.meta), digest=digest,
                    n_samples=int(len(result.samples)),
                    findings=[_finding_to_json(f) for f in result.findings])
        def drop_older() -> None:   # older entries of the same path (file or reader changed since) never match
            for d, m, _used, _size in self._entries():
                if m is not None and d.name.startswith("read-") and d.name != f"read-{key}" \
                        and m.get("path") == expect["path"]:
                    self._drop(d)
        ok = self._store_entry("read", key, meta, {"samples": result.samples, "partitions": result.partitions,
                                                   "mt": result.mt}, then=drop_older)
        return key if ok else None

    # -- intervals ---------------------------------------------------------------------
    def load_intervals(self, key: str, names: list[str] | None = None) -> tuple[pd.DataFrame, list[Finding]] | None:
        """Cached intervals and engine findings; ``names``: the files' names as opened now, in the order of the
        stored files (the same files may have been opened under other path spellings when they were stored)."""
        got = self.open_intervals(key, names)
        if got is None:
            return None
        findings, load = got
        iv = load()
        return None if iv is None else (iv, findings)

    def open_intervals(self, key: str, names: list[str] | None = None
                       ) -> tuple[list[Finding], Callable[[], pd.DataFrame | None]] | None:
        """The engine findings of cached intervals now, and a function reading the intervals themselves when they
        are needed (None from it when the entry has gone or is damaged by then); see :meth:`load_intervals`.  The
        window's second open shows its first table from frames derived from the intervals (tree, level rows)
        without reading the intervals (issue 11)."""
        expect = {"engine": engine_version(), "format": FORMAT}
        try:
            d, meta = self._load_entry("iv", key, expect)
        except CacheError:
            return None
        if "intervals" not in meta.get("frames", {}):
            return None
        findings = [_finding_from_json(f) for f in meta.get("findings", [])]
        stored = [f.get("path", "") for f in meta.get("files", [])]
        mapping: dict[str, str] = {}
        if names is not None and len(names) == len(stored):
            mapping = {a: b for a, b in zip(stored, names) if a != b}
            if mapping:
                findings = [_renamed_finding(f, mapping) for f in findings]

        def load() -> pd.DataFrame | None:
            try:
                iv = self._frame(d, meta, "intervals")
            except CacheError:
                return None
            if iv is None:
                return None
            return _renamed_source(iv, mapping) if mapping else iv
        return findings, load

    def store_intervals(self, key: str, files: Iterable[dict], iv: pd.DataFrame, findings: list[Finding]) -> bool:
        meta = {"engine": engine_version(), "files": list(files),
                "findings": [_finding_to_json(f) for f in findings]}
        return self._store_entry("iv", key, meta, {"intervals": iv})


    # -- other frames derived from cached intervals (e.g. the tree's whole-window metrics) -------------
    def load_frames(self, kind: str, key: str) -> dict[str, pd.DataFrame] | None:
        expect = {"engine": engine_version(), "format": FORMAT}
        try:
            d, meta = self._load_entry(kind, key, expect)
            return {name: self._frame(d, meta, name) for name in meta.get("frames", {})}
        except CacheError:
            return None

    def store_frames(self, kind: str, key: str, frames: dict[str, pd.DataFrame], files: Iterable[dict] = ()) -> bool:
        return self._store_entry(kind, key, {"engine": engine_version(), "files": list(files)}, frames)


def _json_safe(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items() if k not in ("cache_key", "digest")}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return _plain(v)


class _Lazy:
    def __repr__(self) -> str:
        return "<samples in the cache>"


_LAZY = _Lazy()

from app.formats.schema import ReadResult  # noqa: E402 - after the helpers it does not need


class CachedReadResult(ReadResult):
    """A ReadResult from the cache: ``samples`` are read from Parquet on first use (often never, when the
    intervals are cached too).  If the Parquet file has gone or is damaged by then, the file is decoded
    again (and a changed file is read as it is now)."""

    def _bind(self, cache: Cache, d: Path, meta: dict, path: str, counters: Collection[str] | None = None) -> None:
        self._cache, self._dir, self._meta, self._path, self._counters = cache, d, meta, path, counters

    @property
    def samples(self) -> pd.DataFrame:  # type: ignore[override]
        v = self.__dict__.get("_samples", _LAZY)
        if v is _LAZY:
            try:
                v = self._cache._frame(self._dir, self._meta, "samples")
            except CacheError:
                v = None
            if v is None:
                from app.formats import read_file as decode

                fresh = decode(self._path, counters=getattr(self, "_counters", None))
                v = fresh.samples
            else:
                v = _renamed_source(v, getattr(self, "_rename", {}))
            self.__dict__["_samples"] = v
        return v

    @samples.setter
    def samples(self, value) -> None:
        self.__dict__["_samples"] = value

    @property
    def readable(self) -> bool:
        v = self.__dict__.get("_samples", _LAZY)
        if v is _LAZY:
            return int(self._meta.get("n_samples", 0)) > 0 or (self.partitions is not None and len(self.partitions) > 0)
        return len(v) > 0 or (self.partitions is not None and len(self.partitions) > 0)


def _renamed_source(df: pd.DataFrame | None, mapping: dict[str, str]) -> pd.DataFrame | None:
    """``df`` with the file names of its ``source`` column renamed by ``mapping`` (old name -> name now)."""
    if df is None or not mapping or "source" not in df.columns:
        return df
    col = df["source"]
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = [mapping.get(c, c) for c in col.cat.categories]
        if len(set(cats)) == len(cats):
            return df.assign(source=col.cat.rename_categories(cats))
    return df.assign(source=col.astype(object).map(lambda v: mapping.get(v, v)).astype(col.dtype))


def _renamed_finding(f: Finding, mapping: dict[str, str]) -> Finding:
    new = mapping.get(f.file)
    if new is None:
        return f
    msg = new + f.message[len(f.file):] if f.message.startswith(f.file) else f.message
    return replace(f, file=new, message=msg)


def default_cache() -> Cache | None:
    """The user's cache (None when ``NESTSCOPE_CACHE=0``)."""
    if os.environ.get("NESTSCOPE_CACHE", "1").strip().lower() in ("0", "no", "off", "false"):
        return None
    d = os.environ.get("NESTSCOPE_CACHE_DIR")
    if not d:
        try:
            import platformdirs

            d = platformdirs.user_cache_dir("nestscope", appauthor=False)
        except Exception:  # noqa: BLE001 - no platformdirs: a folder in the temp dir still works
            d = os.path.join(tempfile.gettempdir(), "nestscope-cache")
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
    hit = c.load_result(path, counters)
    if hit is not None:
        if progress:
            progress(1.0)
        return hit
    ident = _file_identity(path)
    res = decode(path, progress=progress, cancel=cancel, counters=counters)
    _store_fresh(c, path, res, ident, digest, counters)
    return res


def counters_tag(counters: Collection[str] | None) -> str:
    """The counter selection of a read as a short stable text for cache keys ("all", or a hash of the names)."""
    if counters is None:
        return "all"
    return hashlib.sha1(",".join(sorted(counters)).encode(), usedforsecurity=False).hexdigest()[:16]


def _store_fresh(c: Cache | None, path: str | Path, res: ReadResult, ident: dict | None, digest: str,
                 counters: Collection[str] | None = None) -> None:
    """Store a fresh read unless the file changed while it was read (identity taken before the read)."""
    if c is not None and ident is not None and ident == _file_identity(path):
        key = c.store_result(path, res, ident, digest=digest, counters=counters)
        if key:
            res.meta["cache_key"] = key


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
    hit = c.load_result(path, counters) if c is not None else None
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
    _store_fresh(c, path, res, ident, digest, counters)
    return res, digest
