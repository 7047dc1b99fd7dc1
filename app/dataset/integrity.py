"""Checks that keep a damaged fleet dataset from lying (issue 20).

* A manifest entry carries a SHA-256 of its own content (``seal``, entries written before it have none) and is
  checked when read: JSON, shape, its file name (the source file's SHA-256), part paths inside the dataset, seal.
* A part file's size and CRC-32 are kept in its manifest entry (``part_keys[part]``: ``bytes``, ``crc32``, ``rows``)
  and checked before a query reads it (once per process for a part whose size, times and inode are unchanged);
  a part of an older entry without them is checked by reading it whole with pyarrow.  Parts are written with page
  checksums too, so pyarrow finds damage inside a page when it reads one.
* Between processes, a query (:func:`stamped_checks`) does not read again a part that a NestScope process of the
  same user found equal to its CRC-32 before and that has not changed since: each CRC-32 found equal is stamped
  with the file's size, modification and change times (ns), inode and device, in the user's cache folder
  (``NESTSCOPE_CACHE_DIR``; none with ``NESTSCOPE_CACHE=0``), one small file per partition directory
  (:func:`_stamp_file`; the dataset itself is never written by a query).  Any write to a part, a truncation, a
  ``touch``, a replacement or a copy changes its change time or inode (which no user can set back), so a
  changed part is read and checked again; a part changed within :data:`STAMP_SETTLE_S` of its check is not
  stamped (timestamps of coarse filesystems).  Damage below the filesystem (the disk itself) leaves the times
  alone: ``nestscope dataset check`` reads every part again.  No stamps on Windows (its ``st_ctime`` is the
  creation time).
* What fails is left out of the answer and said in a :class:`~app.findings.Finding` naming the manifest entry or
  part file and what the answer leaves out.
* Leftovers of killed extracts (temporary files, parts no manifest entry lists) older than
  :data:`LEFTOVER_AGE_S` are removed by the next extract and listed by a query that reads their partition
  (``nestscope dataset check`` lists them all).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.findings import Finding, make_finding

__all__ = ["LEFTOVER_AGE_S", "remove_files", "seal_entry", "entry_problem", "part_problem", "file_crc32", "manifest_finding",
           "part_finding", "leftovers", "leftover_finding", "stamped_checks", "STAMP_SETTLE_S"]

# a part is written and committed within the extract of one file; one not committed an hour after it was last
# written belongs to an extract that died (a concurrent extract's parts are younger)
LEFTOVER_AGE_S = 3600.0
_TABLES = ("samples", "intervals", "partitions")
_CHUNK = 1 << 22


def seal_entry(entry: dict[str, Any]) -> str:
    """SHA-256 of a manifest entry's content without its ``seal`` (as it reads back from JSON)."""
    body = {k: v for k, v in entry.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def entry_problem(name: str, entry: Any) -> str:
    """What is wrong with the manifest entry stored as ``manifest/<name>`` ('' when nothing is)."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    sha = name[:-5] if name.endswith(".json") else name
    if entry.get("sha256") != sha:
        return f"its sha256 {str(entry.get('sha256'))[:16]!r} is not the one of its name"
    parts, keys = entry.get("parts"), entry.get("part_keys", {})
    if not isinstance(parts, dict) or not isinstance(keys, dict) \
            or not all(isinstance(parts.get(t, []), list) for t in _TABLES):
        return "no list of part files"
    for t in _TABLES:
        for p in parts.get(t, []):
            if not isinstance(p, str) or not p.startswith(t + "/") or ".." in p.split("/") \
                    or not isinstance(keys.get(p, {}), dict):
                return f"part path {str(p)[:80]!r} is not one of the dataset's"
    if "seal" in entry and entry["seal"] != seal_entry(entry):
        return "its content does not match its checksum"
    return ""


def file_crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


_CHECKED: dict[tuple, str] = {}     # identity of a part file as checked -> its problem ('' = none)
_CHECKED_LOCK = threading.Lock()
STAMP_SETTLE_S = 2.0                # a part changed less than this before its check is not stamped


def file_identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What identifies a file's contents for a memo kept by a process: size, modification and change times, inode
    and device of its ``os.stat``."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def settled(st: os.stat_result) -> bool:
    """The file last changed at least :data:`STAMP_SETTLE_S` ago (a write within one tick of coarse file times
    could leave them as they were: a file changed a moment ago is not kept in a memo)."""
    return time.time() - st.st_ctime >= STAMP_SETTLE_S


_USE_STAMPS: contextvars.ContextVar[bool] = contextvars.ContextVar("nestscope_part_stamps", default=False)
_STAMPS: dict[str, dict[str, tuple]] = {}     # partition directory -> part file name -> stamp (as loaded)
_STAMP_LIMIT = 4096                 # partition directories whose stamps a process keeps


@contextlib.contextmanager
def stamped_checks():
    """Within: :func:`part_problem` takes a part stamped as checked by an earlier process (unchanged since) as
    sound without reading it (see the module docstring); the query's own parts() call."""
    token = _USE_STAMPS.set(True)
    try:
        yield
    finally:
        _USE_STAMPS.reset(token)


def _stamp_file(part_dir: str) -> str | None:
    """The user's stamp file of one partition directory (:func:`app.userdirs.user_state_file`)."""
    from app.userdirs import user_state_file

    key = hashlib.sha256(os.path.abspath(part_dir).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return user_state_file(f"dataset-checks-{key}.txt")


def _stamp(st: os.stat_result, crc: int) -> tuple:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, int(crc))


def _stamps(part_dir: str) -> dict[str, tuple]:
    """The stamps of one partition directory's parts (read once per process; the last line of a name wins)."""
    with _CHECKED_LOCK:
        got = _STAMPS.get(part_dir)
    if got is not None:
        return got
    got = {}
    f = _stamp_file(part_dir)
    n = 0
    if f is not None:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    n += 1
                    v = line.rstrip("\n").split("\t")
                    if len(v) == 7:
                        try:
                            got[v[0]] = tuple(int(x) for x in v[1:])
                        except ValueError:
                            continue
        except OSError:
            pass
        if n > 2 * len(got) + 64:           # mostly lines of parts that changed since: written again, shorter
            _write_stamps(f, got)
    with _CHECKED_LOCK:
        if len(_STAMPS) >= _STAMP_LIMIT:
            _STAMPS.clear()
        _STAMPS[part_dir] = got
    return got


def _line(name: str, stamp: tuple) -> str:
    return "\t".join([name, *map(str, stamp)]) + "\n"


def _write_stamps(f: str, got: dict[str, tuple]) -> None:
    from app.userdirs import write_lines

    write_lines(f, (_line(k, v) for k, v in got.items()))


def _add_stamp(path: Path, st: os.stat_result, crc: int) -> None:
    """Stamp a part just found equal to its CRC-32 (unchanged while it was read, and older than
    :data:`STAMP_SETTLE_S`): one line appended to its directory's stamp file (best effort)."""
    try:
        if _stamp(os.stat(path), crc) != _stamp(st, crc) or time.time() - st.st_ctime < STAMP_SETTLE_S:
            return
    except OSError:
        return
    part_dir, name = os.path.split(str(path))
    f = _stamp_file(part_dir)
    if f is None or "\t" in name or "\n" in name:
        return
    from app.userdirs import append_line

    _stamps(part_dir)[name] = _stamp(st, crc)
    append_line(f, _line(name, _stamp(st, crc)))


def part_problem(path: Path, info: dict[str, Any]) -> str:
    """What is wrong with a committed part file ('' when nothing is): missing, another size, another CRC-32 than
    its manifest entry recorded, or (entries without them) a Parquet file that pyarrow cannot read whole.  Within
    :func:`stamped_checks`, a part stamped as checked and unchanged since is sound without being read."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    ident = (str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, info.get("bytes"), info.get("crc32"))
    with _CHECKED_LOCK:
        known = _CHECKED.get(ident)
    if known is not None:
        return known
    why = ""
    if info.get("bytes") is not None and st.st_size != info["bytes"]:
        why = f"{st.st_size:,} bytes instead of {int(info['bytes']):,}"
    elif info.get("crc32") is not None:
        stamped = False
        if _USE_STAMPS.get():
            part_dir, name = os.path.split(str(path))
            stamped = _stamps(part_dir).get(name) == _stamp(st, info["crc32"])
        if not stamped:
            try:
                got = file_crc32(path)
            except OSError as exc:
                return f"cannot be read ({exc.strerror or exc})"
            if got != info["crc32"]:
                why = f"CRC-32 {got:08X} instead of {int(info['crc32']):08X}"
            else:
                _add_stamp(path, st, got)
    else:                  # a part of an entry written before issue 20: read it whole once (what DuckDB would)
        try:
            import pyarrow.parquet as pq

            pq.read_table(path, page_checksum_verification=True)
        except Exception as exc:  # noqa: BLE001 - any pyarrow/OS error means a part that cannot be read
            why = f"not a readable Parquet file ({type(exc).__name__}: {str(exc)[:120]})"
    with _CHECKED_LOCK:
        _CHECKED[ident] = why
    return why


def manifest_finding(path: Path, why: str, entry: Any = None) -> Finding:
    sha = path.name[:-5] if path.name.endswith(".json") else path.name
    name = entry.get("name") if isinstance(entry, dict) and isinstance(entry.get("name"), str) else None
    what = f"the source file with SHA-256 {sha}" + (f" ({name})" if name else "")
    return make_finding(str(path), None, "warning", "dataset-manifest-damaged",
                        f"manifest entry damaged ({why})",
                        f"left out of every query: {what}; `nestscope extract` that file again to re-add it",
                        sha256=sha)


def part_finding(path: Path, why: str, entry: dict[str, Any], info: dict[str, Any]) -> Finding:
    rows = info.get("rows")
    what = (f"{int(rows):,} rows" if isinstance(rows, int) else "the rows") + \
        f" of {entry.get('name', '?')} (CEC {info.get('cec', '?')}, month {info.get('month', '?')})"
    return make_finding(str(path), None, "warning", "dataset-part-damaged", f"part file damaged ({why})",
                        f"left out of this answer: {what}; remove the file's manifest entry "
                        f"(manifest/{entry.get('sha256', '?')}.json) and extract it again to re-add them",
                        sha256=entry.get("sha256"))


def leftovers(root: Path, listed: set[str], min_age_s: float = LEFTOVER_AGE_S, cecs: set[str] | None = None,
              month_ok: Callable[[str], bool] | None = None) -> list[Path]:
    """Temporary files and unlisted part files of the dataset last written over ``min_age_s`` seconds ago.

    With ``cecs`` (CEC names) or ``month_ok`` (a test of a ``YYYY-MM``), only the partition directories
    ``<table>/cec=<CEC>/month=<YYYY-MM>`` they keep are listed (a query's own: another partition's leftovers are
    not its business, and ``manifest/`` and ``compact/`` are left to ``nestscope dataset check``)."""
    now = time.time()
    if cecs is None and month_ok is None:
        dirs = [root / d for d in (*_TABLES, "manifest", "compact")]
    else:
        dirs = [m for t in _TABLES for m in _partition_dirs(root / t, cecs, month_ok)]
    out = []
    for base in dirs:
        if not base.is_dir():
            continue
        table = base.relative_to(root).parts[0]
        for dirpath, _dirs, files in os.walk(base):         # names only: a stat for the candidates alone
            for name in files:
                p = os.path.join(dirpath, name)
                temp = name.startswith(".tmp-")
                unlisted = table in _TABLES and name.endswith(".parquet") and p not in listed
                if not (temp or unlisted):
                    continue
                try:
                    if now - os.stat(p).st_mtime >= min_age_s:
                        out.append(Path(p))
                except OSError:
                    continue
    return sorted(out)


def _partition_dirs(table_dir: Path, cecs: set[str] | None, month_ok: Callable[[str], bool] | None) -> list[Path]:
    """The ``cec=<CEC>/month=<YYYY-MM>`` directories of one table that ``cecs`` and ``month_ok`` keep (a CEC's
    directory is named, not looked for, when ``cecs`` is given)."""
    from urllib.parse import quote, unquote

    if cecs is not None:
        cec_dirs = [table_dir / f"cec={quote(c, safe='')}" for c in sorted(cecs)]
    else:
        cec_dirs = [table_dir / n for n in _names(table_dir) if n.startswith("cec=")]
    out = []
    for cd in cec_dirs:
        if cecs is not None and unquote(cd.name[4:]) not in cecs:
            continue
        out += [cd / n for n in _names(cd) if n.startswith("month=") and (month_ok is None or month_ok(n[6:]))]
    # files straight under a CEC's directory are in no month: no query reads them (dataset check lists them)
    return out


def _names(d: Path) -> list[str]:
    try:
        with os.scandir(d) as it:
            return sorted(e.name for e in it)
    except OSError:
        return []


def leftover_finding(root: Path, paths: list[Path]) -> Finding:
    return make_finding(str(root), None, "info", "dataset-leftovers",
                        f"{len(paths)} leftover file(s) of interrupted extracts (e.g. "
                        f"{paths[0].relative_to(root).as_posix()})",
                        "no query reads them; the next `nestscope extract` to this dataset removes them")


def remove_files(paths) -> list[Path]:
    """Remove ``paths`` (one that cannot be removed is left); returns those removed."""
    gone = []
    for p in paths:
        try:
            p.unlink()
            gone.append(p)
        except OSError:
            continue
    return gone
