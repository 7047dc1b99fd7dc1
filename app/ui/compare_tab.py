"""The Compare tab: two selections ("before", "after") side by side, the CPI waterfall, overlaid timelines.

All numbers come from :mod:`app.engine.compare` (``compare``, ``Comparison.table``/``marks``/``cpi``,
``waterfall``, ``relative_axis``, ``node_labels``); this module only shows them.  The comparison is
computed off the GUI thread through the window's SerialRunner (:class:`WorkspaceJobs`), the one
place that touches the Workspace.

:func:`install` hooks everything of issue 10 into a MainWindow: the tab, "Set as before/after" in
the tree's context menu, File > Export (Ctrl+E, :mod:`app.ui.export_dialog`), right-click > Export
on the interval table, and picture export on the timeline plots (:mod:`app.ui.plot_export`).
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.engine.compare import RATIO_NOTE, Comparison, RelativeAxis, Selection, compare, node_labels
from app.engine.layout import gapped
from app.engine.shift import ShiftError, make_shift
from app.ui.column_model import ColumnTableModel, Index
from app.ui.frames import fmt_number

SIDES = ("before", "after")
TAB_TITLE = "Compare"
BY_TEXT = {"lpar": "per LPAR", "class": "per processor class"}
# short row labels (the tab's note and each row's tooltip say ratio = before / after, delta = after - before): the
# table's last column, Workload Hint, fits a 1440x900 window without the scroll bar
ROW_TEXT = {"before": "Before", "after": "After", "ratio": "Ratio", "delta": "Delta"}
RATIO_DECIMALS = 2
MARK = "\u2020"   # dagger
HINT = ("Nothing to compare yet. Right-click an LPAR (or a class, or several) in the Machines tree and choose "
        "'Set as before', then another and 'Set as after' (or hold Shift / Ctrl while dragging the time-window "
        "region of the Timelines: that window of the selected nodes becomes the before / after side). The time "
        "window at that moment becomes the side's window; hours and days filter a shift (e.g. 08-17, mon-fri).")
TIME_FMT = "%Y-%m-%d %H:%M"
SIDE_STYLE = {"before": Qt.PenStyle.DashLine, "after": Qt.PenStyle.SolidLine}   # as the XLSX and PPTX charts
LINE_COLORS = ["#1f5fa8", "#c2410c", "#2e7d32", "#7b1fa2", "#00838f", "#6d4c41"]
BAR_TOTAL, BAR_UP, BAR_DOWN = "#5b7db1", "#d9534f", "#3c9d5d"
SHORT_STEP = {"cpi_before": "CPI\nbefore", "d_instr_cmplx": "Instr\ncmplx", "d_l1mp_effect": "L1MP\neffect",
              "d_scpl1m_effect": "SCPL1M\neffect", "d_other": "Other\nfinite", "d_cpi": "CPI\nchange",
              "cpi_after": "CPI\nafter"}
TEXT_COLOR = "#202020"
THEMES = {False: {"bg": "w", "fg": TEXT_COLOR, "legend": (255, 255, 255, 220), "ratio": (228, 236, 248),
                  "delta": (245, 245, 245), "text": (20, 20, 20)},
          True: {"bg": "#1e1e1e", "fg": "#e0e0e0", "legend": (30, 30, 30, 220), "ratio": (45, 60, 85),
                 "delta": (52, 52, 56), "text": (230, 230, 230)}}
NARROW = 900   # tab width (px) below which the charts are laid out for a small window
OVERLAY_METRICS = ["CPI", "Est_Finite_CPI", "Est_Instr_Cmplx_CPI", "L1MP", "Est_SCPL1M", "RNI", "LPARCPU",
                   "PRBSTATE", "MEMP", "Eff_GHz", "MIPS_per_CPU"]


# ------------------------------------------------------------------ the state of one side
@dataclass(frozen=True)
class Side:
    """One side as the user set it: tree nodes, window (UTC, None = whole range) and shift texts."""

    nodes: tuple = ()
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    hours: str = ""
    days: str = ""

    @property
    def is_set(self) -> bool:
        return bool(self.nodes)

    def to_json(self) -> dict:
        return {"nodes": [list(n) for n in self.nodes], "start": _iso(self.start), "end": _iso(self.end),
                "hours": self.hours, "days": self.days}

    @classmethod
    def from_json(cls, doc: Any) -> Side:
        if not isinstance(doc, dict):
            return cls()
        nodes = tuple(tuple(str(v) for v in n) for n in doc.get("nodes") or [] if isinstance(n, (list, tuple)))
        return cls(nodes, _ts(doc.get("start")), _ts(doc.get("end")), str(doc.get("hours") or ""),
                   str(doc.get("days") or ""))


def _iso(t: Any) -> str | None:
    return None if t is None else pd.Timestamp(t).isoformat()


def _ts(v: Any) -> pd.Timestamp | None:
    if v in (None, ""):
        return None
    try:
        t = pd.Timestamp(v)
    except (TypeError, ValueError):
        return None
    if pd.isna(t):
        return None
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def parse_time(text: str, what: str) -> pd.Timestamp | None:
    """``"2026-10-05 08:00"`` (UTC) -> Timestamp; "" -> None; raises ValueError with a readable message."""
    text = str(text).strip()
    if not text:
        return None
    try:
        t = pd.Timestamp(text)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {text!r} is not a time (use YYYY-MM-DD HH:MM, UTC)") from None
    if pd.isna(t):
        raise ValueError(f"{what}: {text!r} is not a time (use YYYY-MM-DD HH:MM, UTC)")
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def _naive(t: pd.Timestamp | None) -> pd.Timestamp | None:
    if t is None:
        return None
    t = pd.Timestamp(t)
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t


def selection_of(ws: Any, side: Side, name: str) -> Selection:
    """The engine Selection of a side (raises ShiftError for bad hours/days)."""
    return Selection(ws, nodes=tuple(side.nodes) or None, start=_naive(side.start), end=_naive(side.end),
                     shift=make_shift(side.hours or None, side.days or None), name=name)


@dataclass
class CompareData:
    """What the tab shows, computed off the GUI thread by :func:`compute_compare`."""

    comparison: Comparison
    axis: RelativeAxis | None
    describe: dict[str, str] = field(default_factory=dict)


def compute_compare(ws: Any, before: Side, after: Side, by: str) -> CompareData:
    """The comparison of two sides (runs in the window's SerialRunner)."""
    sb, sa = selection_of(ws, before, "before"), selection_of(ws, after, "after")
    cmp = compare(sb, sa, by=by)
    axis = cmp.timelines("lpar_interval")
    return CompareData(cmp, axis, {"before": sb.describe(), "after": sa.describe()})


# ------------------------------------------------------------------ jobs over the window's workspace
class _Tagged:
    """A compare/export job's result travelling through the window's SerialRunner (not a ViewData)."""

    def __init__(self, token: object, value: Any = None, error: tuple[str, str] | None = None) -> None:
        self.token, self.value, self.error = token, value, error


class WorkspaceJobs(QObject):
    """Run functions over the window's Workspace through its SerialRunner, one at a time.

    A job is started only when the runner is idle, so it never replaces a view request the window
    queued; the window's own requests made meanwhile wait for it.  Results come back on the GUI
    thread to ``on_done(value)`` or ``on_error(text, details)``.
    """

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.runner = window.runner
        self._queue: list[tuple[object, Any, Any, Any]] = []
        self._running: dict[object, tuple[Any, Any]] = {}
        # the window's view slot must not see our results: route them here
        try:
            self.runner.done.disconnect(window._apply)
        except (RuntimeError, TypeError):
            pass
        self.runner.done.connect(lambda r: self._on_done(r) if isinstance(r, _Tagged) else window._apply(r))
        self.runner.idle.connect(self._pump)

    def run(self, fn, on_done, on_error) -> object:
        token = object()
        self._queue.append((token, fn, on_done, on_error))
        self._pump()
        return token

    def discard(self, token: object) -> None:
        """Forget a job: taken out of the queue, or its result dropped when it already runs."""
        self._queue = [q for q in self._queue if q[0] is not token]
        if token in self._running:
            self._running[token] = (None, None)

    def busy(self) -> bool:
        return bool(self._queue or self._running)

    def _pump(self) -> None:
        if self.runner.busy() or not self._queue or self._running:
            return
        token, fn, on_done, on_error = self._queue.pop(0)
        self._running[token] = (on_done, on_error)

        def job():
            try:
                return _Tagged(token, fn())
            except Exception as exc:  # noqa: BLE001 - reported to the user by on_error
                return _Tagged(token, error=(f"{type(exc).__name__}: {exc}", traceback.format_exc()))

        self.runner.submit(lambda: job)

    def _on_done(self, result: _Tagged) -> None:
        on_done, on_error = self._running.pop(result.token, (None, None))
        if result.error is not None:
            if on_error is not None:
                on_error(*result.error)
        elif on_done is not None:
            on_done(result.value)
        QTimer.singleShot(0, self._pump)


# ------------------------------------------------------------------ the comparison table
@dataclass(frozen=True)
class CmpCol:
    id: str
    header: str
    decimals: int | None = None
    tooltip: str = ""
    mark: str = ""        # why the formula differs (empty: same formula)
    numeric: bool = True


class CompareModel(ColumnTableModel):
    """Rows of ``Comparison.table`` (before, after, ratio, delta per pair) in the presentation's columns."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.frame = pd.DataFrame()
        self.columns: list[CmpCol] = []
        self.ratio_note = RATIO_NOTE
        self.dark = False

    def _row_total(self) -> int:
        return len(self.frame)

    def set_comparison(self, cmp: Comparison | None, all_columns: bool = False) -> None:
        self.beginResetModel()
        if cmp is None:
            self.frame, self.columns = pd.DataFrame(), []
        else:
            self.frame = cmp.table.reset_index(drop=True)
            self.ratio_note = cmp.ratio_note
            specs = cmp.columns if all_columns else cmp.main_columns()
            cols = [CmpCol("_row", "Row", numeric=False, tooltip=cmp.ratio_note),
                    CmpCol("_label", "LPAR (CEC, generation)" if cmp.by == "lpar" else "LPAR class (CEC, generation)",
                           numeric=False, tooltip="CEC type-serial and generation are named where LPAR names "
                                                  "alone would clash")]
            for s in specs:
                why = cmp.marks.get(s.id, "")
                cols.append(CmpCol(s.id, s.header + (" " + MARK if why else ""), s.decimals,
                                   s.tooltip or s.header, why, numeric=s.id != "Workload_Hint"))
            cols += [CmpCol("_window", "Intervals (UTC)", numeric=False,
                            tooltip="first interval start .. last interval end of the side"),
                     CmpCol("n_cpus", "CPUs", 0, "logical CPUs"),
                     CmpCol("generation", "Gen", numeric=False, tooltip="machine generation"),
                     CmpCol("formula_set", "Formula set", numeric=False, tooltip="formula set version")]
            self.columns = [c for c in cols if c.id.startswith("_") or c.id in self.frame.columns]
        self.endResetModel()

    def kind(self, row: int) -> str:
        return str(self.frame.iloc[row]["row"]) if 0 <= row < len(self.frame) else ""

    def value(self, row: int, col_id: str) -> Any:
        v = self.frame.iloc[row].get(col_id)
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else v

    def text(self, row: int, col: int) -> str:
        c = self.columns[col]
        rec = self.frame.iloc[row]
        kind = str(rec["row"])
        if c.id == "_row":
            return ROW_TEXT.get(kind, kind)
        if c.id == "_label":
            return str(rec["label"]) if kind in ("before", "after") else str(rec["pair"])
        if c.id == "_window":
            s, e = rec.get("interval_start"), rec.get("interval_end")
            if kind not in ("before", "after") or s is None or pd.isna(s):
                return ""
            return f"{pd.Timestamp(s).strftime(TIME_FMT)} .. {pd.Timestamp(e).strftime(TIME_FMT)}"
        v = self.value(row, c.id)
        if v is None:
            return ""
        if not c.numeric:
            return str(v)
        dec = RATIO_DECIMALS if kind == "ratio" else c.decimals
        if isinstance(v, (int, float)) and round(float(v), 2 if dec is None else dec) == 0:
            v = 0.0   # no "-0.0"
        return fmt_number(v, dec)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        """The base model's header, plus the formula-difference mark (tooltip line, italic)."""
        base = super().headerData(section, orientation, role)
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return base
        c = self.columns[section]
        if role == Qt.ItemDataRole.ToolTipRole and c.mark:
            return f"{base}\n{MARK} {c.mark}"
        if role == Qt.ItemDataRole.FontRole and c.mark:
            f = QFont()
            f.setItalic(True)
            return f
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < len(self.frame) and 0 <= col < len(self.columns)):
            return None
        c = self.columns[col]
        kind = self.kind(row)
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, col)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignRight if c.numeric else Qt.AlignmentFlag.AlignLeft
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole:
            f = QFont()
            f.setBold(kind == "ratio")
            f.setItalic(bool(c.mark))
            return f
        if role == Qt.ItemDataRole.BackgroundRole:
            if kind == "ratio":
                return QColor(*THEMES[self.dark]["ratio"])
            if kind == "delta":
                return QColor(*THEMES[self.dark]["delta"])
            return None
        if role == Qt.ItemDataRole.ForegroundRole and kind in ("ratio", "delta"):   # on their light tint
            return QColor(*THEMES[self.dark]["text"])
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = []
            if c.mark:
                lines.append(f"{MARK} {c.mark}")
            if kind == "ratio":
                lines.append(self.ratio_note)
            elif kind == "delta":
                lines.append("delta = after - before")
            return "\n".join(lines) or None
        return None

    def table_texts(self) -> tuple[list[str], list[list[str]]]:
        headers = [c.header for c in self.columns]
        body = [[self.text(r, c) for c in range(len(self.columns))] for r in range(len(self.frame))]
        return headers, body


