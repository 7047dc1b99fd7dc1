"""The comparison's CSV (``compare --format csv``, ``export`` of a comparison to .csv) and the workbook's Compare
sheet in the request's zone (issue 26), read back with csv / openpyxl.  A Europe/Berlin system (built with the
sample writers, tests/engine/tz_builders.py) compared with itself: before 2026-03-28 00:00 .. 02:00 UTC (CET,
UTC+1), after 2026-03-29 00:00 .. 02:00 UTC, across the daylight-saving switch at 01:00 UTC (CEST, UTC+2 from the
record ending at 01:00 UTC on).  Expected wall-clock times are written by hand:

* before: 00:00 UTC = 01:00 CET, 02:00 UTC = 03:00 CET;
* after: 00:00 UTC = 01:00 CET (the interval ending 00:15 started in CET), 02:00 UTC = 04:00 CEST.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.cli import main  # noqa: E402

SIDES, LOCAL, UTC, NEW_YORK = T.COMPARE_SIDES, T.COMPARE_LOCAL, T.COMPARE_UTC, T.COMPARE_NEW_YORK
BERLIN = "local, UTC+01:00/UTC+02:00"


@pytest.fixture(scope="module")
def berlin(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzcompare")
    return str(T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf"))


def _times(rows) -> dict[str, tuple[str, str]]:
    got = {r["row"]: (r["interval_start"], r["interval_end"]) for r in rows if r["row"] in ("before", "after")}
    assert all(not r["interval_start"] and not r["interval_end"] for r in rows if r["row"] in ("ratio", "delta"))
    return got


def _compare_csv(berlin, capsys, *tz) -> list[dict]:
    assert main(["compare", "--before", berlin, "--after", berlin, *SIDES, "--format", "csv", *tz]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_compare_csv_sides_in_local_time(berlin, capsys):
    rows = _compare_csv(berlin, capsys)                   # local: the default once an offset is known
    assert _times(rows) == LOCAL
    assert _times(_compare_csv(berlin, capsys, "--tz", "local")) == LOCAL


def test_compare_csv_in_utc_and_a_named_zone(berlin, capsys):
    assert _times(_compare_csv(berlin, capsys, "--tz", "utc")) == UTC
    assert _times(_compare_csv(berlin, capsys, "--tz", "America/New_York")) == NEW_YORK


def test_compare_csv_utc_is_the_plain_table(berlin, capsys):
    """--tz utc writes what the comparison CSV always wrote: the table's cells with no offsets."""
    from app.engine.compare import Selection, compare
    from app.engine.metrics import metric_ids
    from app.export.csv import compare_columns, rows_csv
    from app.textsafe import csv_line

    assert main(["compare", "--before", berlin, "--after", berlin, *SIDES, "--format", "csv", "--tz", "utc"]) == 0
    text = capsys.readouterr().out
    from app.engine import Workspace

    ws = Workspace()
    ws.add(T.read(Path(berlin)))
    c = compare(Selection(ws, start=_ts(SIDES[1]), end=_ts(SIDES[3]), name="before"),
                Selection(ws, start=_ts(SIDES[5]), end=_ts(SIDES[7]), name="after"), by="lpar")
    cols = compare_columns("lpar", metric_ids(ws.formula_sets))
    assert text == csv_line(cols) + "".join(csv_line(r) for r in rows_csv(c.table, cols))


def _ts(text):
    import pandas as pd

    return pd.Timestamp(text).tz_localize(None)


def test_export_csv_of_a_comparison_in_the_requests_zone(berlin, tmp_path):
    out = tmp_path / "c.csv"
    assert main(["export", "--out", str(out), "--before", berlin, "--after", berlin, *SIDES]) == 0
    assert _times(list(csv.DictReader(out.open(encoding="utf-8")))) == LOCAL
    assert main(["export", "--out", str(out), "--before", berlin, "--after", berlin, *SIDES, "--tz", "utc"]) == 0
    assert _times(list(csv.DictReader(out.open(encoding="utf-8")))) == UTC


def _compare_sheet(berlin, tmp_path, *tz) -> list[list]:
    import openpyxl

    out = tmp_path / "c.xlsx"
    assert main(["export", "--out", str(out), "--before", berlin, "--after", berlin, *SIDES, *tz]) == 0
    return [list(r) for r in openpyxl.load_workbook(out)["Compare"].iter_rows(values_only=True)]


def test_compare_sheet_names_the_zone_and_each_sides_window(berlin, tmp_path):
    rows = _compare_sheet(berlin, tmp_path)
    assert rows[0][0] == f"Comparison per LPAR, times {BERLIN}"
    # before: CET only; after: across the switch (01:00 CET .. 04:00 CEST)
    assert rows[2][0].endswith("; 2026-03-28 01:00 .. 2026-03-28 03:00 (local, UTC+01:00)"), rows[2][0]
    assert rows[3][0].endswith(f"; 2026-03-29 01:00 .. 2026-03-29 04:00 ({BERLIN})"), rows[3][0]
    assert rows[2][0].startswith("Before: ZOSA on ") and rows[3][0].startswith("After: ZOSA on ")


def test_compare_sheet_in_utc_and_a_named_zone(berlin, tmp_path):
    rows = _compare_sheet(berlin, tmp_path, "--tz", "utc")
    assert rows[0][0] == "Comparison per LPAR"                   # as before the zone was chosen
    assert rows[2][0].endswith("; 2026-03-28 00:00 .. 2026-03-28 02:00 UTC"), rows[2][0]
    assert rows[3][0].endswith("; 2026-03-29 00:00 .. 2026-03-29 02:00 UTC"), rows[3][0]
    rows = _compare_sheet(berlin, tmp_path, "--tz", "America/New_York")
    assert rows[0][0] == "Comparison per LPAR, times America/New_York"
    assert rows[3][0].endswith("; 2026-03-28 20:00 .. 2026-03-28 22:00 (America/New_York)"), rows[3][0]
