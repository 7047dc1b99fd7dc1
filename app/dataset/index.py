"""The manifest index: every committed manifest entry of a dataset in one Parquet file, read once per command.

``manifest/<sha256>.json`` stay the commit records (written once, linked into place: see :mod:`app.dataset.store`).
``manifest/index.parquet`` is a copy of them that readers load instead of opening every entry: one row per entry
file (its name, size and mtime as last seen, whether it passed its checks, the entry's JSON text) and one
row per part file an entry lists (table, CEC, month, rows, bytes, CRC-32), so that listing the parts of one CEC and
month of 20,000 extracted files costs one file read and one directory listing.

Loading reads only the columns a command needs (the JSON text, the reasons of damaged entries and the hashes stay
on disk until asked for) and keeps them as Arrow/NumPy columns: no Python object per entry or part is made until
an answer needs it (20,000 entries load in a few hundredths of a second).  Entries this process reads or adds
afterwards live beside the loaded columns (``_ov``) and replace their loaded row.

The index is reconciled with the directory by names: an entry file not in the index is read and checked
(:func:`app.dataset.integrity.entry_problem`), an index row whose entry file is gone is dropped.  An entry file
rewritten in place (damaged) is found by its size and mtime when it is used: :meth:`ManifestIndex.verify` of the
entries whose parts an answer reads (all of them for ``entries()`` and ``dataset check``).  A dataset written
before the index (or whose index is unreadable) is read entry by entry once and the index is written then (the
migration).  The index is replaced atomically (temporary file + ``os.replace``); two processes writing it at once
lose nothing, since what one of them misses is found again in the directory by the next load.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from app.dataset import integrity

__all__ = ["ManifestIndex", "INDEX_NAME", "part_info"]

INDEX_NAME = "index.parquet"
_TABLES = ("samples", "intervals", "partitions")
_ENTRY_COLS = ("file", "size", "mtime_ns", "ino", "sha256", "ok", "why", "body", "name", "readable", "counters")
_PART_COLS = ("file", "tbl", "rel", "cec", "month", "rows", "bytes", "crc32")
_ALL_COLS = ("kind", *_ENTRY_COLS, *_PART_COLS[1:])
# what a load reads (the narrow projection): the entries' keys and checks, the parts' keys
_LOAD_ENTRY = ("file", "size", "mtime_ns", "ok", "readable", "counters")
_LOAD_COLS = ("kind", *_LOAD_ENTRY, *_PART_COLS[1:])
_FEW_PARTS = 2000       # keys(): part rows made distinct in Python up to this many
# index files loaded by this process, by identity (path, size, mtime, ctime, inode) -> their loaded columns (read
# only; each ManifestIndex has its own ``_live``): a command run again in one process (the window) reads the
# file once
_LOADED: dict[tuple, tuple] = {}
_LOADED_LIMIT = 8
_CODES: dict[str, tuple] = {}       # part column -> (the loaded part rows' table, their codes, the distinct values)
_KEYS: dict[str, tuple] = {}        # table -> (the loaded part rows' table, ManifestIndex.keys of it alone)
_ROWS: dict[tuple, tuple] = {}      # (table, CECs, months) -> (the loaded part rows' table, part_rows of it alone)
_ROWS_LIMIT = 64                    # selections kept, and part rows kept in all (a big fleet's stay bounded)
_ROWS_BUDGET = 20_000
_COUNTERS: list = [None]            # (the loaded entries' counters column, ManifestIndex.counters of it alone)


def _schema():
    import pyarrow as pa

    types = {"kind": pa.string(), "file": pa.string(), "size": pa.int64(), "mtime_ns": pa.int64(), "ino": pa.int64(),
             "sha256": pa.string(), "ok": pa.bool_(), "why": pa.string(), "body": pa.string(), "name": pa.string(),
             "readable": pa.bool_(), "counters": pa.string(), "tbl": pa.string(), "rel": pa.string(),
             "cec": pa.string(), "month": pa.string(), "rows": pa.int64(), "bytes": pa.int64(), "crc32": pa.int64()}
    return pa.schema([(c, types[c]) for c in _ALL_COLS])


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
    """The entries of ``root/manifest``: the loaded index as columns plus the entries read or added since
    (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.mdir = self.root / "manifest"
        self.path = self.mdir / INDEX_NAME
        self.dirty = False
        # the loaded index: entry rows (names, positions, columns) and part rows (an Arrow table + entry position)
        self._reset_base()
        # entries read, re-read or added by this process: name -> row (see _entry_row), name -> part rows
        self._ov: dict[str, dict[str, Any]] = {}
        self._ovp: dict[str, list[tuple]] = {}
        self._parsed: dict[str, dict[str, Any]] = {}       # entry file name -> entry (json parsed lazily)
        self._bodies: dict[str, str] | None = None
        self._keys: dict[str, set[tuple[str, str]]] = {}
        self._valid_p: np.ndarray | None = None
        self.load()

    # -- loading -----------------------------------------------------------------------------
    def _read_index(self) -> None:
        """The index file's narrow projection as columns (nothing per row is made in Python but the names); read
        by DuckDB in a process that has loaded it (a query: no ``pyarrow.parquet`` to import; which rows are entries
        said by DuckDB), else by pyarrow."""
        import pyarrow.compute as pc

        try:
            st = os.stat(self.path)
        except OSError:
            return
        key = (str(self.path), *integrity.file_identity(st))
        got = _LOADED.get(key)
        if got is not None:         # the same index file loaded before in this process: its columns again
            (self._bn, self._bpos, self._bsize, self._bmtime, self._bok, self._bread, self._bcount, self._bp,
             self._bppos) = got
            self._live = np.ones(len(self._bn), bool)
            return
        pf = None
        try:
            if _duckdb_loaded():
                from app.dataset.duckdb_engine import read_parquet_file

                # (a row without a kind is neither an entry nor a part, as pyarrow's filters below leave it out)
                t, names = read_parquet_file(str(self.path), _LOAD_COLS, where="kind IS NOT NULL",
                                             flag="kind = 'entry'")
            else:
                import pyarrow.parquet as pq

                pf = pq.ParquetFile(self.path)
                names = set(pf.schema_arrow.names)
                t = None
            if any(c not in names for c in _ALL_COLS):       # another layout: rebuild
                self.dirty = True
                return
            if t is None:
                t = pf.read(columns=list(_LOAD_COLS), use_threads=False)
        except FileNotFoundError:
            return
        except Exception:  # noqa: BLE001 - an unreadable index is rebuilt from the entries themselves
            self.dirty = True
            return
        isent = t.column("_flag_") if pf is None else pc.equal(t.column("kind"), "entry")
        et = t.filter(isent)
        pt = t.filter(pc.invert(isent)).select(list(_PART_COLS))
        self._bn = et.column("file").to_pylist()
        self._bpos = {n: i for i, n in enumerate(self._bn)}
        if len(self._bpos) < len(self._bn):           # one row per entry file: an index written otherwise is rebuilt
            self._reset_base()
            self.dirty = True
            return
        self._bsize = et.column("size").to_numpy(zero_copy_only=False)
        self._bmtime = et.column("mtime_ns").to_numpy(zero_copy_only=False)
        # NULL -> False (numpy's truth of None; Arrow's fill_null(False) makes a scalar, whose first one imports
        # pyarrow's pandas conversion: 5-10 ms of a query's first index read)
        self._bok = et.column("ok").to_numpy(zero_copy_only=False).astype(bool)
        self._bread = et.column("readable").to_numpy(zero_copy_only=False).astype(bool)
        self._bcount = et.column("counters")
        self._live = np.ones(len(self._bn), bool)
        self._bp = pt
        pos = pc.index_in(pt.column("file"), value_set=et.column("file"))
        pos = pos.to_numpy(zero_copy_only=False)           # (int32; with NULLs: float64 and NaN)
        self._bppos = np.where(np.isnan(pos), -1, pos).astype(np.int64) if pos.dtype.kind == "f" \
            else pos.astype(np.int64)
        if not integrity.settled(st):       # changed a moment ago: not kept (coarse file times)
            return
        if len(_LOADED) >= _LOADED_LIMIT:
            _LOADED.clear()
        _LOADED[key] = (self._bn, self._bpos, self._bsize, self._bmtime, self._bok, self._bread, self._bcount,
                        self._bp, self._bppos)

    def _reset_base(self) -> None:
        self._bn, self._bpos, self._bcount, self._bp = [], {}, None, None
        self._bsize = self._bmtime = np.zeros(0, np.int64)
        self._bok = self._bread = self._live = np.zeros(0, bool)
        self._bppos = np.zeros(0, np.int64)

    def load(self) -> None:
        self._read_index()
        try:
            names = set(os.listdir(self.mdir))      # the names only; those the index lacks are looked at
        except FileNotFoundError:
            names = set()
        for n in sorted(names.difference(self._bpos)):
            if n.endswith(".json") and not n.startswith("."):
                self._read_entry(n)
        gone = [i for n, i in self._bpos.items() if n not in names]
        if gone:
            self._live[gone] = False
            self._changed()

    def _listdir(self) -> set[str] | None:
        try:
            return {n for n in os.listdir(self.mdir) if n.endswith(".json") and not n.startswith(".")}
        except FileNotFoundError:
            return None

    def _changed(self) -> None:
        self._keys = {}
        self._valid_p = None
        self.dirty = True

    def _base(self, name: str) -> int:
        """Position of ``name``'s loaded row when that row is still the current one, else -1."""
        i = self._bpos.get(name, -1)
        return i if i >= 0 and self._live[i] else -1

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
        self._put(name, _entry_row(name, st, e, why, body if not why else ""), _part_rows(name, e))
        if not why:
            self._parsed[name] = e

    def _put(self, name: str, row: dict[str, Any], parts: list[tuple]) -> None:
        i = self._bpos.get(name, -1)
        if i >= 0:
            self._live[i] = False
        self._ov[name] = row
        self._ovp[name] = parts
        self._changed()

    def refresh(self) -> bool:
        """Take in entry files committed since the last look (by name only: cheap); True when any was new."""
        names = self._listdir()
        if names is None:
            return False
        have = set(self._ov) | {n for n, i in self._bpos.items() if self._live[i]}
        new = names - have
        for n in sorted(new):
            self._read_entry(n)
        gone = have - names
        for n in gone:
            self.forget(n)
        return bool(new or gone)

    def _names(self) -> list[str]:
        return [n for n, i in self._bpos.items() if self._live[i]] + list(self._ov)

    def verify(self, names: Iterable[str] | None = None) -> bool:
        """Check that entry files (all by default) are still the ones indexed (size, mtime); re-read and
        re-check those that changed.  True when any did."""
        changed = False
        for n in list(self._names() if names is None else names):
            i = self._base(n)
            if i >= 0:
                known = (int(self._bsize[i]), int(self._bmtime[i]))
            elif n in self._ov:
                known = (int(self._ov[n]["size"]), int(self._ov[n]["mtime_ns"]))
            else:
                continue
            try:
                st = os.stat(self.mdir / n)
            except FileNotFoundError:
                self.forget(n)
                changed = True
                continue
            if known != (st.st_size, st.st_mtime_ns):
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
        self._put(name, _entry_row(name, st, entry, "", json.dumps(entry, indent=1, default=str)),
                  _part_rows(name, entry))
        self._parsed[name] = entry

    def forget(self, name: str) -> None:
        i = self._bpos.get(name, -1)
        if i >= 0:
            self._live[i] = False
        self._ov.pop(name, None)
        self._ovp.pop(name, None)
        self._parsed.pop(name, None)
        self._changed()

    # -- answers -----------------------------------------------------------------------------
    def load_bodies(self) -> None:
        """Read the JSON text of the loaded entries from the index file at once (before many :meth:`entry`
        calls: ``entries()``); a row whose size or mtime differ from the loaded one is not taken."""
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        if self._bodies is not None:
            return
        self._bodies = {}
        if not self._bn:
            return
        try:
            t = pq.ParquetFile(self.path).read(columns=["kind", "file", "size", "mtime_ns", "body"], use_threads=False)
        except Exception:  # noqa: BLE001 - then every entry is read from its own file
            return
        t = t.filter(pc.equal(t.column("kind"), "entry"))
        for f, size, mt, body in zip(*(t.column(c).to_pylist() for c in ("file", "size", "mtime_ns", "body"))):
            i = self._base(f)
            if i >= 0 and body is not None and (size, mt) == (int(self._bsize[i]), int(self._bmtime[i])):
                self._bodies[f] = body

    def entry(self, name: str) -> dict[str, Any] | None:
        """The parsed entry of a sound row (None for a damaged one)."""
        e = self._parsed.get(name)
        if e is not None:
            return e
        row = self._ov.get(name)
        if row is not None:
            if not row["ok"]:
                return None
            e = json.loads(row["body"]) if row.get("body") else None
            if e is None:
                self._read_entry(name)
                return self._parsed.get(name)
            self._parsed[name] = e
            return e
        i = self._base(name)
        if i < 0 or not self._bok[i]:
            return None
        body = self._bodies.get(name) if self._bodies is not None else None
        if body is not None:
            e = json.loads(body)
            self._parsed[name] = e
            return e
        try:                     # one entry: from its own file (the same version as indexed, checked again)
            st = os.stat(self.mdir / name)
            if (st.st_size, st.st_mtime_ns) == (int(self._bsize[i]), int(self._bmtime[i])):
                e = json.loads((self.mdir / name).read_text(encoding="utf-8"))
                if not integrity.entry_problem(name, e):
                    self._parsed[name] = e
                    return e
        except (OSError, ValueError):
            pass
        self._read_entry(name)
        return self._parsed.get(name)

    def sound(self) -> list[str]:
        out = [self._bn[i] for i in np.flatnonzero(self._live & self._bok)]
        return out + [n for n, r in self._ov.items() if r["ok"]]

    def n_readable(self) -> int:
        """Number of sound entries with counter data (nothing parsed)."""
        return int(np.count_nonzero(self._live & self._bok & self._bread)) + \
            sum(1 for r in self._ov.values() if r["ok"] and r["readable"])

    def counters(self) -> set[str]:
        """Counter columns any sound entry's intervals hold."""
        import pyarrow.compute as pc

        whole = self._whole()
        hit = _COUNTERS[0] if whole else None
        if hit is not None and hit[0] is self._bcount:
            return set(hit[1])
        texts: set[str] = {str(r["counters"]) for r in self._ov.values() if r["ok"] and r["counters"]}
        if self._bcount is not None and len(self._bn):
            m = self._live & self._bok
            texts |= {t for t in pc.unique(self._bcount.filter(_mask(m))).to_pylist() if t}
        out = {c for t in texts for c in t.split(",")}
        if whole and self._bcount is not None:
            _COUNTERS[0] = (self._bcount, frozenset(out))
        return out

    def damaged(self) -> list[tuple[str, str, str | None]]:
        """(entry file name, what is wrong, source file name) of the entries that fail their checks."""
        out = [(n, str(r["why"]), r["name"]) for n, r in self._ov.items() if not r["ok"]]
        bad = np.flatnonzero(self._live & ~self._bok)
        if len(bad):
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            want = {self._bn[i] for i in bad}
            try:
                t = pq.ParquetFile(self.path).read(columns=["kind", "file", "why", "name"], use_threads=False)
                t = t.filter(pc.equal(t.column("kind"), "entry"))
                got = {f: (w, nm) for f, w, nm in zip(*(t.column(c).to_pylist() for c in ("file", "why", "name")))
                       if f in want}
            except Exception:  # noqa: BLE001 - the index went away: the reason is read again below
                got = {}
            for n in sorted(want):
                if n in got:
                    out.append((n, str(got[n][0]), got[n][1]))
                else:
                    self._read_entry(n)
                    r = self._ov.get(n)
                    if r is not None and not r["ok"]:
                        out.append((n, str(r["why"]), r["name"]))
        return out

    def _valid_parts(self) -> np.ndarray:
        """Per loaded part row: its entry's loaded row is current and sound."""
        if self._valid_p is None:
            ok = self._live & self._bok
            pos = self._bppos
            self._valid_p = (pos >= 0) & ok[np.where(pos >= 0, pos, 0)] if len(pos) else np.zeros(0, bool)
        return self._valid_p

    def _base_mask(self, table: str, cecs: set[str] | None, months: set[str] | None, sound: bool = True):
        if self._bp is None or not len(self._bppos):
            return None
        m = self._valid_parts() if sound else (self._bppos >= 0) & self._live[np.where(self._bppos >= 0,
                                                                                         self._bppos, 0)]
        m = m & self._is_in("tbl", {table})
        for col, vals in (("cec", cecs), ("month", months)):
            if vals is not None:
                m = m & self._is_in(col, vals)
        return m

    def _is_in(self, col: str, values: set[str]) -> np.ndarray:
        """Which part rows' ``col`` is one of ``values`` (NULL: none), by the column's distinct values: no Python
        value is made an Arrow one (the first such conversion of a process imports pyarrow's pandas layer, 5 ms
        of a query's first run); each column's codes are made once per loaded index file (:data:`_CODES`: kept by
        the process as the loaded index itself, not made again by every command's index)."""
        got = _CODES.get(col)
        if got is None or got[0] is not self._bp:
            enc = self._bp.column(col).combine_chunks().dictionary_encode()
            codes = enc.indices.to_numpy(zero_copy_only=False)
            codes = np.where(np.isnan(codes), -1, codes).astype(np.int64) if codes.dtype.kind == "f" \
                else codes.astype(np.int64)
            got = _CODES[col] = (self._bp, codes, enc.dictionary.to_pylist())
        _bp, codes, names = got
        hit = np.flatnonzero(np.fromiter((n in values for n in names), bool, len(names)))
        return np.isin(codes, hit) if len(hit) else np.zeros(len(codes), bool)

    def part_rows(self, table: str, cecs: Iterable[str] | None = None, months: Iterable[str] | None = None
                  ) -> list[tuple]:
        """Part rows (file, table, rel, cec, month, rows, bytes, crc32) of sound entries of ``table`` in the given
        CECs and months (all when None)."""
        cs = set(cecs) if cecs is not None else None
        ms = set(months) if months is not None else None
        whole = self._whole()
        if whole:       # the loaded index file alone: its rows as an earlier command's index of this process found
            key = (table, frozenset(cs) if cs is not None else None, frozenset(ms) if ms is not None else None)
            hit = _ROWS.get(key)
            if hit is not None and hit[0] is self._bp:
                return list(hit[1])
        out: list[tuple] = []
        m = self._base_mask(table, cs, ms)
        if m is not None and m.any():
            sel = self._bp.filter(_mask(m))
            out = list(zip(*(sel.column(c).to_pylist() for c in _PART_COLS)))
        for n, rows in self._ovp.items():
            if self._ov[n]["ok"]:
                out += [r for r in rows if r[1] == table and (cs is None or r[3] in cs) and (ms is None or r[4] in ms)]
        if whole and len(out) <= _ROWS_BUDGET:
            if len(_ROWS) >= _ROWS_LIMIT or sum(len(v[1]) for v in _ROWS.values()) + len(out) > _ROWS_BUDGET:
                _ROWS.clear()
            _ROWS[key] = (self._bp, tuple(out))
        return out

    def _whole(self) -> bool:
        """Whether this index is the loaded index file alone (no entry read, added or forgotten since): what it
        says is then what any index of this process that loaded the same file says (:data:`_KEYS`, :data:`_ROWS`)."""
        return not self._ov and self._bp is not None and bool(self._live.all())

    def keys(self, table: str) -> set[tuple[str, str]]:
        """(CEC, month) partitions of ``table`` holding parts of sound entries."""
        got = self._keys.get(table)
        whole = self._whole()
        if got is None and whole:
            hit = _KEYS.get(table)
            got = hit[1] if hit is not None and hit[0] is self._bp else None
        if got is None:
            got = set()
            m = self._base_mask(table, None, None)
            if m is not None and m.any():
                g = self._bp.filter(_mask(m)).select(["cec", "month"])
                if g.num_rows > _FEW_PARTS:      # Arrow's group-by: a fixed cost, less than a Python set of many
                    g = g.group_by(["cec", "month"]).aggregate([])
                got = set(zip(g.column("cec").to_pylist(), g.column("month").to_pylist()))
            for n, rows in self._ovp.items():
                if self._ov[n]["ok"]:
                    got |= {(r[3], r[4]) for r in rows if r[1] == table}
            self._keys[table] = got
            if whole:       # (the same loaded file's keys, for the next command's index of this process)
                _KEYS[table] = (self._bp, got)
        return set(got)

    def listed(self) -> set[str]:
        """Absolute paths of the parts listed by any entry that parses (sound or not)."""
        base = str(self.root) + os.sep
        out: set[str] = set()
        if self._bp is not None and len(self._bppos):
            m = (self._bppos >= 0) & self._live[np.where(self._bppos >= 0, self._bppos, 0)]
            out = {base + r for r in self._bp.column("rel").filter(_mask(m)).to_pylist()}
        return out | {base + row[2] for rows in self._ovp.values() for row in rows}

    # -- writing ------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the index (temporary file, then rename) when it changed; False when the directory is not
        writable (a read-only dataset keeps working from its entries).  The loaded rows that are still current
        are copied from the index file as they are (JSON text included); the others are made from ``_ov``."""
        if not self.dirty:
            return True
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        schema = _schema()
        kept = [self._bn[i] for i in np.flatnonzero(self._live)]
        old = None
        if kept:
            try:
                t = pq.ParquetFile(self.path).read(columns=list(_ALL_COLS), use_threads=False)
                keep = pa.array(kept, pa.string())
                isent = pc.equal(t.column("kind"), "entry")
                ent = t.filter(pc.and_(isent, pc.is_in(t.column("file"), value_set=keep)))
                # a row of another version of an entry (the file was rewritten by another process) is read again
                i = np.array([self._bpos[f] for f in ent.column("file").to_pylist()], np.int64)
                same = (ent.column("size").to_numpy(zero_copy_only=False) == self._bsize[i]) & \
                       (ent.column("mtime_ns").to_numpy(zero_copy_only=False) == self._bmtime[i]) if len(i) else \
                    np.zeros(0, bool)
                ent = ent.filter(pa.array(same, pa.bool_()))
                names = ent.column("file")
                parts = t.filter(pc.and_(pc.invert(isent), pc.is_in(t.column("file"), value_set=names)))
                old = pa.concat_tables([ent.select(list(_ALL_COLS)).cast(schema),
                                        parts.select(list(_ALL_COLS)).cast(schema)])
                for n in set(kept) - set(names.to_pylist()):
                    self._read_entry(n)
            except Exception:  # noqa: BLE001 - the index file is gone or unreadable: every entry from its file
                old = None
                for n in kept:
                    self._read_entry(n)
        new = self._ov_table(schema)
        table = pa.concat_tables([old, new]) if old is not None else new
        tmp = self.mdir / f".tmp-{uuid.uuid4().hex}-{INDEX_NAME}"
        try:
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass
            return False
        self.dirty = False
        return True

    def _ov_table(self, schema):
        """The rows of the entries read or added by this process (and their parts) as a table of ``schema``."""
        import pyarrow as pa

        for n, r in self._ov.items():
            if r.get("body") is None and r["ok"]:
                self._read_entry(n)
        ents = list(self._ov.values())
        parts = [row for rows in self._ovp.values() for row in rows]
        n_e, n_p = len(ents), len(parts)
        cols: dict[str, list] = {"kind": ["entry"] * n_e + ["part"] * n_p,
                                 "file": [r["file"] for r in ents] + [p[0] for p in parts]}
        for c in ("size", "mtime_ns", "ino"):
            cols[c] = [int(r[c]) for r in ents] + [-1] * n_p
        cols["sha256"] = [str(r["sha256"]) for r in ents] + [""] * n_p
        for c in ("ok", "readable"):
            cols[c] = [bool(r[c]) for r in ents] + [False] * n_p
        for c in ("why", "body", "name", "counters"):
            cols[c] = [None if r[c] is None else str(r[c]) for r in ents] + [None] * n_p
        for k, c in enumerate(("tbl", "rel", "cec", "month")):
            cols[c] = [None] * n_e + [p[k + 1] for p in parts]
        for k, c in enumerate(("rows", "bytes", "crc32")):
            cols[c] = [-1] * n_e + [int(p[k + 5]) for p in parts]
        return pa.table({c: pa.array(cols[c], schema.field(c).type) for c in _ALL_COLS}, schema=schema)


def _mask(m: np.ndarray):
    """A numpy bool array as an Arrow one, from its packed bits (``pa.array`` of a numpy array would first import
    pyarrow's pandas layer: 5 ms of a query's first run)."""
    import pyarrow as pa

    m = np.ascontiguousarray(m, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(m), [None, pa.py_buffer(np.packbits(m, bitorder="little"))])


def _duckdb_loaded() -> bool:
    """True when the process has loaded DuckDB (a query's: the index is then read by it)."""
    return "duckdb" in sys.modules


def part_info(row: tuple) -> dict[str, Any]:
    """The ``part_keys`` dict of a part row (what :func:`integrity.part_problem` checks by)."""
    out: dict[str, Any] = {"cec": row[3], "month": row[4]}
    for k, c in ((5, "rows"), (6, "bytes"), (7, "crc32")):
        if row[k] is not None and int(row[k]) >= 0:
            out[c] = int(row[k])
    return out
