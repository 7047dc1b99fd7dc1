"""The format of a workspace cache entry: identities and versions, the Parquet frames, findings as JSON.

Layout of an entry ``<dir>/<kind>-<key>/``: ``entry.json`` (identity and everything small: findings, record
counts, meta; written last, so an entry without it is incomplete) and one Parquet file per frame.

Nothing in an entry is served unchecked (issue 20): every Parquet page carries a CRC-32 that pyarrow verifies
while reading, the Parquet footer (schema, row groups, page offsets: not covered by the page checksums) has its
CRC-32 in ``entry.json``, the frame's column names and row count are compared with the ones stored, and
``entry.json`` itself carries a SHA-1 of its own content (``seal``).  A source file is identified by its path,
size, modification time, inode and change time: a file rewritten with the same size and its modification time
set back still has a new change time (setting the time is a change).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import zlib
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from app.findings import Finding

FORMAT = 2                         # layout of an entry; bump when it changes (2: checksums, inode and ctime)
DEFAULT_MAX_MB = 4096
_ENTRY = "entry.json"
_PARQUET = {"compression": "lz4", "index": False}


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
    return {"path": os.path.abspath(str(path)), "size": int(st.st_size), "mtime_ns": int(st.st_mtime_ns),
            "inode": int(st.st_ino), "ctime_ns": int(st.st_ctime_ns)}


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


_CHUNK_ROWS = 1 << 17      # rows a row group
# the samples' row groups: Arrow's copy of one and its encoded pages 50-60 MB on the month, not 170-180 MB (the
# samples are written before their intervals are made); the intervals' stay big: their read-back peak is lower
SAMPLE_CHUNK_ROWS = 1 << 15
_POOL_LOCK = threading.Lock()
_POOL_READS = [0, None]      # reads inside _system_pool now, the default pool to set back after the last


@contextlib.contextmanager
def _system_pool():
    """Inside: Arrow allocates from the system allocator (the default pool is one per process: it is set while any
    read is inside, and set back after the last, so that reads on several threads never leave it changed)."""
    import pyarrow as pa

    pool = pa.system_memory_pool()
    with _POOL_LOCK:
        if _POOL_READS[0] == 0:
            _POOL_READS[1] = pa.default_memory_pool()
            pa.set_memory_pool(pool)
        _POOL_READS[0] += 1
    try:
        yield pool
    finally:
        with _POOL_LOCK:
            _POOL_READS[0] -= 1
            if _POOL_READS[0] == 0:
                pa.set_memory_pool(_POOL_READS[1])
                _POOL_READS[1] = None


def _to_arrow(df: pd.DataFrame, schema: Any = None) -> Any:
    """``df`` as an Arrow table, its columns converted on this thread (``nthreads=1``).  By default pyarrow converts
    a long frame's columns on a pool of Python threads: each column's task then waits for the GIL, and the cache's
    writes run beside busy Python threads (a comparison deck's python-pptx, the window's first view).  Beside a
    thread running Python without pause the pool took 1.2 s instead of 0.09 s for the 69,132 x 94 samples of a
    30-day read, its threads taking the GIL from the busy one hundreds of times (the cold comparison deck of two
    30-day files: 0.3 s more wall time, medians of 8 interleaved runs); on this thread alone the conversion takes
    0.07 s, no more than the pool's on an idle machine.  A pool also takes no work once the
    interpreter is shutting down (the writes completed at exit failed with "cannot schedule new futures after
    interpreter shutdown"): the same table either way."""
    import pyarrow as pa

    return pa.Table.from_pandas(df, schema=schema, preserve_index=False, nthreads=1)


def _column_slicers(df: pd.DataFrame) -> list | None:
    """Per column of ``df``, a function ``(a, b, type)`` making the Arrow array of its rows ``[a, b)`` as
    :func:`_to_arrow` (``pa.Table.from_pandas``) makes it: numbers, flags and naive times from the column's numpy
    array (a view; NaN and NaT become nulls, as pandas' nulls), categoricals from their pandas array; None when a
    column is of another kind (text, objects, zoned times: :func:`_to_arrow` converts each slice).
    ``Table.from_pandas`` spends 20-60 us per column and slice on pandas' metadata and Series: a cold comparison
    deck's seven slices of 200-odd columns took 65-100 ms of the cache writer's thread, holding the interpreter lock
    beside the deck's writers (issue 23); these take 1-3 us."""
    import pyarrow as pa

    if not df.columns.is_unique or not all(isinstance(c, str) for c in df.columns):
        return None
    out = []
    for j in range(df.shape[1]):
        col = df.iloc[:, j]
        dt = col.dtype
        if isinstance(dt, pd.CategoricalDtype):
            cat = col.array
            out.append(lambda a, b, t, cat=cat: pa.array(cat[a:b], type=t, from_pandas=True))
        elif isinstance(dt, np.dtype) and (dt.kind in "biuf" or dt == np.dtype("M8[ns]")):
            arr = col.to_numpy(copy=False)
            out.append(lambda a, b, t, arr=arr: pa.array(arr[a:b], type=t, from_pandas=True))
        else:
            return None
    return out


def _frame_to_parquet(df: pd.DataFrame, path: Path, samples: bool = False) -> None:
    """Write ``df``; a big frame in slices of rows (a row group each; ``samples``: a read's counter samples, in
    :data:`SAMPLE_CHUNK_ROWS`, else :data:`_CHUNK_ROWS`), so converting it to Arrow never
    holds a second copy of all of it (the month's 368,640 x 191 samples would otherwise add about 0.5 GB to the
    peak; slices of 131,072 rows add 170-180 MB to it, of 32,768 rows 50-60 MB, for the same CPU time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = min(SAMPLE_CHUNK_ROWS, _CHUNK_ROWS) if samples else _CHUNK_ROWS
    # dictionary encoding only for the categorical columns (it makes counters 2x slower to write and 4x slower to
    # read back for no gain), no column statistics (nothing filters on them)
    opts = {"compression": _PARQUET["compression"], "write_statistics": False, "write_page_checksum": True,
            "use_dictionary": [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]}
    slices = _column_slicers(df)
    if slices is not None:        # the schema (types, pandas' metadata) from no rows: these columns' do not vary
        schema = _to_arrow(df.iloc[:0]).schema
        with pq.ParquetWriter(path, schema, **opts) as w:
            for i in range(0, max(len(df), 1), rows):
                w.write_table(pa.Table.from_arrays([part(i, i + rows, f.type) for part, f in zip(slices, schema)],
                                                   schema=schema))
    else:
        first = _to_arrow(df.iloc[:rows])
        with pq.ParquetWriter(path, first.schema, **opts) as w:
            w.write_table(first)
            for i in range(rows, len(df), rows):
                w.write_table(_to_arrow(df.iloc[i:i + rows], first.schema))
        del first
    pa.default_memory_pool().release_unused()     # hand Arrow's freed buffers back before the engine runs


def _frame_from_parquet(path: Path, columns: list[str] | None = None, footer_crc: int | None = None) -> pd.DataFrame:
    """Read a frame back, every page's checksum verified (a page that fails raises): pyarrow's table conversion
    without consolidating blocks (a quarter of the CPU time of ``pd.read_parquet`` on the month's intervals: 0.3 s
    instead of 1.0-1.6 s).  ``footer_crc``: the CRC-32 of the footer when written (:func:`footer_crc`), checked
    before anything else is read."""
    import pyarrow.parquet as pq

    if footer_crc is not None:
        got = footer_crc_of(path)
        if got != footer_crc:
            raise CacheError(f"{path.name}: footer checksum {got} instead of {footer_crc}")
    # one file: its reader, not a dataset's (pq.read_table imports and plans pyarrow.dataset: 20 ms per process);
    # without pre-buffering and into the system allocator, whose freed pages go back at once: Arrow's own pool keeps
    # the pages of the decompression (a month's intervals, 242 MB: 593 MB peak with both, 529 MB as read_table
    # read them, 432 MB so), and the frame's columns are Arrow's buffers (no copy)
    with _system_pool() as pool:
        with pq.ParquetFile(path, page_checksum_verification=True, pre_buffer=False) as pf:       # closed at once
            table = pf.read(columns=columns)
    return table.to_pandas(split_blocks=True, self_destruct=True, memory_pool=pool)


def footer_crc_of(path: Path) -> int | None:
    """CRC-32 of a Parquet file's footer (its metadata, length and closing magic); None when the file is too
    short or does not end like a Parquet file (a damaged footer length)."""
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < 12:
            return None
        fh.seek(size - 8)
        tail = fh.read(8)
        n = int.from_bytes(tail[:4], "little")
        if tail[4:] != b"PAR1" or n + 12 > size:
            return None
        fh.seek(size - 8 - n)
        return zlib.crc32(fh.read(n) + tail)


def seal(meta: dict) -> str:
    """The SHA-1 of an entry's content (``seal`` left out): stored in the entry, compared when it is read."""
    body = {k: v for k, v in meta.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, default=_plain, allow_nan=True)
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


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


class DamagedEntry(CacheError):
    """An entry that failed a check (a checksum, its row count or columns): removed, and said in a finding."""


def damaged_finding(file: str, why: str) -> Finding:
    """The info finding of a source file whose cache entry failed a check and was decoded again instead."""
    from app.findings import make_finding

    return make_finding(file, None, "info", "cache-damaged",
                        f"its workspace cache entry failed a check ({why}) and was removed",
                        "the file was decoded again: its numbers come from the file, not from the cache")



def _json_safe(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items() if k not in ("cache_key", "digest")}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return _plain(v)


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


def counters_tag(counters: Collection[str] | None) -> str:
    """The counter selection of a read as a short stable text for cache keys ("all", or a hash of the names)."""
    if counters is None:
        return "all"
    return hashlib.sha1(",".join(sorted(counters)).encode(), usedforsecurity=False).hexdigest()[:16]
