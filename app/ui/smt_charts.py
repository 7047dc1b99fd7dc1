"""SMT tab charts: thread density, capacity factor and MT utilization per LPAR and core type over time (issue 26).

One line per (LPAR, core type) from the interval rows of ``ws.smt(by="type")`` (the mean rows are the tables');
each plot's value axis names what it draws and its unit, the time axis the window's time zone.  The legend is in
the first plot's title row (never over the lines), and a line of 1-minute z/VM values is drawn as the mean of the
values under each few pixels (zoomed in: every value), so the trend reads instead of a solid band of noise.  A plot
whose metric has no value in the selection says so in place of lines (capacity factor: z/OS keeps it in SMF 70,
which NestScope does not read).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from app.textsafe import shown_text
from app.ui.palette import CHART_THEMES
from app.ui.time_zone import ZONE
from app.ui.timeline_axes import SparseAxis, UtcDateAxis, fit_legends, legend_in_title_row
from app.ui.timeline_plots import epoch_seconds, node_color

__all__ = ["SmtCharts", "CHARTS"]

# engine column, plot title, value-axis label (what it draws, with its unit)
CHARTS = (
    ("thread_density", "Thread density", "Thread density (threads per core)"),
    ("capacity_factor", "Capacity factor", "Capacity factor (% of 1 thread/core)"),
    ("mt_utilization", "MT utilization", "MT utilization (% of core capacity)"),
)
# (their shorter forms, where a plot is too short for the whole label: timeline_axes.SHORT_LABELS)
NO_VALUES = "no values for this selection"
DOWNSAMPLE_PER_PX = 0.5     # at most one drawn point (a mean of values) per 2 px; every value once zoomed in
TIME_LABEL = "Interval end ({zone})"


class SmtCharts(pg.GraphicsLayoutWidget):
    """Three plots side by side with linked time axes; :meth:`set_frame` draws a ``ws.smt(by="type")`` frame."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.plots: dict[str, pg.PlotItem] = {}
        self.notes: dict[str, pg.TextItem] = {}
        self.lines: dict[str, list[tuple[str, pg.PlotDataItem]]] = {}
        first = None
        for i, (col, title, axis) in enumerate(CHARTS):
            p = self.addPlot(row=0, col=i, axisItems={"bottom": UtcDateAxis("bottom"),
                                                      "left": SparseAxis(orientation="left")})
            p.setTitle(title, size="9pt")
            p.setLabel("left", axis, **{"font-size": "7pt"})
            p.setLabel("bottom", TIME_LABEL.format(zone=ZONE.axis_label()), **{"font-size": "8pt"})
            p.showGrid(x=True, y=True, alpha=0.2)
            p.getViewBox().setMouseEnabled(y=False)
            p.setDownsampling(auto=True, mode="mean")     # the trend of 1-minute values, every value when zoomed
            p.setClipToView(True)
            if first is None:
                first = p
                legend_in_title_row(p)                     # beside the title, never over the lines
            else:
                p.setXLink(first)
            note = pg.TextItem(NO_VALUES, color="#777777", anchor=(0.5, 0.5))
            note.setVisible(False)
            p.addItem(note, ignoreBounds=True)
            self.plots[col], self.notes[col], self.lines[col] = p, note, []

    def zone_changed(self) -> None:
        """The window's time zone changed (:mod:`app.ui.time_zone`): the time axes' labels and ticks follow."""
        for p in self.plots.values():
            p.setLabel("bottom", TIME_LABEL.format(zone=ZONE.axis_label()), **{"font-size": "8pt"})
            ax = p.getAxis("bottom")
            ax.picture = None
            ax.update()

    def resizeEvent(self, event) -> None:   # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_legend()

    def _fit_legend(self) -> None:
        first = getattr(self, "plots", {}).get(CHARTS[0][0])     # (a resize while the plots are being built)
        if first is None:
            return
        fit_legends([first], max(first.size().width() - 40, 120))

    def set_frame(self, by_type: pd.DataFrame | None) -> None:
        """Draw the interval rows of ``by_type`` (None or empty: clear)."""
        for col, p in self.plots.items():
            p.clear()
            p.addItem(self.notes[col], ignoreBounds=True)
            self.lines[col] = []
        legend = self.plots[CHARTS[0][0]].legend
        if legend is not None:
            legend.clear()
        rows = _interval_rows(by_type)
        groups = list(rows.groupby(["lpar", "core_type"], sort=True, observed=True)) if len(rows) else []
        for col, p in self.plots.items():
            drawn = 0
            for i, ((lpar, ctype), g) in enumerate(groups):
                g = g.sort_values("interval_end")
                y = pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=np.float64)
                if not np.isfinite(y).any():
                    continue
                name = shown_text(f"{lpar} {ctype}")
                item = p.plot(epoch_seconds(g["interval_end"]), y, pen=pg.mkPen(node_color(i), width=1.5),
                              name=name if col == CHARTS[0][0] else None, connect="finite",
                              autoDownsampleFactor=DOWNSAMPLE_PER_PX)
                self.lines[col].append((name, item))
                drawn += 1
            note = self.notes[col]
            note.setVisible(bool(groups) and not drawn)
            if note.isVisible():
                p.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
                note.setPos(0.5, 0.5)
            else:
                p.enableAutoRange()
        self._fit_legend()

    def set_dark(self, dark: bool) -> None:
        """The plots in the chart theme of the window's palette."""
        theme = CHART_THEMES[bool(dark)]
        self.setBackground(theme["bg"])
        for p in self.plots.values():
            for name in ("left", "bottom"):
                ax = p.getAxis(name)
                ax.setPen(theme["line"])
                ax.setTextPen(theme["fg"])
            p.titleLabel.setText(p.titleLabel.text, color=theme["fg"])

    def axis_label(self, col: str, shown: bool = False) -> str:
        """The value axis' whole label of the plot of ``col`` (``shown``: the form the axis' height lets it show)."""
        ax = self.plots[col].getAxis("left")
        return str(ax.labelText if shown else ax._full_label)


def _interval_rows(by_type: pd.DataFrame | None) -> pd.DataFrame:
    if by_type is None or not len(by_type):
        return pd.DataFrame()
    if "mean" in by_type.columns:
        return by_type.loc[~by_type["mean"].fillna(False).astype(bool)]
    return by_type
