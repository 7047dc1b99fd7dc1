"""The Arrow schema of every table of a fleet dataset: one type per column in every part file (issue 24).

Every engine reads the part files as they are (DuckDB, pyarrow.dataset with Hive partitioning, pandas, Polars,
Spark): so every file of a table has the same columns with the same types.

* Times (``t_start``, ``t_end`` of intervals, ``time`` and ``run_start`` of samples and partitions) are
  ``timestamp[us, tz=UTC]``: Spark reads no nanosecond timestamps, and every engine shows UTC instants.
  NestScope's own SQL works in integer nanoseconds since the epoch (the engines' views convert).
* Names are plain strings (never dictionary-encoded in one file and plain in another).
* Counters: the fixed architected list of every set (basic B0-B5, problem-state P32-P37, crypto K64-K83,
  extended E128-E287, MT-diagnostic M448-M495), NULL in a row whose file has no such counter; samples keep
  the raw ``uint64`` values, intervals the float64 deltas of the counters the formulas read.
* ``utc_offset_s`` (int32, seconds east of UTC, NULL when unknown): a sample's is the offset its record states
  (its local time of day, SMF 113 TME/DTE or z/VM's zone, minus its UTC time, rounded to the quarter hour), an
  interval's is the offset of the record ending it -- the engine's per-interval offsets
  (:mod:`app.engine.timezone`), from which ``query --tz local`` reads each system's wall clock.  Added in
  format version 3; a version-2 dataset is still read (every query but ``--tz local``, which says to re-extract)
  and never written to (its parts would mix two schemas).
* The partition columns ``cec`` and ``month`` are in the directory names only (``cec=<CEC>/month=<YYYY-MM>``,
  Hive style, strings; ``cec`` URL-quoted when it holds a character other than letters, digits and ``-_.~``):
  a column both in the files and in the path is one that pandas (dictionary) and pyarrow (string) type
  differently, so every reader takes them from the path (``hive_partitioning``; NestScope's own reads too).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.engine.counter_blocks import own_arrays

__all__ = ["FORMAT_VERSION", "READABLE_VERSIONS", "OFFSET", "record_offsets_s", "SAMPLE_COUNTERS", "schema_of", "to_table", "ns_of", "from_ns", "TS_TYPE", "write_part",
           "write_frame"]

FORMAT_VERSION = 3          # 1: bare int64 nanosecond times, dictionary columns (before issue 24); 2: no utc_offset_s
READABLE_VERSIONS = (2, 3)  # versions read (2: without UTC offsets, so no query in local time); written: 3 only
OFFSET = "utc_offset_s"
TS_TYPE = "timestamp[us, tz=UTC]"

SAMPLE_COUNTERS = ([f"B{i}" for i in range(6)] + [f"P{i}" for i in range(32, 38)] + [f"K{i}" for i in range(64, 84)]
                   + [f"E{i}" for i in range(128, 288)] + [f"M{i}" for i in range(448, 496)])

_S, _I32, _I64, _F64, _B, _T = "string", "int32", "int64", "float64", "bool", "ts"
_IDENT = {
    "samples": [("source", _S), ("offset", _I64), ("machine_type", _S), ("model", _S), ("serial", _S),
                ("lpar", _S), ("system", _S), ("os", _S), ("class", _S), ("cpu", _I32), ("core", _I32),
                ("run_start", _T), ("time", _T), ("cpu_speed", _I64), ("cfvn", _I32), ("csvn", _I32),
                ("flags", _I32), ("lost", _B), ("mt_lost", _B), ("first", _B), ("kind", _S), ("sets", _I32),
                ("sha256", _S), (OFFSET, _I32)],
    "intervals": [("source", _S), ("sha256", _S), ("machine_type", _S), ("model", _S), ("lpar", _S),
                  ("system", _S), ("os", _S), ("class", _S), ("cpu", _I32), ("core", _I32), ("cpu_speed", _F64),
                  ("cfvn", _I32), ("csvn", _I32), ("t_start", _T), ("t_end", _T), ("interval_s", _F64),
                  ("generation", _S), ("formula_set", _S), ("qbits", _I64), (OFFSET, _I32)],
    "partitions": [("source", _S), ("sha256", _S), ("lpar", _S), ("lpar_number", _I32), ("class", _S),
                   ("cpus", _I32), ("weight", _I32), ("capped", _B), ("busy_pct", _F64), ("overhead_pct", _F64),
                   ("time", _T)],
}
TABLES = tuple(_IDENT)


def ident_columns(table: str) -> list[str]:
    return [c for c, _ in _IDENT[table]]


def _pa_type(kind: str):
    import pyarrow as pa

    return {_S: pa.string(), _I32: pa.int32(), _I64: pa.int64(), _F64: pa.float64(), _B: pa.bool_(),
            _T: pa.timestamp("us", tz="UTC"), "uint64": pa.uint64()}[kind]


def schema_of(table: str, counters: Sequence[str] = ()):
    """The pyarrow schema of ``table`` with these counter columns (uint64 for samples, float64 for intervals)."""
    return _schema(table, tuple(map(tuple, _IDENT[table])), tuple(counters))


@functools.lru_cache(maxsize=64)
def _schema(table: str, ident: tuple[tuple[str, str], ...], counters: tuple[str, ...]):
    """Cached by the identity columns too: a schema follows ``_IDENT`` as it is when asked (an older format's
    columns, for one), never the one a first call saw."""
    import pyarrow as pa

    ck = "uint64" if table == "samples" else _F64
    return pa.schema([(c, _pa_type(k)) for c, k in ident] + [(c, _pa_type(ck)) for c in counters])


def write_part(tbl, path, pool=None) -> None:
    """Write one part file: zstd, page checksums, dictionary pages for the string columns only (a counter or a
    time is nearly always distinct: a dictionary of them is built, then dropped, for nothing); a column with no
    value (:func:`_options`) neither compressed nor given statistics.  ``pool``: the Arrow memory pool of the
    writer's buffers (default: Arrow's)."""
    import pyarrow.parquet as pq

    absent = [f.name for f, c in zip(tbl.schema, tbl.columns) if len(c) and c.null_count == len(c)]
    with pq.ParquetWriter(path, tbl.schema, memory_pool=pool, **_options(tbl.schema, absent)) as w:
        w.write_table(tbl)


def _options(schema, absent: Sequence[str] = (), names: Sequence[str] | None = None) -> dict:
    """The Parquet writer's options of a part of ``schema`` (:func:`write_part`).  ``absent``: columns with no
    value in any row (a counter the file's machine does not have: most of a samples part's 240 counters) are
    stored uncompressed and without statistics.  Their pages hold only the definition levels (a few bytes of
    run-length code: zstd makes them no smaller), and every column chunk's compressor and statistics cost a
    fixed 10 us or so, paid by each of these columns in each row group (one schema per table: every row group
    carries every column).  Their NULLs read back the same."""
    import pyarrow as pa

    cols = list(schema.names) if names is None else names       # (the schema's names, given: its own order)
    strings = [c for c, t in zip(cols, schema.types) if pa.types.is_string(t)]
    opts = {"compression": "zstd", "write_page_checksum": True, "use_dictionary": strings or False}
    if absent:
        gone = set(absent)
        opts["compression"] = {c: ("none" if c in gone else "zstd") for c in cols}
        opts["write_statistics"] = [c for c in cols if c not in gone] or False
    return opts


def ns_of(values) -> np.ndarray:
    """int64 nanoseconds since the epoch (NaT -> int64 min) of datetime-like values, naive (UTC) or tz-aware."""
    s = pd.Series(values)
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s.to_numpy(dtype="datetime64[ns]").view(np.int64)


def from_ns(ns: np.ndarray) -> np.ndarray:
    """int64 nanoseconds -> naive ``datetime64[ns]`` (UTC), the engine's time type."""
    return np.asarray(ns, dtype=np.int64).view("datetime64[ns]")


