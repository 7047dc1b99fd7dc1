"""The window's UTC/local switch (issue 26): View > Local time, the chip's toggle, the axis, the table's times
and the daylight-saving marker, on a Europe/Berlin system across the 2026-03-29 switch (01:00 UTC)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pyqtgraph as pg
import pytest

from app.ui.time_zone import ZONE
from app.ui.window_chip import window_text
from tests.ui.conftest import wait_loaded

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

SHOTS = os.environ.get("NESTSCOPE_TZ_SHOTS")      # a folder: screenshots of the switch are saved there


@pytest.fixture
def berlin_window(qtbot, window, tmp_path):
    path = T.write_zos(tmp_path, T.zos_samples(days=2), name="berlin.smf")
    window.open_files([str(path)])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.table.model.rowCount() > 0, timeout=60_000)
    qtbot.waitUntil(lambda: window.local_time_action.isEnabled(), timeout=60_000)
    return window


def _end_texts(w) -> list[str]:
    m = w.table.model
    col = next(i for i, c in enumerate(m.columns) if c.id == "_end")
    return [m.data(m.index(r, col)) for r in range(m.rowCount())]


def test_local_time_switch(qtbot, berlin_window):
    w = berlin_window
    act = w.local_time_action
    # the data states a local time: the window starts in it (the default), and says which
    assert act.isChecked() and ZONE.local and ZONE.label() == "local, UTC+01:00/UTC+02:00"
    assert w.chip.zone_button.isVisible() and w.chip.zone_button.isChecked()
    assert w.timeline.base.getAxis("bottom").labelText == "Interval end (local, UTC+01:00/UTC+02:00)"
    assert [(pd.Timestamp(t, unit="s"), a, b) for t, a, b in ZONE.switches()] == \
        [(pd.Timestamp("2026-03-29 01:00"), 3600.0, 7200.0)]
    # a dashed marker at the switch on every data plot
    for p in w.timeline.plots.values():
        marks = [i for i in p.items if getattr(i, "dst_marker", False)]
        assert len(marks) == 1 and isinstance(marks[0], pg.InfiniteLine)
        assert marks[0].value() == pd.Timestamp("2026-03-29 01:00").value / 1e9
    # the window chip names the zone and writes wall-clock times: 00:30-01:30 UTC = 01:30 CET - 03:30 CEST
    text = window_text(pd.Timestamp("2026-03-29 00:30", tz="UTC"), pd.Timestamp("2026-03-29 01:30", tz="UTC"))
    assert text.endswith("2026-03-29 01:30 - 2026-03-29 03:30 local, UTC+01:00/UTC+02:00")
    local_ends = _end_texts(w)
    if SHOTS:
        _shots(w, "local")

    act.setChecked(False)                                     # View > Local time off: UTC everywhere
    assert not ZONE.local and ZONE.label() == "UTC"
    assert not w.chip.zone_button.isChecked() and w.chip.zone_button.text() == "UTC"
    assert w.timeline.base.getAxis("bottom").labelText == "Interval end (UTC)"
    utc_ends = _end_texts(w)
    assert local_ends != utc_ends
    text = window_text(pd.Timestamp("2026-03-29 00:30", tz="UTC"), pd.Timestamp("2026-03-29 01:30", tz="UTC"))
    assert text.endswith("2026-03-29 00:30 - 2026-03-29 01:30 UTC")
    if SHOTS:
        _shots(w, "utc")

    w.chip.zone_button.setChecked(True)                       # the chip's toggle is the same switch
    assert act.isChecked() and ZONE.local
    assert _end_texts(w) == local_ends
    assert w.errors == []


def _shots(w, tag: str) -> None:
    for size in ((1440, 900), (1024, 700)):
        w.resize(*size)
        for i in (0, 1):
            w.tabs.setCurrentIndex(i)
            pg.QtWidgets.QApplication.processEvents()
            w.timeline.flush() if hasattr(w.timeline, "flush") else None
            pg.QtWidgets.QApplication.processEvents()
            w.grab().save(str(Path(SHOTS) / f"tz_{tag}_{['table', 'timeline'][i]}_{size[0]}x{size[1]}.png"))


def test_utc_only_data_has_no_switch(qtbot, window, smf_a):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.table.model.rowCount() > 0, timeout=60_000)
    qtbot.wait(200)
    # the bundled sample is written in UTC: nothing to switch to, the window stays in UTC
    assert not window.local_time_action.isEnabled() and not window.chip.zone_button.isVisible()
    assert ZONE.label() == "UTC" and ZONE.switches() == []


def test_mixed_zones_stay_in_utc_and_say_so(qtbot, window, tmp_path):
    """A Berlin system beside a New York one: one time axis cannot be both wall clocks (CET is UTC+01:00, EDT
    UTC-04:00 on 2026-03-28: US daylight saving began on 03-08), so with Local time on every time stays in UTC,
    and the axis, the chip's toggle and its tooltip say why, naming each system's offsets (issue 26)."""
    berlin = T.write_zos(tmp_path, T.zos_samples(days=1, system="ZOSA"), name="berlin.smf")
    york = T.write_zos(tmp_path, T.zos_samples("America/New_York", days=1, system="ZOSB"), name="york.smf")
    window.open_files([str(berlin), str(york)])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: window.local_time_action.isEnabled(), timeout=60_000)
    act, button = window.local_time_action, window.chip.zone_button
    assert act.isChecked() and ZONE.mode == "local"          # asked for (the default) ...
    assert ZONE.mixed and not ZONE.local and ZONE.label() == "UTC"   # ... but the times stay in UTC
    assert window.timeline.base.getAxis("bottom").labelText == "Interval end (UTC: the systems' local times differ)"
    assert button.isVisible() and button.isChecked() and button.text() == "UTC (mixed zones)"
    assert "ZOSA UTC+01:00" in button.toolTip() and "ZOSB UTC-04:00" in button.toolTip()
    assert "differ" in act.toolTip()
    # the chip's window and the table's times are UTC: 00:30-01:30 UTC is written as it is
    text = window_text(pd.Timestamp("2026-03-28 00:30", tz="UTC"), pd.Timestamp("2026-03-28 01:30", tz="UTC"))
    assert text.endswith("2026-03-28 00:30 - 2026-03-28 01:30 UTC")
    qtbot.waitUntil(lambda: window.table.model.rowCount() > 0, timeout=60_000)
    utc_ends = _end_texts(window)
    assert not ZONE.switches()                                # no shared offsets: no daylight-saving marker
    act.setChecked(False)                                     # plain UTC: the same times, the plain label
    assert not ZONE.mixed and button.text() == "UTC" and not button.isChecked()
    assert window.timeline.base.getAxis("bottom").labelText == "Interval end (UTC)"
    assert _end_texts(window) == utc_ends
    button.setChecked(True)                                   # the chip's toggle: mixed again
    assert act.isChecked() and ZONE.mixed and button.text() == "UTC (mixed zones)"
    assert window.errors == []


def test_a_label_of_many_offsets_is_their_range():
    # a full parallel run found a Profile axis label listing 20 offsets ("local, UTC-00:15/UTC-00:30/...", ~1,400 px
    # on one line) that made the window wider than the screen: with more than two offsets the label is their range
    import numpy as np

    from app.ui.time_zone import LOCAL, UTC, DisplayZone

    z = DisplayZone()
    z.set_mode(LOCAL)
    z._series = (np.arange(3.0), np.array([3600.0, 7200.0, 3600.0]))       # two offsets: both named, in order
    assert z.label() == "local, UTC+01:00/UTC+02:00"
    offs = -900.0 * np.arange(1, 21)                                          # UTC-00:15 .. UTC-05:00
    z._series = (np.arange(20.0), offs)
    assert z.label() == "local, UTC-05:00 .. UTC-00:15, 20 offsets"
    z.set_mode(UTC)
    assert z.label() == "UTC"
