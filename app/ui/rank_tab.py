"""The Rankings & peaks tab (issue 26): the children of a CEC or LPAR sorted by a metric with their share of the
parent's busy (``engine.views.ranking``), and the top N intervals of the selection by a metric
(``engine.views.peaks``).  A double-click on a ranking row selects that node in the tree; a click on a peak moves
the time window to its interval (the timelines shade it), a double-click also selects its node and shows the
timelines.  "Which LPAR had the highest RNI, and when": select the CEC, open this tab, choose RNI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ui.views_model import FrameCol, FrameModel

TAB_TITLE = "Rankings && peaks"
METRICS = ("CPI", "RNI", "L1MP", "LPARCPU", "Est_Finite_CPI", "Est_Instr_Cmplx_CPI", "MIPS_per_CPU", "L3P", "L4RP",
           "MEMP", "PRBSTATE")
LEVELS = (("cec", "CEC"), ("lpar", "LPAR"), ("class", "Processor class"), ("cpu", "CPU"))
RANK_EXTRA = ("CPI", "L1MP", "RNI", "LPARCPU")


@dataclass
class RankData:
    """A ranking job's result: the parent, the metric and the ranking frame (None: no CEC/LPAR to rank)."""

    parent: tuple | None
    metric: str
    frame: pd.DataFrame | None


@dataclass
class PeakData:
    metric: str
    level: str
    frame: pd.DataFrame
    nodes: tuple = ()


def ranking_parent(nodes: tuple) -> tuple | None:
    """The node whose children are ranked: the first selected CEC or LPAR, else the LPAR of a class/CPU node, else
    None (nothing selected)."""
    for key in nodes:
        if key[0] in ("cec", "lpar"):
            return tuple(key)
    for key in nodes:
        if key[0] in ("class", "cpu") and len(key) >= 3:
            return ("lpar", key[1], key[2])
    return None


def peak_level(nodes: tuple) -> str:
    """The level peaks are looked for at by default: the selection's finest level, a CEC's LPARs for a CEC."""
    order = ("cec", "lpar", "class", "cpu")
    finest = max((order.index(k[0]) for k in nodes if k[0] in order), default=1)
    return order[max(finest, 1)]


def compute_ranking(ws: Any, parent: tuple | None, metric: str, start=None, end=None) -> RankData:
    from app.engine.views import ranking

    if parent is None:
        return RankData(None, metric, None)
    try:
        frame = ranking(ws, parent, metric, start=start, end=end)
    except KeyError:       # no such metric in this data
        frame = pd.DataFrame()
    return RankData(parent, metric, frame)


def compute_peaks(ws: Any, nodes: tuple, metric: str, level: str, top: int, start=None, end=None) -> PeakData:
    from app.engine.views import peaks

    try:
        frame = peaks(ws, metric, level=level, top=top, start=start, end=end, nodes=list(nodes) or None)
    except KeyError:
        frame = pd.DataFrame()
    if len(frame):
        frame = frame.assign(node=[_node_text(r, level) for _, r in frame.iterrows()])
    return PeakData(metric, level, frame, tuple(nodes))


def _node_text(row: Any, level: str) -> str:
    if level == "cec":
        return str(row["cec"])
    text = str(row["lpar"])
    if level in ("class", "cpu"):
        text += f" {row['class']}"
    if level == "cpu":
        text += f" CPU {row['cpu']}"
    return text


def node_key(row: dict, level: str) -> tuple:
    """The tree's NodeKey of a ranking or peak row at ``level``."""
    if level == "cec":
        return ("cec", str(row["cec"]))
    if level == "lpar":
        return ("lpar", str(row["cec"]), str(row["lpar"]))
    if level == "class":
        return ("class", str(row["cec"]), str(row["lpar"]), str(row["class"]))
    return ("cpu", str(row["cec"]), str(row["lpar"]), str(row["class"]), int(row["cpu"]))


def _table() -> QTableView:
    v = QTableView()
    v.setSortingEnabled(True)
    v.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    v.setAlternatingRowColors(True)
    v.setWordWrap(False)
    v.verticalHeader().setVisible(False)
    v.verticalHeader().setDefaultSectionSize(22)
    v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    v.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    v.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    return v


def _metric_combo(tip: str) -> QComboBox:
    c = QComboBox()
    for m in METRICS:
        c.addItem(m, m)
    c.setToolTip(tip)
    return c


