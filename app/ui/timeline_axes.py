"""Axes of the timelines: UTC time axes with month names at day boundaries, value axes with room for labels."""

from __future__ import annotations

import datetime as dt

import numpy as np
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
    """A value axis with at least three labelled ticks inside the plot, at least ``MIN_TICK_PX`` apart.

    pyqtgraph puts two or more major ticks on an axis whatever its length; on the short stacked plots of a
    700-pixel-high window the labels ran into each other or, at the plot's edges, were hidden, leaving a single
    number.  Here the labelled step is the largest "nice" step (1, 2, 5 x 10^k) that leaves three ticks
    inside the plot (away from the edges, where labels would overhang) with room between them; when the plot is
    too short for three, the step that keeps labels ``MIN_TICK_PX`` apart.
    """

    MIN_TICK_PX = 13
    EDGE_PX = 6

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 (Qt/pyqtgraph name)
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or size <= 0 or maxVal == minVal:
            return levels
        lo, hi = min(minVal, maxVal), max(minVal, maxVal)
        px = size / (hi - lo)
        edge = self.EDGE_PX / px
        steps = nice_steps(hi - lo)
        roomy = [st for st in steps if st * px >= self.MIN_TICK_PX]
        if not roomy:
            return levels
        step = next((st for st in roomy if inner_ticks(lo + edge, hi - edge, st) >= 3), roomy[-1])
        return [(step, 0), (step / 5 if str(step).lstrip("0.").startswith("1") else step / 2, 0)]


def nice_steps(span: float) -> list[float]:
    """Nice tick steps (1, 2, 5 x 10^k) from about ``span`` down to about ``span`` / 100, largest first."""
    if span <= 0:
        return []
    k = int(np.floor(np.log10(span)))
    out = [m * 10.0 ** e for e in range(k, k - 3, -1) for m in (5, 2, 1)]   # no 2.5: labels would round (3.25 -> 3.2)
    return [st for st in out if st <= span]


def inner_ticks(lo: float, hi: float, step: float) -> int:
    """How many multiples of ``step`` lie in [lo, hi]."""
    if hi < lo:
        return 0
    return int(np.floor(hi / step + 1e-9) - np.ceil(lo / step - 1e-9) + 1)


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
