"""DuckDB, in-process, over the committed part files of a dataset (:mod:`app.dataset.query`'s default engine).

One in-memory database per process (:func:`_database`), each engine a connection of its own to it: its views and
tables are temporary and its own, and the part files' footers are parsed once per process, not at every
statement that binds a view over them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import pandas as pd

from app.dataset.sql import DUCKDB, lit_str
from app.dataset.tables import duckdb_source

__all__ = ["DuckDBEngine", "ns_view"]


# the part files store UTC timestamps (microseconds); NestScope's statements work in int64 nanoseconds
def ns_view(files: str) -> str:
    return "SELECT * REPLACE (epoch_ns(t_start) AS t_start, epoch_ns(t_end) AS t_end) FROM " + duckdb_source(files)


_DB: tuple[int, Any] | None = None
_DB_LOCK = threading.Lock()
_SEEN: set[str] = set()         # part files whose footers the database keeps (parquet_metadata_cache)
_OPEN = [0]                     # engines open on it
SEEN_LIMIT = 1000               # footers kept: a view over more keeps none; more seen, the database is dropped
                                # once no engine is open (a window kept open for hours stays bounded)


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


class DuckDBEngine:
    """In-process DuckDB over the committed interval part files."""

    dialect = DUCKDB

    def __init__(self, files: Sequence[str], window: tuple[int | None, int | None] = (None, None)):
        self.con = _database().cursor()
        self.con.execute("SET TimeZone = 'UTC'")
        if files and window != (None, None):     # defined once, over the window
            self.window_view("iv", files, *window)
        elif files:
            self.view("iv", files)

    def sql(self, text: str) -> pd.DataFrame:
        return self.con.execute(text).df()

    def run(self, steps: Sequence[tuple[str, str]]) -> pd.DataFrame:
        """The steps as one statement: those up to the aggregation as common table expressions DuckDB inlines
        (its scan), the aggregation (a few rows; per CPU and interval ``a2``, where nothing is aggregated) and
        what follows it materialized, each planned alone."""
        ctes: list[str] = []
        made = False
        for name, body in steps:
            if not name:
                return self.sql("WITH " + ",\n".join(ctes) + "\n" + body if ctes else body)
            made = made or name in ("agg", "a2")
            ctes.append(f"{name} AS {'MATERIALIZED ' if made else ''}({body})")
        return pd.DataFrame()

    def view(self, name: str, files: Sequence[str]) -> None:
        """(Re)define view ``name`` over some of the part files (partition pruning)."""
        lst = "[" + ", ".join(lit_str(f) for f in files) + "]"
        _seen(self.con, files)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS " + ns_view(lst))

    def window_view(self, name: str, files: Sequence[str], lo_ns: int | None, hi_ns: int | None) -> None:
        """View ``name`` over ``files`` holding only the rows whose end lies in (lo, hi], compared on the stored
        timestamps so that DuckDB skips what lies outside while it reads (the statement's own conditions still
        select the rows exactly: this only has to keep every row they can keep)."""
        lst = "[" + ", ".join(lit_str(f) for f in files) + "]"
        _seen(self.con, files)
        conds = [f"t_end {op} TIMESTAMPTZ '{pd.Timestamp(v, unit='ns').isoformat()}+00'"
                 for op, v in ((">", lo_ns), ("<=", hi_ns)) if v is not None]
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS " + ns_view(lst)
                         + (" WHERE " + " AND ".join(conds) if conds else ""))

    def columns(self) -> list[str]:
        """The columns of view ``iv`` as the catalog keeps them (``DESCRIBE`` would bind the view again)."""
        got = [r[0] for r in self.con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'iv' AND "
                                              "database_name = 'temp' ORDER BY column_index").fetchall()]
        return got or [r[0] for r in self.con.execute("DESCRIBE iv").fetchall()]

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
            _release()