class RankPeaksTab(QWidget):
    """Ranking (top) and peak finder (bottom)."""

    rank_requested = Signal()
    peaks_requested = Signal()
    node_activated = Signal(object)          # a NodeKey: select it in the tree
    peak_clicked = Signal(object, object)    # interval start, end (UTC Timestamps)
    peak_activated = Signal(object, object, object)   # start, end, NodeKey

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rank_metric = _metric_combo("Rank the children by this metric (largest first)")
        self.rank_metric.currentIndexChanged.connect(lambda _i: self.rank_requested.emit())
        self.rank_title = QLabel()
        self.rank_title.setWordWrap(True)
        self.rank_model = FrameModel()
        self.rank_view = _table()
        self.rank_view.setModel(self.rank_model)
        self.rank_view.setToolTip("Double-click a row to select that node in the tree")
        self.rank_view.doubleClicked.connect(self._rank_double)
        rbox = QGroupBox("Ranking")
        rl = QVBoxLayout(rbox)
        row = QHBoxLayout()
        row.addWidget(QLabel("Rank by:"))
        row.addWidget(self.rank_metric)
        row.addWidget(self.rank_title, 1)
        rl.addLayout(row)
        rl.addWidget(self.rank_view, 1)
        # peaks
        self.peak_metric = _metric_combo("Find the intervals with the largest value of this metric")
        self.peak_level = QComboBox()
        for key, text in LEVELS:
            self.peak_level.addItem(text, key)
        self.peak_level.setCurrentIndex(1)
        self.peak_level.setToolTip("The level whose intervals are compared (an LPAR interval sums its CPUs)")
        self.top = QSpinBox()
        self.top.setRange(1, 500)
        self.top.setValue(10)
        self.top.setToolTip("How many intervals")
        for w in (self.peak_metric, self.peak_level):
            w.currentIndexChanged.connect(lambda _i: self.peaks_requested.emit())
        self.top.valueChanged.connect(lambda _v: self.peaks_requested.emit())
        self.peak_title = QLabel()
        self.peak_title.setWordWrap(True)
        self.peak_model = FrameModel()
        self.peak_view = _table()
        self.peak_view.setModel(self.peak_model)
        self.peak_view.setToolTip("Click a row to move the time window to that interval; double-click to also select "
                                  "its node and show the timelines")
        self.peak_view.clicked.connect(self._peak_click)
        self.peak_view.doubleClicked.connect(self._peak_double)
        pbox = QGroupBox("Peaks")
        pl = QVBoxLayout(pbox)
        row = QHBoxLayout()
        row.addWidget(QLabel("Top"))
        row.addWidget(self.top)
        row.addWidget(QLabel("intervals of"))
        row.addWidget(self.peak_level)
        row.addWidget(QLabel("by"))
        row.addWidget(self.peak_metric)
        row.addStretch(1)
        pl.addLayout(row)
        pl.addWidget(self.peak_title)
        pl.addWidget(self.peak_view, 1)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(rbox)
        self.split.addWidget(pbox)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 2)     # a ranking has a few rows, the peaks ten or more
        self.split.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.addWidget(self.split)
        self.rank_data: RankData | None = None
        self.peak_data: PeakData | None = None
        self.rank_title.setText("Select a CEC or an LPAR in the tree to rank its LPARs or processor classes.")

    # -- choices -------------------------------------------------------------------------------
    def rank_choice(self) -> str:
        return str(self.rank_metric.currentData())

    def peak_choice(self) -> tuple[str, str, int]:
        return str(self.peak_metric.currentData()), str(self.peak_level.currentData()), int(self.top.value())

    def set_peak_level(self, level: str) -> None:
        """Set the level without asking for peaks (the caller asks once)."""
        self.peak_level.blockSignals(True)
        self.peak_level.setCurrentIndex(max(0, self.peak_level.findData(level)))
        self.peak_level.blockSignals(False)

    # -- results -------------------------------------------------------------------------------
    def set_ranking(self, data: RankData, window: str = "") -> None:
        self.rank_data = data
        if data.parent is None:
            self.rank_model.set_frame(pd.DataFrame(), [])
            self.rank_title.setText("Select a CEC or an LPAR in the tree to rank its LPARs or processor classes.")
            return
        child = "lpar" if data.parent[0] == "cec" else "class"
        frame = data.frame if data.frame is not None else pd.DataFrame()
        frame = frame.assign(rank=range(1, len(frame) + 1)) if len(frame) else frame
        from app.engine.layout import metric_decimals

        cols = [FrameCol("rank", "#", 0, "Rank (largest first)"),
                FrameCol(child, "LPAR" if child == "lpar" else "Class")]
        metrics = [data.metric] + [m for m in RANK_EXTRA if m != data.metric]
        cols += [FrameCol(m, m, metric_decimals(m) or 2, f"{m} over the window (counter sums, then the formula)")
                 for m in metrics if m in frame.columns and pd.to_numeric(frame[m], errors="coerce").notna().any()
                 or m == data.metric]
        what = "LPARs of CEC" if child == "lpar" else "processor classes of LPAR"
        cols.append(FrameCol("busy_share_pct", f"Share of {'CEC' if child == 'lpar' else 'LPAR'} busy %", 1,
                             f"The child's busy CPU time (cycles / CPU speed) over the {what.split()[-1]}'s"))
        self.rank_model.set_frame(frame, cols)
        self.rank_view.resizeColumnsToContents()
        empty = " (no values: no formula for this metric in the data)" if data.metric not in frame.columns else ""
        self.rank_title.setText(f"{what[0].upper() + what[1:]} {data.parent[-1]} by {data.metric}, largest first{empty}"
                                + (f"; {window}" if window else ""))

    def set_peaks(self, data: PeakData, window: str = "") -> None:
        self.peak_data = data
        from app.engine.layout import metric_decimals

        cols = [FrameCol("rank", "#", 0), FrameCol("interval_start", "Start (UTC)", -1),
                FrameCol("interval_end", "End (UTC)", -1), FrameCol("hour", "Hour (UTC)", 0,
                                                                   "Hour of day of the interval's midpoint"),
                FrameCol("node", dict(LEVELS)[data.level]),
                FrameCol(data.metric, data.metric, metric_decimals(data.metric) or 2)]
        self.peak_model.set_frame(data.frame, cols)
        self.peak_view.resizeColumnsToContents()
        n = len(data.frame)
        level = dict(LEVELS)[data.level]
        self.peak_title.setText(f"The {n} {level} intervals with the highest {data.metric}" if n else
                                f"No {level} interval has a {data.metric} value in the selection")
        if window and n:
            names = ", ".join(str(k[-1]) for k in data.nodes[:3]) + (" ..." if len(data.nodes) > 3 else "")
            self.peak_title.setText(self.peak_title.text() + f" (searched: {names or 'every LPAR'}, {window}); "
                                    "click one to move the time window there")

    def copy_table(self, ranking: bool = False) -> int:
        """The peaks (or the ranking) to the clipboard as shown; returns the rows copied."""
        from app.ui.clipboard import put_table

        m = self.rank_model if ranking else self.peak_model
        cols = range(m.columnCount())
        put_table([m.columns[c].header for c in cols], [[m.text(r, c) for c in cols] for r in range(m.rowCount())])
        return m.rowCount()

    # -- clicks --------------------------------------------------------------------------------
    def _rank_double(self, index) -> None:
        if self.rank_data is None or self.rank_data.parent is None or not index.isValid():
            return
        row = self.rank_model.frame.iloc[self.rank_model.frame_row(index.row())]
        child = "lpar" if self.rank_data.parent[0] == "cec" else "class"
        self.node_activated.emit(node_key(row, child))

    def peak_span(self, view_row: int) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        if not 0 <= view_row < self.peak_model.rowCount():
            return None
        row = self.peak_model.frame.iloc[self.peak_model.frame_row(view_row)]
        return _utc(row["interval_start"]), _utc(row["interval_end"])

    def _peak_click(self, index) -> None:
        span = self.peak_span(index.row()) if index.isValid() else None
        if span is not None:
            self.peak_clicked.emit(*span)

    def _peak_double(self, index) -> None:
        span = self.peak_span(index.row()) if index.isValid() else None
        if span is not None and self.peak_data is not None:
            row = self.peak_model.frame.iloc[self.peak_model.frame_row(index.row())]
            self.peak_activated.emit(span[0], span[1], node_key(row, self.peak_data.level))


def _utc(value: Any) -> pd.Timestamp:
    t = pd.Timestamp(value)
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


__all__ = ["RankPeaksTab", "RankData", "PeakData", "compute_ranking", "compute_peaks", "ranking_parent",
           "peak_level", "node_key", "TAB_TITLE"]
