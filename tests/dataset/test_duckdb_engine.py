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
