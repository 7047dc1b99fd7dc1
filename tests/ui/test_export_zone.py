"""Issue 26: a file exported from the window writes its times (cells, headers, the About sheet's provenance) in
the zone the window shows: local time of each system with View > Local time on (it left every export in UTC),
UTC with it off.  A Europe/Berlin system across the daylight-saving switch of 2026-03-29 01:00 UTC, built with
the sample writers (tests/engine/tz_builders.py); by hand: the data 03-28 00:00 .. 03-30 00:00 UTC are
03-28 01:00+01:00 (CET) .. 03-30 02:00+02:00 (CEST)."""

from __future__ import annotations

import openpyxl

from app.ui.export_dialog import window_zone
from tests.ui.test_export_ui import run_dialog
from tests.ui.test_time_zone import berlin_window  # noqa: F401 - the fixture

LOCAL_SPAN = "2026-03-28T01:00:00+01:00 .. 2026-03-30T02:00:00+02:00"
UTC_SPAN = "2026-03-28T00:00:00Z .. 2026-03-30T00:00:00Z"


def _about(path) -> dict:
    return {r[0]: r[1] for r in openpyxl.load_workbook(path)["About"].iter_rows(values_only=True) if r[0]}


def test_export_from_the_window_follows_its_zone(qtbot, berlin_window, tmp_path):
    w = berlin_window
    assert w.local_time_action.isChecked()                 # local: the default once an offset is known
    dlg = w.compare.export_dialog("deck")
    dlg.path.setText(str(tmp_path / "x.xlsx"))
    assert dlg.request().tz == "local" == window_zone()
    kind, text = run_dialog(qtbot, dlg, tmp_path / "local.xlsx")
    assert kind == "ok", text
    about = _about(tmp_path / "local.xlsx")
    assert about["Intervals"] == f"{LOCAL_SPAN} (local time of each system: UTC+01:00/UTC+02:00)"
    assert about["Times"].startswith("local, UTC+01:00/UTC+02:00: ")
    w.local_time_action.setChecked(False)                  # View > Local time off: UTC, as before
    assert dlg.request().tz == "utc" == window_zone()
    kind, text = run_dialog(qtbot, dlg, tmp_path / "utc.xlsx")
    assert kind == "ok", text
    about = _about(tmp_path / "utc.xlsx")
    assert about["Intervals"] == f"{UTC_SPAN} (UTC)" and "Times" not in about


def test_utc_data_exports_in_utc(qtbot, window, smf_a):
    """The bundled samples state UTC as their local time: nothing to switch to, the export stays UTC."""
    from tests.ui.conftest import wait_loaded

    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert window_zone() == "utc"
