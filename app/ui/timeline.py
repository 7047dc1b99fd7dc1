"""Stacked timelines sharing one time axis, a crosshair, and a region choosing the time window.

Every data plot's x axis is linked, by object, to one base ViewBox: the thin
time-axis plot at the bottom of the stack, which is always in the scene.

The plots and their layout (:data:`LAZY`; the scene they go in exists from the start) are built when the tab is
first shown, or when something first asks for one of them (a picture export): building them took most of the
window's construction, before its first paint (issue 23).  Rows given before are drawn then.
"""

from __future__ import annotations

import html
import math

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidgetItem,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.textsafe import display_text
from app.ui import messages as M
from app.ui import settings
from app.ui.palette import recolor_legend
from app.ui.partition_data import stack_grid
from app.ui.timeline_axes import (
    THEMES,
    draw_overview,
    fit_legends,
    make_base_plot,
    make_chooser,
    make_data_plot,
    make_overview,
    title_height,
)
from app.ui.timeline_plots import (
    LEFT_AXIS_WIDTH,
    MAX_SOURCING_NODES,
    PLOT_ORDER,
    Series,
    draw,
    draw_sourcing,
    draw_stack,
    fit_y,
    legend_html,
    has_data,
    node_color,
    readout,
    sourcing_columns,
    sourcing_series,
    sourcing_titles,
    split_series,
    UNITS,
    begin,
    end,
)

PLOTS_KEY = "timeline/plots"
MIN_PLOT_HEIGHT = 110   # px: title row + a data area with three labelled ticks 13 px apart
MIN_SOURCING_HEIGHT = 125   # the 0..100 stack needs ~65 px for 20/40/60/80, and its legend row is taller
LEGEND_ROW_HEIGHT = 14     # px a legend row in the title row takes (7pt labels)
LEGEND_FRAME_HEIGHT = 24   # px a legend beside the title takes besides its rows (its margins)
BASE_HEIGHT = 46
OVERVIEW_HEIGHT = 90
ZERO_KEY = "timeline/y_from_zero"
LAZY = frozenset({"plots", "sourcing_extra", "base", "base_vb", "cec_plot", "overview"})


