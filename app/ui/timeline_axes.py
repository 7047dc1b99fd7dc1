"""Axes of the timelines: UTC time axes with month names at day boundaries, value axes with room for labels."""

from __future__ import annotations

import datetime as dt

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsLinearLayout, QGraphicsWidget

LEGEND_SPACING = 6
DAY = 86400


class UtcDateAxis(pg.DateAxisItem):
    """A UTC time axis whose day ticks carry the month name (``Nov 02``, ``Dec 01``), never a bare weekday.

    pyqtgraph writes day ticks as ``Mon 02`` and, zoomed out, a bare ``02``: across a month boundary the reader
    cannot tell which month a tick is in.  Year ticks keep the year; time-of-day ticks stay ``HH:MM``.
    """

    def __init__(self, orientation: str = "bottom", **kwargs) -> None:
        super().__init__(orientation=orientation, utcOffset=0, **kwargs)

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        out = super().tickStrings(values, scale, spacing)
        if spacing < DAY:
            # time-of-day ticks: a tick at midnight names its day (the day level may be skipped when crowded)
            return [_day(v) if _is_midnight(v) else s for v, s in zip(values, out, strict=True)]
        if spacing >= 365 * DAY:
            return out
        if spacing >= 28 * DAY:
            return [dt.datetime.fromtimestamp(v, dt.UTC).strftime("%b %Y") for v in values]
        return [_day(v) for v in values]


def _is_midnight(v: float) -> bool:
    return abs(v % DAY) < 1


def _day(v: float) -> str:
    return dt.datetime.fromtimestamp(v, dt.UTC).strftime("%b %d")


class SparseAxis(pg.AxisItem):
    """A value axis whose major ticks stay at least ``MIN_TICK_PX`` apart.

    pyqtgraph always puts two or more major ticks on an axis whatever its length, so
    on the short stacked plots of a 700-pixel-high window the labels ran into each
    other; widening the major step until the labels have room keeps them legible.
    The minor level is kept as labelled ticks while it is at least ``MIN_TICK_PX`` apart,
    so even a short plot reads at least three values.
    """

    MIN_TICK_PX = 15

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 (Qt/pyqtgraph name)
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or size <= 0 or maxVal == minVal:
            return levels
        major, offset = levels[0]
        px = size / abs(maxVal - minVal)
        while major * px < self.MIN_TICK_PX:
            major *= 2 if str(major).lstrip("0.").startswith(("1", "5")) else 2.5
        # fewer than three labelled values: label the next finer step too when it has room
        if abs(maxVal - minVal) / major < 3:
            finer = major / 2
            if finer * px >= self.MIN_TICK_PX:
                major = finer
        return [(major, offset)] + [lv for lv in levels[1:] if lv[0] < major]


def legend_in_title_row(plot: pg.PlotItem) -> None:
    """Move the legend out of the data area: title and legend side by side in the plot's title row.

    ``plot.legend`` is set, so ``plot.plot(..., name=...)`` still adds its entry.
    """
    legend = pg.LegendItem(labelTextSize="7pt", horSpacing=LEGEND_SPACING, verSpacing=-6)
    legend.setColumnCount(8)
    row = QGraphicsWidget()
    lay = QGraphicsLinearLayout(Qt.Orientation.Horizontal)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(12)
    plot.layout.removeItem(plot.titleLabel)
    lay.addItem(plot.titleLabel)
    lay.addItem(legend)
    lay.addStretch(1)
    lay.setAlignment(plot.titleLabel, Qt.AlignmentFlag.AlignVCenter)
    lay.setAlignment(legend, Qt.AlignmentFlag.AlignVCenter)
    row.setLayout(lay)
    plot.layout.addItem(row, 0, 1)
    plot.legend = legend