_NUMPY = {_I32: np.dtype(np.int32), _I64: np.dtype(np.int64), _B: np.dtype(bool)}


def _plain(a: np.ndarray, kind: str) -> bool:
    """``a`` holds values of ``kind`` as they are stored, none missing (an int or bool column): handed to Arrow
    as it is.  (Not ``a.dtype == _NUMPY.get(kind)``: NumPy reads ``dtype == None`` as ``dtype == float64``, so a
    float column with NaN, the counter of a set some CPUs of a chunk lack, passed as a uint64 one.)"""
    want = _NUMPY.get(kind)
    return want is not None and a.dtype == want


def _column(values, kind: str, pool=None):
    """``values`` as an Arrow array of ``kind``; a time's buffers (the part's columns made once) from ``pool``
    (default: Arrow's)."""
    import pyarrow as pa

    if kind == _T:
        plain = isinstance(values, np.ndarray) and values.dtype == np.dtype("datetime64[ns]")
        ns = values.view(np.int64) if plain else ns_of(values)
        nat = ns == np.iinfo(np.int64).min
        us = np.floor_divide(ns, 1000)          # times are whole microseconds (TOD -> µs); floor otherwise
        return pa.array(us, type=_pa_type(_T), mask=nat, memory_pool=pool)
    raw = values.to_numpy() if isinstance(values, pd.Series) and isinstance(values.dtype, np.dtype) else None
    if raw is not None and ((kind == "uint64" and raw.dtype == np.uint64) or (kind == _F64 and raw.dtype == np.float64)):
        # counters as they are: no copy, NaN NULL
        return pa.array(raw, type=_pa_type(kind), from_pandas=True, memory_pool=pool)
    if raw is not None and _plain(raw, kind):                # no NULL possible: as they are
        return pa.array(raw, type=_pa_type(kind), memory_pool=pool)
    s = pd.Series(values)
    if kind == _S:
        a = _categorical_strings(s, pool)
        if a is not None:
            return a
        try:
            a = pa.array(s, from_pandas=True, memory_pool=pool)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            a = pa.array(s.astype(str), from_pandas=True, memory_pool=pool)
        if pa.types.is_dictionary(a.type):
            a = a.dictionary_decode()
        return a if a.type == pa.string() else a.cast(pa.string(), memory_pool=pool)
    if kind == "uint64":
        mask = pd.isna(s).to_numpy()
        return pa.array(s.fillna(0).to_numpy(dtype=np.uint64), type=pa.uint64(), mask=mask if mask.any() else None,
                        memory_pool=pool)
    if kind == _B:
        return pa.array(s.fillna(False).to_numpy(dtype=bool), type=pa.bool_(), memory_pool=pool)
    if kind == _F64:
        return pa.array(pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan),
                        type=pa.float64(), from_pandas=True, memory_pool=pool)
    dt = np.int32 if kind == _I32 else np.int64
    mask = pd.isna(s).to_numpy()
    return pa.array(s.fillna(0).to_numpy(dtype=dt), type=_pa_type(kind), mask=mask if mask.any() else None,
                    memory_pool=pool)


