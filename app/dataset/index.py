"""The manifest index: every committed manifest entry of a dataset in one Parquet file, read once per command.

``manifest/<sha256>.json`` stay the commit records (written once, linked into place: see :mod:`app.dataset.store`).
``manifest/index.parquet`` is a copy of them that readers load instead of opening every entry: one row per entry
file (its name, size and mtime as last seen, whether it passed its checks, the entry's JSON text) and one
row per part file an entry lists (table, CEC, month, rows, bytes, CRC-32), so that listing the parts of one CEC and
month of 20,000 extracted files costs one file read and one directory listing.

Loading reconciles the index with the directory: an entry file that is new, or whose size or mtime differ
from the index row (rewritten, damaged) is read and checked again (:func:`app.dataset.integrity.entry_problem`);
an index row whose entry file is gone is dropped.  A dataset written before the index (or whose index is unreadable)
is read entry by entry once and the index is written then (the migration).  The index is replaced atomically
(temporary file + ``os.replace``); two processes writing it at once lose nothing, since what one of them misses is
found again in the directory by the next load.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from app.dataset import integrity

__all__ = ["ManifestIndex", "INDEX_NAME"]

INDEX_NAME = "index.parquet"
_TABLES = ("samples", "intervals", "partitions")
_ENTRY_COLS = ("file", "size", "mtime_ns", "ino", "sha256", "ok", "why", "body", "name", "readable", "counters")
_PART_COLS = ("file", "tbl", "rel", "cec", "month", "rows", "bytes", "crc32")


def _entry_row(file: str, st: os.stat_result | None, entry: Any, why: str, body: str) -> dict[str, Any]:
    e = entry if isinstance(entry, dict) else {}
    return {"file": file, "size": st.st_size if st else -1, "mtime_ns": st.st_mtime_ns if st else -1,
            "ino": st.st_ino if st else -1, "sha256": str(e.get("sha256", file[:-5])), "ok": not why, "why": why,
            "body": body, "name": e.get("name") if isinstance(e.get("name"), str) else None,
            "readable": bool(e.get("readable", False)),
            "counters": ",".join(c for c in e.get("interval_counters", []) or [] if isinstance(c, str))}


def _part_rows(file: str, entry: Any) -> list[tuple]:
    """(file, table, rel, cec, month, rows, bytes, crc32) of every part an entry that parses lists."""
    if not isinstance(entry, dict) or not isinstance(entry.get("parts"), dict):
        return []
    keys = entry.get("part_keys", {}) if isinstance(entry.get("part_keys"), dict) else {}
    out = []
    for t in _TABLES:
        for p in entry["parts"].get(t, []) or []:
            if not isinstance(p, str):
                continue
            k = keys.get(p, {}) if isinstance(keys.get(p, {}), dict) else {}

            def num(v):
                return int(v) if isinstance(v, int) and not isinstance(v, bool) else -1
            out.append((file, t, p, str(k.get("cec", "")), str(k.get("month", "")), num(k.get("rows")),
                        num(k.get("bytes")), num(k.get("crc32"))))
    return out


class ManifestIndex:
    """The entries of ``root/manifest`` as two column sets (entries, parts); see the module docstring."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.mdir = self.root / "manifest"
        self.path = self.mdir / INDEX_NAME
        self.dirty = False
        self.entries: dict[str, dict[str, Any]] = {}       # entry file name -> row (see _entry_row)
        self.parts: dict[str, list[tuple]] = {}            # entry file name -> its part rows
        self._parsed: dict[str, dict[str, Any]] = {}       # entry file name -> entry (json parsed lazily)
        self._by_key: dict[tuple[str, str, str], list[tuple]] | None = None
        self._bodies_read = False
        self.load()

    # -- loading -----------------------------------------------------------------------------
    def _read_index(self) -> tuple[dict[str, dict[str, Any]], dict[str, list[tuple]]]:
        """The index file's rows; the entries' JSON text (``body``) is left on disk until an entry is asked for."""
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(self.path)
            names = pf.schema_arrow.names
            if any(c not in names for c in ("kind", *_ENTRY_COLS, *_PART_COLS[1:])):    # another layout: rebuild
                self.dirty = True
                return {}, {}
            t = pf.read(columns=[c for c in names if c != "body"], use_threads=False)
        except FileNotFoundError:
            return {}, {}
        except Exception:  # noqa: BLE001 - an unreadable index is rebuilt from the entries themselves
            self.dirty = True
            return {}, {}
        kind = t.column("kind").to_numpy(zero_copy_only=False)
        isent = kind == "entry"
        ent_cols = [c for c in _ENTRY_COLS if c != "body"]
        et = t.filter(isent)
        lists = [et.column(c).to_pylist() for c in ent_cols]
        ent: dict[str, dict[str, Any]] = {}
        for k, vals in enumerate(zip(*lists)):
            row = dict(zip(ent_cols, vals))
            row["body"] = None
            row["_at"] = k                      # its row among the entries of the file (for the body)
            ent[row["file"]] = row
        pt = t.filter(~isent)
        parts: dict[str, list[tuple]] = {}
        for row in zip(*[pt.column(c).to_pylist() for c in _PART_COLS]):
            parts.setdefault(row[0], []).append(row)
        return ent, parts

    def _bodies(self) -> None:
        """Read the entries' JSON text from the index file (once, when a whole entry is first asked for)."""
        import pyarrow.parquet as pq

        if self._bodies_read:
            return
        self._bodies_read = True
        try:
            t = pq.read_table(self.path, columns=["kind", "file", "body"], use_threads=False)
        except Exception:  # noqa: BLE001 - then every entry is read from its own file
            return
        t = t.filter(t.column("kind").to_numpy(zero_copy_only=False) == "entry")
        for f, body in zip(t.column("file").to_pylist(), t.column("body").to_pylist()):
            row = self.entries.get(f)
            if row is not None and row.get("body") is None and "_at" in row:
                row["body"] = body

    def load(self) -> None:
        old_e, old_p = self._read_index()
        try:
            names = [n for n in os.listdir(self.mdir) if n.endswith(".json") and not n.startswith(".")]
        except FileNotFoundError:
            names = []
        base = str(self.mdir) + os.sep
        for n in names:
            try:
                st = os.stat(base + n)
            except FileNotFoundError:
                continue
            row = old_e.get(n)
            if row is not None and (int(row["size"]), int(row["mtime_ns"])) == (st.st_size, st.st_mtime_ns):
                self.entries[n] = row
                self.parts[n] = old_p.get(n, [])
                continue
            self._read_entry(n, st)
        if set(old_e) - set(self.entries):
            self.dirty = True

    def _read_entry(self, name: str, st: os.stat_result | None = None) -> None:
        p = self.mdir / name
        e: Any = None
        body = ""
        try:
            if st is None:
                st = os.stat(p)
            body = p.read_text(encoding="utf-8")
            e = json.loads(body)
            why = integrity.entry_problem(name, e)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            why = f"unreadable: {type(exc).__name__}: {str(exc)[:120]}"
        self.entries[name] = _entry_row(name, st, e, why, body if not why else "")
        self.parts[name] = _part_rows(name, e)
        if not why:
            self._parsed[name] = e
        self._by_key = None
        self.dirty = True

    def refresh(self) -> bool:
        """Take in entry files committed since the last look (by name only: cheap); True when any was new."""
        try:
            names = {n for n in os.listdir(self.mdir) if n.endswith(".json") and not n.startswith(".")}
        except FileNotFoundError:
            return False
        new = names - set(self.entries)
        for n in sorted(new):
            self._read_entry(n)
        gone = set(self.entries) - names
        for n in gone:
            self.forget(n)
        return bool(new or gone)

    def verify(self, names: Iterable[str] | None = None) -> bool:
        """Check that entry files (all by default) are still the ones indexed (size, mtime); re-read and
        re-check those that changed.  True when any did."""
        changed = False
        for n in list(self.entries if names is None else names):
            row = self.entries.get(n)
            if row is None:
                continue
            try:
                st = os.stat(self.mdir / n)
            except FileNotFoundError:
                self.forget(n)
                changed = True
                continue
            if (int(row["size"]), int(row["mtime_ns"])) != (st.st_size, st.st_mtime_ns):
                self._parsed.pop(n, None)
                self._read_entry(n, st)
                changed = True
        return changed

    def add(self, entry: dict[str, Any]) -> None:
        """Record an entry this process committed (no re-read of its file)."""
        name = f"{entry['sha256']}.json"
        try:
            st = os.stat(self.mdir / name)
        except OSError:
            st = None
        self.entries[name] = _entry_row(name, st, entry, "", json.dumps(entry, indent=1, default=str))
        self.parts[name] = _part_rows(name, entry)
        self._parsed[name] = entry
        self._by_key = None
        self.dirty = True

    def forget(self, name: str) -> None:
        self.entries.pop(name, None)
        self.parts.pop(name, None)
        self._parsed.pop(name, None)
        self._by_key = None
        self.dirty = True

    # -- answers -----------------------------------------------------------------------------
    def entry(self, name: str) -> dict[str, Any] | None:
        """The parsed entry of a sound row (None for a damaged one)."""
        row = self.entries.get(name)
        if row is None or not row["ok"]:
            return None
        e = self._parsed.get(name)
        if e is None:
            if row.get("body") is None:
                self._bodies()
            if row.get("body") is None:            # not in the index file: from the entry's own file
                self._read_entry(name)
                return self._parsed.get(name)
            e = json.loads(row["body"])
            self._parsed[name] = e
        return e

    def sound(self) -> list[str]:
        return [n for n, r in self.entries.items() if r["ok"]]

    def damaged(self) -> list[tuple[str, str, str | None]]:
        """(entry file name, what is wrong, source file name) of the entries that fail their checks."""
        return [(n, str(r["why"]), r["name"]) for n, r in self.entries.items() if not r["ok"]]

    def listed(self) -> set[str]:
        """Absolute paths of the parts listed by any entry that parses (sound or not)."""
        return {str(self.root / row[2]) for rows in self.parts.values() for row in rows}

    def part_rows(self, table: str, cecs: Iterable[str] | None = None, months: Iterable[str] | None = None
                  ) -> list[tuple]:
        """Part rows of sound entries of ``table`` in the given CECs and months (all when None)."""
        if self._by_key is None:
            by: dict[tuple[str, str, str], list[tuple]] = {}
            for n, rows in self.parts.items():
                if not self.entries[n]["ok"]:
                    continue
                for row in rows:
                    by.setdefault((row[1], row[3], row[4]), []).append(row)
            self._by_key = by
        cs = set(cecs) if cecs is not None else None
        ms = set(months) if months is not None else None
        out = []
        for (t, c, m), rows in self._by_key.items():
            if t == table and (cs is None or c in cs) and (ms is None or m in ms):
                out += rows
        return out

    def keys(self, table: str) -> set[tuple[str, str]]:
        """(CEC, month) partitions of ``table`` holding parts of sound entries."""
        self.part_rows(table, (), ())
        return {(c, m) for (t, c, m) in (self._by_key or {}) if t == table}

    # -- writing ------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the index (temporary file, then rename) when it changed; False when the directory is not
        writable (a read-only dataset keeps working from its entries)."""
        if not self.dirty:
            return True
        import pyarrow as pa
        import pyarrow.parquet as pq

        if any(r.get("body") is None for r in self.entries.values()):
            self._bodies()                      # the text of entries kept from the old index goes on with them
            for n in [n for n, r in self.entries.items() if r.get("body") is None and r["ok"]]:
                self._read_entry(n)
        ents = list(self.entries.values())
        parts = [row for rows in self.parts.values() for row in rows]
        n_e, n_p = len(ents), len(parts)

        def col(name, values_e, values_p, typ):
            return pa.array(list(values_e) + list(values_p), type=typ)
        cols = {"kind": pa.array(["entry"] * n_e + ["part"] * n_p, type=pa.string()),
                "file": col("file", [r["file"] for r in ents], [p[0] for p in parts], pa.string())}
        for c, typ in (("size", pa.int64()), ("mtime_ns", pa.int64()), ("ino", pa.int64())):
            cols[c] = col(c, [int(r[c]) for r in ents], [-1] * n_p, typ)
        cols["sha256"] = col("sha256", [str(r["sha256"]) for r in ents], [""] * n_p, pa.string())
        cols["ok"] = col("ok", [bool(r["ok"]) for r in ents], [False] * n_p, pa.bool_())
        cols["readable"] = col("readable", [bool(r["readable"]) for r in ents], [False] * n_p, pa.bool_())
        for c in ("why", "body", "name", "counters"):
            cols[c] = col(c, [None if r[c] is None else str(r[c]) for r in ents], [None] * n_p, pa.string())
        for k, c in enumerate(("tbl", "rel", "cec", "month")):
            cols[c] = col(c, [None] * n_e, [p[k + 1] for p in parts], pa.string())
        for k, c in enumerate(("rows", "bytes", "crc32")):
            cols[c] = col(c, [-1] * n_e, [int(p[k + 5]) for p in parts], pa.int64())
        tmp = self.mdir / f".tmp-{uuid.uuid4().hex}-{INDEX_NAME}"
        try:
            pq.write_table(pa.table(cols), tmp, compression="zstd")
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass
            return False
        self.dirty = False
        return True


def part_info(row: tuple) -> dict[str, Any]:
    """The ``part_keys`` dict of a part row (what :func:`integrity.part_problem` checks by)."""
    out: dict[str, Any] = {"cec": row[3], "month": row[4]}
    for k, c in ((5, "rows"), (6, "bytes"), (7, "crc32")):
        if row[k] is not None and int(row[k]) >= 0:
            out[c] = int(row[k])
    return out
