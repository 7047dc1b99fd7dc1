"""Compaction, check and vacuum of a fleet dataset (``nestscope dataset compact|check|vacuum``).

Every extracted file writes its own part per CEC and month, so a monthly dump that spills its last midnight into
the next month leaves parts of a few rows.  Compaction merges the small parts of one partition (table, CEC, month)
into parts of tens of MB without touching the manifest entries (the commit records of the source files):

* the merged part is written under a temporary name and renamed into place, then a compaction record
  ``compact/<id>.json`` (the merged part, the parts it replaces, its size and CRC-32, a seal) is written
  atomically; only then are the replaced parts deleted.  A reader lists the merged part instead of the parts it
  replaces (:func:`active`), so an answer is the same before and after;
* a record is *active* when every part it replaces is still listed by a sound manifest entry; a record whose
  replaced parts are listed by nobody any more (an entry damaged, then extracted again) is left out and named in a
  finding, since the rows of that source file would otherwise count twice;
* compacting a partition again merges merged parts too: the new record replaces the union of their parts and
  the records it supersedes are removed.

:func:`check` lists what is wrong (damaged entries, missing or damaged parts, orphans of killed extracts, stale
records); :func:`vacuum` removes orphans.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from app.dataset import integrity, tables
from app.findings import Finding, make_finding

__all__ = ["active", "listed", "compact", "rewrite", "check", "vacuum", "TARGET_BYTES", "SMALL_BYTES", "AUTO_MIN_PARTS"]

TARGET_BYTES = 64 << 20       # a merged part is closed once it reaches this size on disk (tens of MB)
SMALL_BYTES = 8 << 20         # parts below this size are merged
AUTO_MIN_PARTS = 8            # extract compacts a partition it wrote to once it holds this many small parts
_DIR = "compact"


def _seal(rec: dict[str, Any]) -> str:
    body = {k: v for k, v in rec.items() if k != "seal"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _records(ds) -> list[dict[str, Any]]:
    """Sound compaction records (cached per dataset object for a second); damaged ones are named in findings."""
    now = time.monotonic()
    cache = getattr(ds, "_compact_cache", None)
    if cache is not None and now - cache[0] <= 1.0:
        return cache[1]
    out = []
    mentioned: set[str] = set()
    d = ds.root / _DIR
    names = sorted(n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")) if d.is_dir() else []
    for n in names:
        p = d / n
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            if isinstance(rec, dict) and isinstance(rec.get("part"), str):
                mentioned.add(str(ds.root / rec["part"]))
            ok = isinstance(rec, dict) and rec.get("seal") == _seal(rec) and isinstance(rec.get("replaces"), list) \
                and rec.get("table") in ("samples", "intervals", "partitions") and str(rec.get("part", "")).startswith(
                    rec.get("table", "?") + "/") and ".." not in str(rec.get("part")).split("/")
            why = "" if ok else "its content does not match its checksum"
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            rec, why = None, f"unreadable: {type(exc).__name__}"
        if why:
            ds._bad_entries[str(p)] = make_finding(str(p), None, "warning", "dataset-compact-damaged",
                                                   f"compaction record damaged ({why})",
                                                   "its merged part is left out of every query")
            continue
        ds._bad_entries.pop(str(p), None)
        rec["_file"] = str(p)
        out.append(rec)
    ds._compact_cache = (now, out)
    ds._compact_mentioned = mentioned
    return out


def active(ds, table: str, cecs: Iterable[str] | None = None, months: Iterable[str] | None = None
           ) -> list[dict[str, Any]]:
    """The compaction records of ``table`` whose merged part replaces its parts (see the module docstring), only
    of the partitions of ``cecs`` and ``months`` when given (a record merges the parts of one partition, so only
    those partitions' parts are looked up: a query's; a stale record elsewhere is named by ``dataset check``)."""
    cs = set(cecs) if cecs is not None else None
    ms = set(months) if months is not None else None
    recs = [r for r in _records(ds) if r["table"] == table and (cs is None or r.get("cec") in cs)
            and (ms is None or r.get("month") in ms)]
    if not recs:
        return []
    sound = {row[2] for row in ds.index.part_rows(table, cs, ms)}
    live = []
    for r in recs:
        missing = [p for p in r["replaces"] if p not in sound]
        if missing:
            ds._bad_entries[r["_file"]] = make_finding(
                r["_file"], None, "warning", "dataset-compact-stale",
                f"compaction record stale: {len(missing)} of the {len(r['replaces'])} parts its merged part "
                f"{r['part']} replaces are listed by no sound manifest entry",
                "its merged part is left out of every query (its rows of other source files with it); extract "
                "those files again")
            continue
        ds._bad_entries.pop(r["_file"], None)         # stale no more (its entries sound again)
        live.append(r)
    # a record superseded by a later compaction of the same parts (its files removed next) steps aside
    live.sort(key=lambda r: str(r.get("created_at", "")), reverse=True)      # the newest first among equals
    live.sort(key=lambda r: -len(r["replaces"]))
    taken: set[str] = set()
    out = []
    for r in live:
        if taken.isdisjoint(r["replaces"]):
            out.append(r)
            taken |= set(r["replaces"])
    return out


def listed(ds) -> set[str]:
    """Absolute paths of the merged parts any compaction record names, damaged or not (never orphans: a merged
    part holds the only copy of its rows)."""
    _records(ds)
    return set(getattr(ds, "_compact_mentioned", set()))


def part_finding(path: Path, why: str, rec: dict[str, Any]) -> Finding:
    return make_finding(str(path), None, "warning", "dataset-part-damaged", f"part file damaged ({why})",
                        f"left out of this answer: {int(rec.get('rows', 0)):,} rows merged from "
                        f"{len(rec['replaces'])} part(s) (CEC {rec.get('cec', '?')}, month {rec.get('month', '?')})")


def _units(ds, table: str, cec: str, month: str) -> list[tuple[str, int, list[str], dict | None]]:
    """(part path, bytes, the original parts it stands for, its record or None) of one partition as read."""
    out = []
    replaced: set[str] = set()
    for r in active(ds, table, [cec], [month]):
        if r["cec"] == cec and r["month"] == month:
            out.append((r["part"], int(r["bytes"]), list(r["replaces"]), r))
            replaced |= set(r["replaces"])
    for row in ds.index.part_rows(table, [cec], [month]):
        if row[2] not in replaced:
            out.append((row[2], int(row[6]) if row[6] is not None and row[6] >= 0 else 0, [row[2]], None))
    return out


def _merge(ds, table: str, cec: str, month: str, group: list, keep=None) -> dict[str, Any]:
    """Write the rows of the parts of ``group`` (those ``keep(table)`` marks, all by default) as one part with
    the table's schema, commit its record, remove what it replaces."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tbl = pa.concat_tables([pq.read_table(ds.root / rel, partitioning=None) for rel, _b, _rep, _r in group],
                           promote_options="default")
    if keep is not None:
        tbl = tbl.filter(pa.array(keep(tbl), type=pa.bool_()))
    key = [c for c in (("system", "class", "cpu", "t_end") if table == "intervals" else
                       ("system", "class", "cpu", "time")) if c in tbl.column_names]
    if key:
        tbl = tbl.sort_by([(c, "ascending") for c in key])
    rel = Path(table) / f"cec={quote(cec, safe='')}" / f"month={month}" / f"part-merged-{uuid.uuid4().hex[:16]}.parquet"
    path = ds.root / rel
    tmp = path.with_name(".tmp-" + path.name)
    tables.write_part(tbl, tmp)
    os.replace(tmp, path)
    df = tbl
    replaces = sorted({p for _rel, _b, rep, _r in group for p in rep})
    rec = {"table": table, "cec": cec, "month": month, "part": rel.as_posix(), "replaces": replaces,
           "rows": int(df.num_rows), "bytes": int(path.stat().st_size), "crc32": integrity.file_crc32(path),
           "created_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{time.time_ns() % 10**9:09d}Z"}
    rec["seal"] = _seal(rec)
    d = ds.root / _DIR
    d.mkdir(exist_ok=True)
    ds._atomic_write(d / f"{uuid.uuid4().hex}.json", json.dumps(rec, indent=1).encode())
    # the record is committed: the parts it replaces (and the records it supersedes) go
    for _rel, _b, rep, r in group:
        if r is not None:
            for f in (Path(r["_file"]), ds.root / r["part"]):
                try:
                    f.unlink()
                except OSError:
                    pass
        for p in rep:
            if r is None:
                try:
                    (ds.root / p).unlink()
                except OSError:
                    pass
    ds._compact_cache = None
    return rec


