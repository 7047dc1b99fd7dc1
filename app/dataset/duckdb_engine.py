"""DuckDB, in-process, over the committed part files of a dataset (:mod:`app.dataset.query`'s default engine).

One in-memory database per process (:func:`_database`), each engine a connection of its own to it: its views and
tables are temporary and its own, and the part files' footers are parsed once per process, not at every
statement that binds a view over them.

A view is defined when first used: :meth:`DuckDBEngine.run` writes a view not yet defined into its statement as a
common table expression (DuckDB binds the part files once, not once for ``CREATE VIEW`` and again for the
statement), :meth:`DuckDBEngine.sql` defines it first.  The columns of a view over part files DuckDB has listed
before (the same paths, sizes, modification and change times, inodes and devices), in this process or in an
earlier NestScope process of the same user (a line of ``view-columns.txt`` in the user's cache folder, as the
parts' CRC-32 stamps of :mod:`app.dataset.integrity`), are known without binding it (:meth:`DuckDBEngine.columns`:
binding reads every part's footer, 10-20 ms of a query's first run).  The manifest index of a query's dataset is read by the same database
(:func:`read_parquet_file`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from app.dataset.sql import DUCKDB, lit_str
from app.dataset.tables import duckdb_source

__all__ = ["DuckDBEngine", "ns_view", "read_parquet_file"]


_UNION = ", union_by_name=true"


# the part files store UTC timestamps (microseconds); NestScope's statements work in int64 nanoseconds
def ns_view(files: str, by_name: bool = True) -> str:
    """The part files' rows with nanosecond times; ``by_name=False``: the columns of the first file only (no
    schema of every file unified; :meth:`DuckDBEngine.run`)."""
    src = duckdb_source(files)
    if not by_name:
        assert _UNION in src, src
        src = src.replace(_UNION, "")
    return "SELECT * REPLACE (epoch_ns(t_start) AS t_start, epoch_ns(t_end) AS t_end) FROM " + src


_DB: tuple[int, Any] | None = None
_DB_LOCK = threading.Lock()
_SEEN: set[str] = set()         # part files whose footers the database keeps (parquet_metadata_cache)
_OPEN = [0]                     # engines open on it
SEEN_LIMIT = 1000               # footers kept: a view over more keeps none; more seen, the database is dropped
                                # once no engine is open (a window kept open for hours stays bounded)
_COLUMNS: dict[tuple, list[str]] = {}     # the files' identities -> the columns of a view over them
_COLUMNS_LIMIT = 256            # file sets whose columns are kept (a window's many selections stay bounded)
_DISK_NAME = "view-columns.txt"     # in the user's cache folder: "<key>\t<JSON list of the columns>" lines
_DISK_LIMIT = 512               # lines kept; more, the file is written again with the newest half
_DISK: dict[str, dict[str, str]] = {}     # that file (by path) as this process loaded it: key -> JSON text


def _database():
    """The process's in-memory DuckDB database (made once per process: a new one cost 70 ms a command under
    load); each engine is a connection of its own to it (a cursor: its views and tables are temporary, its
    own).  The footers of the part files of a view over at most :data:`SEEN_LIMIT` of them (146 columns each)
    are parsed once, not at every statement that binds the view (``parquet_metadata_cache``, set for the
    engine's session; DuckDB checks each file's modification time)."""
    global _DB
    with _DB_LOCK:
        if _DB is None or _DB[0] != os.getpid():        # not one inherited by a forked child
            import duckdb

            _SEEN.clear()
            _OPEN[0] = 0
            con = duckdb.connect()
            con.execute("SET TimeZone = 'UTC'")
            _DB = (os.getpid(), con)
        _OPEN[0] += 1
        return _DB[1]


def connect_aside() -> threading.Thread | None:
    """Start making the process's database (:func:`_database`) in a thread of its own when it is not made yet, so
    that a query's first run does its Python work (the formula sets) meanwhile: DuckDB's connect, 40 ms, lets other
    threads run.  The caller joins the thread before its first statement (:func:`_database` waits for it anyway:
    the lock)."""
    with _DB_LOCK:
        if _DB is not None and _DB[0] == os.getpid():
            return None

    def make() -> None:
        try:
            _database()
            _release()
        except Exception:  # noqa: BLE001 - the caller's own _database() says what is wrong
            pass
    th = threading.Thread(target=make, name="nestscope-duckdb-connect", daemon=True)
    th.start()
    return th


def _seen(con, files: Sequence[str]) -> None:
    keep = len(files) <= SEEN_LIMIT
    con.execute(f"SET SESSION parquet_metadata_cache = {'true' if keep else 'false'}")
    if keep:
        with _DB_LOCK:
            _SEEN.update(files)


def _release() -> None:
    """An engine closed: with none open and more than :data:`SEEN_LIMIT` files seen, the database (and its
    cached footers) goes; the next engine makes a new one (a window kept open for hours stays bounded)."""
    global _DB
    with _DB_LOCK:
        _OPEN[0] = max(0, _OPEN[0] - 1)
        if _DB is not None and not _OPEN[0] and len(_SEEN) > SEEN_LIMIT and _DB[0] == os.getpid():
            _DB[1].close()
            _DB = None
            _SEEN.clear()


def read_parquet_file(path: str, columns: Sequence[str], where: str = "", flag: str = "") -> tuple[Any, set[str]]:
    """``columns`` of one Parquet file as an Arrow table, read by the process's database (a query's first read of
    the manifest index then imports no ``pyarrow.parquet``: 20-40 ms), and the names of all the file's columns.
    ``where``: only the rows for which that SQL condition holds; ``flag``: a last column ``_flag_``, whether that
    SQL condition holds for the row (NULL: false), for a split by Arrow's filter without a Python value made an
    Arrow scalar (the first such conversion of a process imports pyarrow's pandas layer, 5 ms).  DuckDB's errors
    are raised (``duckdb.Error``)."""
    con = _database().cursor()
    try:
        f = lit_str(str(path))
        names = {r[0] for r in con.execute(f"SELECT name FROM parquet_schema({f})").fetchall()}
        cols = ", ".join([f'"{c}"' for c in columns] + ([f"({flag}) IS TRUE AS _flag_"] if flag else []))
        cond = f" WHERE {where}" if where else ""
        rel = con.sql(f"SELECT {cols} FROM read_parquet({f}, hive_partitioning=false){cond}")
        table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        return table, names
    finally:
        con.close()
        _release()


def _identity(files: Sequence[str]) -> tuple | None:
    """What identifies the contents of these files (path, size, modification and change times, inode and device of
    each); None when one cannot be read (the view is bound, and DuckDB says what is wrong)."""
    from app.dataset.integrity import file_identity

    out = []
    try:
        for f in files:
            out.append((str(f), *file_identity(os.stat(f))))
    except OSError:
        return None
    return tuple(out) if out else None


def _remember(key: tuple, cols: list[str]) -> None:
    with _DB_LOCK:
        if len(_COLUMNS) >= _COLUMNS_LIMIT:
            _COLUMNS.clear()
        _COLUMNS[key] = list(cols)


def _disk_file() -> str | None:
    """The user's file of view columns (:func:`app.userdirs.user_state_file`)."""
    from app.userdirs import user_state_file

    return user_state_file(_DISK_NAME)


def _disk_key(key: tuple) -> str:
    """The files' identity, the view's SQL and DuckDB's version (either changed, the columns are found again)."""
    import duckdb

    text = repr((key, ns_view("[]"), getattr(duckdb, "__version__", "")))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:40]


