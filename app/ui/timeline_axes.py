"""Axes of the timelines: UTC time axes with month names at day boundaries, value axes with room for labels."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsLinearLayout, QGraphicsWidget, QListWidget, QListWidgetItem

from app.ui import messages as M
from app.ui.palette import CHART_THEMES
from app.ui.time_zone import ZONE
from app.ui.timeline_plots import LEFT_AXIS_WIDTH, MT_AXIS, MT_AXIS_SHORT, Series, node_color

LEGEND_SPACING = 6
DAY = 86400
THEMES = CHART_THEMES          # the plots' colours come from app.ui.palette, as every other colour


class UtcDateAxis(pg.DateAxisItem):
    """A UTC time axis with one level of labelled ticks that never run into each other.

    Up to :data:`OWN_TICKS_MAX_DAYS` of data the ticks are this axis's own, on one level: whole hours (1, 2, 3, 4,
    6, 12) or whole days (1, 2, 3, 5, 7 or 14; weeks start on Mondays), the smallest step that leaves
    :data:`LABEL_PX` per label, so a month-long axis shows day ticks (``Nov 03``) and no month or year tick
    (``Nov 2026``) is printed over a day tick.  Day ticks carry the month name, never a bare weekday; a
    time-of-day tick at midnight names its day.  Longer spans keep pyqtgraph's levels (months, years).
    """

    LABEL_PX = 64              # px per label: "Nov 03" / "18:00" at the axis's 7-8 pt and a gap
    OWN_TICKS_MAX_DAYS = 120
    _HOURS = (1, 2, 3, 4, 6, 12)
    _DAYS = (1, 2, 3, 5, 7, 14)

    def __init__(self, orientation: str = "bottom", **kwargs) -> None:
        super().__init__(orientation=orientation, utcOffset=0, **kwargs)
        self._own = False

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph name)
        off = ZONE.offset_at(minVal)       # ticks on whole hours / midnights of the shown zone (app.ui.time_zone)
        values = own_ticks(minVal + off, maxVal + off, size, self.LABEL_PX, self.OWN_TICKS_MAX_DAYS)
        self._own = values is not None
        if values is not None and off:
            values = [(st, [v - off for v in vs]) for st, vs in values]
        return values if values is not None else super().tickValues(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        if ZONE.local:
            values = [v + ZONE.offset_at(v) for v in values]    # labels in the shown zone's wall-clock time
        if self._own:
            if spacing >= DAY:
                return [_day(v) for v in values]
            return [_day(v) if _is_midnight(v) else dt.datetime.fromtimestamp(v, dt.UTC).strftime("%H:%M")
                    for v in values]
        out = super().tickStrings(values, scale, spacing)
        if spacing < DAY:
            # time-of-day ticks: a tick at midnight names its day (the day level may be skipped when crowded)
            return [_day(v) if _is_midnight(v) else s for v, s in zip(values, out, strict=True)]
        if spacing >= 365 * DAY:
            return out
        if spacing >= 28 * DAY:
            return [dt.datetime.fromtimestamp(v, dt.UTC).strftime("%b %Y") for v in values]
        return [_day(v) for v in values]


def own_ticks(lo: float, hi: float, size: float, label_px: float = 64,
              max_days: float = 120) -> list[tuple[float, list[float]]] | None:
    """One level of time ticks for ``lo..hi`` (UTC seconds) on an axis ``size`` px long: the smallest whole-hour or
    whole-day step that leaves ``label_px`` per label, aligned to UTC midnight (weeks to Mondays); None when the
    span is shorter than 6 hours or longer than ``max_days`` (pyqtgraph's own levels serve there)."""
    span = hi - lo
    if size <= 0 or span < 6 * 3600 or span > max_days * DAY:
        return None
    fit = max(1.0, size / label_px)
    steps = [h * 3600.0 for h in UtcDateAxis._HOURS] + [d * float(DAY) for d in UtcDateAxis._DAYS]
    step = next((st for st in steps if span / st <= fit), steps[-1])
    shift = 4 * DAY if step >= 7 * DAY else 0          # 1970-01-01 was a Thursday: weeks from Monday 1970-01-05
    first = math.ceil((lo - shift) / step) * step + shift
    return [(step, [float(v) for v in np.arange(first, hi + 1e-6, step)])]


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

    MIN_TICK_PX = 12   # the 7-8 pt tick labels are ~11 px high
    EDGE_PX = 3   # a label this close to the edge still shows (pyqtgraph lets labels overhang 8 px)

    def setLabel(self, text=None, units=None, unitPrefix=None, **args):  # noqa: N802, N803 (pyqtgraph names)
        if text is not None:
            self._full_label = str(text)
            self.setToolTip(str(text))      # the whole label, also where the axis shows its short form
        super().setLabel(text=text, units=units, unitPrefix=unitPrefix, **args)

    def resizeEvent(self, ev=None):  # noqa: N802 (Qt name)
        self._fit_label()                 # the label as long as the axis now allows, then placed by pyqtgraph
        super().resizeEvent(ev)

    def _fit_label(self) -> None:
        """The unit label as long as the axis lets it be: the full text, else its short form, else none, so the
        vertical labels of short stacked plots never run into their neighbours'."""
        full = getattr(self, "_full_label", None)
        if not full or self.label is None:
            return
        text = fitted_label(full, self.size().height(), lambda t: label_width(self.label, t))
        if text != self.labelText:
            self.labelText = text
            self.label.setHtml(self.labelString() if text else "")

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


# the value-axis labels' short forms, for plots too short for the full text (a picture of many stacked plots)
SHORT_LABELS = {"cycles / instr": "CPI", "per 100 instr": "/100 instr", "% of L1 misses": "%", "% of one CPU": "%",
                MT_AXIS: (MT_AXIS_SHORT, "IPC · threads/core", "IPC · threads", "IPC/TD"),
                # the SMT tab's charts (app.ui.smt_charts.CHARTS)
                "Thread density (threads per core)": ("Thread density (thr/core)", "threads/core"),
                "Capacity factor (% of 1 thread/core)": ("Capacity factor (%)", "CF (%)"),
                "MT utilization (% of core capacity)": ("MT utilization (%)", "MT util (%)")}


def fitted_label(full: str, height: float, width_of) -> str:
    """``full``, its short form or "" -- the first whose rendered width fits ``height`` - 4 px."""
    short = SHORT_LABELS.get(full, "")
    for text in (full, *(short if isinstance(short, tuple) else (short,))):
        if text and width_of(text) <= height - 4:
            return text
    return ""


def label_width(label, text: str) -> float:
    """Rendered width in px of ``text`` in an axis label item's font."""
    from PySide6.QtGui import QFontMetricsF

    return QFontMetricsF(label.font()).horizontalAdvance(text)


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
    plot.titleLabel.setAttr("justify", "left")     # at the left edge also where the legend goes under it
    lay.addItem(plot.titleLabel)
    lay.addItem(legend)
    lay.addStretch(1)
    lay.setAlignment(plot.titleLabel, Qt.AlignmentFlag.AlignVCenter)
    lay.setAlignment(legend, Qt.AlignmentFlag.AlignVCenter)
    row.setLayout(lay)
    # the row never makes the plot wider than the view (the stack's right side was clipped): where even one
    # legend column does not fit beside a long title (a node's sourcing plot ~350 px wide), the legend's end is
    # cut instead of the data area (issue 26)
    row.setMinimumWidth(0)
    plot.layout.addItem(row, 0, 1)
    plot.legend = legend
    plot.title_row = lay          # fit_legends may stack the legend under the title (legend_under)


def fix_axes(plot: pg.PlotItem, show_bottom: bool) -> None:
    """Fixed left axis width (stacked plots line up), labels only on the first tick level, grid, no menu."""
    plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
    plot.getAxis("left").setStyle(maxTextLevel=0, hideOverlappingLabels=8)   # edge labels may overhang 8 px
    plot.showAxis("bottom", show_bottom)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setMenuEnabled(False)


class ColumnViewBox(pg.ViewBox):
    """A view x-linked to views of the same column: the linked range is copied exactly.

    pyqtgraph lines linked views up by their screen pixels (rounded to whole pixels): with a view 455.5 px wide
    the time axis and the plots above it differed by one pixel's worth of time (4 s at one hour), so the crosshair
    and the shaded window drifted off the time axis (issue 26).  Views whose left and right edges agree within a
    pixel are one column: same range; others keep pyqtgraph's alignment."""

    def linkedViewChanged(self, view, axis) -> None:   # noqa: N802 - pyqtgraph's name
        if axis != pg.ViewBox.XAxis or self.linksBlocked or view is None:
            super().linkedViewChanged(view, axis)
            return
        a, b = self.sceneBoundingRect(), view.sceneBoundingRect()
        if abs(a.left() - b.left()) > 1 or abs(a.right() - b.right()) > 1:
            super().linkedViewChanged(view, axis)
            return
        x1, x2 = view.viewRange()[0]
        view.blockLink(True)
        try:
            self.enableAutoRange(pg.ViewBox.XAxis, False)
            self.setXRange(x1, x2, padding=0)
        finally:
            view.blockLink(False)


class TimeViewBox(ColumnViewBox):
    """The view of a data plot: the wheel and drags move time only (the value axis follows the data in view);
    Shift+wheel zooms the value axis and pins it there; a double click gives it back to the data (``refit``, set
    by :func:`app.ui.timeline_plots.fit_y`: the data's range, or 0 to the top with "Axes from 0")."""

    refit = None   # callable restoring the value axis' rule

    def wheelEvent(self, ev, axis=None) -> None:   # noqa: N802 - pyqtgraph's name
        if axis is None and ev.modifiers() & Qt.KeyboardModifier.ShiftModifier and not self.fixed_y:
            self.state["mouseEnabled"][1] = True      # just for this step: y only, which pins it (no auto range)
            try:
                super().wheelEvent(ev, axis=1)
            finally:
                self.state["mouseEnabled"][1] = False
            return
        super().wheelEvent(ev, axis)

    def mouseClickEvent(self, ev) -> None:   # noqa: N802 - pyqtgraph's name
        if ev.double() and ev.button() == Qt.MouseButton.LeftButton and callable(self.refit):
            self.refit()
            ev.accept()
            return
        super().mouseClickEvent(ev)


def make_data_plot(title: str, unit: str, base_vb: pg.ViewBox, fixed_y: bool = False) -> pg.PlotItem:
    """A stacked data plot: UTC time axis (hidden; the base plot shows it) linked to ``base_vb``, value axis with
    its unit, legend in the title row; ``fixed_y``: the y range is set by the drawing, else it fits the data in view."""
    vb = TimeViewBox()
    vb.fixed_y = fixed_y
    p = pg.PlotItem(viewBox=vb, axisItems={"bottom": UtcDateAxis("bottom"), "left": SparseAxis(orientation="left")})
    fix_axes(p, False)
    p.setTitle(title, size="9pt")
    legend_in_title_row(p)
    p.setLabel("left", unit, **{"font-size": "7pt"})
    p.setXLink(base_vb)
    # the mouse wheel and drags zoom and pan time only: the value axis stays fitted to the data in view (a wheel
    # over the CPI plot left it at 3.4-3.8 with the lines off the chart); "Axes from 0" still applies (fit_y)
    p.getViewBox().setMouseEnabled(x=True, y=False)
    p.getViewBox().setAutoVisible(y=not fixed_y)
    return p


def make_base_plot(label: str, height: int) -> pg.PlotItem:
    """The thin plot holding the time axis at the bottom of the stack."""
    p = pg.PlotItem(viewBox=ColumnViewBox(), axisItems={"bottom": UtcDateAxis("bottom")})
    fix_axes(p, True)
    p.getAxis("left").setStyle(showValues=False)
    p.hideButtons()
    p.setLabel("bottom", label, **{"font-size": "7pt"})
    p.setMaximumHeight(height)
    p.setMinimumHeight(height)
    p.getViewBox().setMouseEnabled(y=False)
    return p


def make_overview(title: str, height: int) -> pg.PlotItem:
    """The overview under the stack: the whole range, where the window region is dragged."""
    p = pg.PlotItem(axisItems={"bottom": UtcDateAxis("bottom"), "left": SparseAxis(orientation="left")})
    fix_axes(p, True)
    # 7pt as the legends: the title is the widest item of the stack, which must fit a 370 px plot (the tree panel
    # dragged to its widest at 1024x700) or the stack is wider than its view and clipped on the right (issue 26)
    p.setTitle(title, size="7pt")
    p.setMaximumHeight(height)
    p.setMinimumHeight(height)
    p.getAxis("left").setStyle(showValues=False)   # a chooser: its shape is enough
    p.setMouseEnabled(x=False, y=False)
    return p


def make_chooser(order: tuple[str, ...], wanted: list[str]) -> QListWidget:
    """The checkable plot list (``wanted`` checked; MT always starts checked, it shows only with MT data)."""
    chooser = QListWidget()
    chooser.setMaximumWidth(110)
    for pid in order:
        item = QListWidgetItem(M.PLOT_SHORT[pid])
        item.setToolTip(M.PLOT_TITLES[pid])
        item.setData(Qt.ItemDataRole.UserRole, pid)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if pid in wanted or pid == "mt" else Qt.CheckState.Unchecked)
        chooser.addItem(item)
    return chooser


