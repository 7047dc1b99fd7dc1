"""Every engine reads every table of a dataset as it is, without options, and gets the same rows (issue 24).

DuckDB (``read_parquet('DATASET/TABLE/**/*.parquet')``), pyarrow.dataset (``partitioning="hive"``), pandas
(``pd.read_parquet(DATASET/TABLE)``) and Polars (``pl.read_parquet(DATASET/TABLE)``, when installed); Spark
reads them in test_dataset_spark.py.  The rows are compared by their identity and a counter column; times are
UTC microsecond timestamps in every engine.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _fleet_helpers import SAMPLES
from app.dataset import Dataset, DatasetError
from app.dataset.tables import TABLES

# per table: the columns that identify a row, a time column, and a value column
KEYS = {"samples": (["cec", "month", "system", "class", "cpu", "kind"], "time", "B1"),
        "intervals": (["cec", "month", "lpar", "system", "class", "cpu"], "t_end", "B1"),
        "partitions": (["cec", "month", "lpar", "class"], "time", "cpus")}


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = Dataset(tmp_path_factory.mktemp("engines") / "ds", create=True)
    for f in SAMPLES:
        assert d.extract(f).status == "added"
    return d


def canonical(df: pd.DataFrame, table: str) -> pd.DataFrame:
    """The rows as comparable plain values: key columns as text, the time as int64 µs since the epoch (UTC)."""
    keys, tcol, vcol = KEYS[table]
    t = df[tcol]
    assert isinstance(t.dtype, pd.DatetimeTZDtype) and str(t.dt.tz) == "UTC", (table, t.dtype)
    out = pd.DataFrame({k: df[k].astype(str).to_numpy() for k in keys})
    out["t_us"] = (t.dt.tz_convert("UTC").dt.tz_localize(None).astype("datetime64[us]").astype(np.int64)).to_numpy()
    out["v"] = pd.to_numeric(df[vcol]).astype(np.float64).to_numpy()
    return out.sort_values(list(out.columns), ignore_index=True)


def readers(root):
    import duckdb
    import pyarrow.dataset as pads

    def duck(t):
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        return con.execute(f"SELECT * FROM read_parquet('{root}/{t}/**/*.parquet')").df()

    out = {"duckdb": duck,
           "pyarrow.dataset": lambda t: pads.dataset(root / t, partitioning="hive").to_table().to_pandas(),
           "pandas": lambda t: pd.read_parquet(root / t)}
    try:
        import polars as pl
    except ImportError:
        pass
    else:
        out["polars"] = lambda t: pl.read_parquet(root / t).to_pandas()
    return out


@pytest.mark.parametrize("table", TABLES)
def test_every_engine_reads_every_table(ds, table):
    got = {name: canonical(read(table), table) for name, read in readers(ds.root).items()}
    base = got["duckdb"]
    # what the dataset holds: the manifest's row counts of the table's parts
    want = sum(int(k["rows"]) for e in ds.entries() for p, k in e["part_keys"].items() if p.startswith(table + "/"))
    assert len(base) == want > 0, (table, len(base), want)
    for name, frame in got.items():
        pd.testing.assert_frame_equal(frame, base, check_dtype=False, obj=f"{table} read by {name}")


def test_one_type_per_column_in_every_file(ds):
    import pyarrow.parquet as pq

    for table in TABLES:
        schemas = {str(pq.read_schema(p)) for p in ds.parts(table)}
        assert len(schemas) == 1, (table, len(schemas))
        s = pq.read_schema(ds.parts(table)[0])
        assert "dictionary" not in str(s)
        for c in s.names:
            if c in ("t_start", "t_end", "time", "run_start"):
                assert str(s.field(c).type) == "timestamp[us, tz=UTC]", (table, c)
        assert "cec" not in s.names and "month" not in s.names      # in the directory names only


def test_interval_times_match_the_source(ds):
    # after_z16_ZOSB: subtype 2 samples every 15 minutes from 2026-11-02 00:00 to 2026-11-04 00:00 UTC: the first
    # interval of each CPU ends at 00:15 and starts at 00:00 (the baseline)
    df = pd.read_parquet(ds.root / "intervals")
    z = df[(df["cec"] == "3931-123F5") & (df["lpar"] == "ZOSB")]
    assert z["t_end"].min() == pd.Timestamp("2026-11-02 00:15", tz="UTC")
    assert z["t_start"].min() == pd.Timestamp("2026-11-02 00:00", tz="UTC")


def test_extracted_at_is_iso_8601_utc(ds):
    from datetime import datetime

    for e in ds.entries():
        t = e["extracted_at"]
        assert t.endswith("Z") and datetime.fromisoformat(t.replace("Z", "+00:00")).tzinfo is not None, t


def test_old_dataset_names_its_version_and_how_to_re_extract(tmp_path):
    root = tmp_path / "old"
    (root / "manifest").mkdir(parents=True)
    (root / "nestscope-dataset.json").write_text(json.dumps({"format": "nestscope-dataset", "version": 1}))
    with pytest.raises(DatasetError) as exc:
        Dataset(root)
    msg = str(exc.value)
    assert "format version 1" in msg and "reads versions 2 and 3" in msg and "nestscope extract" in msg


def test_old_dataset_query_exits_2(tmp_path, capsys):
    from app.cli import main

    root = tmp_path / "old"
    (root / "manifest").mkdir(parents=True)
    (root / "nestscope-dataset.json").write_text(json.dumps({"format": "nestscope-dataset", "version": 1}))
    assert main(["query", str(root)]) == 2
    err = capsys.readouterr().err
    assert "format version 1" in err and "Traceback" not in err
