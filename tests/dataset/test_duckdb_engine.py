"""The DuckDB engine's shared database (app/dataset/duckdb_engine.py): one per process, a cursor per engine whose
views are its own, and the cache of part-file footers bounded (issue 24, query speed)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from app.dataset import duckdb_engine as D


def _parts(root, n: int) -> list[str]:
    out = []
    for k in range(n):
        d = root / "intervals" / "cec=X" / "month=2026-01"
        d.mkdir(parents=True, exist_ok=True)
        t = pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(minutes=15 * (k + 1))
        tab = pa.table({"t_start": pa.array([t - pd.Timedelta(minutes=15)], pa.timestamp("us", tz="UTC")),
                        "t_end": pa.array([t], pa.timestamp("us", tz="UTC")), "cpu": pa.array([k], pa.int32())})
        pq.write_table(tab, d / f"part-{k}.parquet")
        out.append(str(d / f"part-{k}.parquet"))
    return out


def _cached(eng) -> bool:
    return bool(eng.con.execute("SELECT current_setting('parquet_metadata_cache')").fetchone()[0])


def test_engines_share_a_database_but_not_their_views(tmp_path, monkeypatch):
    files = _parts(tmp_path, 3)
    a, b = D.DuckDBEngine(files[:1]), D.DuckDBEngine(files)
    try:
        assert a.sql("SELECT COUNT(*) AS n FROM iv")["n"].iloc[0] == 1      # each its own view iv
        assert b.sql("SELECT COUNT(*) AS n FROM iv")["n"].iloc[0] == 3
        assert b.sql("SELECT t_end FROM iv ORDER BY t_end")["t_end"].iloc[0] == \
            pd.Timestamp("2026-01-01 00:15", tz="UTC").value                   # nanoseconds, as the statements use
        assert a.columns() == b.columns() == ["t_start", "t_end", "cpu", "cec", "month"]
    finally:
        a.close()
        b.close()


def test_footer_cache_is_bounded(tmp_path, monkeypatch):
    files = _parts(tmp_path, 3)
    monkeypatch.setattr(D, "SEEN_LIMIT", 2)
    D._database()                       # the process's database (its count of open engines balanced below)
    D._release()
    small = D.DuckDBEngine(files[:2])
    assert _cached(small)               # two parts: their footers kept
    big = D.DuckDBEngine(files)
    assert not _cached(big) and _cached(small)      # three: none kept (a session setting of that engine)
    db = D._DB
    small.close()
    assert D._DB is db                  # an engine still open: the database stays
    small.close()                       # closing twice changes nothing
    big.close()
    assert D._DB is db                  # two footers seen, not more than the limit: kept
    third = D.DuckDBEngine(files[2:])
    third.close()
    assert D._DB is None                # three seen and none open: dropped, its cache with it
    again = D.DuckDBEngine(files[:1])
    try:
        assert again.sql("SELECT COUNT(*) AS n FROM iv")["n"].iloc[0] == 1 and D._DB is not None
    finally:
        again.close()


class _Spy:
    """The engine's cursor, the statements it is given kept."""

    def __init__(self, con):
        self.con, self.texts = con, []

    def execute(self, text, *a):
        self.texts.append(text)
        return self.con.execute(text, *a)

    def __getattr__(self, name):
        return getattr(self.con, name)


def test_parts_of_different_columns_are_read_by_name(tmp_path):
    """A statement first reads the parts without ``union_by_name`` (DuckDB binds the first file's schema only);
    over parts that do not all hold the columns it reads, DuckDB refuses that (whichever part comes first) and
    the statement runs by name: a part without a column reads it as NULL.  Over parts of one schema it runs
    once, without ``union_by_name``."""
    import itertools

    d = tmp_path / "intervals" / "cec=X" / "month=2026-01"
    d.mkdir(parents=True)
    t = pd.Timestamp("2026-01-01 00:15", tz="UTC")
    ts = pa.timestamp("us", tz="UTC")

    def part(name: str, **cols) -> str:
        tab = pa.table({"t_start": pa.array([t - pd.Timedelta(minutes=15)], ts), "t_end": pa.array([t], ts),
                        **{c: pa.array([v]) for c, v in cols.items()}})
        pq.write_table(tab, d / name)
        return str(d / name)

    a = part("a.parquet", cpu=1, B0=10.0)
    b = part("b.parquet", cpu=2)                       # no B0
    c = part("c.parquet", cpu=3, B0=5.0, E128=1.0)     # one more column
    stmt = [("", "SELECT SUM(B0) AS s, COUNT(B0) AS n, SUM(cpu) AS c, SUM(E128) AS e, COUNT(E128) AS ne FROM iv")]
    for files in itertools.permutations([a, b, c]):
        eng = D.DuckDBEngine(list(files))
        try:
            got = eng.run(stmt).iloc[0].tolist()
        finally:
            eng.close()
        assert got == [15.0, 2, 6, 1.0, 1], files      # B0: 10 + 5 over 2 parts; E128 of c alone
    same = [a, part("a2.parquet", cpu=4, B0=2.5)]
    eng = D.DuckDBEngine(same)
    eng.con = spy = _Spy(eng.con)
    try:
        got = eng.run([("", "SELECT SUM(B0) AS s, SUM(cpu) AS c FROM iv")]).iloc[0].tolist()
    finally:
        eng.close()
    assert got == [12.5, 5]
    assert len(spy.texts) == 1 and "union_by_name" not in spy.texts[0] and "read_parquet" in spy.texts[0]


