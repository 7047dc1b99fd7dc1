"""Stacked timelines sharing one time axis, a crosshair, and a region choosing the time window.

Every data plot's x axis is linked, by object, to one base ViewBox: the thin
time-axis plot at the bottom of the stack, which is always in the scene.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QScrollArea,
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
from app.ui.partition_data import stack_grid
from app.ui.timeline_axes import LEGEND_SPACING, SparseAxis, UtcDateAxis, legend_in_title_row
from app.ui.timeline_plots import (
    AREA_COLORS,
    LEFT_AXIS_WIDTH,
    MAX_SOURCING_NODES,
    PLOT_ORDER,
    Series,
    draw,
    draw_sourcing,
    has_data,
    lighter,
    node_color,
    readout,
    sourcing_columns,
    sourcing_series,
    split_series,
    UNITS,
)

PLOTS_KEY = "timeline/plots"
MIN_PLOT_HEIGHT = 110   # px: title row + a data area with three labelled ticks 14 px apart
BASE_HEIGHT = 52
OVERVIEW_HEIGHT = 100
ZERO_KEY = "timeline/y_from_zero"
THEMES = {False: {"bg": "w", "hex_bg": "#ffffff", "fg": "#202020", "line": "#505050",
                  "region": (70, 130, 220, 50), "shade": (70, 130, 220, 28)},
          True: {"bg": "#1e1e1e", "hex_bg": "#1e1e1e", "fg": "#e0e0e0", "line": "#c0c0c0",
                 "region": (120, 170, 255, 60), "shade": (120, 170, 255, 34)}}


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
        # the nodes' colours, once for every plot (wraps onto more lines rather than growing a plot's legend)
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setObjectName("timeline_legend")
        self.zero = QCheckBox(M.Y_FROM_ZERO)
        self.zero.setToolTip(M.Y_FROM_ZERO_TIP)
        self.zero.setChecked(settings.get_bool(ZERO_KEY))
        self.zero.toggled.connect(self._zero_changed)
        self.shades: dict[str, pg.LinearRegionItem] = {}
        self.window: tuple[float, float] | None = None
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.legend)
        rl.addWidget(self.readout)
        # the plots keep a readable height (three labelled ticks each): when the window is too short for all of
        # them, the stack scrolls instead of squeezing them
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.glw)
        rl.addWidget(self.scroll, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(right)
        left = QWidget()
        left.setMaximumWidth(120)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.chooser, 1)
        ll.addWidget(self.zero)
        self.zero.setStyleSheet("QCheckBox { font-size: 8pt; }")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(left)
        lay.addWidget(self.stack, 1)
        self.proxy = pg.SignalProxy(self.glw.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved)
        self.apply_theme(False)
        self._relayout()

    # -- construction --------------------------------------------------------------------------
    def _build_plots(self) -> None:
        self.base = pg.PlotItem(axisItems={"bottom": UtcDateAxis("bottom")})
        _fix_axes(self.base, True)
        self.base.getAxis("left").setStyle(showValues=False)
        self.base.hideButtons()
        self.base.setLabel("bottom", M.TIME_AXIS_LABEL, **{"font-size": "7pt"})
        self.base.setMaximumHeight(BASE_HEIGHT)
        self.base.setMinimumHeight(BASE_HEIGHT)
        self.base.getViewBox().setMouseEnabled(y=False)
        self.base_vb = self.base.getViewBox()
        for pid in PLOT_ORDER:
            self.plots[pid] = self._make_plot(pid)
        self.sourcing_extra = [self._make_plot("sourcing") for _ in range(MAX_SOURCING_NODES - 1)]
        self.cec_plot = self._make_plot("cec")
        self.cec_plot.getViewBox().setMouseEnabled(y=False)
        self.cec_plot.titleLabel.setToolTip(M.CEC_TITLE_TIP)
        self.cec_stack: pd.DataFrame | None = None   # the selected CEC's LPARs (partition_data.cec_stack)
        self._cec_names: list[tuple[str, str]] = []
        self.overview = pg.PlotItem(axisItems={"bottom": UtcDateAxis("bottom"),
                                               "left": SparseAxis(orientation="left")})
        _fix_axes(self.overview, True)
        self.overview.setTitle(M.OVERVIEW_TITLE, size="8pt")
        self.overview.setMaximumHeight(OVERVIEW_HEIGHT)
        self.overview.setMinimumHeight(OVERVIEW_HEIGHT)
        self.overview.getAxis("left").setStyle(showValues=False)   # a chooser: its shape is enough
        self.overview.setMouseEnabled(x=False, y=False)
        self.region = pg.LinearRegionItem(swapMode="sort")
        self.region.setZValue(10)
        self.overview.addItem(self.region, ignoreBounds=True)
        self.region.sigRegionChangeFinished.connect(self._region_finished)

    def _make_plot(self, pid: str) -> pg.PlotItem:
        p = pg.PlotItem(axisItems={"bottom": UtcDateAxis("bottom"),
                                   "left": SparseAxis(orientation="left")})
        _fix_axes(p, False)
        p.setTitle(M.PLOT_TITLES[pid], size="9pt")
        legend_in_title_row(p)
        p.setLabel("left", UNITS.get(pid, ""), **{"font-size": "7pt"})
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
        out["cec"] = self.cec_plot
        return out

    def _shown_plots(self) -> list[pg.PlotItem]:
        """The data plots on screen, in stack order."""
        out = [self.cec_plot] if self.has_cec() else []
        for pid in self.visible_plots():
            out.extend(self.sourcing_plots() if pid == "sourcing" else [self.plots[pid]])
        return out

    def has_cec(self) -> bool:
        """A CEC is selected and its LPARs' busy is known: the stacked CEC plot is shown."""
        return self.cec_stack is not None and len(self.cec_stack) > 0

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
        self.glw.ci.addItem(self.cec_plot, row=0, col=0)   # a selected CEC: who uses the machine, on top
        row = 1
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
        self.cec_plot.setVisible(self.has_cec())
        n = len([p for p in self._shown_plots()])
        self.glw.setMinimumHeight(n * MIN_PLOT_HEIGHT + BASE_HEIGHT + OVERVIEW_HEIGHT)
        for p in self._shown_plots():
            p.setMinimumHeight(MIN_PLOT_HEIGHT)

    def _chooser_changed(self, _item: QListWidgetItem) -> None:
        checked = [self.chooser.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.chooser.count())
                   if self.chooser.item(i).checkState() == Qt.CheckState.Checked]
        settings.set_list(PLOTS_KEY, checked)
        self._relayout()

    # -- data ----------------------------------------------------------------------------------
    def set_frame(self, df: pd.DataFrame, loaded: bool = True, cec_stack: pd.DataFrame | None = None) -> None:
        """Plot the per-interval rows of ``df`` (one series per node); ``cec_stack`` (partition_data.cec_stack)
        adds the stacked busy of a selected CEC's LPARs."""
        self.series = split_series(df)
        self.cec_stack = cec_stack
        bg = THEMES[self.dark]["hex_bg"]
        for pid, p in self._data_plots().items():
            p.clear()
            if p.legend is not None:
                p.legend.clear()
            if self.series and pid in self.plots:
                draw(p, pid, self.series, background=bg)
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(THEMES[self.dark]["line"], width=1))
            p.addItem(line, ignoreBounds=True)
            self.vlines[pid] = line
            shade = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(*THEMES[self.dark]["shade"]),
                                        pen=pg.mkPen(None))
            shade.setZValue(-10)
            p.addItem(shade, ignoreBounds=True)
            self.shades[pid] = shade
        self._draw_cec()
        self._draw_sourcing_multiples()
        self._fit_legends()
        self._draw_overview()
        self._set_legend_text()
        self.readout.setText(M.READOUT_EMPTY)   # values of the previous selection must not stay on screen
        self.chooser.blockSignals(True)  # flag changes are not user choices
        for i in range(self.chooser.count()):
            item = self.chooser.item(i)
            enabled = not self.series or has_data(self.series, item.data(Qt.ItemDataRole.UserRole))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEnabled if enabled else
                          item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        self.chooser.blockSignals(False)
        self.placeholder.setText(M.TIMELINE_NO_DATA if loaded else M.PLACEHOLDER)
        self.stack.setCurrentIndex(1 if self.series or self.has_cec() else 0)
        self._relayout()
        self._apply_y_ranges()
        self._show_shades()
        self.reset_x()

    def _set_legend_text(self) -> None:
        """The shared legend: one coloured swatch per node, in the colour every plot draws it in."""
        swatch = '<span style="color:{c}; font-size:14pt">\u25ac</span>&nbsp;{t}'
        parts = [swatch.format(c=node_color(i), t=s.label) for i, s in enumerate(self.series)]
        text = "&nbsp;&nbsp; ".join(parts)
        if self.has_cec() and self._cec_names:   # the CEC stack's LPARs, bottom of the stack first
            text += ("<br>" if text else "") + M.CEC_LEGEND.format(cec=self._cec_name()) + "&nbsp; " + \
                "&nbsp;&nbsp; ".join(swatch.format(c=c, t=t) for t, c in self._cec_names)
        self.legend.setText(text)
        self.legend.setToolTip(M.LEGEND_TIP)
        self.legend.setVisible(bool(text))

    def _draw_cec(self) -> None:
        """The selected CEC's LPARs as a stacked busy area (who uses the machine)."""
        p = self.cec_plot
        self._cec_names: list[tuple[str, str]] = []   # (legend text, colour) of the stacked LPARs, bottom first
        if not self.has_cec():
            return
        x, stacks = stack_grid(self.cec_stack)
        sources = dict(zip(self.cec_stack["lpar"], self.cec_stack["source"], strict=False))
        lower = np.zeros(len(x))
        lower_curve = pg.PlotDataItem(x, lower, pen=pg.mkPen(None))
        p.addItem(lower_curve)
        for k, (lpar, y) in enumerate(stacks.items()):
            color = AREA_COLORS[k % len(AREA_COLORS)]
            upper = lower + y
            name = lpar if sources.get(lpar) == "counters" else M.CEC_PARTITION_ONLY.format(lpar=lpar)
            upper_curve = pg.PlotDataItem(x, upper, pen=pg.mkPen(color, width=1))
            upper_curve.setToolTip(name)
            self._cec_names.append((name, color))
            p.addItem(upper_curve)
            p.addItem(pg.FillBetweenItem(lower_curve, upper_curve, brush=pg.mkBrush(color + "b0")))
            lower, lower_curve = upper, upper_curve
        p.disableAutoRange(axis="y")
        p.setYRange(0, float(lower.max()) * 1.05 if len(lower) and lower.max() > 0 else 100, padding=0)

    def _zero_changed(self, on: bool) -> None:
        settings.set_value(ZERO_KEY, on)
        self._apply_y_ranges()

    def _apply_y_ranges(self) -> None:
        """Value axes from zero (the remembered option) or fitted to the data; sourcing is always 0..100."""
        for pid, p in self._data_plots().items():
            if pid.startswith("sourcing"):
                p.disableAutoRange(axis="y")
                p.setYRange(0, 100, padding=0)
            elif pid == "cec":
                continue
            elif self.zero.isChecked():
                top = max((float(np.nanmax(item.yData)) for item in p.listDataItems()
                           if item.yData is not None and len(item.yData) and np.isfinite(item.yData).any()),
                          default=1.0)
                p.disableAutoRange(axis="y")
                p.setYRange(0, top * 1.05 if top > 0 else 1.0, padding=0)
            else:
                p.enableAutoRange(axis="y")

    def set_frame_again(self) -> None:
        """Redraw the current series (after a theme change), keeping the x range and the window."""
        x_range = self.base_vb.viewRange()[0]
        frame = pd.concat([s.rows for s in self.series], ignore_index=True) if self.series else pd.DataFrame()
        self.set_frame(frame, cec_stack=self.cec_stack)
        self._show_shades()
        self.base_vb.setXRange(*x_range, padding=0)

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
            color = THEMES[self.dark]["fg"]
            if len(nodes) > 1 and i < len(shown):   # the node's title in the node's colour
                color = node_color(next((k for k, s in enumerate(self.series) if s is shown[i]), 0))
            p.setTitle(title, size="9pt", color=color)
        self.cec_plot.setTitle(M.CEC_TITLE.format(cec=self._cec_name()), size="9pt",
                               color=THEMES[self.dark]["fg"])

    def _cec_name(self) -> str:
        return "" if not self.has_cec() else str(getattr(self.cec_stack, "attrs", {}).get("cec", ""))

    def _draw_overview(self) -> None:
        self.overview.clear()
        self.overview.addItem(self.region, ignoreBounds=True)
        lo, hi = self.data_range()
        for i, s in enumerate(self.series[:8]):
            col = "LPARCPU" if "LPARCPU" in s.rows and s.rows["LPARCPU"].notna().any() else "CPI"
            if col in s.rows:
                self.overview.plot(s.x, s.rows[col].to_numpy(dtype=float), connect="finite",
                                   pen=pg.mkPen(node_color(i), width=1))
        if hi > lo:
            self.overview.setXRange(lo, hi, padding=0.01)
            self.region.blockSignals(True)
            self.region.setBounds((lo, hi))
            self.region.setRegion((lo, hi))
            self.region.blockSignals(False)

    def data_range(self) -> tuple[float, float]:
        xs = [s.x for s in self.series if len(s.x)]
        if self.has_cec():
            xs.append(self.cec_stack["x"].to_numpy(dtype=float))
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
        self.window = None
        if start is not None and end is not None:
            lo, hi = pd.Timestamp(start).timestamp(), pd.Timestamp(end).timestamp()
            self.window = (lo, hi)
        self.region.blockSignals(True)
        self.region.setRegion((lo, hi))
        self.region.blockSignals(False)
        self._show_shades()

    def _show_shades(self) -> None:
        """The time window shaded in every data plot (nothing shaded for the whole range)."""
        for shade in self.shades.values():
            if self.window is None:
                shade.setVisible(False)
            else:
                shade.setRegion(self.window)
                shade.setVisible(True)

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
        for shade in self.shades.values():
            shade.setBrush(pg.mkBrush(*t["shade"]))
        if self.series or self.has_cec():   # parts are lighter towards the background: redraw on a new one
            self.set_frame_again()
        self.region.setBrush(pg.mkBrush(*t["region"]))
