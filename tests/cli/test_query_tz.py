"""``nestscope query --tz utc|ZONE`` over a fleet dataset of a Europe/Berlin system across the daylight-saving
switch of 2026-03-29 01:00 UTC (built with the sample writers, tests/engine/tz_builders.py): the shift, the
``--every`` periods and the shown times in the zone's wall-clock time; ``--tz local`` in the system's own wall clock
from the intervals' ``utc_offset_s`` (dataset format 3; a version-2 dataset says to re-extract).  Expectations by
hand: CET = UTC+1 before 01:00 UTC on 03-29, CEST = UTC+2 from then on."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.cli import main  # noqa: E402

WIN = ["--from", "2026-03-29T00:00Z", "--to", "2026-03-29T02:00Z"]
BERLIN = ["--tz", "Europe/Berlin"]


@pytest.fixture(scope="module")
def ds(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzquery")
    f = T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf")          # interval ends 03-28 00:15 .. 03-30 00:00 UTC
    root = tmp / "ds"
    assert main(["extract", str(f), "--to", str(root), "--quiet"]) == 0
    return str(root)


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_shown_times_in_the_zone(ds, capsys):
    assert main(["query", ds, "--by", "interval", "--format", "csv", *WIN, *BERLIN]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [r["interval_end"] for r in rows] == [
        "2026-03-29T01:15:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T01:45:00+01:00",
        "2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00", "2026-03-29T03:30:00+02:00",
        "2026-03-29T03:45:00+02:00", "2026-03-29T04:00:00+02:00"]
    assert rows[0]["interval_start"] == "2026-03-29T01:00:00+01:00"
    assert main(["query", ds, "--by", "interval", "--format", "csv", *WIN, "--tz", "utc"]) == 0
    assert [r["interval_end"] for r in _csv(capsys.readouterr().out)][:4] == [
        "2026-03-29T00:15:00Z", "2026-03-29T00:30:00Z", "2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z"]


def test_hours_in_the_zone_match_report(ds, capsys):
    # 08-17 Berlin time: on 03-28 (CET) midpoints in [07:00, 16:00) UTC, on 03-29 (CEST) [06:00, 15:00): 36 + 36
    assert main(["query", ds, "--by", "interval", "--hours", "08-17", "--format", "csv", *BERLIN]) == 0
    rows = _csv(capsys.readouterr().out)
    assert len(rows) == 72
    assert rows[0]["interval_end"] == "2026-03-28T08:15:00+01:00"
    assert rows[-1]["interval_end"] == "2026-03-29T17:00:00+02:00"
    # the first local row is the interval ending 07:15 UTC, the same counters
    assert main(["query", ds, "--by", "interval", "--format", "csv", "--tz", "utc", "--from", "2026-03-28T07:00Z",
                 "--to", "2026-03-28T07:15Z"]) == 0
    (one,) = _csv(capsys.readouterr().out)
    assert one["interval_end"] == "2026-03-28T07:15:00Z" and one["CPI"] == rows[0]["CPI"]
    assert main(["query", ds, "--by", "interval", "--hours", "08-17", "--format", "csv", "--tz", "utc"]) == 0
    utc = _csv(capsys.readouterr().out)
    assert len(utc) == 72 and utc[0]["interval_end"] == "2026-03-28T08:15:00Z"


def test_every_day_is_a_local_day(ds, capsys):
    # local days: 03-28 (ends 00:15 .. 23:00 UTC), 03-29 (23 hours: ends 23:15 .. 22:00 UTC), 03-30 (ends 22:15
    # 03-29 .. 00:00 03-30 UTC = 00:15 .. 02:00 CEST)
    assert main(["query", ds, "--by", "lpar", "--every", "day", "--format", "csv", *BERLIN]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [(r["period"], r["interval_start"], r["interval_end"]) for r in rows] == [
        ("2026-03-28T00:00:00+01:00", "2026-03-28T01:00:00+01:00", "2026-03-29T00:00:00+01:00"),
        ("2026-03-29T00:00:00+01:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"),
        ("2026-03-30T00:00:00+02:00", "2026-03-30T00:00:00+02:00", "2026-03-30T02:00:00+02:00")]
    assert main(["query", ds, "--by", "lpar", "--every", "day", "--format", "json", *BERLIN]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["tz"] == "Europe/Berlin" and doc["rows"][2]["period"] == "2026-03-30T00:00:00+02:00"


def test_table_names_the_zone(ds, capsys):
    assert main(["query", ds, "--by", "interval", *WIN, *BERLIN]) == 0
    out = capsys.readouterr().out
    assert "times Europe/Berlin" in out.splitlines()[0]
    assert "2026-03-29 03:00" in out and "2026-03-29 00:15" not in out         # wall-clock times in the table
    assert main(["query", ds, "--by", "lpar", "--every", "day", *BERLIN]) == 0
    assert "== day from 2026-03-30T00:00:00+02:00" in capsys.readouterr().out


def test_a_bad_zone_is_a_usage_error(ds, capsys):
    with pytest.raises(SystemExit) as e:
        main(["query", ds, "--tz", "Mars/Olympus"])
    assert e.value.code == 2


LOCAL = ["--tz", "local"]


def test_local_shown_times_across_the_switch(ds, capsys):
    # the record ending at 01:00 UTC states CEST: 01:15, 01:30, 01:45 CET, then 03:00 .. 04:00 CEST
    assert main(["query", ds, "--by", "interval", "--format", "csv", *WIN, *LOCAL]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [r["interval_end"] for r in rows] == [
        "2026-03-29T01:15:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T01:45:00+01:00",
        "2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00", "2026-03-29T03:30:00+02:00",
        "2026-03-29T03:45:00+02:00", "2026-03-29T04:00:00+02:00"]
    # each start in the offset in force then: the interval ending 03:00 CEST began at 01:45 CET
    assert [r["interval_start"] for r in rows[:5]] == [
        "2026-03-29T01:00:00+01:00", "2026-03-29T01:15:00+01:00", "2026-03-29T01:30:00+01:00",
        "2026-03-29T01:45:00+01:00", "2026-03-29T03:00:00+02:00"]
    assert main(["query", ds, "--by", "lpar", *WIN, *LOCAL]) == 0
    out = capsys.readouterr().out
    assert "times local, UTC+01:00/UTC+02:00" in out.splitlines()[0]


def test_local_hours_on_both_sides_of_the_switch(ds, capsys):
    # 08-17 on the system's wall clock: 03-28 (CET) midpoints in [07:00, 16:00) UTC = interval ends 07:15 .. 16:00
    # UTC, 36 intervals; 03-29 (CEST) [06:00, 15:00) UTC = ends 06:15 .. 15:00 UTC, 36 more: 72 (one GCP row each)
    assert main(["query", ds, "--by", "interval", "--hours", "08-17", "--format", "csv", *LOCAL]) == 0
    rows = _csv(capsys.readouterr().out)
    assert len(rows) == 72
    ends = [r["interval_end"] for r in rows]
    assert ends[0] == "2026-03-28T08:15:00+01:00" and ends[35] == "2026-03-28T17:00:00+01:00"
    assert ends[36] == "2026-03-29T08:15:00+02:00" and ends[-1] == "2026-03-29T17:00:00+02:00"
    # the first row after the switch is the interval ending 06:15 UTC (in UTC hours it would be 3 rows later)
    assert main(["query", ds, "--by", "interval", "--format", "csv", "--tz", "utc", "--from", "2026-03-29T06:00Z",
                 "--to", "2026-03-29T06:15Z"]) == 0
    (one,) = _csv(capsys.readouterr().out)
    assert one["CPI"] == rows[36]["CPI"]
    # the whole-window row of the same shift: both days' 72 intervals of 2 CPUs
    assert main(["query", ds, "--by", "lpar", "--hours", "08-17", "--format", "json", *LOCAL]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["rows"]
    assert doc["meta"]["tz"] == "local"
    assert (row["interval_start"], row["interval_end"]) == ("2026-03-28T08:00:00+01:00", "2026-03-29T17:00:00+02:00")


def test_local_hours_equal_report(ds, capsys):
    """query --tz local and report --tz local select the same intervals and give the same numbers."""
    src = Path(ds).parent / "berlin.smf"
    assert main(["report", str(src), "--by", "interval", "--hours", "22-06", "--days", "sat,sun", "--format",
                 "csv", *LOCAL]) == 0
    want = _csv(capsys.readouterr().out)
    assert main(["query", ds, "--by", "interval", "--hours", "22-06", "--days", "sat,sun", "--format", "csv",
                 *LOCAL]) == 0
    got = _csv(capsys.readouterr().out)
    # 03-28 (Sat) and 03-29 (Sun), nights around the switch: Sat 01:00-06:00 CET (the data begins at 01:00 CET:
    # 20 intervals), Sat 22:00 - Sun 06:00 (8 wall-clock hours, 7 of them real: 28), Sun 22:00-24:00 CEST (8);
    # Monday 00:00-02:00 CEST is not a chosen day: 56 intervals
    assert len(got) == len(want) == 56
    for g, w in zip(got, want):
        assert (g["interval_start"], g["interval_end"]) == (w["interval_start"], w["interval_end"])
        assert float(g["CPI"]) == pytest.approx(float(w["CPI"]), rel=1e-12)


def test_local_every_day_is_the_systems_day(ds, capsys):
    # the same local days as Europe/Berlin: the system's offsets are Berlin's
    assert main(["query", ds, "--by", "lpar", "--every", "day", "--format", "csv", *LOCAL]) == 0
    rows = _csv(capsys.readouterr().out)
    assert [(r["period"], r["interval_start"], r["interval_end"]) for r in rows] == [
        ("2026-03-28T00:00:00+01:00", "2026-03-28T01:00:00+01:00", "2026-03-29T00:00:00+01:00"),
        ("2026-03-29T00:00:00+01:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"),
        ("2026-03-30T00:00:00+02:00", "2026-03-30T00:00:00+02:00", "2026-03-30T02:00:00+02:00")]


def test_a_version_2_dataset_is_read_but_not_in_local_time(tmp_path, capsys, monkeypatch):
    """A dataset written before utc_offset_s (format 2): queries in UTC or a zone run, --tz local exits 2 saying
    why, and extract refuses to add parts of another schema to it."""
    from app.dataset import store, tables

    f = T.write_zos(tmp_path, T.zos_samples(days=1), name="b.smf")
    root = tmp_path / "v2"
    with monkeypatch.context() as m:            # this NestScope as it wrote format 2: no offset columns
        m.setattr(store, "FORMAT", {"format": "nestscope-dataset", "version": 2})
        m.setattr(tables, "_IDENT", {t: [c for c in cols if c[0] != tables.OFFSET] for t, cols in tables._IDENT.items()})
        assert main(["extract", str(f), "--to", str(root), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", str(root), "--by", "lpar", "--format", "csv", "--tz", "utc"]) == 0
    assert len(_csv(capsys.readouterr().out)) == 1
    assert main(["query", str(root), "--by", "lpar", *LOCAL]) == 2
    err = capsys.readouterr().err
    assert "keep no UTC offsets (dataset format version 2)" in err and "re-extract" in err
    assert "Traceback" not in err
    assert main(["extract", str(f), "--to", str(root)]) == 2
    err = capsys.readouterr().err
    assert "dataset format version 2" in err and "nestscope extract FILE... --to NEWDIR" in err