class TimelineView(QWidget):
    """Checkable plot list + stacked plots + overview with the window region."""

    window_requested = Signal(object, object)  # start, end Timestamps (None, None = whole range)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.series: list[Series] = []
        self.dark = False
        self._stale = False          # set_frame while hidden: drawn when next shown
        self._loaded_frame = True
        self.draw_count = 0          # full redraws (tests count them)
        self.chooser = make_chooser(PLOT_ORDER, settings.get_list(PLOTS_KEY) or [p for p in PLOT_ORDER if p != "mt"])
        self.chooser.itemChanged.connect(self._chooser_changed)
        self._built = False          # the plots (LAZY) exist: built when first shown or first asked for
        self.on_built: list = []     # functions called once the plots are built (their axis labels, markers)
        self._n_sourcing = 0  # sourcing plots in use (1 + extras shown)
        self.vlines: dict[str, pg.InfiniteLine] = {}
        self.cec_stack: pd.DataFrame | None = None   # the selected CEC's LPARs (partition_data.cec_stack)
        self._cec_names: list[tuple[str, str]] = []
        # the window region exists from the start (others connect to it); it joins the overview when built
        self.region = pg.LinearRegionItem(swapMode="sort")
        self.region.setZValue(10)
        self.region.sigRegionChangeFinished.connect(self._region_finished)
        self.glw = pg.GraphicsLayoutWidget()     # the scene (others add a menu to it); its plots come when built
        self.glw.ci.setSpacing(2)
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

    # -- construction --------------------------------------------------------------------------
    def __getattr__(self, name: str):
        """A part of the plots (:data:`LAZY`) asked for before they were built: build them (drawing the rows
        given so far), then give it."""
        if name in LAZY and not self.__dict__.get("_built", True):
            self.ensure_built()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def ensure_built(self) -> None:
        """Build the plots, their layout and scene once; rows given before are drawn now."""
        if self._built:
            return
        self._built = True
        self.plots: dict[str, pg.PlotItem] = {}
        # the stacked sourcing plot shows one node; each further selected node gets one of these (small multiples)
        self.sourcing_extra: list[pg.PlotItem] = []
        self._build_plots()
        self._build_layout()
        self._theme_plots()
        if self._stale:
            self._draw()
        else:
            self._relayout()
        for fn in self.on_built:
            fn()

    def _build_plots(self) -> None:
        self.base = make_base_plot(M.TIME_AXIS_LABEL, BASE_HEIGHT)   # the time axis every plot is linked to
        self.base_vb = self.base.getViewBox()
        for pid in PLOT_ORDER:
            self.plots[pid] = self._make_plot(pid)
        self.sourcing_extra = [self._make_plot("sourcing") for _ in range(MAX_SOURCING_NODES - 1)]
        self.cec_plot = self._make_plot("cec")
        self.cec_plot.titleLabel.setToolTip(M.CEC_TITLE_TIP)
        self.overview = make_overview(M.OVERVIEW_TITLE, OVERVIEW_HEIGHT)
        self.overview.addItem(self.region, ignoreBounds=True)

    def _make_plot(self, pid: str) -> pg.PlotItem:
        return make_data_plot(M.PLOT_TITLES[pid], UNITS.get(pid, ""), self.base_vb,
                              fixed_y=pid in ("sourcing", "cec"))

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
        if not self._built:       # laid out when built
            return
        visible = set(self.visible_plots())
        for pid, p in self.plots.items():
            p.setVisible(pid in visible)
        for i, p in enumerate(self.sourcing_extra, 1):
            p.setVisible("sourcing" in visible and i < self._n_sourcing)
        self.cec_plot.setVisible(self.has_cec())
        shown = self._shown_plots()
        for p in shown:
            p.setMinimumHeight(self._min_height(p))
        self.glw.setMinimumHeight(sum(self._min_height(p) for p in shown) + BASE_HEIGHT + OVERVIEW_HEIGHT)

    def _min_height(self, p: pg.PlotItem) -> int:
        """A plot's minimum height: its data area keeps its labelled ticks when the legend beside the title needs
        more rows than the height allows for (one row; two for the sourcing stack) on a narrow plot (issue 26)."""
        sourcing = any(p is q for q in self.sourcing_plots())
        budget = LEGEND_FRAME_HEIGHT + (2 if sourcing else 1) * LEGEND_ROW_HEIGHT     # title row these allow for
        extra = max(0, math.ceil(title_height(p)) - budget)      # more legend rows, or the legend under the title
        return (MIN_SOURCING_HEIGHT if sourcing else MIN_PLOT_HEIGHT) + extra

    def _chooser_changed(self, _item: QListWidgetItem) -> None:
        checked = [self.chooser.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.chooser.count())
                   if self.chooser.item(i).checkState() == Qt.CheckState.Checked]
        settings.set_list(PLOTS_KEY, checked)
        self._relayout()

    # -- data ----------------------------------------------------------------------------------
    def set_frame(self, df: pd.DataFrame, loaded: bool = True, cec_stack: pd.DataFrame | None = None) -> None:
        """Plot the per-interval rows of ``df`` (one series per node); ``cec_stack`` (partition_data.cec_stack)
        adds the stacked busy of a selected CEC's LPARs.

        The plots are drawn now when the view is on screen (or not in a shown window), else when it is next
        shown (a hidden tab of the window is not redrawn on every selection: issue 11); ``series``, ``data_range`` and the window are current at once."""
        self.series = split_series(df)
        self.cec_stack = cec_stack
        self._loaded_frame = loaded
        self._stale = True
        self.readout.setText(M.READOUT_EMPTY)   # values of the previous selection must not stay on screen
        self.placeholder.setText(M.TIMELINE_NO_DATA if loaded else M.PLACEHOLDER)
        self.stack.setCurrentIndex(1 if self.series or self.has_cec() else 0)
        lo, hi = self.data_range()
        if hi > lo:   # the region follows the new data at once (as the overview will when drawn)
            self.region.blockSignals(True)
            self.region.setBounds((lo, hi))
            self.region.setRegion((lo, hi))
            self.region.blockSignals(False)
        top = QWidget.window(self)
        # deferred inside a shown window; and inside one not shown yet until the plots are built (when shown, or
        # when a part of them is asked for)
        if self.isVisible() or (not top.isVisible() and (self._built or top is self)):
            self._draw()

    def ensure_drawn(self) -> None:
        """Draw the plots of the last ``set_frame`` if that was deferred (e.g. before a picture export); the plots
        are built first if they were not."""
        self.ensure_built()
        if self._stale:
            self._draw()

    def _draw(self) -> None:
        """Every plot, legend and the overview from ``series`` / ``cec_stack`` (GUI thread; counted in
        ``draw_count``)."""
        if not self._built:
            self.ensure_built()     # builds, then draws the rows given
            return
        self._stale = False
        self.draw_count += 1
        loaded = self._loaded_frame
        bg = THEMES[self.dark]["hex_bg"]
        plots = self._data_plots()
        for pid, p in plots.items():
            # the plot's curves and areas are given the new rows (pooled items: no items created or removed
            # while the selection keeps its shape, issue 11); the crosshair line and the window's shade stay
            begin(p)
            if self.series and pid in self.plots:
                draw(p, pid, self.series, background=bg)
            if pid not in self.vlines:
                line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(THEMES[self.dark]["line"], width=1))
                line.setZValue(5)     # over the curves (drawn after it)
                line.on_screen_only = True   # the mouse's crosshair: left out of pictures (plot_export)
                p.addItem(line, ignoreBounds=True)
                self.vlines[pid] = line
                shade = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(*THEMES[self.dark]["shade"]),
                                            pen=pg.mkPen(None))
                shade.setZValue(-10)
                p.addItem(shade, ignoreBounds=True)
                self.shades[pid] = shade
            else:
                self.vlines[pid].setPos(0)   # where a new line starts (off the data): no value is being read
        self._draw_cec()
        self._draw_sourcing_multiples()
        for p in plots.values():
            end(p)
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
        if self.window is not None:   # the overview's region was reset to the whole range: show the window
            self.region.blockSignals(True)
            self.region.setRegion(self.window)
            self.region.blockSignals(False)

    def _set_legend_text(self) -> None:
        """The shared legend: one coloured swatch per node, in the colour every plot draws it in."""
        cec = self.cec_stack.attrs.get("cec", "") if self.has_cec() else ""
        text = legend_html(self.series, M.CEC_LEGEND.format(cec=cec), self._cec_names if cec else None)
        self.legend.setText(text)
        self.legend.setToolTip(M.LEGEND_TIP)
        self.legend.setVisible(bool(text))

    def _draw_cec(self) -> None:
        """The selected CEC's LPARs as a stacked busy area (who uses the machine)."""
        self._cec_names = []   # (legend text, colour) of the stacked LPARs, bottom first
        if self.has_cec():
            x, stacks = stack_grid(self.cec_stack)
            sources = dict(zip(self.cec_stack["lpar"], self.cec_stack["source"], strict=False))
            names = {lp: lp if sources.get(lp) == "counters" else M.CEC_PARTITION_ONLY.format(lpar=lp)
                     for lp in stacks}
            self._cec_names = draw_stack(self.cec_plot, x, stacks, names)

    def _zero_changed(self, on: bool) -> None:
        settings.set_value(ZERO_KEY, on)
        self._apply_y_ranges()

    def _apply_y_ranges(self) -> None:
        """Value axes from zero (the remembered option) or fitted to the data; sourcing is always 0..100."""
        if not self._built:
            return
        for pid, p in self._data_plots().items():
            fit_y(p, pid, self.zero.isChecked())

    def set_frame_again(self) -> None:
        """Redraw the current series (after a theme change), keeping the x range and the window."""
        x_range = self.base_vb.viewRange()[0]
        frame = pd.concat([s.rows for s in self.series], ignore_index=True) if self.series else pd.DataFrame()
        self.set_frame(frame, cec_stack=self.cec_stack)
        self.ensure_drawn()
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
        for p, (title, k) in zip(plots, sourcing_titles(self.series, nodes, len(plots))):
            # several nodes: each node's title in the node's colour
            p.setTitle(title, size="9pt", color=THEMES[self.dark]["fg"] if k is None else node_color(k))
        cec = self.cec_stack.attrs.get("cec", "") if self.has_cec() else ""
        title = M.CEC_TITLE.format(cec=html.escape(display_text(cec), quote=False))    # a name as written, rich text
        self.cec_plot.setTitle(title, size="9pt", color=THEMES[self.dark]["fg"])

    def _draw_overview(self) -> None:
        draw_overview(self.overview, self.region, self.series, self.data_range())

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
        if not self._built:
            self.ensure_built()
            self.glw.ci.layout.activate()
            self.reset_x()
        if self._stale:
            self._draw()
            self.glw.ci.layout.activate()   # the plots' final geometry, then every linked view follows the base
            self.reset_x()
        self._fit_legends()

    def _fit_legends(self) -> None:
        if not self._built:
            return
        # the plots' width follows the widget's (the glw itself may not be laid out yet while hidden)
        plots = list(self._data_plots().values())
        before = [title_height(p) for p in plots]
        # the title row's width: the scroll area's view less the value axis and the layout's margins (the
        # widget's width less the chooser's before the view is laid out)
        view = self.scroll.viewport().width() if self.scroll.isVisible() else self.width() - self.chooser.width()
        # a legend wrapping beside its title goes under it where that takes fewer rows (the sourcing legend)
        fit_legends(plots, max(view - LEFT_AXIS_WIDTH - 12, 200), under=True)
        if [title_height(p) for p in plots] != before:
            self._relayout()

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
        if not self._built:
            return
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
        self.region.setBrush(pg.mkBrush(*THEMES[dark]["region"]))
        self.glw.setBackground(THEMES[dark]["bg"])
        if not self._built:         # the plots take the theme when built
            return
        self._theme_plots()
        if self.series or self.has_cec():   # parts are lighter towards the background: redraw on a new one
            self.set_frame_again()

    def _theme_plots(self) -> None:
        t = THEMES[self.dark]
        self.glw.setBackground(t["bg"])
        for p in [*self._data_plots().values(), self.base, self.overview]:
            for name in ("left", "bottom"):
                ax = p.getAxis(name)
                ax.setPen(pg.mkPen(t["fg"]))
                ax.setTextPen(pg.mkPen(t["fg"]))
            p.titleLabel.setText(p.titleLabel.text, color=t["fg"])
            recolor_legend(p.legend, t["fg"])
        for line in self.vlines.values():
            line.setPen(pg.mkPen(t["line"], width=1))
        for shade in self.shades.values():
            shade.setBrush(pg.mkBrush(*t["shade"]))
