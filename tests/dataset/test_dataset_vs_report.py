"""``query`` on a dataset equals ``report`` on the files: every metric, every level (rtol 1e-9).

The bundled sample set is extracted file by file (so nothing is computed over all files at extract time);
report reads the same files into one Workspace.  A subtype-2 run (running totals) split over two files
extracted one after the other gives the same intervals as report on both files: the second file's first
interval is the delta against the last sample of the first file, which extract takes from the dataset.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from _fleet_helpers import SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine import Workspace
from app.engine.metrics import metric_ids
from app.engine.shift import apply_shift, make_shift, shifted_metrics
from app.formats import read_bytes, read_file


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet") / "ds"
    ds = Dataset(root, create=True)
    for f in SAMPLES:
        assert ds.extract(f).status == "added"
    ws = Workspace()
    ws.add_all([read_file(f) for f in SAMPLES])
    return ds, ws


@pytest.mark.parametrize("by", ["cec", "lpar", "class", "interval", "cpu"])
def test_query_equals_report(fleet, by):
    ds, ws = fleet
    a = run_query(ds, QuerySpec(by=by))
    b = ws.metrics(by=by)
    assert len(b) > 0
    assert_same(a, b, by, metric_ids(ws.formula_sets))


def test_window_equals_report_window(fleet):
    ds, ws = fleet
    start, end = "2026-11-02T06:00", "2026-11-03T06:00"
    a = run_query(ds, QuerySpec(by="lpar", start=start, end=end))
    b = ws.metrics(by="lpar", start=start, end=end)
    assert_same(a, b, "lpar", metric_ids(ws.formula_sets))


def test_every_day_equals_report_per_day(fleet):
    # one row per LPAR and day = report --from <day> --to <day+1> (intervals ending in (start, end])
    ds, ws = fleet
    a = run_query(ds, QuerySpec(by="lpar", every="day", where="cec = '3931-123F5'"))
    assert sorted(pd.Timestamp(p) for p in a["period"].unique()) == [pd.Timestamp("2026-11-02"), pd.Timestamp("2026-11-03")]
    day = a[a["period"] == "2026-11-03"].drop(columns="period")
    b = ws.metrics(by="lpar", start="2026-11-03T00:00", end="2026-11-04T00:00")
    b = b[b["cec"] == "3931-123F5"]
    assert_same(day, b, "lpar", metric_ids(ws.formula_sets))


def test_split_running_totals_match_report(tmp_path):
    from app.formats.smf113_writer import encode_samples, frame_rdw

    s = read_file(SAMPLES[2]).samples           # after_z16_ZOSB: subtype 2 (running totals) only
    assert set(s["kind"].astype(str)) == {"absolute"}
    mid = s["time"].sort_values().iloc[len(s) // 2]
    paths = []
    for name, part in (("a", s[s["time"] <= mid]), ("b", s[s["time"] > mid])):
        p = tmp_path / f"zosb_{name}.rdw"
        p.write_bytes(frame_rdw(encode_samples(part.reset_index(drop=True), 2)))
        paths.append(p)
    ds = Dataset(tmp_path / "ds", create=True)
    for p in paths:
        assert ds.extract(p).status == "added"
    ws = Workspace()
    ws.add_all([read_bytes(p.read_bytes(), str(p)) for p in paths])
    # 8 CPUs x 193 records: 192 intervals each, the one at the file boundary included
    assert len(ws.intervals) == 8 * 192
    assert sum(e["intervals"] for e in ds.entries()) == 8 * 192
    for by in ("lpar", "interval"):
        assert_same(run_query(ds, QuerySpec(by=by)), ws.metrics(by=by), by, metric_ids(ws.formula_sets))


def test_split_running_totals_extracted_in_reverse_order(tmp_path):
    # the later half first: its first interval needs the earlier half, which extracting the earlier half adds
    from app.formats.smf113_writer import encode_samples, frame_rdw

    s = read_file(SAMPLES[2]).samples
    mid = s["time"].sort_values().iloc[len(s) // 2]
    paths = []
    for name, part in (("a", s[s["time"] <= mid]), ("b", s[s["time"] > mid])):
        p = tmp_path / f"zosb_{name}.rdw"
        p.write_bytes(frame_rdw(encode_samples(part.reset_index(drop=True), 2)))
        paths.append(p)
    ds = Dataset(tmp_path / "ds", create=True)
    for p in reversed(paths):
        assert ds.extract(p).status == "added"
    ws = Workspace()
    ws.add_all([read_bytes(p.read_bytes(), str(p)) for p in paths])
    assert sum(e["intervals"] for e in ds.entries()) == 8 * 192 == len(ws.intervals)
    for by in ("lpar", "cpu"):
        assert_same(run_query(ds, QuerySpec(by=by)), ws.metrics(by=by), by, metric_ids(ws.formula_sets))
    # extracting a third time changes nothing (the boundary interval exists once)
    assert ds.extract(paths[0]).status == "present"


def test_formulas_override_applies_at_query_time(fleet, tmp_path):
    # --formulas: a new z15 version name and RNI coefficients for z16 -> the query shows what report shows
    import json

    from app.engine.catalog import load_formula_sets

    f = tmp_path / "site.json"
    f.write_text(json.dumps({"z16": {"version": "z16 / site 2026-12",
                                     "metrics": {"RNI": {"expr": "2.0*(0.4*L3P+1.0*L4LP+2.0*L4RP+5.0*MEMP)/100",
                                                         "status": "unconfirmed"}}}}))
    ds, _ = fleet
    sets = load_formula_sets(f)
    ws = Workspace(formula_file=f)
    ws.add_all([read_file(p) for p in SAMPLES])
    a = run_query(ds, QuerySpec(by="lpar", formula_sets=sets))
    b = ws.metrics(by="lpar")
    assert set(a.loc[a["generation"] == "z16", "formula_set"]) == {"z16 / site 2026-12"}
    assert a.loc[a["generation"] == "z16", "RNI"].notna().all()
    assert_same(a, b, "lpar", metric_ids(sets))


# ----------------------------------------------------------------------------- --hours/--days: one rule
@pytest.mark.parametrize("hours, days", [("08:30-17:00", None), ("22-06", "mon-fri"), ("08-17", "tue"),
                                         ("08-12,13-17", "mon-fri")])
def test_shift_equals_report_shift(fleet, hours, days):
    # query --hours/--days selects the intervals report --hours/--days selects (the engine's midpoint rule)
    ds, ws = fleet
    shift = make_shift(hours, days)
    ids = metric_ids(ws.formula_sets)
    for by in ("lpar", "interval"):
        a = run_query(ds, QuerySpec(by=by, shift=shift))
        b = shifted_metrics(ws, by=by, shift=shift)
        assert len(b) > 0
        assert_same(a, b, by, ids)
    # per CPU and interval: one row per kept interval row of the engine
    assert len(run_query(ds, QuerySpec(by="cpu", shift=shift))) == len(apply_shift(ws.intervals, shift))


def _hourly_at_quarter_past(tmp_path):
    """after_z16_ZOSB's samples at minute 15 only (running totals): 60-minute intervals ending at hh:15."""
    from app.formats.smf113_writer import encode_samples, frame_rdw

    s = read_file(SAMPLES[2]).samples
    part = s[s["time"].dt.minute == 15].reset_index(drop=True)
    p = tmp_path / "zosb_hourly_15.rdw"
    p.write_bytes(frame_rdw(encode_samples(part, 2)))
    return p


