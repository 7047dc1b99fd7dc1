"""SMT tab: the multithreading metrics per core type and per core (IBM SMTMET layout), over ``ws.smt``.

Charts over time (thread density, capacity factor, MT utilization per LPAR and core type, :mod:`app.ui.smt_charts`)
above two tables; they follow the tree selection and the time window like the interval table.  Values are
read from numpy arrays of the engine frame (no item per cell); mean rows are pinned on top and bold.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.textsafe import shown_text
from app.ui import messages as M
from app.ui.clipboard import put_table
from app.ui.column_model import ColumnTableModel, Index, pinned_first, pinned_sort
from app.ui.frames import fmt_number
from app.ui.lazy_widget import LazyWidget
from app.ui.roles import Role
from app.ui.table_model import SUMMARY_DARK, SUMMARY_LIGHT
from app.ui.table_view import CELL_PAD, RESIZE_ROWS, WrapHeader
from app.ui.time_zone import ZONE

TIME_FMT = "%Y-%m-%d %H:%M"
CELL_TIME_FMT = "%m-%d %H:%M"          # as the interval table's Date/End; the full time is in the tooltip


@dataclass(frozen=True)
class SmtCol:
    """One SMT table column: engine column id, header, decimals (None = text)."""

    id: str
    header: str
    decimals: int | None = None
    tooltip: str = ""


TYPE_COLS = (
    SmtCol("lpar", "LPAR"),
    SmtCol("interval_end", "Interval end"),
    SmtCol("core_type", "Core type"),
    SmtCol("seconds", "Seconds", 0, "Interval length; for a mean row the sum over the window"),
    SmtCol("cores", "Cores", 0, "Distinct cores of the type"),
    SmtCol("productivity", "Productivity %", 1, "Capacity factor / maximum capacity factor"),
    SmtCol("capacity_factor", "Capacity factor %", 1, "Work done with MT relative to one thread per core"),
    SmtCol("max_capacity_factor", "Max capacity factor %", 1, "Capacity factor if every thread were busy"),
    SmtCol("mt_utilization", "MT utilization %", 1, "Core busy x productivity, averaged over the cores"),
    SmtCol("thread_density", "Avg thread density", 2, "Average number of active threads while the core is busy"),
    SmtCol("source", "Source", None, "reported = as z/VM reports it (D0R2); derived = computed from M448/M449"),
)
CORE_COLS = (
    SmtCol("interval_end", "Interval end"),
    SmtCol("core_id", "Core id", 0),
    SmtCol("core_type", "Core type"),
    SmtCol("seconds", "Seconds", 0, "Interval length"),
    SmtCol("productivity", "Productivity %", 1, "Capacity factor / maximum capacity factor"),
    SmtCol("mt_utilization", "MT utilization %", 1, "Core busy x productivity"),
    SmtCol("thread_density", "Avg thread density", 2, "Average number of active threads while the core is busy"),
    SmtCol("core_busy", "Core busy %", 1, "Core busy time; derived from M448+M449 it is an approximation "
                                          "(cores dispatched with every thread waiting are not counted)"),
    SmtCol("source", "Source", None, "reported = as z/VM reports it (D0R2); derived = computed from M448/M449"),
)


class SmtModel(ColumnTableModel):
    """A thin adapter over one ``ws.smt`` frame; mean rows (``mean`` column) on top, bold, "mean"."""

    def __init__(self, columns: tuple[SmtCol, ...], parent=None) -> None:
        super().__init__(parent)
        self.columns = columns
        self.dark = False
        self._set(pd.DataFrame())

    def set_frame(self, df: pd.DataFrame | None) -> None:
        self.beginResetModel()
        self._set(pd.DataFrame() if df is None else df)
        self.endResetModel()

    def _set(self, df: pd.DataFrame) -> None:
        self.frame = df.reset_index(drop=True)
        n = len(self.frame)
        self._mean = (self.frame["mean"].fillna(False).to_numpy(dtype=bool) if "mean" in self.frame
                      else np.zeros(n, bool))
        self._values = [self.frame[c.id].to_numpy() if c.id in self.frame else np.full(n, None, dtype=object)
                        for c in self.columns]
        self._texts: list[np.ndarray] = [self._column_texts(i) for i in range(len(self.columns))]
        self._order = pinned_first(self._mean)

    def _column_texts(self, i: int) -> np.ndarray:
        c, values = self.columns[i], self._values[i]
        if c.id == "interval_end":
            t = pd.to_datetime(pd.Series(values), errors="coerce")
            t = ZONE.wall_series(t).dt.strftime(CELL_TIME_FMT).fillna("")     # in the window's time zone
            out = t.to_numpy(dtype=object)
            out[self._mean] = M.SMT_MEAN
            return out
        if c.decimals is None:
            return np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values],
                            dtype=object)
        return np.array([fmt_number(v, c.decimals) for v in values], dtype=object)

    # -- lookups -------------------------------------------------------------------------------
    def frame_row(self, row: int) -> int:
        return int(self._order[row])

    def is_mean_row(self, row: int) -> bool:
        return bool(self._mean[self._order[row]])

    def n_mean(self) -> int:
        return int(self._mean.sum())

    def text(self, row: int, col: int) -> str:
        return str(self._texts[col][self._order[row]])

    # -- Qt model API --------------------------------------------------------------------------
    def _row_total(self) -> int:
        return len(self.frame)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        at = self.cell(index)
        if at is None:
            return None
        row, col = at
        c = self.columns[col]
        pos = self._order[row]
        if role == Qt.ItemDataRole.DisplayRole:    # names from the data: control characters escaped
            return shown_text(self.text(row, col))
        if role == Role.SORT:
            v = self._values[col][pos]
            return None if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT else v
        if role == Role.SUMMARY:
            return bool(self._mean[pos])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignRight if c.decimals is not None else Qt.AlignmentFlag.AlignLeft
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and self._mean[pos]:
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.BackgroundRole and self._mean[pos]:
            return SUMMARY_DARK if self.dark else SUMMARY_LIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(pos, c)
        return None

    def _tooltip(self, pos: int, c: SmtCol) -> str | None:
        if c.id == "source":
            return M.SMT_SOURCE_TIP.get(str(self._texts[self.column_index("source")][pos]))
        if self._mean[pos] and c.id == "interval_end":
            return M.SMT_MEAN_TIP.format(lpar=self._get(pos, "lpar"), type=self._get(pos, "core_type"),
                                         start=self.window[0], end=self.window[1])
        if c.id == "interval_end":
            t = ZONE.wall(self._get(pos, "interval_end"))
            return None if t is None else f"{t.strftime(TIME_FMT)} {ZONE.label()}"
        return None

    window: tuple[str, str] = ("", "")   # the window of the frame, for the mean rows' tooltip

    def headerData(self, section: int, orientation: Qt.Orientation,   # noqa: N802 - Qt's name
                   role: int = Qt.ItemDataRole.DisplayRole):
        """The Interval end header names the time zone its times are in (``Interval end (UTC)``)."""
        out = super().headerData(section, orientation, role)
        if (role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and out
                and self.columns[section].id == "interval_end"):
            return f"{out} ({ZONE.label()})"
        return out

    def zone_changed(self) -> None:
        """The window's time zone changed: the times are written again, the header names the new zone."""
        if self.frame is None or self.frame.empty:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, max(0, len(self.columns) - 1))
            return
        self.layoutAboutToBeChanged.emit()
        i = self.column_index("interval_end")
        if i >= 0:
            self._texts[i] = self._column_texts(i)
        self.layoutChanged.emit()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.columns) - 1)

    def _get(self, pos: int, col_id: str) -> Any:
        return self.frame[col_id].iloc[pos] if col_id in self.frame else ""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the interval rows by raw value (NaN last); mean rows stay on top."""
        if not 0 <= column < len(self.columns) or self.frame.empty:
            return
        self.layoutAboutToBeChanged.emit()
        self._order = pinned_sort(self._mean, self._values[column], order == Qt.SortOrder.AscendingOrder)
        self.layoutChanged.emit()


def _make_view(model: SmtModel) -> QTableView:
    v = QTableView()
    v.setHorizontalHeader(WrapHeader(v))
    v.setModel(model)
    v.setSortingEnabled(True)
    v.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    v.setAlternatingRowColors(True)
    v.setWordWrap(False)
    v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
    v.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    v.verticalHeader().setVisible(False)
    v.verticalHeader().setDefaultSectionSize(22)
    return v


def _make_charts(parent: QWidget) -> QWidget:
    from app.ui.smt_charts import SmtCharts

    return SmtCharts(parent)


class ChartsPage(LazyWidget):
    """The SMT charts (:class:`app.ui.smt_charts.SmtCharts`, pyqtgraph), made when the tab is first shown or the
    charts are first used: the window's start does not import pyqtgraph (issue 23)."""

    KEPT = ("set_dark", "set_frame")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(_make_charts, parent)

    def set_frame(self, by_type: pd.DataFrame | None) -> None:
        self.keep("set_frame", by_type)

    def set_dark(self, dark: bool) -> None:
        self.keep("set_dark", dark)

    def zone_changed(self) -> None:
        if self.made:            # a chart made later reads the zone then
            self.view().zone_changed()


