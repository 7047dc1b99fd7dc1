"""Series drawing for the timelines: which metric goes on which plot, pens, stacked areas."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from app.ui import messages as M
from app.textsafe import display_text
from app.ui.frames import fmt_number, metric_decimals, node_texts, system_texts


class _Pyqtgraph:
    """``pg``: pyqtgraph, imported when a plot function first uses it.  The table's modules use this module's
    plain helpers (``epoch_seconds``, ``node_color``): the window's start does not import pyqtgraph (issue 23)."""

    def __getattr__(self, name: str):
        import pyqtgraph

        globals()["pg"] = pyqtgraph
        return getattr(pyqtgraph, name)


pg: Any = _Pyqtgraph()

LEFT_AXIS_WIDTH = 66
# plot id -> metric columns drawn one series per node (first column solid, then dashed, dotted)
PLOT_METRICS: dict[str, tuple[str, ...]] = {
    "cpi": ("CPI", "Est_Instr_Cmplx_CPI", "Est_Finite_CPI"),
    "l1mp": ("L1MP",),
    "rni": ("RNI",),
    "sourcing": (),  # stacked area, see SOURCING
    "lparcpu": ("LPARCPU",),
    "mt": ("MT_IPC_per_thread", "Thread_Density"),
}
PLOT_ORDER = tuple(PLOT_METRICS)
SOURCING = ("L15P", "L2P", "L2LP", "L2RP", "L3P", "L4LP", "L4RP", "MEMP")
STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine)
NODE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22")
AREA_COLORS = ("#4e79a7", "#59a14f", "#8cd17d", "#f28e2b", "#ffbe7d", "#e15759", "#b07aa1", "#9c755f")
MAX_SOURCING_NODES = 4  # stacked sourcing plots: one per node (small multiples), at most this many
SHORT = {"Est_Instr_Cmplx_CPI": "Est Instr Cmplx CPI", "Est_Finite_CPI": "Est Finite CPI",
         "MT_IPC_per_thread": "MT IPC/thread", "Thread_Density": "Thread density"}
# the CPI plot's legend names its parts short (the title says CPI; the legend's tooltip gives the full names): three
# entries fit beside the title on a plot ~350 px wide (the tree panel dragged to its widest at 1024x700, issue 26)
LEGEND_SHORT = {"Est_Instr_Cmplx_CPI": "Instr Cmplx", "Est_Finite_CPI": "Finite"}
# value-axis label (with its unit) of every plot; the MT plot names its two lines (issue 26)
MT_AXIS = "MT IPC/thread (instr/cycle) · thread density (threads/core)"
MT_AXIS_SHORT = "IPC/thread · threads/core"
UNITS = {"cpi": "cycles / instr", "l1mp": "per 100 instr", "rni": "RNI", "sourcing": "% of L1 misses",
         "lparcpu": "% of one CPU", "mt": MT_AXIS, "cec": "% of one CPU"}
# a part of a metric keeps its node's colour, lighter (blended this far towards the background) and dashed
PART_LIGHTEN = (0.0, 0.45, 0.25)


def node_color(i: int) -> str:
    """The colour of the i-th node of the selection (the same in every plot, legend and readout)."""
    return NODE_COLORS[i % len(NODE_COLORS)]


