"""``query --every``'s coverage and partition columns, and one schema for csv, json and parquet (issue 24).

The dataset: one CEC (z16 ...123F5), LPARs ZOSA and ZOSB (2 GCPs each, 15-minute intervals, UTC), two days
2026-03-28 and 2026-03-29; ZOSB's file stops at 2026-03-29 12:00, so it misses the second half of day 2.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.dataset import Dataset  # noqa: E402

CUT = pd.Timestamp("2026-03-29 12:00")
DAY1, DAY2 = "2026-03-28T00:00:00Z", "2026-03-29T00:00:00Z"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("qcov")
    a = T.zos_samples(zone=None, days=2, system="ZOSA")
    b = T.zos_samples(zone=None, days=2, system="ZOSB")
    b = b.loc[pd.to_datetime(b["time"]) <= CUT].reset_index(drop=True)
    fa, fb = T.write_zos(d, a, name="zosa.smf"), T.write_zos(d, b, name="zosb.smf")
    ds = Dataset(d / "ds", create=True)
    for f in (fa, fb):
        assert ds.extract(f).status == "added"
    return ds, [fa, fb]


def _run(args, capsys) -> str:
    from app.cli import main

    assert main(args) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _csv(args, capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(_run([*args, "--format", "csv"], capsys)), keep_default_na=False)


def test_every_level_every_period_every_format_has_one_schema(files, capsys, tmp_path, monkeypatch):
    """csv, json and parquet carry the same columns in the same order for every --by and --every, the parquet
    columns of one type whatever the rows (coverage_pct double, coverage_note string, also when all null)."""
    from app.dataset.query import BY_CHOICES, EVERY_CHOICES

    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    ds, _ = files
    out = tmp_path / "q.parquet"
    for by in BY_CHOICES:
        for every in [None, *EVERY_CHOICES] if by != "interval" else [None]:
            args = ["query", str(ds.root), "--by", by] + (["--every", every] if every else [])
            csv_cols = list(pd.read_csv(io.StringIO(_run([*args, "--format", "csv"], capsys))).columns)
            rows = json.loads(_run([*args, "--format", "json"], capsys))["rows"]
            assert rows and all(list(r) == csv_cols for r in rows), (by, every)
            _run([*args, "--format", "parquet", "--out", str(out)], capsys)
            schema = pq.read_schema(out)
            assert schema.names == csv_cols, (by, every)
            assert ("period" in csv_cols) == (every is not None)
            if by in ("cec", "lpar", "class"):
                assert str(schema.field("coverage_pct").type) == "double"
                assert str(schema.field("coverage_note").type) == "string"
                assert pd.read_parquet(out)["coverage_pct"].notna().all(), (by, every)   # computed per period too
            if by == "lpar":                   # no partition data in SMF 113: typed nulls
                assert str(schema.field("partition_cpus").type) == "int64"
                assert str(schema.field("capped").type) == "bool"
                assert pd.read_parquet(out)["partition_cpus"].isna().all()


def test_a_day_with_an_lpar_missing_half_of_it(files, capsys, tmp_path, monkeypatch):
    """By hand: day 2's CEC row spans 2026-03-29 00:00..2026-03-30 00:00 (ZOSA's last interval ends at
    midnight, which belongs to day 2: a period holds the intervals ending in (start, end]); ZOSA covers all of
    it (1.0), ZOSB 00:00..12:00 (12 h of 24: 0.5), coverage = mean = (1.0 + 0.5) / 2 = 75 %; ZOSB ends 12 h
    before the span, more than 1.5 intervals (22.5 min), so the note names it.  Day 1: both LPARs the whole
    day: 100 %, no note.  An LPAR row covers its own span: ZOSB's two CPUs cover the same half day, 100 %."""
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    ds, _ = files
    base = ["query", str(ds.root), "--every", "day"]
    cec = _csv([*base, "--by", "cec"], capsys)
    assert list(cec["period"]) == [DAY1, DAY2]
    assert list(cec["coverage_pct"]) == [100.0, 75.0]
    assert list(cec["coverage_note"]) == [
        "", "covers 2026-03-29 00:00..2026-03-30 00:00 UTC but only partly: LPAR ZOSB 2026-03-29 00:00..2026-03-29 12:00"]
    lp = _csv([*base, "--by", "lpar"], capsys)
    assert list(zip(lp["period"], lp["lpar"], lp["coverage_pct"])) == [
        (DAY1, "ZOSA", 100.0), (DAY2, "ZOSA", 100.0), (DAY1, "ZOSB", 100.0), (DAY2, "ZOSB", 100.0)]
    # the same cells in json and parquet
    doc = json.loads(_run([*base, "--by", "cec", "--format", "json"], capsys))
    assert [r["coverage_pct"] for r in doc["rows"]] == [100.0, 75.0]
    out = tmp_path / "cec.parquet"
    _run([*base, "--by", "cec", "--format", "parquet", "--out", str(out)], capsys)
    pf = pd.read_parquet(out)
    assert list(pf["coverage_pct"]) == [100.0, 75.0]
    assert list(pf["coverage_note"]) == list(cec["coverage_note"])
    # without --every: the whole window; ZOSA 48 h of 48 (1.0), ZOSB 36 h (0.75): 87.5 %
    whole = _csv(["query", str(ds.root), "--by", "cec"], capsys)
    assert list(whole["coverage_pct"]) == [87.5]