class SmtPanel(QWidget):
    """Two tables (by core type, by core) or a placeholder when the selection has no MT data."""

    copied = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.type_model = SmtModel(TYPE_COLS, self)
        self.core_model = SmtModel(CORE_COLS, self)
        self.type_view = _make_view(self.type_model)
        self.core_view = _make_view(self.core_model)
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setTextFormat(Qt.TextFormat.RichText)
        self.placeholder.setMargin(24)
        self.charts = ChartsPage()    # thread density, capacity factor, MT utilization over time (issue 26)
        self.charts.setMinimumHeight(170)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.charts)
        for title, view in ((M.SMT_TYPE_TITLE, self.type_view), (M.SMT_CORE_TITLE, self.core_view)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(2, 2, 2, 2)
            label = QLabel(f"<b>{title}</b>")
            lay.addWidget(label)
            lay.addWidget(view, 1)
            split.addWidget(box)
        for i in range(3):
            split.setStretchFactor(i, 1)
        split.setSizes([340, 300, 300])     # the charts a third, each table a third (the charts' hint is larger)
        self.split = split
        self.busy_bar = QProgressBar()   # shown while the tables are computed (no rows of another node meanwhile)
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(220)
        self.busy_bar.setVisible(False)
        page = QWidget()
        pl = QVBoxLayout(page)
        pl.addStretch(1)
        pl.addWidget(self.placeholder)
        pl.addWidget(self.busy_bar, 0, Qt.AlignmentFlag.AlignHCenter)
        pl.addStretch(1)
        self.stack = QStackedWidget()
        self.stack.addWidget(page)
        self.stack.addWidget(split)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
        ZONE.changed.connect(self.zone_changed)    # UTC / local time: the tables' times and the charts' axes

    def zone_changed(self) -> None:
        try:
            self.type_model.zone_changed()
            self.core_model.zone_changed()
            self.charts.zone_changed()
        except RuntimeError:          # the panel is being destroyed
            pass

    def set_placeholder(self, text: str, busy: bool = False) -> None:
        # rich text so that "z/VM" never breaks at its slash
        self.placeholder.setText(html.escape(text).replace("z/VM", "<span style='white-space:nowrap'>z/VM</span>"))
        self.busy_bar.setVisible(busy)
        self.stack.setCurrentIndex(0)

    def set_busy(self, text: str) -> None:
        """The tables are being computed: their rows (another selection's) go, a busy bar and ``text`` show."""
        self.type_model.set_frame(None)
        self.core_model.set_frame(None)
        self.charts.set_frame(None)
        self.set_placeholder(text, busy=True)

    def busy(self) -> bool:
        return self.busy_bar.isVisibleTo(self)

    def set_frames(self, by_type: pd.DataFrame | None, by_core: pd.DataFrame | None,
                   window: tuple[str, str] = ("", "")) -> None:
        """Show the two ``ws.smt`` frames (None or empty: the no-MT-data placeholder)."""
        self.type_model.window = self.core_model.window = window
        self.type_model.set_frame(by_type)
        self.core_model.set_frame(by_core)
        self.charts.set_frame(by_type)
        self.busy_bar.setVisible(False)
        has = self.type_model.rowCount() > 0 or self.core_model.rowCount() > 0
        if not has:
            self.set_placeholder(M.SMT_NO_DATA)
            return
        self.stack.setCurrentIndex(1)
        for view in (self.type_view, self.core_view):
            _fit_columns(view)

    def set_dark(self, dark: bool) -> None:
        for m, v in ((self.type_model, self.type_view), (self.core_model, self.core_view)):
            m.dark = dark
            v.viewport().update()
        self.charts.set_dark(dark)

    def copy_selection(self) -> str:
        """The selected cells of the table with focus (or the by-type table), TSV with headers and HTML."""
        view = self.core_view if self.core_view.hasFocus() else self.type_view
        if not view.selectionModel().selectedIndexes() and self.core_view.selectionModel().selectedIndexes():
            view = self.core_view
        model: SmtModel = view.model()
        idx = view.selectionModel().selectedIndexes()
        if idx:
            rows = sorted({i.row() for i in idx})
            cols = sorted({i.column() for i in idx})
        else:
            rows, cols = list(range(model.rowCount())), list(range(model.columnCount()))
        tsv = put_table([model.columns[c].header for c in cols], [[model.text(r, c) for c in cols] for r in rows])
        self.copied.emit(len(rows), len(cols))
        return tsv


def _fit_columns(view: QTableView) -> None:
    """Columns as wide as their texts (font metrics over the first rows) or their header."""
    model: SmtModel = view.model()
    fm = view.fontMetrics()
    bold = view.font()
    bold.setBold(True)
    fmb = QFontMetrics(bold)
    n_mean = model.n_mean()
    rows = range(min(model.rowCount(), n_mean + RESIZE_ROWS))
    for c in range(model.columnCount()):
        w = max((fmb if r < n_mean else fm).horizontalAdvance(model.text(r, c)) for r in rows) if rows else 0
        view.setColumnWidth(c, max(view.horizontalHeader().sectionSizeHint(c), w + CELL_PAD))


def smt_frames(ws: Any, sel: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``ws.smt`` by type and by core for a Selection (all nodes when nothing is selected)."""
    nodes = list(sel.nodes) if sel.nodes else None
    start, end = (sel.start, sel.end) if sel.has_window else (None, None)
    return (ws.smt(by="type", nodes=nodes, start=start, end=end),
            ws.smt(by="core", nodes=nodes, start=start, end=end))


def window_texts(sel: Any, frame: pd.DataFrame | None) -> tuple[str, str]:
    """The window (or the data range of ``frame``) as text, for the mean rows' tooltip."""
    if sel.has_window:
        return (pd.Timestamp(sel.start).strftime(TIME_FMT), pd.Timestamp(sel.end).strftime(TIME_FMT))
    if frame is None or frame.empty or "interval_end" not in frame:
        return ("", "")
    ends = pd.to_datetime(frame["interval_end"]).dropna()
    if ends.empty:
        return ("", "")
    return (ends.min().strftime(TIME_FMT), ends.max().strftime(TIME_FMT))


__all__ = ["SmtPanel", "SmtModel", "TYPE_COLS", "CORE_COLS", "smt_frames", "window_texts"]