def _categorical_strings(s: pd.Series, pool=None):
    """A categorical of string categories as a plain Arrow string array, each category converted once and the
    rows taken by their codes (code -1: NULL); None for anything else."""
    names = _category_names(s, pool)
    return None if names is None else _take_names(names, s.cat.codes.to_numpy(), pool)


def _category_names(s: pd.Series | pd.Categorical, pool=None):
    """The categories of a categorical (a Series or the array) of strings as an Arrow string array (from
    ``pool``, default Arrow's); None for anything else."""
    import pyarrow as pa

    if not isinstance(s.dtype, pd.CategoricalDtype):
        return None
    cats = s.categories if isinstance(s, pd.Categorical) else s.cat.categories
    if not (cats.dtype == object or pd.api.types.is_string_dtype(cats.dtype)):
        return None
    try:
        return pa.array(cats.to_numpy(dtype=object), type=pa.string(), memory_pool=pool)
    except (pa.ArrowInvalid, pa.ArrowTypeError):       # a category that is no string: the general way
        return None


def with_names(s: pd.Series, rows: np.ndarray, values) -> pd.Categorical | None:
    """``s.astype(str)`` with ``values`` (text, or missing: NULL) at the rows of the mask ``rows``, as a categorical
    of string categories (each name once: written as the same strings as that object column, without a string
    a row); None when ``s`` is not a categorical of distinct string categories without missing values, or a value
    is neither text nor missing (then the object column's way)."""
    import pyarrow as pa

    # (the names' test array from the system allocator: Arrow's default pool maps a segment of megabytes for it)
    if not isinstance(s.dtype, pd.CategoricalDtype) or _category_names(s, pa.system_memory_pool()) is None:
        return None
    codes = s.cat.codes.to_numpy()
    cats = s.cat.categories.astype(str)
    if (codes < 0).any() or not cats.is_unique:
        return None
    vals = np.asarray(values, dtype=object)
    uniq = pd.unique(vals)
    if any(not isinstance(v, str) and not pd.isna(v) for v in uniq):
        return None
    have = set(cats)
    cats = cats.append(pd.Index([v for v in uniq if isinstance(v, str) and v not in have], dtype="str"))
    codes = codes.astype(np.int32)
    codes[rows] = cats.get_indexer(vals)            # a missing value: -1, NULL
    return pd.Categorical.from_codes(codes, categories=cats)