def lighter(color: str, amount: float, background: str = "#ffffff") -> str:
    """``color`` blended ``amount`` (0..1) of the way towards ``background`` (hex colours)."""
    a = [int(color[k:k + 2], 16) for k in (1, 3, 5)]
    b = [int(background[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b, strict=True))


@dataclass
class Series:
    """One node's rows: label (rich text: names escaped for HTML), epoch-second x values and the frame slice."""

    label: str
    x: np.ndarray
    rows: pd.DataFrame


def epoch_seconds(values: pd.Series) -> np.ndarray:
    """UTC epoch seconds of a datetime column (naive values are taken as UTC)."""
    t = pd.to_datetime(values)
    if getattr(t.dt, "tz", None) is not None:
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    return t.to_numpy(dtype="datetime64[ns]").astype("int64") / 1e9


def split_series(df: pd.DataFrame) -> list[Series]:
    """One Series per node (cec, lpar, class, cpu), in first-appearance order, sorted by interval end.

    Nodes whose labels collide (the same LPAR name on two CECs) get their CEC appended to the label, so
    their rows never merge into one line."""
    if df.empty or "interval_end" not in df.columns:
        return []
    ident = [c for c in ("cec", "lpar", "class", "core", "cpu") if c in df.columns]     # core: SMT core rows
    # one group number per node (first-appearance order), then the label from each node's first row: the
    # labels of every row would be the same per node (2,880 rows of one node: no per-row Python, issue 11)
    if ident:
        codes = np.zeros(len(df), np.int64)
        for c in ident:
            k, uniq = pd.factorize(df[c].astype(str).to_numpy(), use_na_sentinel=False)
            codes = codes * np.int64(len(uniq) + 1) + k
        node, _ = pd.factorize(codes)
        firsts = np.unique(node, return_index=True)[1]
        heads = df.iloc[firsts]
        labels = [f"{s} {n}".strip() if s and s != n and s not in n.split() else n
                  for s, n in zip(system_texts(heads, qualify=False), node_texts(heads, qualify=False), strict=True)]
    else:
        all_labels = [f"{s} {n}".strip() if s and s != n and s not in n.split() else n
                      for s, n in zip(system_texts(df, qualify=False), node_texts(df, qualify=False), strict=True)]
        node, uniq = pd.factorize(np.array(all_labels, dtype=object))
        labels = list(uniq)
    order = np.argsort(node, kind="stable")
    bounds = np.searchsorted(node[order], np.arange(len(labels) + 1))
    parts = [(label, df.iloc[order[bounds[i]:bounds[i + 1]]].sort_values("interval_end"))
             for i, label in enumerate(labels)]
    if "cec" in df.columns:          # the same LPAR name on two CECs: the one naming rule of the engine
        from app.engine.compare import qualify_names

        gens = [str(r["generation"].iloc[0]) if "generation" in r.columns and pd.notna(r["generation"].iloc[0])
                else "" for _, r in parts]
        labels = qualify_names(labels, [str(r["cec"].iloc[0]) for _, r in parts], gens)
    # names from the data shown escaped (app.textsafe): a control character never reaches a legend, title or
    # picture; and as rich text (every use of the label is HTML: titles, swatches, readout), so "&lt;" or "<b>"
    # in a name is shown as written
    return [Series(html.escape(display_text(label), quote=False), epoch_seconds(rows["interval_end"]), rows)
            for label, (_, rows) in zip(labels, parts)]


def has_data(series: list[Series], plot_id: str) -> bool:
    cols = SOURCING if plot_id == "sourcing" else PLOT_METRICS[plot_id]
    return any(c in s.rows and s.rows[c].notna().any() for s in series for c in cols)


def sourcing_columns(s: Series) -> list[str]:
    """The sourcing percentages node ``s`` has data for, in stacking order."""
    return [c for c in SOURCING if c in s.rows and s.rows[c].notna().any()]


def sourcing_series(series: list[Series]) -> list[Series]:
    """The nodes that have L1-miss sourcing data, in series order (each gets its own stacked plot)."""
    return [s for s in series if sourcing_columns(s)]


def sourcing_titles(series: list[Series], nodes: list[Series], n_plots: int) -> list[tuple[str, int | None]]:
    """(title, node colour index or None) of each of ``n_plots`` sourcing plots: one plot per node of ``nodes``
    (at most MAX_SOURCING_NODES, the last one noting the nodes not shown); one node: the plain title."""
    shown = nodes[:MAX_SOURCING_NODES]
    out: list[tuple[str, int | None]] = []
    for i in range(n_plots):
        if len(nodes) <= 1 or i >= len(shown):
            out.append((M.PLOT_TITLES["sourcing"], None))
            continue
        title = M.SOURCING_NODE_TITLE.format(node=shown[i].label)
        if i == len(shown) - 1 and len(nodes) > len(shown):
            more = len(nodes) - len(shown)
            title += M.SOURCING_MORE[min(more, 2)].format(n=more)
        out.append((title, next((k for k, s in enumerate(series) if s is shown[i]), 0)))
    return out


class ItemPool:
    """The curves and areas a plot drew last time, given new data by the next draw in the same order
    (``setData`` / ``setPath`` instead of new items added to the scene: issue 11), and its legend entries, rebuilt
    only when they change.  The plot holds exactly the items in use, in the order they were first drawn."""

    def __init__(self) -> None:
        self.curves: list[pg.PlotDataItem] = []
        self.fills: list[QGraphicsPathItem] = []
        self.n_curves = self.n_fills = 0
        self.legend: list[tuple[Any, str]] = []      # (item, text) wanted by this draw
        self.legend_key: tuple | None = None          # what the legend shows


def pool(plot: pg.PlotItem) -> ItemPool:
    p = getattr(plot, "_nestscope_pool", None)
    if p is None:
        p = ItemPool()
        plot._nestscope_pool = p
    return p


def begin(plot: pg.PlotItem) -> None:
    """Start a draw of ``plot``: its pooled items are free to take."""
    p = pool(plot)
    p.n_curves = p.n_fills = 0
    p.legend = []


def end(plot: pg.PlotItem) -> None:
    """Finish a draw: items not taken leave the plot (kept for a later draw), the legend shows this draw's entries."""
    p = pool(plot)
    for item in p.curves[p.n_curves:]:
        if item in plot.dataItems:
            plot.removeItem(item)
            item.setData([], [])      # no stale rows kept
    for item in p.fills[p.n_fills:]:
        if item in plot.items:
            plot.removeItem(item)
    if plot.legend is None:
        return
    key = tuple((id(item), text, _pen_key(item)) for item, text in p.legend)
    if key != p.legend_key:
        plot.legend.clear()
        for item, text in p.legend:
            plot.legend.addItem(item, text)
        p.legend_key = key


def _pen_key(item: Any) -> tuple:
    pen = item.opts.get("pen") if hasattr(item, "opts") else None
    if not isinstance(pen, QPen):
        return (str(pen),)
    return (pen.color().name(QColor.NameFormat.HexArgb), pen.widthF(), int(pen.style().value))


def take_curve(plot: pg.PlotItem, x: np.ndarray, y: np.ndarray, pen, connect: str = "auto",
               clip: bool = False) -> pg.PlotDataItem:
    """The plot's next pooled curve showing (x, y) with ``pen`` (a new one when the pool is used up); ``clip``:
    clipped to the view and downsampled (peak) where there are more points than pixels."""
    p = pool(plot)
    if p.n_curves < len(p.curves):
        item = p.curves[p.n_curves]
        if item not in plot.dataItems:      # left the plot in an earlier draw: back in first (clip off meanwhile,
            clipped = item.opts.get("clipToView", False)      # see below), then the new data
            item.setClipToView(False)
            plot.addItem(item)
            item.setClipToView(clipped)
        item.setData(x, y, pen=pen, connect=connect)
    else:
        item = pg.PlotDataItem(x, y, pen=pen, connect=connect)
        plot.addItem(item)
        if clip:
            # set after adding: pyqtgraph 0.14 evaluates clipToView while ViewBox.addItem has the item in the
            # scene but not yet under the ViewBox, and fails (GraphicsLayoutWidget has no autoRangeEnabled)
            item.setClipToView(True)
            item.setDownsampling(auto=True)
        p.curves.append(item)
    p.n_curves += 1
    return item


def take_fill(plot: pg.PlotItem, x: np.ndarray, lower: np.ndarray, upper: np.ndarray, brush) -> QGraphicsPathItem:
    """The plot's next pooled area between ``lower`` and ``upper`` (see :func:`fill_between`)."""
    p = pool(plot)
    if p.n_fills < len(p.fills):
        item = p.fills[p.n_fills]
        item.setPath(_fill_path(x, lower, upper))
        item.setBrush(pg.mkBrush(brush))
        if item not in plot.items:
            plot.addItem(item)
    else:
        item = fill_between(x, lower, upper, brush)
        plot.addItem(item)
        p.fills.append(item)
    p.n_fills += 1
    return item


def draw(plot: pg.PlotItem, plot_id: str, series: list[Series], background: str = "#ffffff") -> None:
    """Draw ``plot_id``'s metrics for every series on ``plot`` (already cleared).

    Node i has :func:`node_color` (i) in every plot; a metric's parts (CPI = Est Instr Cmplx + Est Finite) are
    drawn in the node's colour, lighter and dashed/dotted, and named in the plot's legend by style (grey), while
    the window's shared legend names the nodes by colour.  The stacked sourcing plot shows one node only: the
    first node with sourcing data here; the timeline view gives every further node its own plot with
    :func:`draw_sourcing`."""
    if plot_id == "sourcing":
        nodes = sourcing_series(series)
        if nodes:
            draw_sourcing(plot, nodes[0])
        return
    cols = PLOT_METRICS[plot_id]
    drawn: list[int] = []
    for i, s in enumerate(series):
        color = node_color(i)
        for j, col in enumerate(cols):
            if col not in s.rows:
                continue
            y = s.rows[col].to_numpy(dtype=float)
            if np.isnan(y).all():
                continue
            pen = pg.mkPen(lighter(color, PART_LIGHTEN[j % len(PART_LIGHTEN)], background),
                           width=2 if j == 0 else 1.5, style=STYLES[j % len(STYLES)])
            take_curve(plot, s.x, y, pen, connect="finite", clip=True)
            if j not in drawn:
                drawn.append(j)
    if plot.legend is not None and len(cols) > 1:   # the parts' line styles, once per plot
        p = pool(plot)
        samples = getattr(p, "samples", None)
        if samples is None:
            samples = p.samples = [pg.PlotDataItem([], [], pen=pg.mkPen("#808080", width=2 if j == 0 else 1.5,
                                                                        style=STYLES[j % len(STYLES)]))
                                   for j in range(len(cols))]
        for j in sorted(drawn):
            p.legend.append((samples[j], LEGEND_SHORT.get(cols[j], SHORT.get(cols[j], cols[j]))))
        plot.legend.setToolTip(" · ".join(SHORT.get(c, c) for c in cols))


def fill_between(x: np.ndarray, lower: np.ndarray, upper: np.ndarray, brush) -> QGraphicsPathItem:
    """The area between two stacked lines on ``x``: the polygon pyqtgraph's FillBetweenItem fills (the lower
    line forward, the upper line back, odd-even rule, no pen, below the lines) built from the arrays in one
    step, where FillBetweenItem walks the lines' painter paths point by point in Python (0.15 s per stacked
    plot of a month's 2,880 intervals, issue 11)."""
    item = QGraphicsPathItem(_fill_path(x, lower, upper))
    item.setBrush(pg.mkBrush(brush))
    item.setPen(pg.mkPen(None))
    item.setZValue(-1)
    return item


def _fill_path(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> QPainterPath:
    xs = np.concatenate([x, x[::-1]]).astype(np.float64)
    ys = np.concatenate([lower, upper[::-1]]).astype(np.float64)
    finite = np.isfinite(xs) & np.isfinite(ys)     # both callers pass finite values; never draw NaN
    if not finite.all():
        xs, ys = xs[finite], ys[finite]
    return pg.arrayToQPath(xs, ys, connect="all") if len(xs) else QPainterPath()


def draw_sourcing(plot: pg.PlotItem, s: Series, skip_legend: set[str] | frozenset = frozenset()) -> set[str]:
    """Stacked area of the L1-miss sourcing percentages of node ``s``; returns the columns drawn.

    Columns in ``skip_legend`` get no legend entry (the colours are the same on every sourcing plot,
    so the first plot's legend serves the others)."""
    cols = sourcing_columns(s)
    lower = np.zeros(len(s.x))
    take_curve(plot, s.x, lower, pg.mkPen(None))
    p = pool(plot)
    for k, col in enumerate(cols):
        upper = lower + np.nan_to_num(s.rows[col].to_numpy(dtype=float))
        color = AREA_COLORS[k % len(AREA_COLORS)]
        upper_curve = take_curve(plot, s.x, upper, pg.mkPen(color, width=1))
        if col not in skip_legend:
            p.legend.append((upper_curve, col))
        take_fill(plot, s.x, lower, upper, color + "b0")
        lower = upper
    if plot.legend is not None and any(c not in skip_legend for c in cols):
        # the legend names the levels short (IBM's ids) or as analysts say them: its tooltip gives both
        from app.engine.layout import MEANINGS

        plot.legend.setToolTip("\n".join(f"{c}: {MEANINGS.get(c, c)}" for c in cols if c not in skip_legend))
    return set(cols)


def readout(series: list[Series], x: float, plots: list[str]) -> str:
    """Values of the visible metrics at the interval nearest ``x``, one line per node (in its colour), rounded
    as the table and the presentations round them."""
    lines = []
    for i, s in enumerate(series[:4]):
        if len(s.x) == 0:
            continue
        k = int(np.clip(np.searchsorted(s.x, x), 0, len(s.x) - 1))
        if k > 0 and abs(s.x[k - 1] - x) < abs(s.x[k] - x):
            k -= 1
        row = s.rows.iloc[k]
        when = _zone_wall(pd.Timestamp(s.x[k], unit="s")).strftime("%Y-%m-%d %H:%M:%S")
        vals = []
        for pid in plots:
            if pid == "cec":
                continue
            for col in (SOURCING if pid == "sourcing" else PLOT_METRICS[pid][:1]):
                v = row.get(col)
                if v is not None and not pd.isna(v):
                    vals.append(f"{SHORT.get(col, col)} {fmt_number(v, metric_decimals(col))}")
        vals += readout_marks(row)
        lines.append(f'<b style="color:{node_color(i)}">{s.label}</b> {when} {_zone_label()}: ' + ", ".join(vals))
    return "<br>".join(lines)


def readout_marks(row: pd.Series) -> list[str]:
    """Marks of an interval row whose sums hold (or left out) an implausible CPU-interval (issue 20)."""
    n = row.get("left_out")
    if n is not None and not pd.isna(n) and int(n):
        return [M.READOUT_LEFT_OUT.format(n=int(n))]
    return [M.READOUT_IMPLAUSIBLE] if "implausible" in str(row.get("quality") or "") else []


def draw_stack(plot: pg.PlotItem, x: np.ndarray, stacks: dict[str, np.ndarray],
               names: dict[str, str]) -> list[tuple[str, str]]:
    """Stacked areas of ``stacks`` (name -> values on ``x``), bottom first; returns (legend text, colour) per
    layer (``names`` maps a layer to its legend text).  The y axis runs from 0 to the top of the stack."""
    out = []
    lower = np.zeros(len(x))
    take_curve(plot, x, lower, pg.mkPen(None))
    for k, (key, y) in enumerate(stacks.items()):
        color = AREA_COLORS[k % len(AREA_COLORS)]
        upper = lower + y
        upper_curve = take_curve(plot, x, upper, pg.mkPen(color, width=1))
        upper_curve.setToolTip(names.get(key, key))
        take_fill(plot, x, lower, upper, color + "b0")
        out.append((names.get(key, key), color))
        lower = upper
    plot.disableAutoRange(axis="y")
    plot.setYRange(0, float(lower.max()) * 1.05 if len(lower) and lower.max() > 0 else 100, padding=0)
    return out


def fit_y(plot: pg.PlotItem, plot_id: str, from_zero: bool) -> None:
    """Value axis of a data plot: sourcing 0..100, or up to the stack's top when an implausible interval kept in
    the sums goes beyond 100 (never hidden: issue 20); from zero to the data's top when ``from_zero``; else
    fitted to the data (autorange).  The CEC stack sets its own range (:func:`draw_stack`).  A double click on
    the plot applies this rule again after the user pinned the value axis (Shift+wheel, timeline_axes.TimeViewBox)."""
    vb = plot.getViewBox()
    if hasattr(vb, "refit"):
        vb.refit = lambda: fit_y(plot, plot_id, from_zero)
    if plot_id.startswith("sourcing"):
        top = max((float(np.nanmax(item.yData)) for item in plot.listDataItems()
                   if item.yData is not None and len(item.yData) and np.isfinite(item.yData).any()), default=100.0)
        plot.disableAutoRange(axis="y")
        plot.setYRange(0, 100 if top <= 100.5 else top * 1.05, padding=0)
    elif plot_id == "cec":
        return
    elif from_zero:
        top = max((float(np.nanmax(item.yData)) for item in plot.listDataItems()
                   if item.yData is not None and len(item.yData) and np.isfinite(item.yData).any()), default=1.0)
        plot.disableAutoRange(axis="y")
        plot.setYRange(0, top * 1.05 if top > 0 else 1.0, padding=0)
    else:
        plot.enableAutoRange(axis="y")


# one entry never breaks across lines (the shared legend wraps between entries: "CF01 (D0R16)" was split at 1024 px)
SWATCH = '<span style="white-space:nowrap"><span style="color:{c}; font-size:14pt">\u25ac</span>&nbsp;{t}</span>'


def legend_html(series: list[Series], stack_title: str = "", stack: list[tuple[str, str]] | None = None) -> str:
    """The shared legend: a swatch per node in its colour; a second line for a CEC stack's layers."""
    text = "&nbsp;&nbsp; ".join(SWATCH.format(c=node_color(i), t=s.label) for i, s in enumerate(series))
    if stack:
        text += ("<br>" if text else "") + stack_title + "&nbsp; " + \
            "&nbsp;&nbsp; ".join(SWATCH.format(c=c, t=t) for t, c in stack)
    return text


def _zone_wall(t: pd.Timestamp) -> pd.Timestamp:
    from app.ui.time_zone import ZONE     # the window's time zone (UTC or local)

    return ZONE.wall(t)


def _zone_label() -> str:
    from app.ui.time_zone import ZONE

    return ZONE.label()