# ------------------------------------------------------------------ the charts
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
        plot.legend.setLabelTextColor(t["fg"])
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


def draw_overlay(plot: pg.PlotItem, axis: RelativeAxis | None, metric: str, header: str) -> int:
    """Both sides' interval values of ``metric`` on the relative axis; before dashed, after solid."""
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
    _title(plot, f"{header}: before (dashed), after (solid)")
    n = 0
    legend_names: list[tuple[str, str]] = []
    ys: list[np.ndarray] = []
    frames = {"before": axis.before, "after": axis.after}
    # one LPAR a side: two colours; more: one colour per LPAR name, so a pair reads dashed against solid
    names = [str(v) for f in frames.values() if len(f) and "lpar" in f.columns for v in dict.fromkeys(f["lpar"])]
    single = all(len(f) == 0 or "lpar" not in f.columns or f[["cec", "lpar"]].drop_duplicates().shape[0] <= 1
                 for f in frames.values())
    color_of = {name: LINE_COLORS[i % len(LINE_COLORS)] for i, name in enumerate(dict.fromkeys(names))}
    for side, frame in frames.items():
        if not len(frame) or metric not in frame.columns:
            continue
        other = frames["after" if side == "before" else "before"]
        labels = node_labels(frame, "lpar_interval", [other] if len(other) else None)
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
            legend_names.append((f"{side}: {label}", f"{side}: {g['lpar'].iloc[0]}{gen}" if "lpar" in g.columns
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


# ------------------------------------------------------------------ the tab
class SideBox(QGroupBox):
    """Controls of one side: what is selected, its window and its shift filter."""

    changed = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(name.capitalize(), parent)
        self.name = name
        self.nodes: tuple = ()
        self.what = QLabel("not set")
        self.what.setWordWrap(True)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.start = QLineEdit()
        self.end = QLineEdit()
        for e, tip in ((self.start, "from (UTC), e.g. 2026-10-05 00:00; empty = first interval"),
                       (self.end, "to (UTC), e.g. 2026-10-07 00:00; empty = last interval")):
            e.setPlaceholderText("YYYY-MM-DD HH:MM")
            e.setToolTip(tip)
        self.hours = QLineEdit()
        self.hours.setPlaceholderText("all hours, e.g. 08-17")
        self.hours.setToolTip("Shift hours (UTC): intervals whose midpoint is in [first, last); 22-06 wraps midnight")
        self.days = QLineEdit()
        self.days.setPlaceholderText("all days, e.g. mon-fri")
        self.days.setToolTip("Shift days: mon..sun, ranges and lists, e.g. mon-fri or sat,sun")
        lay = QGridLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setHorizontalSpacing(6)
        lay.setVerticalSpacing(3)
        lay.addWidget(self.what, 0, 0, 1, 4)
        lay.addWidget(QLabel("From"), 1, 0)
        lay.addWidget(self.start, 1, 1)
        lay.addWidget(QLabel("To"), 1, 2)
        lay.addWidget(self.end, 1, 3)
        lay.addWidget(QLabel("Hours"), 2, 0)
        lay.addWidget(self.hours, 2, 1)
        lay.addWidget(QLabel("Days"), 2, 2)
        lay.addWidget(self.days, 2, 3)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)
        for e in (self.start, self.end, self.hours, self.days):
            e.editingFinished.connect(self._edited)
            e.setMinimumWidth(60)

    def _edited(self) -> None:
        self.changed.emit()

    def set_side(self, side: Side) -> None:
        self.nodes = tuple(side.nodes)
        for e, v in ((self.start, side.start), (self.end, side.end)):
            e.setText("" if v is None else pd.Timestamp(v).strftime(TIME_FMT))
        self.hours.setText(side.hours)
        self.days.setText(side.days)
        self.what.setText(_nodes_text(self.nodes) if self.nodes else "not set")

    def side(self) -> Side:
        """The side as edited; raises ValueError / ShiftError with a readable message."""
        start = parse_time(self.start.text(), f"{self.name} from")
        end = parse_time(self.end.text(), f"{self.name} to")
        if start is not None and end is not None and end <= start:
            raise ValueError(f"{self.name}: 'to' must be after 'from'")
        side = Side(self.nodes, start, end, self.hours.text().strip(), self.days.text().strip())
        make_shift(side.hours or None, side.days or None)   # raises ShiftError with the reason
        return side


def _nodes_text(nodes: tuple) -> str:
    parts = []
    for n in nodes:
        level, *rest = n
        parts.append(f"{level} " + " / ".join(str(v) for v in rest))
    return "; ".join(parts)


class CompareTab(QWidget):
    """Before/after table, CPI waterfall and overlaid timelines of two selections."""

    compare_requested = Signal()
    status = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: CompareData | None = None
        self.boxes = {s: SideBox(s) for s in SIDES}
        for b in self.boxes.values():
            b.changed.connect(self.request)
        self.by = QComboBox()
        for key, text in BY_TEXT.items():
            self.by.addItem(text, key)
        self.by.setToolTip("Pair the two sides per LPAR or per LPAR and processor class")
        self.by.currentIndexChanged.connect(lambda _i: self.request())
        self.all_columns = QCheckBox("All columns")
        self.all_columns.setToolTip("Show the TLB, MT and other columns too (default: the presentation's main "
                                    "columns)")
        self.all_columns.toggled.connect(lambda _on: self._show_table())
        self.swap = QPushButton("Swap")
        self.swap.setToolTip("Exchange before and after")
        self.swap.clicked.connect(self.swap_sides)
        self.note = QLabel(RATIO_NOTE)
        self.note.setWordWrap(True)
        self.note.setObjectName("compare_ratio_note")
        self.message = QLabel(HINT)
        self.message.setWordWrap(True)
        self.message.setObjectName("compare_message")
        self.model = CompareModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(21)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._table_menu)
        self.table_actions: list[QAction | None] = []
        # waterfall
        self.pair = QComboBox()
        self.pair.setToolTip("The LPAR pair (or LPAR and processor class pair) whose CPI change the waterfall splits")
        self.pair.currentIndexChanged.connect(lambda _i: self._show_waterfall())
        self.wf_view = pg.PlotWidget(background="w", axisItems={"left": FittedAxis()})
        self.wf_plot = self.wf_view.getPlotItem()
        self.wf_plot.setMenuEnabled(False)
        self.wf_plot.hideButtons()
        self.wf_plot.setMouseEnabled(x=False, y=False)
        self.wf_plot.getAxis("bottom").setHeight(38)
        self.wf_plot.showGrid(y=True, alpha=0.25)
        self.wf_numbers = QLabel()
        self.wf_numbers.setTextFormat(Qt.TextFormat.RichText)
        self.wf_numbers.setWordWrap(True)
        self.wf_numbers.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.wf_numbers.setMinimumWidth(210)
        self.wf_numbers.setMaximumWidth(290)
        self.wf_numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # overlay
        self.metric_box = QComboBox()
        self.metric_box.currentIndexChanged.connect(lambda _i: self._show_overlay())
        self.ov_view = pg.PlotWidget(background="w")
        self.ov_plot = self.ov_view.getPlotItem()
        self.ov_plot.setMenuEnabled(False)
        self.ov_plot.showGrid(x=True, y=True, alpha=0.25)
        for v in (self.wf_view, self.ov_view):
            apply_plot_theme(v, False)
        self._build()
        self._clear_charts()

    def _build(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.boxes["before"], 1)
        top.addWidget(self.boxes["after"], 1)
        opts = QHBoxLayout()
        opts.addWidget(self.by)
        opts.addWidget(self.all_columns)
        opts.addWidget(self.swap)
        opts.addWidget(self.note, 1)
        self.wf_head = QWidget()   # the charts' controls: left out of the charts' pictures (picture_controls)
        wf_head = QHBoxLayout(self.wf_head)
        wf_head.setContentsMargins(0, 0, 0, 0)
        wf_head.addWidget(QLabel("CPI change of"))
        wf_head.addWidget(self.pair, 1)
        wf_body = QHBoxLayout()
        wf_body.addWidget(self.wf_view, 1)
        wf_body.addWidget(self.wf_numbers)
        self.charts = QWidget()   # the two charts: one picture when exported
        wf_box = QWidget()
        wl = QVBoxLayout(wf_box)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.addWidget(self.wf_head)
        wl.addLayout(wf_body, 1)
        self.ov_head = QWidget()
        ov_head = QHBoxLayout(self.ov_head)
        ov_head.setContentsMargins(0, 0, 0, 0)
        ov_head.addWidget(QLabel("Timelines of"))
        ov_head.addWidget(self.metric_box, 1)
        ov_box = QWidget()
        ol = QVBoxLayout(ov_box)
        ol.setContentsMargins(0, 0, 0, 0)
        ol.addWidget(self.ov_head)
        ol.addWidget(self.ov_view, 1)
        cl = QHBoxLayout(self.charts)
        cl.setContentsMargins(0, 0, 0, 0)
        self.chart_split = QSplitter(Qt.Orientation.Horizontal)
        self.chart_split.addWidget(wf_box)
        self.chart_split.addWidget(ov_box)
        self.chart_split.setStretchFactor(0, 5)
        self.chart_split.setStretchFactor(1, 4)
        cl.addWidget(self.chart_split)
        # a picture of the charts (File > Export, right-click, export --out X.png) holds the charts, their titles
        # and legends and the numbers, not the combo boxes that choose them nor the splitter's grip dots
        # (app.ui.plot_export hides these while it paints)
        self.charts.picture_controls = [self.wf_head, self.ov_head, self.chart_split.handle(1)]
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.charts)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addLayout(opts)
        lay.addWidget(self.message)
        lay.addWidget(self.split, 1)

    # -- state -----------------------------------------------------------------------------------
    def side(self, name: str) -> Side:
        return self.boxes[name].side()

    @property
    def comparison(self) -> Comparison | None:
        return self.data.comparison if self.data is not None else None

    def current_by(self) -> str:
        return str(self.by.currentData() or "lpar")

    def is_set(self) -> bool:
        return all(self.boxes[s].nodes for s in SIDES)

    def set_side(self, name: str, nodes, start=None, end=None, hours: str = "", days: str = "") -> None:
        """Set one side (tree nodes, window, shift texts) and recompute when both are set."""
        self.boxes[name].set_side(Side(tuple(tuple(n) for n in nodes), _ts(start), _ts(end), hours, days))
        self.request()

    def set_by(self, by: str) -> None:
        i = self.by.findData(by)
        if i >= 0:
            self.by.setCurrentIndex(i)

    def swap_sides(self) -> None:
        try:
            b, a = self.side("before"), self.side("after")
        except (ValueError, ShiftError):
            b = Side(self.boxes["before"].nodes)
            a = Side(self.boxes["after"].nodes)
        self.boxes["before"].set_side(a)
        self.boxes["after"].set_side(b)
        self.request()

    def state(self) -> dict | None:
        """JSON-able state (saved in workspace files); None when nothing is set."""
        if not any(self.boxes[s].nodes for s in SIDES):
            return None
        out: dict[str, Any] = {"by": self.current_by()}
        for s in SIDES:
            try:
                out[s] = self.side(s).to_json()
            except (ValueError, ShiftError):
                out[s] = Side(self.boxes[s].nodes).to_json()
        return out

    def restore(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        self.by.blockSignals(True)
        self.set_by(str(doc.get("by") or "lpar"))
        self.by.blockSignals(False)
        for s in SIDES:
            self.boxes[s].set_side(Side.from_json(doc.get(s)))
        self.request()

    # -- computing -------------------------------------------------------------------------------
    def request(self) -> None:
        """Ask for a recomputation (the window runs :func:`compute_compare`)."""
        if not self.is_set():
            missing = [s for s in SIDES if not self.boxes[s].nodes]
            self.show_message(HINT if len(missing) == 2 else
                              f"Set the {missing[0]} side too: right-click a node in the Machines tree, "
                              f"'Set as {missing[0]}'.")
            return
        try:
            for s in SIDES:
                self.side(s)
        except (ValueError, ShiftError) as exc:
            self.show_message(str(exc), error=True)
            return
        self.show_message("Computing the comparison...")
        self.compare_requested.emit()

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("QLabel { color: #b00020; font-weight: bold; }" if error else "")
        self.message.setVisible(bool(text))

    def set_data(self, data: CompareData) -> None:
        self.data = data
        cmp = data.comparison
        for s in SIDES:
            desc = data.describe.get(s, "")
            self.boxes[s].what.setText(desc)
            self.boxes[s].what.setToolTip(desc)
        self.note.setText(f"<b>ratio = before / after</b> (as IBM's '% improvement' rows: CPI 8.2 before, 7.5 "
                          f"after gives 1.09); delta = after - before. {MARK} italic: the formula differs between "
                          f"the generations (see the header's tooltip).")
        self.note.setToolTip(cmp.ratio_note)
        empty = [s for s in SIDES if not len(cmp.table) or not (cmp.table["row"].eq(s)
                                                                & cmp.table["CPI"].notna()).any()]
        self.show_message(f"No intervals on the {' and '.join(empty)} side (check its window and shift)."
                          if empty else "", error=bool(empty))
        self._show_table()
        chosen = self.pair.currentData()   # the analyst's pair stays chosen when the comparison is computed again
        self.pair.blockSignals(True)
        self.pair.clear()
        for p in (cmp.cpi["pair"].tolist() if len(cmp.cpi) else []):
            self.pair.addItem(str(p), p)
        self.pair.setCurrentIndex(max(self.pair.findData(chosen), 0) if chosen is not None else 0)
        self.pair.blockSignals(False)
        self._show_waterfall()
        current = self.metric_box.currentData()
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        heads = {c.id: c.header for c in cmp.columns}
        axis = data.axis
        for mid in OVERLAY_METRICS:
            if axis is not None and any(mid in f.columns and pd.to_numeric(f[mid], errors="coerce").notna().any()
                                        for f in (axis.before, axis.after)):
                self.metric_box.addItem(heads.get(mid, mid), mid)
        i = self.metric_box.findData(current)
        self.metric_box.setCurrentIndex(max(i, 0))
        self.metric_box.blockSignals(False)
        self._show_overlay()

    def show_failure(self, text: str) -> None:
        self.show_message(f"The comparison could not be computed: {text}", error=True)

    def _show_table(self) -> None:
        self.model.set_comparison(self.comparison, self.all_columns.isChecked())
        rows = self.model.rowCount()
        head = self.table.horizontalHeader().sizeHint().height()
        want = head + rows * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth() + 18
        self.table.setMinimumHeight(min(want, 260))
        total = max(self.split.height(), 400)
        self.split.setSizes([min(want, total // 2), total - min(want, total // 2)])

    def apply_theme(self, dark: bool) -> None:
        """Follow the window's light / dark palette (View > Dark)."""
        for v in (self.wf_view, self.ov_view):
            apply_plot_theme(v, dark)
        self.model.dark = dark
        self.table.viewport().update()
        self._show_waterfall()
        self._show_overlay()

    def _clear_charts(self) -> None:
        draw_waterfall(self.wf_plot, pd.DataFrame(), "CPI change decomposition")
        self.wf_numbers.setText("")
        draw_overlay(self.ov_plot, None, "CPI", "CPI")

    def _show_waterfall(self) -> None:
        cmp = self.comparison
        if cmp is None or not len(cmp.cpi):
            self._clear_charts()
            return
        pair = self.pair.currentData()
        rec = cmp.cpi.loc[cmp.cpi["pair"] == pair].iloc[0] if pair is not None else cmp.cpi.iloc[0]
        wf = cmp.waterfall(rec["pair"])
        gens = (str(rec.get("generation_before") or ""), str(rec.get("generation_after") or ""))
        self._wf_labels = draw_waterfall(self.wf_plot, wf, f"CPI change: {rec['pair']} ({gens[0]} \u2192 {gens[1]})")
        self._fit_wf_labels()
        self.wf_numbers.setText(waterfall_text(dict(rec), gens))

    def _show_overlay(self) -> None:
        data = self.data
        mid = self.metric_box.currentData() or "CPI"
        head = self.metric_box.currentText() or mid
        draw_overlay(self.ov_plot, data.axis if data is not None else None, mid, head)

    def _fit_wf_labels(self) -> None:
        """Values on the bars only when the bars are wide enough to hold them (they are beside the chart too)."""
        labels = getattr(self, "_wf_labels", [])
        if not labels:
            return
        per_bar = (self.wf_view.width() - 70) / max(len(labels), 1)
        for item in labels:
            item.setVisible(per_bar >= 50)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        narrow = self.width() < NARROW
        if narrow != getattr(self, "_narrow", None):   # small windows: the waterfall gets more of the width
            self._narrow = narrow
            self.wf_numbers.setMinimumWidth(175 if narrow else 210)
            self.wf_numbers.setStyleSheet("QLabel { font-size: 8pt; }" if narrow else "")
            font = QFont()
            font.setPointSizeF(7.5 if narrow else 9)
            self.wf_plot.getAxis("bottom").setStyle(tickFont=font)
            total = max(self.chart_split.width(), 200)
            share = 0.64 if narrow else 0.55
            self.chart_split.setSizes([int(total * share), total - int(total * share)])
        self._fit_wf_labels()

    def pairs(self) -> list[str]:
        """The pairs the waterfall can show (the pair combo's entries)."""
        return [str(self.pair.itemData(i)) for i in range(self.pair.count())]

    def set_pair(self, name: str) -> bool:
        """Show the waterfall of pair ``name`` (case and spacing aside, "/" read as a space: "zosb", "ZOSA zIIP",
        "ZOSA/zIIP"); False when the comparison has no such pair."""
        def norm(text: str) -> str:
            return " ".join(str(text).replace("/", " ").split()).upper()

        want = norm(name)
        i = next((k for k, p in enumerate(self.pairs()) if norm(p) == want), -1)
        if i < 0:
            return False
        self.pair.setCurrentIndex(i)
        return True

    def waterfall_frame(self) -> pd.DataFrame:
        """The waterfall steps shown now (for tests and exports)."""
        cmp = self.comparison
        if cmp is None:
            return pd.DataFrame()
        return cmp.waterfall(self.pair.currentData())

    # -- menus -----------------------------------------------------------------------------------
    def _table_menu(self, pos) -> None:
        menu = QMenu(self)
        menu.addAction("Copy the comparison table", self.copy_table)
        for a in self.table_actions:
            if a is None:
                menu.addSeparator()
            else:
                menu.addAction(a)
        menu.exec(self.table.viewport().mapToGlobal(pos))

    def copy_table(self) -> str:
        from app.ui.clipboard import put_table

        headers, body = self.model.table_texts()
        return put_table(headers, body)


# ------------------------------------------------------------------ wiring into the window
def side_for_modifiers(mods: Any) -> str | None:
    """Shift while dragging the timelines' region sets "before", Ctrl (Cmd on macOS) sets "after"."""
    if mods & Qt.KeyboardModifier.ShiftModifier:
        return "before"
    if mods & Qt.KeyboardModifier.ControlModifier:
        return "after"
    return None


class CompareController(QObject):
    """Connects the tab to the window: tree menu, jobs, export action, plot menus."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.jobs = WorkspaceJobs(window)
        self.tab = CompareTab()
        self._token: object | None = None
        self._dirty = False
        i = window.tabs.indexOf(window.timeline)
        window.tabs.insertTab(i + 1 if i >= 0 else window.tabs.count(), self.tab, TAB_TITLE)
        self.tab.compare_requested.connect(self.recompute)
        self.tab.status.connect(self.status)
        # tree: Set as before / after
        view = window.tree.view
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._tree_menu)
        # File > Export (Ctrl+E)
        act = window.actions_.export
        act.setEnabled(True)
        tip = "Export the table, the comparison or a whole deck as CSV, XLSX, PPTX, PNG or SVG"
        act.setToolTip(tip)
        act.setStatusTip(tip)
        act.triggered.connect(lambda: self.export_dialog())
        export_table = QAction("Export...", window)
        export_table.setToolTip("Export this table (CSV, XLSX, PPTX) or a picture of the timelines")
        export_table.triggered.connect(lambda: self.export_dialog("table"))
        window.table.body_actions = [*window.table.body_actions, None, export_table]
        export_cmp = QAction("Export the comparison...", window)
        export_cmp.triggered.connect(lambda: self.export_dialog("comparison"))
        self.tab.table_actions = [None, export_cmp]
        # pictures of plots
        from app.ui.plot_export import install_plot_menu

        tl = window.timeline
        install_plot_menu(tl.glw, lambda: list(tl._data_plots().values()), panel=tl.glw, name="timelines",
                          status=self.status, header=self.timeline_header)
        # Shift-drag / Ctrl-drag of the timelines' window region: that window of the selection becomes a side
        tl.region.sigRegionChangeFinished.connect(self._region_dragged)
        tl.region.setToolTip("Drag to choose the time window; hold Shift while dragging to also set the selected "
                             "nodes over this window as the comparison's before side, Ctrl for the after side")
        install_plot_menu(self.tab.wf_view, lambda: [self.tab.wf_plot], panel=self.tab.charts,
                          name="cpi_waterfall", status=self.status)
        install_plot_menu(self.tab.ov_view, lambda: [self.tab.ov_plot], panel=self.tab.charts,
                          name="compare_timelines", status=self.status)
        # workspace files save / restore the comparison
        # Edit > Copy (Ctrl+C) copies the comparison table while the Compare tab is shown
        copy = window.actions_.copy
        try:
            copy.triggered.disconnect(window.copy)
            copy.triggered.connect(self.copy)
        except (RuntimeError, TypeError):
            pass
        window.actions_.dark.toggled.connect(self.tab.apply_theme)
        if window.actions_.dark.isChecked():
            self.tab.apply_theme(True)
        window.comparison_state = self.tab.state
        window.restore_comparison = self.tab.restore
        window.runner.done.connect(self._on_view)
        window.tabs.currentChanged.connect(self._on_tab)

    def status(self, text: str) -> None:
        self.w.statusBar().showMessage(text, 8000)

    def _tree_menu(self, pos) -> None:
        self.tree_menu(pos).exec(self.w.tree.view.viewport().mapToGlobal(pos))

    def tree_menu(self, pos) -> QMenu:
        """The tree's context menu at ``pos``: Set as before / after (the selected rows, or the row clicked)."""
        view = self.w.tree.view
        idx = view.indexAt(pos)
        keys = self.w.tree.selected_keys()
        from app.ui.roles import Role

        key = idx.data(Role.NODE_KEY) if idx.isValid() else None
        if key and tuple(key) not in keys:
            keys = [tuple(key)]
        menu = QMenu(view)
        a = menu.addAction("Set as before", lambda: self.set_side("before", keys))
        b = menu.addAction("Set as after", lambda: self.set_side("after", keys))
        a.setEnabled(bool(keys))
        b.setEnabled(bool(keys))
        a.setToolTip("Compare: the selected nodes with the current time window become the before side")
        menu.addSeparator()
        menu.addAction("Copy", self.w.tree.copy_selection)
        return menu

    def copy(self, *_args) -> None:
        """Ctrl+C: the comparison table on the Compare tab (unless the tree has the focus), else the window's copy."""
        focus = QApplication.focusWidget()
        tree = self.w.tree.view
        in_tree = focus is not None and (focus is tree or tree.isAncestorOf(focus))
        if self.w.tabs.currentWidget() is self.tab and not in_tree and self.tab.comparison is not None:
            self.tab.copy_table()
            self.status(f"Copied the comparison table ({self.tab.model.rowCount()} rows)")
            return
        self.w.copy()

    def timeline_header(self) -> str:
        """The timelines' node legend (a label above the plots on screen) for their pictures."""
        legend = getattr(self.w.timeline, "legend", None)
        return legend.text() if legend is not None and legend.text() and not legend.isHidden() else ""

    def _region_dragged(self, *_args) -> None:
        side = side_for_modifiers(QApplication.keyboardModifiers())
        if side is None:
            return
        lo, hi = self.w.timeline.region.getRegion()
        nodes = list(self.w.selection.value.nodes)
        if not nodes or hi <= lo:
            return
        self.set_side(side, nodes, pd.Timestamp(lo, unit="s", tz="UTC"), pd.Timestamp(hi, unit="s", tz="UTC"))

    def set_side(self, name: str, keys: list[tuple], start: Any = "window", end: Any = "window") -> None:
        """The tree nodes ``keys`` with the window's current time window become side ``name``."""
        keys = [tuple(k) for k in keys if k]
        if not keys:
            return
        sel = self.w.selection.value
        if isinstance(start, str):   # default: the window's current time window
            start, end = sel.start, sel.end
        old = self.tab.boxes[name]
        self.tab.set_side(name, keys, start, end, old.hours.text().strip(), old.days.text().strip())
        other = "after" if name == "before" else "before"
        if self.tab.is_set():
            self.w.tabs.setCurrentWidget(self.tab)
            self.status(f"Comparing: {name} set to {_nodes_text(tuple(keys))}")
        else:
            self.status(f"{name.capitalize()}: {_nodes_text(tuple(keys))}. Now set the {other} side "
                        f"(right-click a node, 'Set as {other}').")

    def recompute(self) -> None:
        if not self.w.ws.files:
            self.tab.show_message("Open files first.", error=True)
            return
        try:
            before, after = self.tab.side("before"), self.tab.side("after")
        except (ValueError, ShiftError) as exc:
            self.tab.show_message(str(exc), error=True)
            return
        by = self.tab.current_by()
        ws = self.w.ws
        if self._token is not None:
            self.jobs.discard(self._token)
        self._token = self.jobs.run(lambda: compute_compare(ws, before, after, by), self._done, self._failed)

    def _done(self, data: CompareData) -> None:
        self._token = None
        self.tab.set_data(data)

    def _failed(self, text: str, details: str) -> None:
        self._token = None
        self.tab.show_failure(text)
        self.w._unexpected(f"Compare: {text}", details)

    def busy(self) -> bool:
        return self._token is not None

    def _on_view(self, view: Any) -> None:
        """New files were added: the comparison is recomputed (now when its tab is shown, else when it is)."""
        if isinstance(view, _Tagged) or not getattr(view, "added", None) or not self.tab.is_set():
            return
        if self.w.tabs.currentWidget() is self.tab:
            self.tab.request()
        else:
            self._dirty = True

    def _on_tab(self, _i: int) -> None:
        if self._dirty and self.w.tabs.currentWidget() is self.tab:
            self._dirty = False
            self.tab.request()

    def export_dialog(self, what: str | None = None):
        """File > Export: the dialog (one per window, kept between uses)."""
        from app.ui.export_dialog import ExportDialog

        if what is None:
            what = "comparison" if self.w.tabs.currentWidget() is self.tab and self.tab.comparison else "table"
        dlg = getattr(self, "dialog", None)
        if dlg is None:
            dlg = self.dialog = ExportDialog(self.w, self, what=what)
        elif not dlg.running():
            dlg.set_what(what)
            dlg._update()
        dlg.show()
        dlg.raise_()
        return dlg


def install(window: Any) -> CompareController:
    """Add the Compare tab, Set as before/after, File > Export and plot pictures to ``window``."""
    ctl = CompareController(window)
    window.compare = ctl
    return ctl


__all__ = ["install", "CompareController", "CompareTab", "CompareModel", "CompareData", "Side", "WorkspaceJobs",
           "compute_compare", "selection_of", "draw_waterfall", "draw_overlay", "waterfall_text", "parse_time"]