def test_hourly_intervals_where_the_two_rules_differed(tmp_path, monkeypatch, capsys):
    import json

    from app.cli import main

    p = _hourly_at_quarter_past(tmp_path)
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(p).status == "added"
    ws = Workspace()
    ws.add_all([read_bytes(p.read_bytes(), str(p))])
    # samples at 00:15 .. 23:15 on 2026-11-02 (Mon) and 2026-11-03 (Tue): 48 per CPU, 47 intervals, 8 CPUs
    assert len(ws.intervals) == 8 * 47
    shift = make_shift("08-17", None)
    # midpoint rule: 08:15-09:15 (midpoint 08:45) .. 16:15-17:15 (16:45) are in, 07:15-08:15 (07:45) and
    # 17:15-18:15 (17:45) out: ends 09:15 .. 17:15, 9 a day, 18 in all (query's former rule, the hour of the
    # end, took ends 08:15 .. 16:15)
    want = [pd.Timestamp(f"2026-11-0{d} {h:02d}:15") for d in (2, 3) for h in range(9, 18)]
    ids = metric_ids(ws.formula_sets)
    a = run_query(ds, QuerySpec(by="interval", shift=shift))
    assert sorted(set(a["interval_end"])) == want
    assert_same(a, shifted_metrics(ws, by="interval", shift=shift), "interval", ids)
    assert len(run_query(ds, QuerySpec(by="cpu", shift=shift))) == 8 * 18 == len(apply_shift(ws.intervals, shift))
    lp = run_query(ds, QuerySpec(by="lpar", shift=shift))
    assert_same(lp, shifted_metrics(ws, by="lpar", shift=shift), "lpar", ids)
    assert list(lp["interval_start"]) == [pd.Timestamp("2026-11-02 08:15")]     # start of the first kept interval
    assert list(lp["interval_end"]) == [pd.Timestamp("2026-11-03 17:15")]
    # the two commands, as an analyst runs them: the same rows and values
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    docs = {}
    for cmd in (["query", str(ds.root)], ["report", str(p)]):
        assert main([*cmd, "--by", "lpar", "--hours", "08-17", "--days", "mon-tue", "--format", "json"]) == 0
        docs[cmd[0]] = [r for r in json.loads(capsys.readouterr().out)["rows"] if not r.get("summary")]
    q, r = docs["query"], docs["report"]
    assert len(q) == len(r) == 1
    for c in ("lpar", "interval_start", "interval_end", "n_cpus"):
        assert q[0][c] == r[0][c], c
    assert q[0]["interval_end"].startswith("2026-11-03T17:15")
    for c in ids:
        if r[0].get(c) is None:
            assert q[0].get(c) is None, c
        else:
            assert q[0][c] == pytest.approx(r[0][c], rel=1e-9), c


