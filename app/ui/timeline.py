"""Stacked timelines sharing one time axis, a crosshair, and a region choosing the time window.

Every data plot's x axis is linked, by object, to one base ViewBox: the thin
time-axis plot at the bottom of the stack, which is always in the scene.
"""

from __future__ import annotations

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGraphicsLinearLayout,
    QGraphicsWidget,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M
from app.ui import settings
from app.ui.timeline_plots import (
    LEFT_AXIS_WIDTH,
    MAX_SOURCING_NODES,
    PLOT_ORDER,
    Series,
    draw,
    draw_sourcing,
    has_data,
    readout,
    sourcing_columns,
    sourcing_series,
    split_series,
)

PLOTS_KEY = "timeline/plots"
THEMES = {False: {"bg": "w", "fg": "#202020", "line": "#505050", "region": (70, 130, 220, 50),
                 },
          True: {"bg": "#1e1e1e", "fg": "#e0e0e0", "line": "#c0c0c0", "region": (120, 170, 255, 60),
                }}


LEGEND_SPACING = 6


def _legend_in_title_row(plot: pg.PlotItem) -> None:
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


class SparseAxis(pg.AxisItem):
    """A value axis whose major ticks stay at least ``MIN_TICK_PX`` apart.

    pyqtgraph always puts two or more major ticks on an axis whatever its length, so
    on the short stacked plots of a 700-pixel-high window the labels ran into each
    other; widening the major step until the labels have room keeps them legible.
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
        return [(major, offset)] + [lv for lv in levels[1:] if lv[0] < major]


def _fix_axes(plot: pg.PlotItem, show_bottom: bool) -> None:
    plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
    plot.getAxis("left").setStyle(maxTextLevel=0, hideOverlappingLabels=8)   # edge labels may overhang 8 px
    plot.showAxis("bottom", show_bottom)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setMenuEnabled(False)


class TimelineView(QWidget):
    """Checkable plot list + stacked plots + overview with the window region."""

    window_requested = Signal(object, object)  # start, end Timestamps (None, None = whole range)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.series: list[Series] = []
        self.dark = False
        self.chooser = QListWidget()
        self.chooser.setMaximumWidth(110)
        wanted = settings.get_list(PLOTS_KEY) or [p for p in PLOT_ORDER if p != "mt"]
        for pid in PLOT_ORDER:
            item = QListWidgetItem(M.PLOT_SHORT[pid])
            item.setToolTip(M.PLOT_TITLES[pid])
            item.setData(Qt.ItemDataRole.UserRole, pid)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if pid in wanted or pid == "mt" else Qt.CheckState.Unchecked)
            self.chooser.addItem(item)
        self.chooser.itemChanged.connect(self._chooser_changed)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.ci.setSpacing(2)
        self.plots: dict[str, pg.PlotItem] = {}
        # the stacked sourcing plot shows one node; each further selected node gets one of these (small multiples)
        self.sourcing_extra: list[pg.PlotItem] = []
        self._n_sourcing = 0  # sourcing plots in use (1 + extras shown)
        self.vlines: dict[str, pg.InfiniteLine] = {}
        self._build_plots()
        self._build_layout()
        self.readout = QLabel(M.READOUT_EMPTY)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setWordWrap(True)
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.readout)
        rl.addWidget(self.glw, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(right)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.chooser)
        lay.addWidget(self.stack, 1)
        self.proxy = pg.SignalProxy(self.glw.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved)
        self.apply_theme(False)
        self._relayout()

    # -- construction --------------------------------------------------------------------------
    def _build_plots(self) -> None:
        self.base = pg.PlotItem(axisItems={"bottom": pg.DateAxisItem(orientation="bottom", utcOffset=0)})
        _fix_axes(self.base, True)
        self.base.getAxis("left").setStyle(showValues=False)
        self.base.hideButtons()
        self.base.setMaximumHeight(40)
        self.base.getViewBox().setMouseEnabled(y=False)
        self.base_vb = self.base.getViewBox()
        for pid in PLOT_ORDER:
            self.plots[pid] = self._make_plot(pid)
        self.sourcing_extra = [self._make_plot("sourcing") for _ in range(MAX_SOURCING_NODES - 1)]
        self.overview = pg.PlotItem(axisItems={"bottom": pg.DateAxisItem(orientation="bottom", utcOffset=0),
                                               "left": SparseAxis(orientation="left")})
        _fix_axes(self.overview, True)
        self.overview.setTitle(M.OVERVIEW_TITLE, size="8pt")
        self.overview.setMaximumHeight(110)
        self.overview.setMouseEnabled(x=False, y=False)
        self.region = pg.LinearRegionItem(swapMode="sort")
        self.region.setZValue(10)
        self.overview.addItem(self.region, ignoreBounds=True)
        self.region.sigRegionChangeFinished.connect(self._region_finished)

    def _make_plot(self, pid: str) -> pg.PlotItem:
        p = pg.PlotItem(axisItems={"bottom": pg.DateAxisItem(orientation="bottom", utcOffset=0),
                                   "left": SparseAxis(orientation="left")})
        _fix_axes(p, False)
        p.setTitle(M.PLOT_TITLES[pid], size="9pt")
        _legend_in_title_row(p)
        p.setXLink(self.base_vb)
        if pid == "sourcing":  # a stack of percentages: always 0..100
            p.getViewBox().setMouseEnabled(y=False)
        return p

    def sourcing_plots(self) -> list[pg.PlotItem]:
        """The stacked sourcing plots in use: one per node with sourcing data (at most MAX_SOURCING_NODES)."""
        return [self.plots["sourcing"], *self.sourcing_extra][:max(self._n_sourcing, 1)]

    def _data_plots(self) -> dict[str, pg.PlotItem]:
        """Every data plot by crosshair key (the extra sourcing plots as ``sourcing#1``...)."""
        out = dict(self.plots)
        out.update({f"sourcing#{i}": p for i, p in enumerate(self.sourcing_extra, 1)})
        return out

    def _shown_plots(self) -> list[pg.PlotItem]:
        """The data plots on screen, in stack order."""
        out = []
        for pid in self.visible_plots():
            out.extend(self.sourcing_plots() if pid == "sourcing" else [self.plots[pid]])
        return out

    def visible_plots(self) -> list[str]:
        """Checked plots that have data for the selection, in stack order."""
        out = []
        for i in range(self.chooser.count()):
            item = self.chooser.item(i)
            pid = item.data(Qt.ItemDataRole.UserRole)
            if item.checkState() == Qt.CheckState.Checked and (not self.series or has_data(self.series, pid)):
                out.append(pid)
        return out

    def _build_layout(self) -> None:
        """Every plot stays in the layout (and the scene) for good; hidden ones take no space."""
        row = 0
        for pid in PLOT_ORDER:
            for p in [self.plots[pid], *(self.sourcing_extra if pid == "sourcing" else [])]:
                self.glw.ci.addItem(p, row=row, col=0)
                row += 1
        self.glw.ci.addItem(self.base, row=row, col=0)
        self.glw.ci.addItem(self.overview, row=row + 1, col=0)

    def _relayout(self) -> None:
        visible = set(self.visible_plots())
        for pid, p in self.plots.items():
            p.setVisible(pid in visible)
        for i, p in enumerate(self.sourcing_extra, 1):
            p.setVisible("sourcing" in visible and i < self._n_sourcing)

    def _chooser_changed(self, _item: QListWidgetItem) -> None:
        checked = [self.chooser.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.chooser.count())
                   if self.chooser.item(i).checkState() == Qt.CheckState.Checked]
        settings.set_list(PLOTS_KEY, checked)
        self._relayout()

    # -- data ----------------------------------------------------------------------------------
    def set_frame(self, df: pd.DataFrame, loaded: bool = True) -> None:
        """Plot the per-interval rows of ``df`` (one series per node)."""
        self.series = split_series(df)
        for pid, p in self._data_plots().items():
            p.clear()
            if p.legend is not None:
                p.legend.clear()
            if self.series and pid in self.plots:
                draw(p, pid, self.series)
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(THEMES[self.dark]["line"], width=1))
            p.addItem(line, ignoreBounds=True)
            self.vlines[pid] = line
            if pid.startswith("sourcing"):
                p.disableAutoRange(axis="y")
                p.setYRange(0, 100, padding=0)
            else:
                p.enableAutoRange(axis="y")
        self._draw_sourcing_multiples()
        self._fit_legends()
        self._draw_overview()
        self.chooser.blockSignals(True)  # flag changes are not user choices
        for i in range(self.chooser.count()):
            item = self.chooser.item(i)
            enabled = not self.series or has_data(self.series, item.data(Qt.ItemDataRole.UserRole))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEnabled if enabled else
                          item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        self.chooser.blockSignals(False)
        self.placeholder.setText(M.TIMELINE_NO_DATA if loaded else M.PLACEHOLDER)
        self.stack.setCurrentIndex(1 if self.series else 0)
        self._relayout()
        self.reset_x()

    def _draw_sourcing_multiples(self) -> None:
        """One stacked sourcing plot per node (the first is drawn by ``draw``), titled with the node label."""
        nodes = sourcing_series(self.series)
        shown = nodes[:MAX_SOURCING_NODES]
        self._n_sourcing = len(shown)
        plots = [self.plots["sourcing"], *self.sourcing_extra]
        legend_cols: set[str] = set()
        for i, (p, s) in enumerate(zip(plots, shown)):
            if i:
                legend_cols |= draw_sourcing(p, s, skip_legend=legend_cols)
            else:
                legend_cols = set(sourcing_columns(s))  # drawn by ``draw`` with its legend
        for i, p in enumerate(plots):
            if len(nodes) <= 1 or i >= len(shown):
                title = M.PLOT_TITLES["sourcing"]
            else:
                title = M.SOURCING_NODE_TITLE.format(node=shown[i].label)
                if i == len(shown) - 1 and len(nodes) > len(shown):
                    more = len(nodes) - len(shown)
                    title += M.SOURCING_MORE[min(more, 2)].format(n=more)
            p.setTitle(title, size="9pt", color=THEMES[self.dark]["fg"])

    def _draw_overview(self) -> None:
        self.overview.clear()
        self.overview.addItem(self.region, ignoreBounds=True)
        lo, hi = self.data_range()
        for i, s in enumerate(self.series[:8]):
            col = "LPARCPU" if "LPARCPU" in s.rows and s.rows["LPARCPU"].notna().any() else "CPI"
            if col in s.rows:
                self.overview.plot(s.x, s.rows[col].to_numpy(dtype=float), connect="finite",
                                   pen=pg.mkPen(THEMES[self.dark]["line"] if i else "#1f77b4", width=1))
        if hi > lo:
            self.overview.setXRange(lo, hi, padding=0.01)
            self.region.blockSignals(True)
            self.region.setBounds((lo, hi))
            self.region.setRegion((lo, hi))
            self.region.blockSignals(False)

    def data_range(self) -> tuple[float, float]:
        xs = [s.x for s in self.series if len(s.x)]
        if not xs:
            return (0.0, 0.0)
        return (float(min(x.min() for x in xs)), float(max(x.max() for x in xs)))

    def reset_x(self) -> None:
        lo, hi = self.data_range()
        if hi > lo:
            self.base_vb.setXRange(lo, hi, padding=0.01)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_legends()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._fit_legends()

    def _fit_legends(self) -> None:
        """As many legend entries per row as fit right of each plot's title (more rows when they do not)."""
        # the plots' width follows the widget's (the glw itself may not be laid out yet while hidden)
        width = max(self.width() - self.chooser.width() - LEFT_AXIS_WIDTH - 30, 200)
        for p in self._data_plots().values():
            legend = p.legend
            if legend is None or not legend.items:
                continue
            room = width - p.titleLabel.itemRect().width() - 20
            entry = max(label.itemRect().width() for _s, label in legend.items) + 20 + 2 * LEGEND_SPACING + 4
            legend.setColumnCount(max(1, min(len(legend.items), int(room // entry))))

    # -- window region -------------------------------------------------------------------------
    def set_window(self, start: pd.Timestamp | None, end: pd.Timestamp | None) -> None:
        """Show the window chosen elsewhere (None = whole range) without re-emitting it."""
        lo, hi = self.data_range()
        if start is not None and end is not None:
            lo, hi = pd.Timestamp(start).timestamp(), pd.Timestamp(end).timestamp()
        self.region.blockSignals(True)
        self.region.setRegion((lo, hi))
        self.region.blockSignals(False)

    def _region_finished(self) -> None:
        lo, hi = self.region.getRegion()
        dlo, dhi = self.data_range()
        span = max(dhi - dlo, 1.0)
        if lo <= dlo + span * 0.001 and hi >= dhi - span * 0.001:
            self.window_requested.emit(None, None)
            return
        self.window_requested.emit(pd.Timestamp(lo, unit="s", tz="UTC"), pd.Timestamp(hi, unit="s", tz="UTC"))

    # -- crosshair -----------------------------------------------------------------------------
    def _mouse_moved(self, event: tuple) -> None:
        pos = event[0]
        for p in self._shown_plots():
            if p.sceneBoundingRect().contains(pos):
                self.show_cursor_at(p.getViewBox().mapSceneToView(pos).x())
                return

    def show_cursor_at(self, x: float) -> None:
        """Move the crosshair of every plot to ``x`` (epoch s) and update the value readout."""
        for line in self.vlines.values():
            line.setPos(x)
        self.readout.setText(readout(self.series, x, self.visible_plots()) or M.READOUT_EMPTY)

    # -- look ----------------------------------------------------------------------------------
    def apply_theme(self, dark: bool) -> None:
        """Background, axis and text colours follow the light or dark palette."""
        self.dark = dark
        t = THEMES[dark]
        self.glw.setBackground(t["bg"])
        for p in [*self._data_plots().values(), self.base, self.overview]:
            for name in ("left", "bottom"):
                ax = p.getAxis(name)
                ax.setPen(pg.mkPen(t["fg"]))
                ax.setTextPen(pg.mkPen(t["fg"]))
            p.titleLabel.setText(p.titleLabel.text, color=t["fg"])
            if p.legend is not None:
                p.legend.setLabelTextColor(t["fg"])
        for line in self.vlines.values():
            line.setPen(pg.mkPen(t["line"], width=1))
        self.region.setBrush(pg.mkBrush(*t["region"]))
