"""The workspace cache's store: one cache folder of entries with a size cap, and the read results it serves.

An entry is written to a temporary folder first and renamed into place, so a cache that is deleted, cut short or
corrupted costs only a new decode, never wrong numbers: a damaged entry is removed and the file is read again.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from app.cache.entry import (_ENTRY, DEFAULT_MAX_MB, FORMAT, CacheError, DamagedEntry, _dtypes, _file_identity,
                             _finding_from_json, _finding_to_json, _frame_from_parquet, _frame_to_parquet, _json_safe,
                             _key, _plain, _renamed_finding, _renamed_source, _restore_dtypes, counters_tag,
                             damaged_finding, engine_version, footer_crc_of, reader_version, seal)
from app.cache.writer import _submit, wait_for_writes
from app.findings import Finding
from app.formats.schema import ReadResult

__all__ = ["Cache", "CacheInfo", "CachedReadResult"]


def _read_key(ident: dict, counters: Collection[str] | None) -> tuple[dict, str]:
    """What a read entry of the file ``ident`` must hold, and its key."""
    expect = dict(ident, reader=reader_version(), format=FORMAT, counters=counters_tag(counters))
    return expect, _key("read", expect)


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
            raise DamagedEntry(f"{_ENTRY} unreadable ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            self._drop(d)
            raise CacheError("stale entry")
        if meta.get("seal") != seal(meta):
            self._drop(d)
            raise DamagedEntry(f"{_ENTRY} does not match its checksum")
        if any(meta.get(k) != v for k, v in expect.items()):
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
                _frame_to_parquet(df, tmp / f"{name}.parquet", samples=(kind, name) == ("read", "samples"))
                meta["frames"][name] = {"rows": int(len(df)), "dtypes": _dtypes(df),
                                        "footer_crc": footer_crc_of(tmp / f"{name}.parquet")}
            size = sum(p.stat().st_size for p in tmp.iterdir())
            if size > self.max_bytes:
                raise CacheError("entry larger than the cache cap")
            meta["bytes"] = int(size)
            meta = json.loads(json.dumps(meta, default=_plain))      # sealed as it will be read back
            meta["seal"] = seal(meta)
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
            df = _frame_from_parquet(d / f"{name}.parquet", footer_crc=info.get("footer_crc"))
            if len(df) != info["rows"]:
                raise DamagedEntry(f"{name}.parquet: {len(df)} rows instead of {info['rows']}")
            if list(df.columns) != list(info["dtypes"]):
                raise DamagedEntry(f"{name}.parquet: other columns than stored")
            return _restore_dtypes(df, info["dtypes"])
        except DamagedEntry:
            self._drop(d)
            raise
        except FileNotFoundError:      # deleted meanwhile (cache cleared): a miss, not damage
            self._drop(d)
            raise CacheError(f"{name}.parquet has gone") from None
        except Exception as exc:  # noqa: BLE001 - any pyarrow/OS error means a damaged entry
            self._drop(d)
            raise DamagedEntry(f"{name}.parquet unreadable ({type(exc).__name__}: {exc})") from None

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
        return self.lookup(path, counters)[0]

    def has_result(self, path: str | Path, counters: Collection[str] | None = None) -> bool:
        """An entry for ``path`` as it is now exists (not checked: :meth:`load_result` does that)."""
        ident = _file_identity(path)
        return ident is not None and self._entry_dir("read", _read_key(ident, counters)[1]).exists()

    def lookup(self, path: str | Path, counters: Collection[str] | None = None
               ) -> tuple[CachedReadResult | None, str]:
        """:meth:`load_result` and, when it is None because the entry failed a check (and was removed), what
        failed ('' for a plain miss: no entry, or one of a changed file or reader)."""
        ident = _file_identity(path)
        if ident is None:
            return None, ""
        expect, key = _read_key(ident, counters)
        try:
            d, meta = self._load_entry("read", key, expect)
            partitions = self._frame(d, meta, "partitions")
            mt = self._frame(d, meta, "mt")
        except DamagedEntry as exc:
            return None, str(exc)
        except CacheError:
            return None, ""
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
        return res, ""

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
        expect, key = _read_key(ident, counters)
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
            except DamagedEntry as exc:       # removed; the caller computes them again and says so (load.damaged)
                load.damaged = str(exc)
                return None
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

    def wait_intervals(self, key: str) -> None:
        """Complete a queued write of the intervals ``key`` now (on this thread unless the writer has it)."""
        wait_for_writes(self._entry_dir("iv", key))


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


class _Lazy:
    def __repr__(self) -> str:
        return "<samples in the cache>"


_LAZY = _Lazy()


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
            damage = ""
            try:
                v = self._cache._frame(self._dir, self._meta, "samples")
            except DamagedEntry as exc:
                v, damage = None, str(exc)
            except CacheError:
                v = None
            if v is None:
                from app.formats import read_file as decode

                fresh = decode(self._path, counters=getattr(self, "_counters", None))
                v = fresh.samples
                if damage:
                    self.findings = [*self.findings, damaged_finding(self.file, damage)]
            else:
                v = _renamed_source(v, getattr(self, "_rename", {}))
                self.__dict__["_samples_cached"] = True
            self.__dict__["_samples"] = v
        return v

    def forget_samples(self) -> bool:
        """Let go of samples read from the cache's Parquet (they are read again on next use, or decoded when the
        entry has gone meanwhile); True when some were let go.  Decoded samples (a damaged entry) are kept."""
        if not self.__dict__.pop("_samples_cached", False):
            return False
        self.__dict__["_samples"] = _LAZY
        return True

    @samples.setter
    def samples(self, value) -> None:
        self.__dict__["_samples"] = value
        self.__dict__.pop("_samples_cached", None)

    @property
    def readable(self) -> bool:
        v = self.__dict__.get("_samples", _LAZY)
        if v is _LAZY:
            return int(self._meta.get("n_samples", 0)) > 0 or (self.partitions is not None and len(self.partitions) > 0)
        return len(v) > 0 or (self.partitions is not None and len(self.partitions) > 0)

