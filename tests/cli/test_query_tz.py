"""``nestscope query --tz utc|ZONE`` over a fleet dataset of a Europe/Berlin system across the daylight-saving
switch of 2026-03-29 01:00 UTC (built with the sample writers, tests/engine/tz_builders.py): the shift, the
``--every`` periods and the shown times in the zone's wall-clock time; ``--tz local`` refused (the dataset keeps
no UTC offsets).  Expectations by hand: CET = UTC+1 before 01:00 UTC on 03-29, CEST = UTC+2 from then on."""

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


def test_local_is_refused_and_a_bad_zone_is_a_usage_error(ds, capsys):
    assert main(["query", ds, "--tz", "local"]) == 2
    err = capsys.readouterr().err
    assert "query --tz local needs each system's UTC offset" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        main(["query", ds, "--tz", "Mars/Olympus"])
    assert e.value.code == 2
