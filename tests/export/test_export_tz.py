"""The XLSX and PPTX exports in the request's zone (issue 26), read back with openpyxl / python-pptx: a
Europe/Berlin system across the daylight-saving switch of 2026-03-29 01:00 UTC (built with the sample writers,
tests/engine/tz_builders.py).  Expectations are written by hand: CET is UTC+1 before the switch, CEST UTC+2 from
the record ending at 01:00 UTC on (TME 01:00:00.37 UTC = 03:00 CEST)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.cli import main  # noqa: E402

# intervals ending 00:15 .. 02:00 UTC on 2026-03-29: three before the switch, five from it on
WIN = ["--from", "2026-03-29T00:00Z", "--to", "2026-03-29T02:00Z"]
UTC_ENDS = [dt.datetime(2026, 3, 29, 0, 15), dt.datetime(2026, 3, 29, 0, 30), dt.datetime(2026, 3, 29, 0, 45),
            dt.datetime(2026, 3, 29, 1, 0), dt.datetime(2026, 3, 29, 1, 15), dt.datetime(2026, 3, 29, 1, 30),
            dt.datetime(2026, 3, 29, 1, 45), dt.datetime(2026, 3, 29, 2, 0)]
# the same ends on the Berlin wall clock: +1 h (01:15, 01:30, 01:45), then +2 h (03:00 .. 04:00)
LOCAL_ENDS = [dt.datetime(2026, 3, 29, 1, 15), dt.datetime(2026, 3, 29, 1, 30), dt.datetime(2026, 3, 29, 1, 45),
              dt.datetime(2026, 3, 29, 3, 0), dt.datetime(2026, 3, 29, 3, 15), dt.datetime(2026, 3, 29, 3, 30),
              dt.datetime(2026, 3, 29, 3, 45), dt.datetime(2026, 3, 29, 4, 0)]
BERLIN = "local, UTC+01:00/UTC+02:00"
# Excel's serial date of 2026-03-29 (days since 1899-12-30)
SERIAL_0329 = (dt.date(2026, 3, 29) - dt.date(1899, 12, 30)).days


@pytest.fixture(scope="module")
def berlin(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzexport")
    return str(T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf"))


def _sheet(path, name):
    import openpyxl

    return [list(r) for r in openpyxl.load_workbook(path)[name].iter_rows(values_only=True)]


def _workbook(berlin, tmp_path, *tz) -> Path:
    out = tmp_path / "b.xlsx"
    assert main(["export", berlin, "--out", str(out), *WIN, *tz]) == 0
    return out


def test_workbook_cells_and_headers_in_local_time(berlin, tmp_path):
    out = _workbook(berlin, tmp_path)                     # local is the default once an offset is known
    rows = _sheet(out, "Intervals")
    head = rows[0]
    end, start = head.index(f"Interval end ({BERLIN})"), head.index(f"Interval start ({BERLIN})")
    assert [r[end] for r in rows[1:]] == LOCAL_ENDS
    # each start is the previous end; the first one is 00:00 UTC = 01:00 CET
    assert [r[start] for r in rows[1:]] == [dt.datetime(2026, 3, 29, 1, 0)] + LOCAL_ENDS[:-1]
    lp = _sheet(out, "LPAR intervals")
    assert [r[lp[0].index(f"Interval end ({BERLIN})")] for r in lp[1:]] == LOCAL_ENDS
    # summary rows: the window 00:00 .. 02:00 UTC is 01:00 CET .. 04:00 CEST; a CEC pool row takes its CEC's offsets
    for name in ("LPAR", "CEC", "Pools"):
        s = _sheet(out, name)
        assert s[1][s[0].index(f"Interval start ({BERLIN})")] == dt.datetime(2026, 3, 29, 1, 0), name
        assert s[1][s[0].index(f"Interval end ({BERLIN})")] == dt.datetime(2026, 3, 29, 4, 0), name
    about = {r[0]: r[1] for r in _sheet(out, "About") if r[0]}
    assert about["Times"].startswith(f"{BERLIN}: ")
    # the provenance in the zone too (tests/export/test_provenance_tz.py): 00:00 UTC = 01:00 CET, 02:00 UTC = 04:00 CEST
    assert about["Intervals"] == ("2026-03-29T01:00:00+01:00 .. 2026-03-29T04:00:00+02:00 "
                                  "(local time of each system: UTC+01:00/UTC+02:00)")
    assert _sheet(out, "Timeline")[0][0] == f"Main timeline: CPI and LPARCPU per LPAR (interval end, {BERLIN})"


def test_workbook_in_utc_and_in_a_named_zone(berlin, tmp_path):
    out = _workbook(berlin, tmp_path, "--tz", "utc")
    rows = _sheet(out, "Intervals")
    assert [r[rows[0].index("Interval end (UTC)")] for r in rows[1:]] == UTC_ENDS
    assert "Times" not in {r[0] for r in _sheet(out, "About")}
    assert _sheet(out, "Timeline")[0][0] == "Main timeline: CPI and LPARCPU per LPAR (interval end, UTC)"
    out = _workbook(berlin, tmp_path, "--tz", "America/New_York")    # EDT (UTC-4) since 8 March
    rows = _sheet(out, "Intervals")
    assert [r[rows[0].index("Interval end (America/New_York)")] for r in rows[1:]] == \
        [t - dt.timedelta(hours=4) for t in UTC_ENDS]


def test_workbook_chart_axis_names_the_zone(berlin, tmp_path):
    import zipfile

    out = _workbook(berlin, tmp_path)
    with zipfile.ZipFile(out) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert charts and all(f"interval end ({BERLIN})" in c for c in charts)
    assert not any("interval end (UTC)" in c for c in charts)
    # the chart data (from column Z, row 4): the eight local ends, no blank row at the switch (75 wall-clock
    # minutes between 01:45 and 03:00, but 15 minutes of data: a daylight-saving switch is no gap)
    tl = _sheet(out, "Timeline")
    xs = [r[25] for r in tl[3:] if len(r) > 25]
    assert _hours(xs) == [1.25, 1.5, 1.75, 3.0, 3.25, 3.5, 3.75, 4.0]      # Excel serials, hours of 03-29


def test_a_real_gap_still_breaks_the_line():
    from app.engine.layout import gapped

    # wall-clock x (hours) across the switch, UTC the same points: no gap; a 2-hour hole in UTC: one NaN point
    local, utc = [1.25, 1.5, 1.75, 3.0, 3.25], [0.25, 0.5, 0.75, 1.0, 1.25]
    assert len(gapped(local, [1, 2, 3, 4, 5], ref=utc)[0]) == 5
    assert len(gapped(local, [1, 2, 3, 4, 5])[0]) == 6                  # without the UTC times it looked like one
    x, y = gapped([1.25, 1.5, 3.5, 3.75], [1, 2, 3, 4], ref=[0.25, 0.5, 2.5, 2.75])
    assert list(x[:2]) == [1.25, 1.5] and np.isnan(y[2]) and len(x) == 5


def _deck(berlin, tmp_path, *tz):
    from pptx import Presentation

    out = tmp_path / "b.pptx"
    assert main(["export", berlin, "--out", str(out), *WIN, *tz]) == 0
    return list(Presentation(str(out)).slides)


def _charts(slides):
    out = []
    for s in slides:
        for sh in s.shapes:
            if sh.has_chart:
                sp = sh.chart._chartSpace
                xs = [float(v.text) for v in sp.xpath(".//c:ser[1]/c:xVal//c:v")]
                titles = [t.text for t in sp.xpath(".//c:valAx/c:title//a:t")]
                out.append((s.shapes.title.text, xs, titles))
    return out


def _hours(serials):
    """Excel serial dates of 2026-03-29 as hours of that day (rounded to the minute)."""
    return [round((x - SERIAL_0329) * 24 * 60) / 60 for x in serials]


def test_deck_charts_and_window_in_local_time(berlin, tmp_path):
    slides = _deck(berlin, tmp_path)
    charts = _charts(slides)
    assert charts
    for title, xs, axes in charts:
        assert f"interval end ({BERLIN})" in axes, title
        # 01:15, 01:30, 01:45 CET, then 03:00 .. 04:00 CEST
        assert _hours(xs) == [1.25, 1.5, 1.75, 3.0, 3.25, 3.5, 3.75, 4.0], title
    texts = [sh.text_frame.text for sh in slides[0].shapes if sh.has_text_frame]
    assert any(f"Intervals 29 Mar 01:00 - 29 Mar 2026 04:00 ({BERLIN})" in t for t in texts), texts


def test_deck_in_utc(berlin, tmp_path):
    charts = _charts(_deck(berlin, tmp_path, "--tz", "utc"))
    assert charts
    for title, xs, axes in charts:
        assert "interval end (UTC)" in axes, title
        assert _hours(xs) == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0], title


def test_zoned_times_one_column_per_system(berlin):
    """Two systems in one frame, each converted with its own offsets (and a system without an offset in UTC)."""
    import numpy as np
    import pandas as pd

    from app.engine.timezone import Zones
    from app.export.tables import zoned_times

    iv = pd.DataFrame({"cec": "C", "lpar": ["A", "A", "B", "B"], "system": ["A", "A", "B", "B"],
                       "interval_end": pd.to_datetime(["2026-03-29 00:45", "2026-03-29 01:00"] * 2),
                       "utc_offset_s": [3600.0, 7200.0, np.nan, np.nan]})

    class W:
        zones = Zones(iv)

    t, zone = zoned_times(W, "local", iv, ("interval_end",))
    assert list(pd.to_datetime(t["interval_end"])) == [pd.Timestamp("2026-03-29 01:45"), pd.Timestamp("2026-03-29 03:00"),
                                                        pd.Timestamp("2026-03-29 00:45"), pd.Timestamp("2026-03-29 01:00")]
    assert zone == "local, UTC+00:00/UTC+01:00/UTC+02:00"
    t, zone = zoned_times(W, "utc", iv, ("interval_end",))
    assert zone == "UTC" and list(pd.to_datetime(t["interval_end"])) == list(iv["interval_end"])


def test_csv_pool_rows_take_their_cecs_offsets(berlin, tmp_path):
    import csv

    out = tmp_path / "p.csv"
    assert main(["export", berlin, "--out", str(out), "--by", "pool", *WIN]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert rows and rows[0]["lpar"] == "(pool)"
    # the window 00:00 .. 02:00 UTC: 01:00 CET .. 04:00 CEST (before: the pool row stayed in UTC, ...Z)
    assert (rows[0]["interval_start"], rows[0]["interval_end"]) == ("2026-03-29T01:00:00+01:00",
                                                                    "2026-03-29T04:00:00+02:00")


def test_deck_shift_against_shift_names_the_zone(berlin, tmp_path):
    # the hours are read in local time: the table slide's title says so (it said "UTC" whatever the zone)
    slides = _deck(berlin, tmp_path, "--hours", "08-17", "--also-shift", "22-06")
    titles = [s.shapes.title.text for s in slides]
    assert "08:00-17:00 against 22:00-06:00 (local time, all days)" in titles, titles
    slides = _deck(berlin, tmp_path, "--hours", "08-17", "--also-shift", "22-06", "--tz", "utc")
    assert "08:00-17:00 against 22:00-06:00 (UTC, all days)" in [s.shapes.title.text for s in slides]


def test_comparison_deck_sides_in_local_time(berlin, tmp_path):
    # before: 03-28 00:00 .. 02:00 UTC (CET), after: 03-29 00:00 .. 02:00 UTC (across the switch)
    slides = T.compare_deck(berlin, tmp_path)
    body = "\n".join(sh.text_frame.text for sh in slides[0].shapes if sh.has_text_frame)
    assert "28 Mar 01:00 - 28 Mar 2026 03:00 (local, UTC+01:00)" in body, body          # before: CET only
    assert f"29 Mar 01:00 - 29 Mar 2026 04:00 ({BERLIN})" in body, body
    after_charts = [c for c in _charts(slides) if c[0].startswith("After: ")]
    assert after_charts and all(_hours(xs) == [1.25, 1.5, 1.75, 3.0, 3.25, 3.5, 3.75, 4.0]
                                for _t, xs, _a in after_charts)
