"""``nestscope extract`` and ``nestscope query`` end to end (exit codes, formats, filters)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "resources" / "samples"
FILES = [S / "after_z16_ZOSB_smf113.vbs.gz", S / "before_z15_ZOSB_smf113.rdw.gz"]


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli") / "ds"
    assert main(["extract", *map(str, FILES), "--to", str(root), "--quiet"]) == 0
    return root


def test_extract_again_and_unreadable(ds, capsys):
    assert main(["extract", str(FILES[0]), "--to", str(ds)]) == 0
    assert "[present]" in capsys.readouterr().out
    assert main(["extract", str(S / "broken" / "report.pdf"), "--to", str(ds)]) == 3       # nothing readable
    assert "without counter data" in capsys.readouterr().out


def test_query_csv_lpar(ds, capsys):
    assert main(["query", str(ds), "--by", "lpar", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["cec"], r["lpar"]) for r in rows] == [("3931-123F5", "ZOSB"), ("8561-45A12", "ZOSB")]
    assert rows[0]["n_cpus"] == "8" and rows[0]["generation"] == "z16" and rows[1]["generation"] == "z15"


def test_query_hours_days_every(ds, capsys):
    # --hours 8-9 (report's rule): 15-minute intervals whose midpoint is in [08:00, 09:00) UTC -> ends 08:15
    # (midpoint 08:07:30), 08:30, 08:45, 09:00 (08:52:30)
    assert main(["query", str(ds), "--by", "interval", "--hours", "8-9", "--where", "cec = '3931-123F5'",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ends = sorted({r["interval_end"][11:16] for r in doc["rows"]})
    assert ends == ["08:15", "08:30", "08:45", "09:00"]
    # 2026-11-02 is a Monday, 2026-11-03 a Tuesday: --days tue keeps one day of z16 data
    assert main(["query", str(ds), "--by", "cec", "--every", "day", "--days", "tue", "--format", "csv",
                 "--where", "cec = '3931-123F5'"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["period"] for r in rows] == ["2026-11-03T00:00:00Z"]


def test_query_table_and_parquet(ds, tmp_path, capsys):
    assert main(["query", str(ds), "--by", "cec", "--every", "month"]) == 0
    out = capsys.readouterr().out
    assert "== month from 2026-10-01T00:00:00Z" in out and "== month from 2026-11-01T00:00:00Z" in out
    pq = tmp_path / "r.parquet"
    assert main(["query", str(ds), "--by", "class", "--format", "parquet", "--out", str(pq)]) == 0
    df = pd.read_parquet(pq)
    assert len(df) == 4 and set(df["class"]) == {"GCP", "zIIP"}


def test_query_usage_errors(ds, tmp_path, capsys):
    assert main(["query", str(ds), "--where", "lpar = 'x' UNION SELECT 1"]) == 2
    assert "unexpected 'UNION'" in capsys.readouterr().err
    assert main(["query", str(ds), "--by", "interval", "--every", "day"]) == 2
    assert main(["query", str(ds), "--format", "parquet"]) == 2
    assert main(["query", str(tmp_path / "nothing")]) == 2
    assert "does not exist" in capsys.readouterr().err
