"""``query --format parquet``: a file every engine reads as it is (issue 24, "Readable by every engine").

Found by the audit of issue 24: the dataset's own tables hold ``timestamp[us, tz=UTC]``, but the parquet file
``query`` writes held its times as naive nanoseconds (``TIMESTAMP(NANOS, isAdjustedToUTC=false)``), the very type
Spark refuses (``Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false))``), and with ``--tz ZONE`` a reader could
not tell the naive UTC instant from the zone's wall clock the csv shows.  Now the times are microsecond UTC
instants, the same instants the csv states with their offsets.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from _fleet_helpers import SAMPLES
from app.dataset import Dataset

TIMES = ("period", "interval_start", "interval_end")


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = Dataset(tmp_path_factory.mktemp("qpq") / "ds", create=True)
    assert d.extract(SAMPLES[2]).status == "added"          # z16 ZOSB, 2026-11-02..04, 15-minute intervals
    return d


def _run(args, capsys) -> str:
    from app.cli import main

    assert main(args) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("tz", ["utc", "Europe/Berlin", "local"])
@pytest.mark.parametrize("by,every", [("lpar", "day"), ("cpu", None), ("interval", None)])
def test_parquet_times_are_microsecond_utc_instants(ds, tmp_path, capsys, monkeypatch, by, every, tz):
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    args = ["query", str(ds.root), "--by", by, "--tz", tz] + (["--every", every] if every else [])
    csv = pd.read_csv(io.StringIO(_run([*args, "--format", "csv"], capsys)), keep_default_na=False)
    out = tmp_path / "q.parquet"
    _run([*args, "--format", "parquet", "--out", str(out)], capsys)
    pf = pq.ParquetFile(out)
    cols = [c for c in TIMES if c in pf.schema_arrow.names]
    assert cols == [c for c in TIMES if c in csv.columns] and "interval_end" in cols
    for c in cols:
        assert str(pf.schema_arrow.field(c).type) == "timestamp[us, tz=UTC]", (c, pf.schema_arrow.field(c).type)
        lt = pf.schema.column(pf.schema_arrow.names.index(c)).logical_type
        lt = json.loads(lt.to_json())      # the Parquet logical type itself, as Spark sees it
        assert (lt["Type"], lt["isAdjustedToUTC"], lt["timeUnit"]) == ("Timestamp", True, "microseconds"), c
    got = pf.read().to_pandas()
    assert len(got) == len(csv)
    for c in cols:       # the csv states each time with its zone's offset: the same instants
        want = pd.to_datetime(csv[c], utc=True, format="ISO8601")
        assert (got[c].reset_index(drop=True) == want.astype(got[c].dtype)).all(), c