def _disk_lines(path: str) -> dict[str, str]:
    """The lines of the user's file of view columns, key -> JSON text (read once per process; the last line of a
    key wins); caller holds :data:`_DB_LOCK`."""
    got = _DISK.get(path)
    if got is None:
        got = {}
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    k, sep, v = line.rstrip("\n").partition("\t")
                    if sep and v:
                        got[k] = v
        except OSError:
            pass
        _DISK.clear()
        _DISK[path] = got
    return got


def _disk_columns(key: tuple) -> list[str] | None:
    """The columns an earlier process of this user found for a view over the same files (see the module
    docstring), None when none did."""
    path = _disk_file()
    if path is None:
        return None
    with _DB_LOCK:
        text = _disk_lines(path).get(_disk_key(key))
    try:
        cols = json.loads(text) if text else None
    except ValueError:
        return None
    return cols if isinstance(cols, list) and cols and all(isinstance(c, str) for c in cols) else None


def _disk_add(key: tuple, cols: list[str]) -> None:
    """Keep the columns of a view over these files for later processes: one line appended (best effort), none when a
    file changed within :data:`app.dataset.integrity.STAMP_SETTLE_S` (coarse file times)."""
    from app.dataset.integrity import STAMP_SETTLE_S

    path = _disk_file()
    if path is None or time.time_ns() - max(k[3] for k in key) < STAMP_SETTLE_S * 1e9:
        return
    from app.userdirs import append_line, write_lines

    k, v = _disk_key(key), json.dumps(cols)
    with _DB_LOCK:
        lines = _disk_lines(path)
        lines[k] = v
        if len(lines) <= _DISK_LIMIT:
            append_line(path, f"{k}\t{v}\n")
            return
        keep = list(lines.items())[-(_DISK_LIMIT // 2):]
        lines.clear()
        lines.update(keep)
        write_lines(path, (f"{a}\t{b}\n" for a, b in keep))


class DuckDBEngine:
    """In-process DuckDB over the committed interval part files."""

    dialect = DUCKDB
    arrays = False      # run() gives the result's columns as arrays (fetchnumpy()), not a frame (.df())

    def __init__(self, files: Sequence[str], window: tuple[int | None, int | None] = (None, None)):
        self.con = _database().cursor()
        self.con.execute("SET TimeZone = 'UTC'")
        self._pending: dict[str, str] = {}      # view name -> its SELECT, not defined in DuckDB yet
        self._bodies: dict[str, tuple[str, str]] = {}   # view name -> its SELECT, and without union_by_name
        self._files: dict[str, list[str]] = {}  # view name -> its part files
        if files and window != (None, None):     # defined once, over the window
            self.window_view("iv", files, *window)
        elif files:
            self.view("iv", files)

    def _define(self) -> None:
        """Define the views not defined yet (a statement of :meth:`sql` may name any of them)."""
        while self._pending:
            name, body = next(iter(self._pending.items()))
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {body}")
            del self._pending[name]

    def sql(self, text: str) -> pd.DataFrame:
        self._define()
        return self.con.execute(text).df()

    def run(self, steps: Sequence[tuple[str, str]]) -> pd.DataFrame:
        """The steps as one statement: the views they read and the steps up to the aggregation as common table
        expressions DuckDB inlines (its scan), the aggregation (a few rows; per CPU and interval ``a2``, where
        nothing is aggregated) and what follows it materialized, each planned alone.

        The views are read first without ``union_by_name`` (DuckDB then binds one file's schema, not every
        file's): the statement names the columns it reads, and DuckDB refuses it (a binder error, or a schema
        mismatch while reading) when one of them is not in the first file or not in another, so it runs only
        over files that all hold those columns, with the values ``union_by_name`` would give; refused, it runs
        again with ``union_by_name`` (a file without a column reads it as NULL).  With :attr:`arrays`: the
        columns as ``fetchnumpy()`` gives them (name -> array; a masked array where a value is NULL), not a frame."""
        import duckdb

        text = "\n".join(body for _n, body in steps)
        used = [name for name in self._bodies if re.search(rf"\b{name}\b", text)]
        for by_name in (False, True):
            ctes = [f"{name} AS ({self._bodies[name][0 if by_name else 1]})" for name in used]
            made = False
            for name, body in steps:
                if name:
                    made = made or name in ("agg", "a2")
                    ctes.append(f"{name} AS {'MATERIALIZED ' if made else ''}({body})")
                    continue
                try:
                    got = self.con.execute("WITH " + ",\n".join(ctes) + "\n" + body if ctes else body)
                    return got.fetchnumpy() if self.arrays else got.df()
                except (duckdb.BinderException, duckdb.InvalidInputException):
                    if by_name or not used:
                        raise
                    break
        return pd.DataFrame()

    def view(self, name: str, files: Sequence[str]) -> None:
        """(Re)define view ``name`` over some of the part files (partition pruning)."""
        lst = "[" + ", ".join(lit_str(f) for f in files) + "]"
        _seen(self.con, files)
        self._bodies[name] = (ns_view(lst), ns_view(lst, by_name=False))
        self._pending[name] = self._bodies[name][0]
        self._files[name] = list(files)

    def window_view(self, name: str, files: Sequence[str], lo_ns: int | None, hi_ns: int | None) -> None:
        """View ``name`` over ``files`` holding only the rows whose end lies in (lo, hi], compared on the stored
        timestamps so that DuckDB skips what lies outside while it reads (the statement's own conditions still
        select the rows exactly: this only has to keep every row they can keep)."""
        lst = "[" + ", ".join(lit_str(f) for f in files) + "]"
        _seen(self.con, files)
        conds = [f"t_end {op} TIMESTAMPTZ '{pd.Timestamp(v, unit='ns').isoformat()}+00'"
                 for op, v in ((">", lo_ns), ("<=", hi_ns)) if v is not None]
        where = " WHERE " + " AND ".join(conds) if conds else ""
        self._bodies[name] = (ns_view(lst) + where, ns_view(lst, by_name=False) + where)
        self._pending[name] = self._bodies[name][0]
        self._files[name] = list(files)

    def columns(self) -> list[str]:
        """The columns of view ``iv``: those DuckDB gave a view over the same part files before, in this process or
        an earlier one of this user (each file's path, size, modification and change time, inode and device
        unchanged), else as the catalog keeps them once the view is defined (``DESCRIBE`` would bind the view
        again)."""
        key = _identity(self._files.get("iv", ()))
        with _DB_LOCK:
            known = _COLUMNS.get(key) if key is not None else None
        if known is None and key is not None:
            known = _disk_columns(key)
            if known is not None:
                _remember(key, known)
        if known is not None:
            return list(known)
        self._define()
        got = [r[0] for r in self.con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'iv' AND "
                                              "database_name = 'temp' ORDER BY column_index").fetchall()]
        got = got or [r[0] for r in self.con.execute("DESCRIBE iv").fetchall()]
        if key is not None and got:
            _remember(key, got)
            _disk_add(key, got)
        return got

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
            _release()