def test_columns_known_for_unchanged_parts_only(tmp_path):
    """The columns of a view over part files seen before in this process are not bound again; a part rewritten
    since (another size, times or inode) is bound again and its new columns found."""
    files = _parts(tmp_path, 2)
    first = D.DuckDBEngine(files)
    try:
        assert first.columns() == ["t_start", "t_end", "cpu", "cec", "month"]
    finally:
        first.close()
    again = D.DuckDBEngine(files)
    again.con = spy = _Spy(again.con)
    try:
        assert again.columns() == ["t_start", "t_end", "cpu", "cec", "month"] and spy.texts == []
    finally:
        again.close()
    _rewrite_with_b0(files[1])
    changed = D.DuckDBEngine(files)
    try:
        assert changed.columns() == ["t_start", "t_end", "cpu", "B0", "cec", "month"]
    finally:
        changed.close()



def _rewrite_with_b0(path: str) -> None:
    """The part at ``path`` replaced by one row with a column B0 more: another inode (and size)."""
    import os

    t = pd.Timestamp("2026-01-01 00:15", tz="UTC")
    tab = pa.table({"t_start": pa.array([t], pa.timestamp("us", tz="UTC")),
                    "t_end": pa.array([t], pa.timestamp("us", tz="UTC")), "cpu": pa.array([0], pa.int32()),
                    "B0": pa.array([1.0])})
    pq.write_table(tab, path + ".new")
    os.replace(path + ".new", path)

def _new_process():
    """What a new process knows: no view columns kept in memory, the user's file not read yet."""
    D._COLUMNS.clear()
    D._DISK.clear()


def test_columns_known_from_an_earlier_process_for_unchanged_parts_only(tmp_path, monkeypatch):
    """The columns of a view over part files an earlier process bound are read from the user's cache folder (no
    statement); a part rewritten since (another inode and size) is bound again; nothing is kept for a part changed
    within the settle time, nor with the cache off."""
    from app.dataset import integrity

    cache = tmp_path / "cache"
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(cache))
    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 0.0)
    files = _parts(tmp_path / "ds", 2)
    want = ["t_start", "t_end", "cpu", "cec", "month"]
    _new_process()
    first = D.DuckDBEngine(files)
    try:
        assert first.columns() == want
    finally:
        first.close()
    assert len((cache / D._DISK_NAME).read_text().splitlines()) == 1
    _new_process()
    again = D.DuckDBEngine(files)
    again.con = spy = _Spy(again.con)
    try:
        assert again.columns() == want and spy.texts == []
        assert again.sql("SELECT COUNT(*) AS n FROM iv")["n"].iloc[0] == 2        # the view still defined to read
    finally:
        again.close()
    _rewrite_with_b0(files[1])
    _new_process()
    changed = D.DuckDBEngine(files)
    try:
        assert changed.columns() == ["t_start", "t_end", "cpu", "B0", "cec", "month"]
    finally:
        changed.close()
    assert len((cache / D._DISK_NAME).read_text().splitlines()) == 2
    # a damaged line is not believed: the view is bound
    (cache / D._DISK_NAME).write_text("".join(f"{ln.split(chr(9))[0]}\t[1, \n" for ln in
                                              (cache / D._DISK_NAME).read_text().splitlines()))
    _new_process()
    eng = D.DuckDBEngine(files)
    eng.con = spy = _Spy(eng.con)
    try:
        assert eng.columns() == ["t_start", "t_end", "cpu", "B0", "cec", "month"] and spy.texts
    finally:
        eng.close()
    # parts changed a moment ago (within the settle time), or the cache off: nothing kept
    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 3600.0)
    (cache / D._DISK_NAME).unlink()
    _bound_and_not_kept(files[:1], want, cache)
    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 0.0)
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    _bound_and_not_kept(files[:1], want, cache)


def _bound_and_not_kept(files, want, cache) -> None:
    """In a new process the view over ``files`` has the columns ``want`` and nothing is written to the cache."""
    _new_process()
    eng = D.DuckDBEngine(files)
    try:
        assert eng.columns() == want
    finally:
        eng.close()
    assert not (cache / D._DISK_NAME).exists()