def compact(ds, partitions: Iterable[tuple[str, str, str]] | None = None, target_bytes: int = TARGET_BYTES,
            small_bytes: int = SMALL_BYTES, min_parts: int = 2,
            progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Merge the small parts of each partition (table, CEC, month; all by default) holding ``min_parts`` or more
    of them, into merged parts closed at ``target_bytes``; returns the compaction records written."""
    if partitions is None:
        partitions = sorted({(t, c, m) for t in ("samples", "intervals", "partitions") for c, m in ds.index.keys(t)})
    done = []
    for table, cec, month in partitions:
        small = [u for u in _units(ds, table, cec, month) if u[1] < small_bytes]
        if len(small) < max(2, min_parts):
            continue
        small.sort(key=lambda u: u[0])
        group: list = []
        size = 0
        groups = []
        for u in small:
            group.append(u)
            size += u[1]
            if size >= target_bytes:
                groups.append(group)
                group, size = [], 0
        if len(group) > 1:
            groups.append(group)
        for g in groups:
            if len(g) < 2:
                continue
            rec = _merge(ds, table, cec, month, g)
            done.append(rec)
            if progress:
                progress(f"{table}/cec={cec}/month={month}: {len(g)} parts -> {rec['part']} "
                         f"({rec['rows']:,} rows, {rec['bytes'] / 1e6:.1f} MB)")
    return done


def rewrite(ds, table: str, part: str, keep) -> dict[str, Any] | None:
    """Rewrite one part file (absolute path, as :meth:`Dataset.parts` lists it) keeping the rows ``keep(table)``
    marks: a compaction record of one part (dedup: an interval superseded by a file that filled a gap)."""
    rel = Path(part).relative_to(ds.root).as_posix()
    bits = rel.split("/")
    cec, month = unquote(bits[1].split("=", 1)[1]), bits[2].split("=", 1)[1]
    unit = next((u for u in _units(ds, table, cec, month) if u[0] == rel), None)
    if unit is None:
        return None
    return _merge(ds, table, cec, month, [unit], keep=keep)


def check(ds, min_age_s: float = 0.0) -> list[Finding]:
    """Every problem of the dataset: damaged manifest entries and compaction records, missing or damaged parts
    (each read whole for its CRC-32), orphans of killed extracts (``min_age_s`` old or more), stale records."""
    for t in ("samples", "intervals", "partitions"):
        ds.parts(t)
    out = list(ds.findings)
    orphans = [p for p in ds.orphans() if time.time() - _mtime(p) >= min_age_s]
    for p in orphans:
        out.append(make_finding(str(p), None, "info", "dataset-orphan", "orphan file: listed by no manifest entry "
                                "(left by an interrupted extract or compaction)",
                                "no query reads it; `nestscope dataset vacuum` removes it"))
    return out


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def vacuum(ds, min_age_s: float = 0.0) -> list[Path]:
    """Remove the orphans last written ``min_age_s`` ago or more; returns what went."""
    from app.dataset.integrity import remove_files

    return remove_files([p for p in ds.orphans() if time.time() - _mtime(p) >= min_age_s])