def _take_names(names, codes: np.ndarray, pool=None):
    """The rows of category ``codes`` (-1: NULL) as an Arrow string array of ``names`` (from ``pool``, default
    Arrow's)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.take(names, pa.array(codes, mask=codes < 0, memory_pool=pool), memory_pool=pool)


def _layout(table: str, counters: Sequence[str]) -> tuple[list[str], list, list[str]]:
    """The column names, Arrow types and kinds (``_S``, ``_T``, ...) of :func:`schema_of` (``table``,
    ``counters``) as plain lists: a part's columns are planned and each row group's made by them, not by the
    schema's fields (a pyarrow Field made, and its name and type converted, for each of a samples part's 264
    columns at every use; a schema's own hash takes about 1 ms)."""
    return _layout_of(table, tuple(map(tuple, _IDENT[table])), tuple(counters))


@functools.lru_cache(maxsize=64)
def _layout_of(table: str, ident: tuple[tuple[str, str], ...], counters: tuple[str, ...]):
    schema = _schema(table, ident, counters)
    kinds = _kinds()
    types = list(schema.types)
    return list(schema.names), types, [kinds[t] for t in types]


_numpy_columns = own_arrays      # (the engine's: the frame's own column arrays, no Series made for each)


@functools.lru_cache(maxsize=1)
def _kinds() -> dict:
    return {_pa_type(k): k for k in (_S, _I32, _I64, _F64, _B, _T, "uint64")}


# about the bytes of one row group's columns (write_frame): a group's Arrow copies and the Parquet writer's buffers
# are what a part's writing adds to the chunk held (4 MiB: 33 MB at the extract's peak against 41 MB with 8 MiB,
# for about 2 % more CPU: each group costs a fixed 10-25 ms, mostly the samples table's all-NULL counter columns)
GROUP_BYTES = 4 << 20
# about the bytes one row group makes of a part whose counters are views of the frame's arrays (a samples part of
# a chunk's rows in one run; _Columns.group_rows): measured, such a group adds about 115 bytes a row to the
# extract's resident size (names, validity bitmaps, the writer's buffers of a column), so 1 MiB (about 11,000
# rows: two groups for a 20,000-row part, not four) leaves the peak as it was (21.7-22.5 MB above a warm
# process on the 200 MB file; one group a part: 24.0-24.4 MB) and saves the fixed cost of two groups a part
VIEW_GROUP_BYTES = 1 << 20
_GROUP_MIN_ROWS = 2048