def test_query_bad_hours_is_a_usage_error(tmp_path, capsys):
    from app.cli import main

    ds = Dataset(tmp_path / "ds", create=True)
    assert main(["query", str(ds.root), "--hours", "8-25"]) == 2
    err = capsys.readouterr().err
    assert "nestscope query: error: --hours: '25' is not an hour" in err and "Traceback" not in err
    assert main(["query", str(ds.root), "--hours", "08-12,13"]) == 2
    assert "--hours: '13' is not a range" in capsys.readouterr().err
    assert main(["query", str(ds.root), "--days", "weekdays"]) == 2
    assert "--days: 'weekdays'" in capsys.readouterr().err


@pytest.mark.parametrize("by", ["cec", "lpar", "class"])
def test_partition_data_and_coverage_as_report(fleet, by, monkeypatch, capsys):
    # issue 24: query had nine columns always empty; they now hold what report shows, and the LPARs known only
    # from z/VM's partition data (CF01, ZOSD in the sample) are rows of --by lpar
    import io

    from app.cli import main
    from app.engine.partitions import COVERAGE_COLUMNS, REPORT_PARTITION_COLUMNS

    ds, _ws = fleet
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    out = {}
    for cmd in (["query", str(ds.root)], ["report", *map(str, SAMPLES)]):
        assert main([*cmd, "--by", by, "--format", "csv"]) == 0
        out[cmd[0]] = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    q, r = out["query"], out["report"]
    keys = {"cec": ["cec"], "lpar": ["cec", "lpar"], "class": ["cec", "lpar", "class"]}[by]
    cols = COVERAGE_COLUMNS + (REPORT_PARTITION_COLUMNS if by == "lpar" else [])
    q = q[keys + cols].sort_values(keys, ignore_index=True)
    r = r[keys + cols].sort_values(keys, ignore_index=True)
    if by == "lpar":        # a count: query writes 2, report 2.0 when a row has none (the same number)
        q["partition_cpus"] = pd.to_numeric(q["partition_cpus"])
        r["partition_cpus"] = pd.to_numeric(r["partition_cpus"])
    pd.testing.assert_frame_equal(q, r, check_dtype=False)
    counted = q["data"] != "partition data only" if by == "lpar" else q.index >= 0
    assert (q.loc[counted, "coverage_pct"].astype(str) != "").all()       # every row with counters has one
    if by == "lpar":
        only = set(q.loc[q["data"] == "partition data only", "lpar"])
        assert only == {"CF01", "ZOSD"}
        # z/VM D0R16 of the sample: ZOSD has 2 CPs, weight 100, capped
        zosd = q[q["lpar"] == "ZOSD"].iloc[0]
        assert (str(zosd["processors"]), str(zosd["weights"]), str(zosd["capped"]).lower()) == ("CP 2", "CP 100", "true")
        # the same rows as JSON (a partition-data-only row has no generation: JSON's header once failed on it)
        assert main(["query", str(ds.root), "--by", by, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert {r["lpar"] for r in doc["rows"] if r["data"] == "partition data only"} == {"CF01", "ZOSD"}
        full = out["query"]
        assert set(doc["meta"]["formula_sets"]) == set(full.loc[full["data"] != "partition data only", "generation"])
