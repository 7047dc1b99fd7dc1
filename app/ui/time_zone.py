"""The window's time zone: UTC or the systems' local time (issue 26).

:data:`ZONE` holds the choice and the offsets (:class:`app.engine.timezone.Zones`, from the view job) and tells
the time axes, the window chip and the interval table how to write a UTC time.  Local time is each system's own
UTC offset as its records state it; on the shared time axis that is the offsets every shown system shares.  When
the systems' offsets differ (a Berlin z/OS beside a New York one), one axis cannot be both wall clocks: with Local
time on, every time stays in UTC and the axis, the chip's toggle and its tooltip say so, naming each system's
offsets (:meth:`DisplayZone.mixed`).  A daylight-saving switch is a dashed marker on every
timeline plot.  :func:`install` adds View > Local time and the chip's UTC/Local toggle to a main window.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction

from app.engine.timezone import LOCAL, UTC, offset_text
from app.ui import settings

SETTING = "view/time_zone"
ACT_LOCAL = "&Local time"
ACT_LOCAL_TIP = ("Show times in each system's local time (its UTC offset from its own records: SMF TME/DTE, "
                 "z/VM D1R4) instead of UTC")
MARKER_PEN = (220, 120, 0)
MIXED_AXIS = "UTC: the systems' local times differ"
MIXED_BUTTON = "UTC (mixed zones)"
MIXED_TIP = ("Local time is on, but the systems' local times differ ({systems}): one time axis cannot show two "
             "wall clocks, so every time is in UTC. To read one system's local time, open its files alone "
             "(or use --tz ZONE in the commands).")
BUTTON_TIP = "Times in the systems' local time (checked) or in UTC"


class DisplayZone(QObject):
    """The time zone the window shows times in, and the offsets to get there."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.mode = UTC
        self.zones = None
        self._series: tuple[np.ndarray, np.ndarray] | None = None   # shared offsets: (UTC epoch s, seconds east)
        self._systems: dict[str, list[float]] = {}                    # system name -> its offsets (mixed zones)

    def set_zones(self, zones: Any) -> None:
        """New offsets (a view job's ``Zones``); the mode follows the default once an offset is known."""
        if zones is self.zones:
            return
        self.zones = zones
        self._series = None
        self._systems = {}
        p = zones._series_for(None, None, None) if zones is not None and zones.known else None
        if p is not None:
            self._series = (p[0] / 1e9, p[1])
        elif zones is not None and zones.known:      # the systems state different offsets
            for (_cec, lpar, system), offs in zones.system_offsets().items():
                self._systems[str(system or lpar)] = offs
        self.changed.emit()

    def set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self.changed.emit()

    @property
    def available(self) -> bool:
        """True when there is a local time to switch to (an offset other than UTC+00:00)."""
        return self._series is not None and bool(np.any(self._series[1] != 0))

    @property
    def can_mix(self) -> bool:
        """True when the systems' local times differ (Local time can be asked for, the window then stays in UTC)."""
        return bool(self._systems) and any(o != 0 for offs in self._systems.values() for o in offs)

    @property
    def mixed(self) -> bool:
        """Local time is asked for, but the systems' offsets differ: the times stay in UTC (and say why)."""
        return self.mode == LOCAL and self._series is None and self.can_mix

    def systems_text(self) -> str:
        """``ZOSA UTC+01:00/UTC+02:00, ZOSB UTC-05:00/UTC-04:00`` (mixed zones)."""
        return ", ".join(f"{name} " + "/".join(offset_text(o) for o in offs)
                         for name, offs in sorted(self._systems.items()))

    def axis_label(self) -> str:
        """What the time axis names: ``UTC``, ``local, UTC+01:00`` or, with mixed zones, why it is UTC."""
        return MIXED_AXIS if self.mixed else self.label()

    @property
    def local(self) -> bool:
        return self.mode == LOCAL and self._series is not None

    def offsets(self, epoch_s) -> np.ndarray:
        """Seconds east of UTC of each UTC epoch second in the shown zone."""
        v = np.atleast_1d(np.asarray(epoch_s, np.float64))
        if not self.local:
            return np.zeros(len(v))
        t, off = self._series
        return off[np.clip(np.searchsorted(t, v, side="right") - 1, 0, len(t) - 1)]

    def offset_at(self, epoch_s: float) -> float:
        return float(self.offsets([epoch_s])[0])

    def wall(self, t: Any) -> pd.Timestamp | None:
        """A UTC time (naive or aware) as the naive wall-clock time of the shown zone."""
        if t is None or pd.isna(t):
            return None
        ts = pd.Timestamp(t)
        ts = ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts
        return ts + pd.Timedelta(seconds=self.offset_at(ts.value / 1e9))

    def wall_series(self, s: pd.Series) -> pd.Series:
        if not self.local or not len(s):
            return s
        t = pd.to_datetime(s)
        if getattr(t.dt, "tz", None) is not None:
            t = t.dt.tz_convert("UTC").dt.tz_localize(None)
        off = self.offsets(t.to_numpy("datetime64[ns]").view(np.int64) / 1e9)
        return t + pd.to_timedelta(off, unit="s")

    def label(self) -> str:
        """``UTC`` or ``local, UTC+01:00/UTC+02:00``; with more than two offsets their range and count
        (``local, UTC-05:00 .. UTC-00:15, 20 offsets``): an axis label of every offset would be one line wider
        than the window."""
        if not self.local:
            return "UTC"
        offs = list(dict.fromkeys(self._series[1].tolist()))
        if len(offs) > 2:
            return f"local, {offset_text(min(offs))} .. {offset_text(max(offs))}, {len(offs)} offsets"
        return "local, " + "/".join(offset_text(o) for o in offs)

    def switches(self) -> list[tuple[float, float, float]]:
        """(UTC epoch s, from, to) of every change of the shared offsets."""
        if self._series is None:
            return []
        t, off = self._series
        return [(float(t[j]), float(off[j - 1]), float(off[j])) for j in np.flatnonzero(np.diff(off)) + 1]


