"""The provenance (XLSX About sheet, every PPTX slide's notes and the appendix slide) in the request's zone
(issue 26): a Europe/Berlin system across the daylight-saving switch of 2026-03-29 01:00 UTC, built with the
sample writers (tests/engine/tz_builders.py).  Expected wall-clock times written by hand:

* CET (UTC+1) before the switch, CEST (UTC+2) from the record ending at 01:00 UTC on;
* window 2026-03-29 00:00 .. 02:00 UTC = 01:00+01:00 .. 04:00+02:00 (its intervals the same);
* 2026-03-28 00:00 .. 02:00 UTC = 01:00+01:00 .. 03:00+01:00 (CET only);
* America/New_York is on EDT (UTC-4) since 8 March: 2026-03-29 00:00 UTC = 2026-03-28 20:00-04:00.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.cli import main  # noqa: E402

WIN = ["--from", "2026-03-29T00:00Z", "--to", "2026-03-29T02:00Z"]
LOCAL_WINDOW = "2026-03-29T01:00:00+01:00 .. 2026-03-29T04:00:00+02:00"
BERLIN_WORDS = "local time of each system: UTC+01:00/UTC+02:00"
SWITCH = dt.datetime(2026, 3, 29, 1, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def berlin(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzprov")
    return str(T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf"))


def _about(path) -> tuple[dict, list[str]]:
    import openpyxl

    rows = [r for r in openpyxl.load_workbook(path)["About"].iter_rows(values_only=True)]
    return {r[0]: r[1] for r in rows if r[0] and r[1] is not None}, [r[0] for r in rows if r[0] and r[1] is None]


def _workbook(berlin, tmp_path, *extra) -> Path:
    out = tmp_path / "p.xlsx"
    assert main(["export", berlin, "--out", str(out), *WIN, *extra]) == 0
    return out


def test_about_sheet_windows_in_local_time(berlin, tmp_path):
    rows, lines = _about(_workbook(berlin, tmp_path))          # local: the default once an offset is known
    assert rows["Window"] == LOCAL_WINDOW
    assert rows["Intervals"] == f"{LOCAL_WINDOW} ({BERLIN_WORDS})"
    assert f"Window: {LOCAL_WINDOW} (intervals {LOCAL_WINDOW}, {BERLIN_WORDS})" in lines, lines
    assert not any("Z .." in line or "Z (" in line for line in lines)           # no UTC time left


def test_about_sheet_in_a_named_zone(berlin, tmp_path):
    rows, lines = _about(_workbook(berlin, tmp_path, "--tz", "America/New_York"))
    ny = "2026-03-28T20:00:00-04:00 .. 2026-03-28T22:00:00-04:00"
    assert rows["Window"] == ny and rows["Intervals"] == f"{ny} (America/New_York)"
    assert f"Window: {ny} (intervals {ny}, America/New_York)" in lines, lines


def test_about_sheet_in_utc_is_as_it_was(berlin, tmp_path):
    """The UTC texts, written by hand in the form they had before the zone was chosen."""
    rows, lines = _about(_workbook(berlin, tmp_path, "--tz", "utc"))
    utc = "2026-03-29T00:00:00Z .. 2026-03-29T02:00:00Z"
    assert rows["Window"] == utc and rows["Intervals"] == f"{utc} (UTC)"
    assert f"Window: {utc} (intervals {utc}, UTC)" in lines, lines


def test_utc_provenance_has_no_shown_windows(berlin):
    from app.analysis.workspace import make_workspace
    from app.export import ExportRequest
    from app.export.provenance import provenance, provenance_lines

    ws = make_workspace([T.read(Path(berlin))], None, False)
    req = ExportRequest(ws, start="2026-03-29T00:00Z", end="2026-03-29T02:00Z")
    doc = provenance(req)
    assert "shown" not in doc and doc["window"]["first"] == "2026-03-29T00:00:00Z"
    local = provenance(ExportRequest(ws, start="2026-03-29T00:00Z", end="2026-03-29T02:00Z", tz="local"))
    # the document's own windows stay UTC (the compare JSON's meta is built from them); only the text changes
    assert local["window"] == doc["window"] and local["shown"]["zone"] == BERLIN_WORDS
    assert [x for x in provenance_lines(local) if x.startswith("Window")] == \
        [f"Window: {LOCAL_WINDOW} (intervals {LOCAL_WINDOW}, {BERLIN_WORDS})"]


def test_comparison_deck_notes_and_appendix_in_local_time(berlin, tmp_path):
    slides = T.compare_deck(berlin, tmp_path)
    before = "2026-03-28T01:00:00+01:00 .. 2026-03-28T03:00:00+01:00"
    want = [f"  Window: {before} (intervals {before}, local time of each system: UTC+01:00)",
            f"  Window: {LOCAL_WINDOW} (intervals {LOCAL_WINDOW}, {BERLIN_WORDS})"]
    for s in slides:                                                   # every slide's notes
        notes = s.notes_slide.notes_text_frame.text.splitlines()
        assert [x for x in notes if x.startswith("  Window: ")] == want, s.shapes.title.text
    appendix = [s for s in slides if s.shapes.title.text == "Appendix: provenance"]
    text = "\n".join(sh.text_frame.text for sh in appendix[0].shapes if sh.has_text_frame)
    assert all(w.strip() in text for w in want), text


def test_two_systems_in_different_zones(tmp_path):
    """Berlin (2 days from 03-28 00:00 UTC) and New York (from 03-29 01:00 UTC, one day) in one workspace, local:
    the first start is Berlin's 03-29 00:00 UTC = 01:00+01:00, the last end New York's 03-30 01:00 UTC =
    03-29 21:00-04:00; the asked-for start 03-29 00:00 UTC is 01:00 in Berlin but 20:00 in New York, so it stays
    UTC."""
    from app.analysis.workspace import make_workspace
    from app.export import ExportRequest
    from app.export.provenance import provenance, provenance_lines

    b = T.write_zos(tmp_path, T.zos_samples(days=2, system="ZOSA"), name="berlin.smf")
    y = T.write_zos(tmp_path, T.zos_samples("America/New_York", days=1, system="ZOSB",
                                            start=dt.datetime(2026, 3, 29, 1)), name="york.smf")
    ws = make_workspace([T.read(b), T.read(y)], None, False)
    doc = provenance(ExportRequest(ws, start="2026-03-29T00:00Z", tz="local"))
    assert doc["shown"]["window"] == {"from": "2026-03-29T00:00:00Z", "to": None,
                                      "first": "2026-03-29T01:00:00+01:00", "last": "2026-03-29T21:00:00-04:00"}
    assert doc["shown"]["zone"] == "local time of each system: UTC-04:00/UTC+01:00"
    line = [x for x in provenance_lines(doc) if x.startswith("Window")][0]
    assert line == ("Window: 2026-03-29T00:00:00Z .. end of data (intervals 2026-03-29T01:00:00+01:00 .. "
                    "2026-03-29T21:00:00-04:00, local time of each system: UTC-04:00/UTC+01:00)")
    # one system selected: its own offsets for the bound too
    nodes = (("lpar", ws.intervals["cec"].iloc[0], "ZOSB"),)
    doc = provenance(ExportRequest(ws, start="2026-03-29T06:00Z", end="2026-03-29T12:00Z", nodes=nodes,
                                   tz="local"))
    assert doc["shown"]["window"]["from"] == "2026-03-29T02:00:00-04:00"
    assert doc["shown"]["window"]["to"] == "2026-03-29T08:00:00-04:00"


@pytest.fixture(scope="module")
def berlin_ws(berlin):
    from app.analysis.workspace import make_workspace

    return make_workspace([T.read(Path(berlin))], None, False)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(0, 190), n=st.integers(1, 12), tz=st.sampled_from(["local", "Europe/Berlin"]))
def test_shown_windows_are_the_utc_instants_with_berlins_offset(berlin_ws, a, n, tz):
    """For any window of the Berlin data: every shown time is the same instant as the UTC one, with +01:00
    before the switch and +02:00 from it on."""
    import pandas as pd

    from app.export import ExportRequest
    from app.export.provenance import provenance

    t0, q = pd.Timestamp("2026-03-28"), pd.Timedelta(minutes=15)
    doc = provenance(ExportRequest(berlin_ws, start=t0 + a * q, end=t0 + (a + n) * q, tz=tz))
    for key, u in doc["window"].items():
        z = doc["shown"]["window"][key]
        if u is None:
            assert z is None
            continue
        ut = dt.datetime.fromisoformat(u.replace("Z", "+00:00"))
        zt = dt.datetime.fromisoformat(z)
        assert ut == zt and zt.utcoffset() == dt.timedelta(hours=2 if ut >= SWITCH else 1), (key, u, z)
