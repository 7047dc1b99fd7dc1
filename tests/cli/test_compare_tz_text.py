"""``compare``'s text table (the default format) and ``--format json`` in the request's zone (issue 26).

The Europe/Berlin system of tests/export/test_compare_tz.py (built with the sample writers,
tests/engine/tz_builders.py) compared with itself: before 2026-03-28 00:00 .. 02:00 UTC (CET, UTC+1), after
2026-03-29 00:00 .. 02:00 UTC, across the daylight-saving switch at 01:00 UTC (CEST, UTC+2 from the record
ending at 01:00 UTC on).  Expected wall-clock times written by hand:

* before: 00:00 UTC = 01:00 CET, 02:00 UTC = 03:00 CET;
* after: 00:00 UTC = 01:00 CET, 02:00 UTC = 04:00 CEST;
* America/New_York (EDT, UTC-4, since 8 March): 4 hours earlier, 20:00 .. 22:00 the day before.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.cli import main  # noqa: E402

SIDES, LOCAL, UTC, NEW_YORK = T.COMPARE_SIDES, T.COMPARE_LOCAL, T.COMPARE_UTC, T.COMPARE_NEW_YORK
BERLIN = "local, UTC+01:00/UTC+02:00"
SWITCH = dt.datetime(2026, 3, 29, 1, tzinfo=dt.timezone.utc)      # first record in CEST ends here


@pytest.fixture(scope="module")
def berlin(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("tzcomparetext")
    return str(T.write_zos(tmp, T.zos_samples(days=2), name="berlin.smf"))


def _compare(berlin, capsys, *extra) -> str:
    assert main(["compare", "--before", berlin, "--after", berlin, *SIDES, *extra]) == 0
    return capsys.readouterr().out


def _json(berlin, capsys, *tz) -> dict:
    return json.loads(_compare(berlin, capsys, "--format", "json", *tz))


def _times(doc) -> dict[str, tuple[str, str]]:
    got = {r["row"]: (r["interval_start"], r["interval_end"]) for r in doc["rows"] if r["row"] in ("before", "after")}
    assert all(r["interval_start"] is None and r["interval_end"] is None
               for r in doc["rows"] if r["row"] in ("ratio", "delta"))
    return got


# ------------------------------------------------------------------ text table
def test_table_names_the_zone_and_gives_each_sides_window_in_local_time(berlin, capsys):
    lines = _compare(berlin, capsys).splitlines()            # local: the default once an offset is known
    assert lines[0].startswith(f"NestScope comparison per lpar, times {BERLIN}; ratio = before / after"), lines[0]
    # before: CET only; after: across the switch (01:00 CET .. 04:00 CEST)
    assert lines[1] == "before: ZOSA on 3931-123F5 (z16); 2026-03-28 01:00 .. 2026-03-28 03:00 " \
                       "(local, UTC+01:00)", lines[1]
    assert lines[2] == f"after:  ZOSA on 3931-123F5 (z16); 2026-03-29 01:00 .. 2026-03-29 04:00 ({BERLIN})"
    assert _compare(berlin, capsys, "--tz", "local").splitlines()[:3] == lines[:3]


def test_table_in_utc_and_a_named_zone(berlin, capsys):
    lines = _compare(berlin, capsys, "--tz", "utc").splitlines()
    assert lines[0].startswith("NestScope comparison per lpar, times UTC; ratio"), lines[0]
    assert lines[1].endswith("; 2026-03-28 00:00 .. 2026-03-28 02:00 UTC"), lines[1]
    assert lines[2].endswith("; 2026-03-29 00:00 .. 2026-03-29 02:00 UTC"), lines[2]
    lines = _compare(berlin, capsys, "--tz", "America/New_York").splitlines()
    assert lines[0].startswith("NestScope comparison per lpar, times America/New_York; ratio"), lines[0]
    assert lines[1].endswith("; 2026-03-27 20:00 .. 2026-03-27 22:00 (America/New_York)"), lines[1]
    assert lines[2].endswith("; 2026-03-28 20:00 .. 2026-03-28 22:00 (America/New_York)"), lines[2]


def test_table_body_does_not_depend_on_the_zone(berlin, capsys):
    """Only the heading and the two window lines name times: the rows and the CPI lines stay the same."""
    utc = _compare(berlin, capsys, "--tz", "utc").splitlines()
    local = _compare(berlin, capsys).splitlines()
    assert utc[3:] == local[3:] and utc[:3] != local[:3]
    assert any(line.startswith("CPI change ZOSA:") for line in local)


# ------------------------------------------------------------------ JSON
def test_json_rows_and_windows_in_local_time_with_their_offsets(berlin, capsys):
    doc = _json(berlin, capsys)
    assert doc["meta"]["zone"] == BERLIN
    assert _times(doc) == LOCAL
    for side in ("before", "after"):
        w = doc["meta"][side]["window"]
        assert (w["first"], w["last"]) == LOCAL[side]        # the data's first start and last end
    # the window as asked for stays as given (UTC options)
    assert doc["meta"]["before"]["window"]["from"] == "2026-03-28T00:00:00Z"
    assert doc["meta"]["after"]["window"]["to"] == "2026-03-29T02:00:00Z"
    assert _json(berlin, capsys, "--tz", "local") == doc


def test_json_in_utc_has_no_zone_and_utc_times(berlin, capsys):
    doc = _json(berlin, capsys, "--tz", "utc")
    assert "zone" not in doc["meta"]                          # as before the zone was chosen
    assert _times(doc) == UTC
    assert (doc["meta"]["after"]["window"]["first"], doc["meta"]["after"]["window"]["last"]) == UTC["after"]


def test_json_in_a_named_zone(berlin, capsys):
    doc = _json(berlin, capsys, "--tz", "America/New_York")
    assert doc["meta"]["zone"] == "America/New_York"
    assert _times(doc) == NEW_YORK
    assert (doc["meta"]["before"]["window"]["first"], doc["meta"]["before"]["window"]["last"]) == NEW_YORK["before"]


def test_json_numbers_do_not_depend_on_the_zone(berlin, capsys):
    utc, local = _json(berlin, capsys, "--tz", "utc"), _json(berlin, capsys)
    strip = ("interval_start", "interval_end")
    assert [{k: v for k, v in r.items() if k not in strip} for r in utc["rows"]] == \
        [{k: v for k, v in r.items() if k not in strip} for r in local["rows"]]
    assert utc["cpi"] == local["cpi"] and utc["waterfall"] == local["waterfall"]


def test_an_empty_side_has_no_times_and_the_zone_names_the_offsets_shown(berlin, capsys):
    # after: 00:00 .. 02:00 UTC is 01:00 .. 04:00 local; its hours 10-11 hold none of it
    doc = json.loads(_compare(berlin, capsys, "--format", "json", "--after-hours", "10-11"))
    assert _times(doc) == {"before": LOCAL["before"], "after": (None, None)}
    assert doc["meta"]["zone"] == "local, UTC+01:00"            # only the before side's CET times are shown
    assert doc["meta"]["after"]["window"]["first"] is None and doc["meta"]["after"]["window"]["last"] is None
    lines = _compare(berlin, capsys, "--after-hours", "10-11").splitlines()
    assert lines[0].startswith("NestScope comparison per lpar, times local, UTC+01:00; ratio"), lines[0]
    assert lines[2] == "after:  nothing selected; no intervals; shift 10:00-11:00 local time, all days", lines[2]


# ------------------------------------------------------------------ property
@pytest.fixture(scope="module")
def berlin_ws(berlin):
    from app.analysis.workspace import make_workspace

    return make_workspace([T.read(Path(berlin))], None, False)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(0, 190), n=st.integers(1, 12), b=st.integers(0, 190), m=st.integers(1, 12),
       tz=st.sampled_from(["local", "Europe/Berlin"]))
def test_json_times_are_the_utc_times_with_berlins_offset(berlin_ws, a, n, b, m, tz):
    """For any two windows of the 2-day Berlin data: each row time in ``tz`` is the same instant as in UTC, with
    +01:00 before the switch (2026-03-29 01:00 UTC) and +02:00 from it on."""
    import pandas as pd

    from app.commands.compare import to_json
    from app.engine.compare import Selection, compare
    from app.export import ExportRequest

    t0 = pd.Timestamp("2026-03-28")
    q = pd.Timedelta(minutes=15)
    c = compare(Selection(berlin_ws, start=t0 + a * q, end=t0 + (a + n) * q, name="before"),
                Selection(berlin_ws, start=t0 + b * q, end=t0 + (b + m) * q, name="after"), by="lpar")
    req = ExportRequest(c.after.workspace, by="lpar", comparison=c)
    utc, zoned = json.loads(to_json(c, req)), json.loads(to_json(c, req, tz))
    for ru, rz in zip(utc["rows"], zoned["rows"]):
        for col in ("interval_start", "interval_end"):
            if ru[col] is None:
                assert rz[col] is None
                continue
            u = dt.datetime.fromisoformat(ru[col].replace("Z", "+00:00"))
            z = dt.datetime.fromisoformat(rz[col])
            assert u == z
            assert z.utcoffset() == dt.timedelta(hours=2 if u >= SWITCH else 1), (ru[col], rz[col])