ZONE = DisplayZone()


def install(w: Any) -> QAction:
    """View > Local time (checkable, kept in the settings), the chip's toggle, axis labels and switch markers."""
    act = QAction(ACT_LOCAL, w)
    act.setCheckable(True)
    act.setToolTip(ACT_LOCAL_TIP)
    act.setStatusTip(ACT_LOCAL_TIP)
    want_local = settings.get_value(SETTING, LOCAL) != UTC
    act.setChecked(want_local)
    act.setEnabled(False)
    chip = getattr(w, "chip", None)
    markers: dict[int, list] = {}

    def apply_mode() -> None:
        ZONE.set_mode(LOCAL if act.isChecked() and (ZONE.available or ZONE.can_mix) else UTC)
        if chip is not None and hasattr(chip, "zone_button"):   # mixed zones: the toggle says the times stay UTC
            chip.zone_button.blockSignals(True)
            chip.zone_button.setChecked(act.isChecked())
            chip.zone_button.setText(MIXED_BUTTON if ZONE.mixed else "Local" if act.isChecked() else "UTC")
            chip.zone_button.setToolTip(MIXED_TIP.format(systems=ZONE.systems_text()) if ZONE.can_mix
                                        else BUTTON_TIP)
            chip.zone_button.blockSignals(False)

    def toggled(on: bool) -> None:
        settings.set_value(SETTING, LOCAL if on else UTC)
        apply_mode()

    def on_view(view: Any) -> None:
        zones = getattr(view, "zones", None)
        if zones is not None:
            ZONE.set_zones(zones)
            act.setEnabled(ZONE.available or ZONE.can_mix)
            act.setToolTip(MIXED_TIP.format(systems=ZONE.systems_text()) if ZONE.can_mix else ACT_LOCAL_TIP)
            if chip is not None and hasattr(chip, "zone_button"):
                chip.zone_button.setVisible(ZONE.available or ZONE.can_mix)
            apply_mode()

    def refresh() -> None:
        tl = getattr(w, "timeline", None)
        if tl is not None and getattr(tl, "_built", True):    # plots not built yet: done when they are
            try:
                tl.base.setLabel("bottom", f"Interval end ({ZONE.axis_label()})", **{"font-size": "8pt"})
            except (AttributeError, TypeError):
                pass
            _draw_markers(tl, markers, getattr(w, "dark", False))
            for p in [*getattr(tl, "plots", {}).values(), getattr(tl, "base", None), getattr(tl, "overview", None)]:
                if p is not None:
                    p.getAxis("bottom").picture = None
                    p.getAxis("bottom").update()
        if chip is not None:
            sel = getattr(getattr(w, "selection", None), "value", None)
            chip.set_window(getattr(sel, "start", None), getattr(sel, "end", None))
        model = getattr(getattr(w, "table", None), "model", None)
        if model is not None and hasattr(model, "zone_changed"):
            model.zone_changed()

    def safe_refresh() -> None:
        try:
            refresh()
        except RuntimeError:          # the window's items are gone (it is closing)
            pass

    ZONE.set_zones(None)              # a new window: no data yet
    act.toggled.connect(toggled)
    ZONE.changed.connect(safe_refresh)
    built = getattr(getattr(w, "timeline", None), "on_built", None)
    if built is not None:              # the timelines' plots are built when first shown: their axis and markers then
        built.append(safe_refresh)
    w.destroyed.connect(lambda *_: _disconnect(safe_refresh))
    if chip is not None and hasattr(chip, "zone_button"):
        chip.zone_button.setChecked(act.isChecked())
        chip.zone_button.setText("Local" if act.isChecked() else "UTC")
        chip.zone_button.toggled.connect(act.setChecked)
    w.runner.done.connect(on_view)
    w.actions_.view_menu.addAction(act)
    w.local_time_action = act
    return act


def _disconnect(fn) -> None:
    try:
        ZONE.changed.disconnect(fn)
    except (RuntimeError, TypeError):
        pass


def _draw_markers(tl: Any, markers: dict, dark: bool) -> None:
    """A dashed vertical line at each switch of the shared offsets on every data plot (labelled on the first)."""
    import pyqtgraph as pg    # here: the window's start does not import it (issue 23)

    plots = list(getattr(tl, "plots", {}).values())
    sw = ZONE.switches()
    for p in plots:
        old = markers.pop(id(p), [])
        for item in old:
            p.removeItem(item)
        items = []
        for k, (t, a, b) in enumerate(sw):
            line = pg.InfiniteLine(pos=t, angle=90, movable=False,
                                   pen=pg.mkPen(MARKER_PEN, width=1, style=Qt.PenStyle.DashLine),
                                   label=f"{offset_text(a)} \u2192 {offset_text(b)}" if p is plots[0] else None,
                                   labelOpts={"position": 0.9, "color": MARKER_PEN, "anchors": [(0, 0), (0, 0)]})
            line.setZValue(4)
            line.setToolTip(f"local time changed from {offset_text(a)} to {offset_text(b)}")
            line.dst_marker = True
            p.addItem(line, ignoreBounds=True)
            items.append(line)
        markers[id(p)] = items