class _Columns:
    """The Arrow columns of ``frame`` in the schema of (``table``, ``counters``), made for any range of rows.

    The counters and numbers (the wide part of a frame) are taken from the frame's arrays as they are and made
    a range at a time, and so are the names held as categoricals (each category converted once, a range's
    rows taken from them: a name a row is as wide in Arrow as a counter or wider, a file's SHA-256 64 bytes);
    the few other columns (times: small) are made once for the whole frame and sliced.  A samples frame's
    uint64 counters held each as one contiguous array (the SMF reader's blocks in column order) are handed to
    Arrow as they are, a range a view (no copy); counters in a block in row order (each column strided) are
    copied into one block a counter a row (one copy, no temporaries), not each one on its own behind a
    pandas Series.  Every buffer made comes from the system allocator (:meth:`table`).  An intervals frame of ``compute_intervals(lazy=True)`` has no counter columns:
    a range's deltas are made by its ``DeltaRows`` (``deltas``)."""

    def __init__(self, table: str, frame: pd.DataFrame, counters: Sequence[str], take: np.ndarray | None = None,
                 deltas=None):
        import pyarrow as pa

        # every buffer the part's columns need from the system allocator, as the writer's (write_frame): Arrow's
        # default pool (mimalloc) maps a segment of megabytes for its first small buffer (a name column's
        # categories, a group's taken names) and each part's release (_release_arrow) hands it back, so every
        # part mapped it again beside the chunk's frame (4-6 MB of a samples part's peak)
        pool = pa.system_memory_pool()
        self.schema = schema_of(table, counters)
        self.names, self.types, self.kinds = _layout(table, counters)
        self.take = None if take is None else np.asarray(take, dtype=np.int64)
        self.n = len(frame) if take is None else len(self.take)
        self.start = 0          # the part's first row of the frame when its rows are one run (no ``take``)
        if self.take is not None and _one_run(self.take):
            # (a chunk's rows of one month, in time order): a range of them is a view, as a whole frame's
            self.start, self.take = (int(self.take[0]) if self.n else 0), None
        have = set(frame.columns)
        cats: dict[str, pd.Categorical] = {}
        arrays = _numpy_columns(frame, cats)    # the frame's own arrays of its columns (no Series made)
        self.deltas = deltas            # the frame's counters made for each range of rows (DeltaRows)
        at = {c: j for j, c in enumerate(deltas.counters)} if deltas is not None else {}
        self.valued = np.zeros(len(at), bool)       # the deltas' counters with a value in a row written
        # ... told by each group's Arrow array of them (its NULL count: NaN is NULL), not by a test of every delta
        # (np.isnan of a group's rows x counters: a temporary of a byte a delta, 2.5 MB for 20,000 rows), when
        # every one of them is a column of the part (set below)
        self.planned = False
        block = {} if table != "samples" else {c: arrays[c] for c in self.names if c in arrays and is_counter(c)}
        # strided counters (a block in row order) only: a counter held as one contiguous array (the SMF reader's
        # block in column order, pandas' own layout) is handed to Arrow as it is, a group's rows a view of it
        block = {c: v for c, v in block.items() if v.dtype == np.uint64 and v.strides[0] != v.itemsize}
        self.block = block if len(block) >= 8 else {}       # views of the frame's block
        self.plan: list[tuple] = []
        self.same: dict[int, object] = {}      # a one-name column's array (table), by its place in the plan
        # columns the deltas' maker holds in place of the frame's (the intervals' qbits, marked by the plausibility
        # check as each range's deltas are made: app.dataset.adder.CheckedDeltas), read after it made a range's
        own = getattr(deltas, "own_columns", None) or {}
        for name, kind in zip(self.names, self.kinds):
            if name in self.block:
                self.plan.append(("block", name))
            elif name in own and _plain(own[name], kind):
                self.plan.append(("raw", own[name], False))
            elif name in at and name not in have:
                self.plan.append(("deltas", at[name]))
            elif name not in have:
                self.plan.append(("null", None))
            else:
                raw = arrays.get(name) if kind != _T else None
                if raw is not None and ((kind == "uint64" and raw.dtype == np.uint64)
                                        or (kind == _F64 and raw.dtype == np.float64)):
                    self.plan.append(("raw", raw, True))        # counters as they are: NaN NULL
                elif raw is not None and _plain(raw, kind):
                    self.plan.append(("raw", raw, False))       # no NULL possible: as they are
                elif kind == _S and (names := _category_names(
                        s := cats[name] if name in cats else frame[name], pool)) is not None:
                    # a name a row is as wide as a counter or wider (a file's SHA-256: 64 bytes): the names
                    # converted once, a range's rows taken from them as it is made
                    codes = s.codes if isinstance(s, pd.Categorical) else s.cat.codes.to_numpy()
                    one = len(codes) > 0 and codes[0] >= 0 and not (codes != codes[0]).any()
                    self.plan.append(("names", names, codes, one))
                else:           # a time (or a name not held as a categorical): made once (of the rows taken)
                    s = arrays.get(name) if kind == _T else None
                    if s is None or s.dtype != np.dtype("datetime64[ns]"):
                        s = frame[name]             # (a time held as the engine's: its array as it is)
                    if isinstance(s, np.ndarray):
                        s = s[self.take] if self.take is not None else s[self.start:self.start + self.n]
                    elif self.take is not None:
                        s = s.iloc[self.take]
                    elif (self.start, self.n) != (0, len(frame)):
                        s = s.iloc[self.start:self.start + self.n]
                    self.plan.append(("whole", _column(s, kind, pool)))
        self.planned = len(at) > 0 and len({p[1] for p in self.plan if p[0] == "deltas"}) == len(at)

    def absent(self) -> list[str]:
        """The columns no row has a value in: those the frame lacks (NULL in every row)."""
        return [c for c, p in zip(self.names, self.plan) if p[0] == "null"]

    def width(self) -> int:
        """Bytes a row of the frame's columns in Arrow and in the Parquet writer's buffers: 8 for each column
        the frame has (a number, a time, a string's offset)."""
        return 8 * sum(1 for p in self.plan if p[0] != "null")

    def group_rows(self) -> int:
        """Rows a row group (:func:`write_frame`): about :data:`GROUP_BYTES` of :meth:`width` when the part's
        counters are made a group at a time (deltas, a block in row order, rows gathered by ``take``); else
        (the counters views of the frame's arrays: a samples part of a chunk's rows in one run) about
        :data:`VIEW_GROUP_BYTES` of what a group makes: 1 byte a row for a column handed to Arrow as a view (at
        most a validity bitmap), 8 for names taken a group at a time and for the NULL array each type of
        absent column shares; nothing for a column made once for the part (times, one-name columns).  Each row
        group costs every one of a samples part's 264 columns a fixed 20-50 us of the writer's."""
        if self.deltas is not None or self.block or self.take is not None:
            return GROUP_BYTES // max(1, self.width())
        made = sum(1 if p[0] == "raw" else 8 if p[0] == "names" and not p[3] else 0 for p in self.plan)
        made += 8 * len({t for t, p in zip(self.types, self.plan) if p[0] == "null"})
        return VIEW_GROUP_BYTES // max(1, made)

    def table(self, a: int = 0, b: int | None = None):
        """Rows ``a`` to ``b`` as a pyarrow Table (its copies from the system allocator: :func:`write_frame`)."""
        import pyarrow as pa

        pool = pa.system_memory_pool()
        b = self.n if b is None else b
        n = b - a
        rows = slice(self.start + a, self.start + b) if self.take is None else self.take[a:b]     # of the frame
        mat = None
        if self.block:
            mat = np.empty((len(self.block), n), np.uint64)
            for i, v in enumerate(self.block.values()):
                mat[i] = v[rows]
        row = {c: i for i, c in enumerate(self.block)}
        dm = None
        if self.deltas is not None:     # (rows x counters) float64, each counter contiguous: NaN stored as NULL
            dm = self.deltas.rows(rows)
            if n and not self.planned:      # (a counter the schema does not list: every one tested here)
                self.valued |= ~np.isnan(dm).all(axis=0)
        nulls: dict = {}        # one all-NULL array per type, shared by every absent column (a samples part has
        # 240 counter columns, most of them absent: one array each took 8 bytes a row each)
        cols = []
        for j, (t, p) in enumerate(zip(self.types, self.plan)):
            if p[0] == "block":
                cols.append(pa.array(mat[row[p[1]]], type=pa.uint64(), memory_pool=pool))
            elif p[0] == "raw":
                cols.append(pa.array(p[1][rows], type=t, from_pandas=p[2], memory_pool=pool))
            elif p[0] == "deltas":
                cols.append(pa.array(dm[:, p[1]], type=t, from_pandas=True, memory_pool=pool))
                if self.planned and cols[-1].null_count < n:       # NaN is NULL: a value in some row
                    self.valued[p[1]] = True
            elif p[0] == "names" and p[3]:     # one name in every row (a file's name, its SHA-256, its CEC...):
                # the group's array a slice of one made once for the part (each group's take copied the name
                # into every row again)
                if j not in self.same or len(self.same[j]) < n:
                    self.same[j] = _take_names(p[1], np.full(n, p[2][0], p[2].dtype), pool)
                cols.append(self.same[j].slice(0, n))
            elif p[0] == "names":
                cols.append(_take_names(p[1], p[2][rows], pool))
            elif p[0] == "whole":
                cols.append(p[1] if (a, b) == (0, self.n) else p[1].slice(a, n))
            else:
                if t not in nulls:
                    nulls[t] = pa.nulls(n, type=t, memory_pool=pool)
                cols.append(nulls[t])
        # (by way of a record batch: Table.from_arrays with a schema took twice as long on 264 columns)
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(cols, schema=self.schema)], schema=self.schema)