def draw_overview(plot: pg.PlotItem, region: pg.LinearRegionItem, series: list[Series],
                  data_range: tuple[float, float]) -> None:
    """The overview: each node's LPARCPU (CPI without it) in the node's colour, the region over the whole range."""
    plot.clear()
    plot.addItem(region, ignoreBounds=True)
    lo, hi = data_range
    for i, s in enumerate(series[:8]):
        col = "LPARCPU" if "LPARCPU" in s.rows and s.rows["LPARCPU"].notna().any() else "CPI"
        if col in s.rows:
            plot.plot(s.x, s.rows[col].to_numpy(dtype=float), connect="finite", pen=pg.mkPen(node_color(i), width=1))
    if hi > lo:
        plot.setXRange(lo, hi, padding=0.01)
        region.blockSignals(True)
        region.setBounds((lo, hi))
        region.setRegion((lo, hi))
        region.blockSignals(False)


def fit_legends(plots, width: float, under: bool = False) -> None:
    """As many legend entries per row as fit right of each plot's title (more rows when they do not).

    The row is measured as the legend's grid lays it out: each column as wide as its widest label, plus the line
    sample and the spacing of every entry (the widest label times the count wrapped the CPI legend onto a second
    row, shrinking the plot's data area, at widths where its three entries fit: issue 26).  The full names
    (:data:`LEGEND_LONG`) are given where they take no more rows than the short ones.  ``under``: a legend
    that wraps beside the title goes under it (the plot's whole width, fewer rows) where that takes no more
    rows, the title's own row counted (the sourcing legend on a narrow plot: 5 rows of one entry beside a long
    title, 2 rows under it); the caller grows the plot by what its title row needs (:func:`title_height`)."""
    for p in plots:
        legend = p.legend
        if legend is None or not legend.items:
            continue
        beside = width - p.titleLabel.itemRect().width() - 20
        full = width - 20 if under and hasattr(p, "title_row") else None
        _long_or_short(legend, beside, full)
        widths = [label.itemRect().width() for _s, label in legend.items]
        _rows, cols, below = _placement(widths, beside, full)
        legend.setColumnCount(cols)
        place_legend(p, below)


