"""``--tz local|utc|ZONE`` (issue 26) on report, compare, export and info, over a Europe/Berlin system across the
daylight-saving switch of 2026-03-29 01:00 UTC (files built with the sample writers, tests/engine/tz_builders.py)."""

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

WIN = ["--from", "2026-03-29T00:30Z", "--to", "2026-03-29T01:30Z"]


@pytest.fixture(scope="module")
def berlin(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzcli")
    return str(T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf"))


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_report_csv_local_is_the_default(berlin, capsys):
    assert main(["report", berlin, "--by", "interval", "--format", "csv", *WIN]) == 0
    rows = _csv(capsys.readouterr().out)
    # intervals ending 00:45, 01:00, 01:15, 01:30 UTC: CET before the switch, CEST from the 01:00 record on
    assert [(r["interval_start"], r["interval_end"]) for r in rows] == [
        ("2026-03-29T01:30:00+01:00", "2026-03-29T01:45:00+01:00"),
        ("2026-03-29T01:45:00+01:00", "2026-03-29T03:00:00+02:00"),
        ("2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00"),
        ("2026-03-29T03:15:00+02:00", "2026-03-29T03:30:00+02:00")]


def test_report_utc_and_a_zone(berlin, capsys):
    assert main(["report", berlin, "--by", "interval", "--format", "csv", "--tz", "utc", *WIN]) == 0
    assert [r["interval_end"] for r in _csv(capsys.readouterr().out)] == [
        "2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z", "2026-03-29T01:30:00Z"]
    assert main(["report", berlin, "--by", "interval", "--format", "csv", "--tz", "America/New_York", *WIN]) == 0
    assert [r["interval_end"] for r in _csv(capsys.readouterr().out)][0] == "2026-03-28T20:45:00-04:00"


def test_report_table_and_json_name_the_zone(berlin, capsys):
    assert main(["report", berlin, "--by", "interval", *WIN]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "NestScope report, level interval, 4 row(s), times local, UTC+01:00/UTC+02:00"
    assert "2026-03-29 03:00" in out and "2026-03-29 01:00" not in out      # wall-clock times in the table
    assert main(["report", berlin, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tz = doc["meta"]["tz"]
    assert tz["mode"] == "local" and tz["label"] == "local, UTC+01:00/UTC+02:00"
    assert tz["switches"] == [{"lpar": "ZOSA", "time": "2026-03-29T01:00:00Z", "from": "UTC+01:00",
                               "to": "UTC+02:00"}]
    assert tz["systems"][0]["utc_offsets"] == ["UTC+01:00", "UTC+02:00"]


def test_report_hours_follow_the_zone(berlin, capsys):
    # 08-17 local on 03-28 (CET) = interval ends 07:15 .. 16:00 UTC; 03-29 (CEST) = 06:15 .. 15:00 UTC: 72 rows
    assert main(["report", berlin, "--by", "interval", "--hours", "08-17", "--format", "csv", "--tz", "local"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert len(rows) == 72
    assert rows[0]["interval_end"] == "2026-03-28T08:15:00+01:00" and rows[-1]["interval_end"] == \
        "2026-03-29T17:00:00+02:00"
    assert main(["report", berlin, "--by", "interval", "--hours", "08-17", "--format", "csv", "--tz", "utc"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert rows[0]["interval_end"] == "2026-03-28T08:15:00Z" and len(rows) == 72


def test_bad_zone_is_a_usage_error(berlin, capsys):
    with pytest.raises(SystemExit) as e:
        main(["report", berlin, "--tz", "Mars/Olympus"])
    assert e.value.code == 2
    assert "not 'local', 'utc' or an IANA time-zone name" in capsys.readouterr().err


def test_info_and_compare_and_export(berlin, tmp_path, capsys):
    assert main(["info", berlin]) == 0
    out = capsys.readouterr().out
    assert "time range: 2026-03-28T01:15:00+01:00 .. 2026-03-30T02:00:00+02:00 (local, UTC+01:00/UTC+02:00)" in out
    assert "local time: ZOSA UTC+01:00 -> UTC+02:00" in out
    assert "local time changed from UTC+01:00 to UTC+02:00 at 2026-03-29 01:00 UTC" in out
    assert main(["compare", "--before", berlin, "--after", berlin, "--hours", "08-17", "--tz", "local"]) == 0
    assert "shift 08:00-17:00 local time" in capsys.readouterr().out
    out_csv = tmp_path / "x.csv"
    assert main(["export", berlin, "--by", "interval", "--out", str(out_csv), "--hours", "08-17"]) == 0
    rows = _csv(out_csv.read_text())
    assert len(rows) == 72 and rows[0]["interval_end"] == "2026-03-28T08:15:00+01:00"