def _one_run(take: np.ndarray) -> bool:
    """True when the row numbers ``take`` are consecutive and ascending (or none)."""
    return len(take) < 2 or (int(take[-1]) - int(take[0]) == len(take) - 1 and bool((np.diff(take) == 1).all()))


def to_table(table: str, frame: pd.DataFrame, counters: Sequence[str]):
    """``frame`` as a pyarrow Table of :func:`schema_of` (``table``, ``counters``): absent columns NULL."""
    return _Columns(table, frame, counters).table()


def write_frame(table: str, frame: pd.DataFrame, counters: Sequence[str], path, rows: int | None = None,
                take: np.ndarray | None = None, deltas=None) -> np.ndarray | None:
    """Write ``frame`` as one part file (:func:`write_part`'s options, the schema of :func:`schema_of`) a row
    group at a time: ``rows`` rows a group, by default :meth:`_Columns.group_rows` (about :data:`GROUP_BYTES`
    of the frame's columns, or :data:`VIEW_GROUP_BYTES` of what a group makes when its counters are views; at
    least 2,048 rows).  Only one group's Arrow copies (a samples frame's counters,
    transposed) and the Parquet writer's buffers of one group exist at once, not those of the whole frame.
    ``take``: only these rows of ``frame``, in this order (the part of ``frame.take(take)``, the rows gathered
    a group at a time: no copy of the frame).  ``deltas``: the frame's counters (the intervals of
    ``compute_intervals(lazy=True)``, a :class:`~app.engine.counter_blocks.DeltaRows`), made a group of rows at
    a time; then returns which of its counters have a value in a row written (else None).
    The rows, their order and the schema are those of ``write_part(to_table(table, frame, counters))``; a frame of one group is written by that call."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = _Columns(table, frame, counters, take, deltas)
    step = rows or max(_GROUP_MIN_ROWS, cols.group_rows())
    if rows is None and cols.n > step:      # groups of even size: no small last group paying a group's fixed cost
        step = -(-cols.n // -(-cols.n // step))
    valued = cols.valued if deltas is not None else None
    if cols.n <= step:
        write_part(cols.table(), path, pa.system_memory_pool())
        del cols
        _release_arrow()
        return valued
    # the writer's buffers from the system allocator too: Arrow's default pool (mimalloc) keeps the pages of
    # the largest group it served, so each part written would leave a group's worth of memory resident
    with pq.ParquetWriter(path, cols.schema, memory_pool=pa.system_memory_pool(),
                          **_options(cols.schema, cols.absent(), cols.names)) as w:
        for a in range(0, cols.n, step):
            w.write_table(cols.table(a, min(cols.n, a + step)))
    del cols
    _release_arrow()
    return valued


def _release_arrow() -> None:
    """Hand the pages a part's writing freed back to the system: those Arrow's default pool (mimalloc) kept
    (about a group's worth, 11-14 MB for a 20,000-row samples part) and the C heap's free pages the system
    pool's buffers left between live blocks (glibc returns only its top: 5-9 MB after a chunk's samples part),
    which the work after the write (the chunk's intervals) would otherwise add to
    (:func:`app.memory.release`, no garbage collection)."""
    from app import memory

    memory.release(collect=False)


def sample_counters(frame_columns: Sequence[str]) -> list[str]:
    """The samples table's counter columns: the fixed list, and (rare) any further counter of the frame."""
    from app.engine.deltas import _counter_sort_key
    from app.formats.schema import is_counter_column

    extra = [c for c in frame_columns if is_counter_column(c) and c not in set(SAMPLE_COUNTERS)]
    return SAMPLE_COUNTERS + sorted(extra, key=_counter_sort_key)


def to_engine_samples(ctx: pd.DataFrame) -> pd.DataFrame:
    """Samples read back from the dataset -> the engine's sample frame types (naive datetime64[ns] times,
    uint64 counters with 0 where NULL); a stored ``utc_offset_s`` becomes the engine's ``local_time`` (NaT where
    NULL), so the engine derives the same offsets from them as from the file."""
    for c in ("time", "run_start"):
        if c in ctx.columns:
            ctx[c] = from_ns(ns_of(ctx[c]))
    if OFFSET in ctx.columns:
        off = pd.to_numeric(ctx[OFFSET], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        t = ctx["time"].to_numpy(dtype="datetime64[ns]")
        ok = np.isfinite(off)
        shift = (np.where(ok, off, 0) * 1_000_000_000).astype(np.int64).astype("timedelta64[ns]")
        ctx["local_time"] = np.where(ok, t + shift, np.datetime64("NaT", "ns"))
        del ctx[OFFSET]
    return ctx


def record_offsets_s(samples: pd.DataFrame) -> np.ndarray:
    """Per sample the UTC offset its record states (seconds east of UTC, float64, NaN unknown): local time of day
    minus UTC time rounded to the quarter hour, the rule of :func:`app.engine.timezone.record_offsets`."""
    from app.engine.timezone import QUARTER_S

    if "local_time" not in samples.columns or not len(samples):
        return np.full(len(samples), np.nan)
    loc = samples["local_time"].to_numpy("datetime64[ns]")
    t = samples["time"].to_numpy("datetime64[ns]")
    ok = ~np.isnat(loc) & ~np.isnat(t)
    diff = (loc.view(np.int64) - t.view(np.int64)) / 1e9
    return np.where(ok, np.round(diff / QUARTER_S) * QUARTER_S, np.nan)


def duckdb_source(files_sql: str) -> str:
    """DuckDB's ``read_parquet`` of part files (a list literal or ``?``) with ``cec`` and ``month`` (strings)
    taken from the Hive directory names."""
    return (f"read_parquet({files_sql}, hive_partitioning=true, hive_types={{'cec': VARCHAR, 'month': VARCHAR}}, "
            "hive_types_autocast=false, union_by_name=true)")


def is_counter(name: str) -> bool:
    return len(name) > 1 and name[0] in "BPKEM" and name[1:].isdigit()