def _columns(widths: list[float], room: float) -> int:
    """The most entries a row that fit in ``room`` (at least one)."""
    cols = len(widths)
    while cols > 1 and legend_row_width(widths, cols) > room:
        cols -= 1
    return cols


def _placement(widths: list[float], beside: float, full: float | None) -> tuple[int, int, bool]:
    """``(rows of the title row, entries a row, under the title)``: beside the title, or under it where that
    takes no more rows (the title's row counted) and the legend wraps beside it."""
    n = len(widths)
    cols = _columns(widths, beside)
    rows = -(-n // cols)
    if full is not None and rows > 1:
        cols_u = _columns(widths, full)
        rows_u = -(-n // cols_u) + 1
        if rows_u <= rows:
            return rows_u, cols_u, True
    return rows, cols, False


def place_legend(plot: pg.PlotItem, below: bool) -> None:
    """The legend beside the plot's title (one row of title and legend) or under it (``below``)."""
    lay = getattr(plot, "title_row", None)
    if lay is None:
        return
    want = Qt.Orientation.Vertical if below else Qt.Orientation.Horizontal
    if lay.orientation() != want:
        lay.setOrientation(want)
        align = Qt.AlignmentFlag.AlignLeft if below else Qt.AlignmentFlag.AlignVCenter
        lay.setAlignment(plot.titleLabel, align)
        lay.setAlignment(plot.legend, align)
        # under the title: no gap between them and none above the legend's first row (beside: 12 px apart)
        lay.setSpacing(0 if below else 12)
        plot.legend.layout.setContentsMargins(9, 0 if below else 9, 9, 4 if below else 9)
        plot.legend.updateSize()
    plot.legend_under = below


def title_height(plot: pg.PlotItem) -> float:
    """Height the plot's title row (title and legend, beside or under it) takes as laid out now."""
    lay = getattr(plot, "title_row", None)
    if lay is None:
        return 0.0
    lay.invalidate()
    return float(lay.effectiveSizeHint(Qt.SizeHint.PreferredSize).height())


# a legend entry's short name -> its full name where the full names take no more rows than the short ones (a wide
# plot, a picture for a slide); the short ones on a narrow plot (the legend's tooltip names them).  The CPI plot's
# parts, and the sourcing plot's levels: IBM's ids (L4RP) short, as analysts say them (L4 remote) in full
LEGEND_LONG = {"Instr Cmplx": "Est Instr Cmplx CPI", "Finite": "Est Finite CPI",
               "L15P": "L1.5", "L2P": "L2", "L2LP": "L2 local", "L2RP": "L2 remote", "L3P": "L3",
               "L4LP": "L4 local", "L4RP": "L4 remote", "MEMP": "Memory"}


def _long_or_short(legend, beside: float, full: float | None = None) -> None:
    labels = [label for _s, label in legend.items]
    short = [getattr(label, "short_text", None) or label.text for label in labels]
    if not any(t in LEGEND_LONG for t in short):
        return
    for label, t in zip(labels, short):
        label.short_text = t
        label.setText(t)
    rows_short = _placement([label.itemRect().width() for label in labels], beside, full)[0]
    for label, t in zip(labels, short):
        label.setText(LEGEND_LONG.get(t, t))
    if _placement([label.itemRect().width() for label in labels], beside, full)[0] > rows_short:
        for label, t in zip(labels, short):
            label.setText(t)


def legend_row_width(widths: list[float], cols: int) -> float:
    """Width of a legend laid out ``cols`` entries a row: the widest label of each column, plus each entry's line
    sample (20 px), the grid's spacing between its columns and the 3 px pyqtgraph adds to each item (a few px to spare)."""
    label_cols = [max(widths[c::cols]) for c in range(cols)]
    return sum(label_cols) + cols * (20 + 2 * LEGEND_SPACING + 6) - LEGEND_SPACING + 4


def legend_rows(plot: pg.PlotItem) -> int:
    """Rows the plot's legend takes now (0 without entries)."""
    legend = plot.legend
    if legend is None or not legend.items:
        return 0
    return -(-len(legend.items) // max(legend.columnCount, 1))