@pytest.mark.parametrize("by", ["cec", "lpar", "class"])
def test_a_period_has_the_coverage_report_gives_for_its_window(files, by, capsys, monkeypatch):
    """``report --from <day 2> --to <day 3>`` on the two files: the coverage of query's day-2 rows."""
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    ds, paths = files
    q = _csv(["query", str(ds.root), "--by", by, "--every", "day"], capsys)
    q = q.loc[q["period"] == DAY2]
    r = _csv(["report", *map(str, paths), "--by", by, "--from", "2026-03-29T00:00Z", "--to", "2026-03-30T00:00Z"],
             capsys)
    if "summary" in r.columns:
        r = r.loc[r["summary"].astype(str).str.lower() != "true"]
    keys = {"cec": ["cec"], "lpar": ["cec", "lpar"], "class": ["cec", "lpar", "class"]}[by]
    cols = keys + ["interval_start", "interval_end", "coverage_pct", "coverage_note"]
    pd.testing.assert_frame_equal(q[cols].sort_values(keys, ignore_index=True),
                                  r[cols].sort_values(keys, ignore_index=True), check_dtype=False)
    if by == "cec":
        assert list(q["coverage_pct"]) == [75.0]


def test_periods_in_a_zone_have_their_own_coverage(files, capsys, monkeypatch):
    """--tz Europe/Berlin --every day: Berlin's 2026-03-29 (CEST from 01:00 UTC: a 23-hour day) is
    2026-03-28 23:00 .. 2026-03-29 22:00 UTC.  By hand: ZOSA covers all 23 h (1.0), ZOSB 23:00..12:00, 13 h of
    23; coverage = (1 + 13/23) / 2 = 78.26... %.  Berlin's 2026-03-28 (00:00 CET = 27th 23:00 UTC): the data
    starts 28th 00:00 UTC, both LPARs alike: 100 %."""
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    ds, _ = files
    c = _csv(["query", str(ds.root), "--by", "cec", "--every", "day", "--tz", "Europe/Berlin"], capsys)
    got = dict(zip(c["period"], c["coverage_pct"]))
    assert got["2026-03-28T00:00:00+01:00"] == 100.0
    assert got["2026-03-29T00:00:00+01:00"] == pytest.approx((1 + 13 / 23) / 2 * 100, rel=1e-12)
    note = dict(zip(c["period"], c["coverage_note"]))["2026-03-29T00:00:00+01:00"]
    assert note == ("covers 2026-03-28 23:00..2026-03-29 22:00 UTC but only partly: "
                    "LPAR ZOSB 2026-03-28 23:00..2026-03-29 12:00")


def test_partition_data_per_period_as_report(tmp_path, capsys, monkeypatch):
    """The z/VM sample's D0R16 partition data (CF01 and ZOSD known from it alone) and the z16 ZOSA sample:
    query --by lpar --every day's rows of 2026-11-02 hold what report --from/--to of that day shows."""
    from _fleet_helpers import SAMPLES

    from app.engine.partitions import COVERAGE_COLUMNS, REPORT_PARTITION_COLUMNS

    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    files = [p for p in SAMPLES if p.name.startswith(("after_VMSYS1", "after_z16_ZOSA"))]
    assert len(files) == 2
    ds = Dataset(tmp_path / "ds", create=True)
    for f in files:
        assert ds.extract(f).status == "added"
    q = _csv(["query", str(ds.root), "--by", "lpar", "--every", "day"], capsys)
    day = "2026-11-02T00:00:00Z"
    assert day in set(q["period"])
    q = q.loc[q["period"] == day]
    r = _csv(["report", *map(str, files), "--by", "lpar", "--from", "2026-11-02T00:00Z", "--to", "2026-11-03T00:00Z"],
             capsys)
    if "summary" in r.columns:
        r = r.loc[r["summary"].astype(str).str.lower() != "true"]
    cols = ["cec", "lpar"] + COVERAGE_COLUMNS + REPORT_PARTITION_COLUMNS
    # (capped: query writes true/false, report numpy's False/True; the same values)
    q = q[cols].sort_values(["cec", "lpar"], ignore_index=True).astype(str).assign(capped=lambda d: d["capped"].str.lower())
    r = r[cols].sort_values(["cec", "lpar"], ignore_index=True).astype(str).assign(capped=lambda d: d["capped"].str.lower())
    pd.testing.assert_frame_equal(q, r)
    assert set(q.loc[q["data"] == "partition data only", "lpar"]) == {"CF01", "ZOSB", "ZOSC", "ZOSD"}   # (not extracted)
