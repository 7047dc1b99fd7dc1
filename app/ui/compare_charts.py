"""The Compare tab's charts: the CPI waterfall (with its fitted value axis) and the overlaid timelines."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from app.engine.compare import RelativeAxis, node_labels
from app.engine.layout import gapped
from app.ui.palette import CHART_THEMES, recolor_legend

SIDE_STYLE = {"before": Qt.PenStyle.DashLine, "after": Qt.PenStyle.SolidLine}   # as the XLSX and PPTX charts
LINE_COLORS = ["#1f5fa8", "#c2410c", "#2e7d32", "#7b1fa2", "#00838f", "#6d4c41"]
BAR_TOTAL, BAR_UP, BAR_DOWN = "#5b7db1", "#d9534f", "#3c9d5d"
SHORT_STEP = {"cpi_before": "CPI\nbefore", "d_instr_cmplx": "Instr\ncmplx", "d_l1mp_effect": "L1MP\neffect",
              "d_scpl1m_effect": "SCPL1M\neffect", "d_other": "Other\nfinite", "d_cpi": "CPI\nchange",
              "cpi_after": "CPI\nafter"}
THEMES = CHART_THEMES          # the plots' colours come from app.ui.palette, as every other colour
TEXT_COLOR = THEMES[False]["fg"]
OVERLAY_METRICS = ["CPI", "Est_Finite_CPI", "Est_Instr_Cmplx_CPI", "L1MP", "Est_SCPL1M", "RNI", "LPARCPU",
                   "PRBSTATE", "MEMP", "Eff_GHz", "MIPS_per_CPU"]


def _dark(plot: pg.PlotItem) -> bool:
    return bool(getattr(plot, "nestscope_dark", False))


def _fg(plot: pg.PlotItem) -> str:
    return THEMES[_dark(plot)]["fg"]


def apply_plot_theme(view: pg.PlotWidget, dark: bool) -> None:
    """Background, axes and text of a chart in the light or dark palette (drawn again by the caller)."""
    t = THEMES[dark]
    plot = view.getPlotItem()
    plot.nestscope_dark = dark
    view.setBackground(t["bg"])
    for name in ("left", "bottom"):
        plot.getAxis(name).setPen(pg.mkPen(t["fg"]))
        plot.getAxis(name).setTextPen(pg.mkPen(t["fg"]))
    if plot.legend is not None:
        recolor_legend(plot.legend, t["fg"])
        plot.legend.setBrush(pg.mkBrush(*t["legend"]))


def _title(plot: pg.PlotItem, text: str) -> None:
    """A plot title that never widens the plot beyond its view (a long one is cut, not the plot)."""
    plot.setTitle(text, size="9pt", color=_fg(plot))
    plot.titleLabel.setMinimumWidth(0)
    plot.titleLabel.item.setToolTip(text)


# the waterfall's value axis label: the first of these that fits the axis' length (the unit down to ~110 px)
WF_AXIS_LABELS = ("CPI (cycles / instr)", "CPI (cycles/instr)", "CPI")


class FittedAxis(pg.AxisItem):
    """A left value axis whose label never overlaps its tick labels nor runs past the axis.

    pyqtgraph widens an axis for its tick texts only after they were painted once (a picture painted
    in one pass, or a freshly laid out window, shows the label over them) and puts the label 5 px left
    of the axis (cut at a picture's edge).  Here the width is reserved up front for the label and the
    widest tick text of the value range (:meth:`fit_range`), the label sits inside the axis, and the
    first of its labels that fits the axis' length is shown (long ones name the unit, the last is short)."""

    LABEL_X = -1.0   # the label's text box starts here (its document margin keeps the glyphs inside)
    GAP = 4.0        # px between the label's glyphs and the widest tick text

    def __init__(self, labels: tuple[str, ...] = WF_AXIS_LABELS, **kw) -> None:
        super().__init__("left", **kw)
        self.labels = tuple(labels)
        self.widest = "8.88"
        self.setLabel(self.labels[0])
        self.fit_range(0.0, 5.0)

    def fit_range(self, lo: float, hi: float) -> None:
        """Reserve the width the tick texts of ``lo``..``hi`` need: pyqtgraph writes as many decimals as its
        (minor) tick spacing needs, one over a span of 2 or more ("12.5"), at most two below it ("0.25")."""
        big = max(abs(lo), abs(hi), 1.0)
        digits = len(str(int(big))) if math.isfinite(big) else 3
        decimals = 1 if abs(hi - lo) >= 2 else 2
        self.widest = ("-" if lo < 0 else "") + "8" * digits + "." + "8" * decimals
        self.fix_width()

    def tick_text_width(self) -> float:
        font = self.style.get("tickFont") or self.font()
        return QFontMetricsF(font).horizontalAdvance(self.widest)

    def fix_width(self) -> None:
        margin = self.label.document().documentMargin()
        glyphs_end = self.LABEL_X + self.label.boundingRect().height() - margin
        w = glyphs_end + self.GAP + self.tick_text_width() + self.style["tickTextOffset"][0] + \
            max(0, self.style["tickLength"])
        self.setWidth(math.ceil(w))

    def label_length(self, text: str) -> float:
        """The label's length along the axis (its text box: glyphs and document margins)."""
        return QFontMetricsF(self.label.font()).horizontalAdvance(text) + 2 * self.label.document().documentMargin()

    def resizeEvent(self, ev=None) -> None:
        labels = getattr(self, "labels", ())   # (pyqtgraph resizes the axis while it is being made)
        if self.label is None or not labels:
            return super().resizeEvent(ev)
        room = self.size().height()
        want = next((t for t in labels if self.label_length(t) <= room), labels[-1])
        if want != self.labelText:
            self.setLabel(want)
        super().resizeEvent(ev)
        self.label.setPos(self.LABEL_X, self.label.pos().y())


def draw_waterfall(plot: pg.PlotItem, wf: pd.DataFrame, title: str = "") -> list[pg.TextItem]:
    """The CPI waterfall as stacked bars (invisible base + coloured step), with each step's value on it."""
    plot.clear()
    _title(plot, title)
    if not len(wf):
        return []
    x = np.arange(len(wf), dtype=float)
    kinds = wf["kind"].tolist()
    values = wf["value"].to_numpy(dtype=float)
    brushes = [pg.mkBrush(BAR_TOTAL if k == "total" else (BAR_UP if v > 0 else BAR_DOWN))
               for k, v in zip(kinds, values)]
    bars = pg.BarGraphItem(x=x, height=wf["height"].to_numpy(dtype=float), y0=wf["base"].to_numpy(dtype=float),
                           width=0.6, brushes=brushes, pens=[pg.mkPen("#303030", width=1)] * len(wf))
    plot.addItem(bars)
    ends = wf["end"].to_numpy(dtype=float)
    for i in range(len(wf) - 1):   # connectors: the running CPI carried to the next bar
        level = ends[i]
        plot.plot([x[i] + 0.3, x[i + 1] - 0.3], [level, level], pen=pg.mkPen("#808080", width=1,
                                                                              style=Qt.PenStyle.DotLine))
    top = float(np.nanmax(np.r_[wf["start"].to_numpy(dtype=float), ends])) if len(wf) else 1.0
    labels = []
    for i, (k, v) in enumerate(zip(kinds, values)):
        text = f"{v:.3f}" if k == "total" else f"{v:+.3f}"
        item = pg.TextItem(text, color=_fg(plot), anchor=(0.5, 1.0))
        item.setPos(x[i], max(wf["start"].iloc[i], wf["end"].iloc[i]) + top * 0.01)
        plot.addItem(item)
        labels.append(item)
    plot.getAxis("bottom").setTicks([[(float(i), SHORT_STEP.get(step, lab))
                                      for i, (step, lab) in enumerate(zip(wf["step"], wf["label"]))]])
    plot.setXRange(-0.6, len(wf) - 0.4, padding=0)
    plot.setYRange(0, top * 1.12 if top > 0 else 1.0, padding=0)
    axis = plot.getAxis("left")
    if isinstance(axis, FittedAxis):
        axis.fit_range(0.0, top * 1.12 if top > 0 else 1.0)
    return labels


def waterfall_text(d: dict, gens: tuple[str, str]) -> str:
    """The numbers beside the waterfall (rich text)."""
    def f(v, signed=False, dec=3):
        try:
            v = float(v)
        except (TypeError, ValueError):
            return ""
        if not np.isfinite(v):
            return "n/a"
        return f"{v:+.{dec}f}" if signed else f"{v:.{dec}f}"

    gb, ga = gens
    rows = [("CPI before" + (f" ({gb})" if gb else ""), f(d.get("cpi_before")), True),
            ("instruction complexity part", f(d.get("d_instr_cmplx"), True), False),
            ("finite cache part", f(d.get("d_finite"), True), False),
            ("&nbsp;&nbsp;L1MP effect", f(d.get("d_l1mp_effect"), True), False),
            ("&nbsp;&nbsp;SCPL1M effect", f(d.get("d_scpl1m_effect"), True), False)]
    other = d.get("d_other")
    try:
        if np.isfinite(float(other)) and float(other) != 0.0:
            rows.append(("&nbsp;&nbsp;other finite", f(other, True), False))
    except (TypeError, ValueError):
        pass
    rows += [("CPI after" + (f" ({ga})" if ga else ""), f(d.get("cpi_after")), True),
             ("CPI change (after - before)", f(d.get("d_cpi"), True), True)]
    body = "".join(f"<tr><td>{'<b>' + a + '</b>' if bold else a}</td>"
                   f"<td align='right'>{'<b>' + b + '</b>' if bold else b}</td></tr>" for a, b, bold in rows)
    inputs = [("L1MP (misses/100 instr)", d.get("l1mp_before"), d.get("l1mp_after"), 2),
              ("Est SCPL1M (cycles/miss)", d.get("scpl1m_before"), d.get("scpl1m_after"), 1),
              ("Est Finite CPI", d.get("finite_before"), d.get("finite_after"), 3),
              ("Est Instr Cmplx CPI", d.get("instr_cmplx_before"), d.get("instr_cmplx_after"), 3)]
    body2 = "".join(f"<tr><td>{a}</td><td align='right'>{f(b, dec=k)}</td><td align='right'>{f(c, dec=k)}</td></tr>"
                    for a, b, c, k in inputs)
    note = str(d.get("note") or "")
    return (f"<table cellspacing='0' cellpadding='2'>{body}</table>"
            f"<p style='margin-top:6px'><table cellspacing='0' cellpadding='2'><tr><td></td><td><i>before</i></td>"
            f"<td><i>after</i></td></tr>{body2}</table></p>"
            "<p style='font-size:8pt'>Midpoint split: L1MP effect = dL1MP/100 x mean SCPL1M, SCPL1M effect = "
            "dSCPL1M x mean L1MP/100; the parts add up to the CPI change.</p>"
            + (f"<p style='font-size:8pt'><i>{note}</i></p>" if note else ""))


def _fit_legend(plot: pg.PlotItem, names: list[tuple[str, str]]) -> int:
    """Fit the legend across the plot (8pt text: ~6.5 px a character, plus the line sample): two columns where
    two fit, else one; where even one does not, the short names (``names``: (full, short) per curve, the short
    one without the CEC serial).  Checked again whenever the plot is resized (a picture is drawn at another size
    than the window)."""
    def need(texts: list[str]) -> float:
        return max((len(t) for t in texts), default=0) * 6.5 + 45

    def fit(width: float) -> int:
        full = [f for f, _ in names]
        short = len({s for _, s in names}) == len(names)          # short names only while they stay distinct
        texts = [s for _, s in names] if short and width > 0 and need(full) > width else full
        for (sample, label), text in zip(plot.legend.items, texts):
            if label.text != text:
                label.setText(text)
        cols = 1 if len(names) <= 3 or (width > 0 and 2 * need(texts) > width) else 2
        plot.legend.setColumnCount(cols)
        plot.legend.updateSize()
        return cols

    if getattr(plot, "_legend_fit", None) is None:          # hooked once; the rule of the latest draw applies
        plot.vb.sigResized.connect(lambda vb: plot._legend_fit(vb.width()))
    plot._legend_fit = fit
    return fit(plot.vb.width())


def draw_overlay(plot: pg.PlotItem, axis: RelativeAxis | None, metric: str, header: str,
                 pair: str | None = None) -> int:
    """Both sides' interval values of ``metric`` on the relative axis; before dashed, after solid.  With ``pair``
    only that pair's rows (the ``pair`` column of :func:`app.ui.compare_model.with_pairs`): the waterfall's pair."""
    plot.clear()
    if plot.legend is not None:
        plot.legend.clear()
    else:
        plot.addLegend(offset=(10, 5), labelTextSize="8pt", labelTextColor=_fg(plot),
                       brush=pg.mkBrush(*THEMES[_dark(plot)]["legend"]), pen=pg.mkPen("#a0a0a0"))
    if axis is None:
        return 0
    plot.setLabel("bottom", axis.label)
    plot.setLabel("left", header)
    frames = {"before": axis.before, "after": axis.after}
    if pair is not None:
        frames = {s: f.loc[f["pair"] == pair] if "pair" in f.columns else f for s, f in frames.items()}
    _title(plot, f"{header}{'' if pair is None else ' of ' + str(pair)}: before (dashed), after (solid)")
    n = 0
    legend_names: list[tuple[str, str]] = []
    ys: list[np.ndarray] = []
    # one LPAR a side: two colours; more: one colour per LPAR name, so a pair reads dashed against solid
    names = [str(v) for f in frames.values() if len(f) and "lpar" in f.columns for v in dict.fromkeys(f["lpar"])]
    single = all(len(f) == 0 or "lpar" not in f.columns or f[["cec", "lpar"]].drop_duplicates().shape[0] <= 1
                 for f in frames.values())
    color_of = {name: LINE_COLORS[i % len(LINE_COLORS)] for i, name in enumerate(dict.fromkeys(names))}
    for side, frame in frames.items():
        if not len(frame) or metric not in frame.columns:
            continue
        other = frames["after" if side == "before" else "before"]
        level = "class_interval" if "class" in frame.columns else "lpar_interval"   # per class: "ZOSA zIIP"
        labels = node_labels(frame, level, [other] if len(other) else None)
        frame = frame.assign(_label=labels.to_numpy())
        for label, g in frame.groupby("_label", sort=False):
            g = g.sort_values("x")
            y = pd.to_numeric(g[metric], errors="coerce").to_numpy(dtype=float)
            color = (LINE_COLORS[int(side == "after")] if single
                     else color_of.get(str(g["lpar"].iloc[0]), LINE_COLORS[0]))
            pen = pg.mkPen(color, width=2, style=SIDE_STYLE[side])
            # a shift filter (or a pause in the data) leaves gaps: the line breaks there, as in the slides' charts
            gx, gy = gapped(g["x"].to_numpy(dtype=float), y)
            plot.plot(gx, gy, pen=pen, connect="finite", name=f"{side}: {label}")
            gen = f" ({g['generation'].iloc[0]})" if "generation" in g.columns else ""
            short = " ".join(str(g[c].iloc[0]) for c in ("lpar", "class") if c in g.columns)
            legend_names.append((f"{side}: {label}", f"{side}: {short}{gen}" if "lpar" in g.columns
                                 else f"{side}: {label}"))
            ys.append(y[np.isfinite(y)])
            n += 1
    plot.enableAutoRange()
    cols = _fit_legend(plot, legend_names)
    got = np.concatenate(ys) if ys else np.array([])
    if len(got):   # room above the lines for the legend
        lo, hi = float(got.min()), float(got.max())
        span = (hi - lo) or max(abs(hi), 1.0) * 0.1
        rows = -(-n // cols)
        plot.setYRange(lo - span * 0.05, hi + span * (0.15 + 0.12 * rows), padding=0)
    return n
