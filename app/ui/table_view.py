"""Interval table widget: frozen identification columns, column chooser, TSV/HTML copy."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QStackedWidget,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M
from app.ui import settings
from app.ui.clipboard import put_table
from app.ui.frames import N_FROZEN
from app.ui.partition_view import PartitionView
from app.ui.table_model import IntervalTableModel

RESIZE_BUDGET_S = 0.25   # time box for resizing columns to contents
RESIZE_ROWS = 300        # rows looked at per column when resizing
MEASURE_HEAD = 8         # of those, the first rows always measured (the rest: candidates for the widest text)
MEASURE_LONGEST = 3      # text columns: the longest texts measured
CELL_PAD = 12            # delegate margins + grid line + air, px
HIDDEN_KEY = "table/hidden_columns"


class WrapHeader(QHeaderView):
    """Horizontal header sized to its (up to two-line) texts.

    Qt reserves room for the sort arrow in every section and over-counts multi-line texts; numeric
    columns then grow far wider than their numbers.  Here a section is as wide as its longest text line
    (plus the arrow only on the sorted section) and the header is two lines tall.
    """

    LINES = 2

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSectionsClickable(True)
        self.setHighlightSections(False)
        self.sortIndicatorChanged.connect(self._fit_sorted)

    def sectionSizeFromContents(self, logical: int) -> QSize:
        model = self.model()
        text = "" if model is None else str(model.headerData(logical, self.orientation(),
                                                             Qt.ItemDataRole.DisplayRole) or "")
        fm = self.fontMetrics()
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, self)
        w = max((fm.horizontalAdvance(line) for line in text.split("\n")), default=0) + 2 * margin + 10
        if self.isSortIndicatorShown() and logical == self.sortIndicatorSection():
            w += self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMarkSize, None, self) + margin
        return QSize(w, fm.lineSpacing() * self.LINES + 2 * margin + 6)

    def _fit_sorted(self, logical: int, _order) -> None:
        if 0 <= logical < self.count() and not self.isSectionHidden(logical):
            want = self.sectionSizeFromContents(logical).width()
            if self.sectionSize(logical) < want:
                self.resizeSection(logical, want)


def _make_view() -> QTableView:
    v = QTableView()
    v.setHorizontalHeader(WrapHeader(v))
    v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
    v.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    v.setSortingEnabled(True)
    v.setAlternatingRowColors(True)
    v.setWordWrap(False)
    v.verticalHeader().setVisible(False)
    v.verticalHeader().setDefaultSectionSize(22)
    v.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    v.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
    return v


class IntervalTable(QWidget):
    """Frozen left view + scrolling metric view over one IntervalTableModel."""

    copied = Signal(int, int)  # rows, columns copied

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = IntervalTableModel(self)
        self.frozen = _make_view()
        self.view = _make_view()
        for v in (self.frozen, self.view):
            v.setModel(self.model)
        self.view.setSelectionModel(self.frozen.selectionModel())
        self.frozen.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.frozen.setFrameShape(QTableView.Shape.NoFrame)
        self.frozen.verticalScrollBar().valueChanged.connect(self.view.verticalScrollBar().setValue)
        self.view.verticalScrollBar().valueChanged.connect(self.frozen.verticalScrollBar().setValue)
        self.view.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.horizontalHeader().customContextMenuRequested.connect(self._column_menu)
        self.frozen.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.frozen.horizontalHeader().customContextMenuRequested.connect(self._column_menu)
        # body context menu: the window actions of the main window (time window from the selected rows...)
        self.body_actions: list[QAction] = []
        for v in (self.frozen, self.view):
            v.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            v.customContextMenuRequested.connect(lambda pos, v=v: self._body_menu(v, pos))
        self.model.modelReset.connect(self._after_reset)
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        body = QWidget()
        row = QHBoxLayout(body)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.frozen)
        row.addWidget(self.view, 1)
        self.partition = PartitionView()   # a partition-only LPAR: why no intervals, and what is known
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(body)
        self.stack.addWidget(self.partition)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
        self.hidden: set[str] = set(settings.get_list(HIDDEN_KEY))
        for v in (self.frozen, self.view):  # rows come in engine order: no sort arrow until the user sorts
            v.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)

    # -- state ---------------------------------------------------------------------------------
    def show_partition(self, facts, source: str = "") -> None:
        """Show the partition-only page for ``facts`` (PartitionFacts) instead of the (empty) table."""
        self.partition.set_facts(facts, source)
        self.stack.setCurrentWidget(self.partition)

    def set_placeholder(self, text: str) -> None:
        self.placeholder.setText(text)
        self.stack.setCurrentIndex(0)

    def _after_reset(self) -> None:
        for v in (self.frozen, self.view):   # new rows come in time order: no sort arrow left from the last ones
            v.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        has_rows = self.model.rowCount() > 0
        self.stack.setCurrentIndex(1 if has_rows else 0)
        if not has_rows and self.placeholder.text() != M.PLACEHOLDER:
            self.placeholder.setText(M.TABLE_NO_ROWS)
        self._apply_visibility()
        self._span_summary()
        self.resize_columns()

    def _apply_visibility(self) -> None:
        # one node in every row (one LPAR or class selected): the tree says which, the Node column would repeat it
        # (a class or CPU selected: the Node column names it, since the System column names only the LPAR)
        one_node = self.model.distinct("_node") <= 1 and not self.model.below_lpar()
        for i, c in enumerate(self.model.columns):
            frozen = i < N_FROZEN
            self.frozen.setColumnHidden(i, not frozen or (c.id == "_node" and one_node))
            self.view.setColumnHidden(i, frozen or c.id in self.hidden)
        self._fit_frozen()

    def _span_summary(self) -> None:
        """"Summary" spans the Date and End cells of the summary rows (always the top rows)."""
        self.frozen.clearSpans()
        date, end = self.model.column_index("_date"), self.model.column_index("_end")
        if date < 0 or end != date + 1:
            return
        for r in range(min(self.model.n_summary(), self.model.rowCount())):
            self.frozen.setSpan(r, date, 1, 2)

    def _fit_header_height(self) -> None:
        """Both headers as tall as the two-line metric headers, so the rows stay aligned."""
        h = max(self.view.horizontalHeader().sizeHint().height(), self.frozen.horizontalHeader().sizeHint().height())
        for v in (self.frozen, self.view):
            v.horizontalHeader().setFixedHeight(h)

    def resize_columns(self) -> None:
        """Size visible columns to their texts (font metrics over the first rows, bold for summary rows).

        Measured here rather than with ``resizeColumnToContents`` (which goes through the delegate for every
        cell and is slow on wide frames); the padding covers the delegate's margins and the grid line.
        """
        t0 = time.monotonic()
        fm = self.view.fontMetrics()
        bold_font = self.view.font()
        bold_font.setBold(True)
        fm_bold = QFontMetrics(bold_font)
        n_sum = min(self.model.n_summary(), self.model.rowCount())
        rows = range(min(self.model.rowCount(), n_sum + RESIZE_ROWS))
        for i in range(self.model.columnCount()):
            view = self.frozen if i < N_FROZEN else self.view
            if view.isColumnHidden(i):
                continue
            header = view.horizontalHeader().sectionSizeHint(i)
            if time.monotonic() - t0 > RESIZE_BUDGET_S:
                view.setColumnWidth(i, max(header, 60))
                continue
            spanned = self.model.columns[i].id in ("_date", "_end")  # "Summary" spans both, see _widen_for_summary
            w = 0
            for r in self._rows_to_measure(i, n_sum, rows):
                text = self.model._display(r, i)
                if not text or (spanned and r < n_sum):
                    continue
                w = max(w, (fm_bold if r < n_sum else fm).horizontalAdvance(text))
            view.setColumnWidth(i, max(header, w + CELL_PAD))
        self._widen_for_summary()
        self._fit_frozen()

    def _rows_to_measure(self, col: int, n_sum: int, rows: range) -> list[int]:
        """The rows whose texts can be the widest of column ``col`` among ``rows``: the summary rows, the first
        rows, and for numbers the largest, smallest and largest-magnitude values (most digits, a sign); for
        texts the longest.  A handful of texts per column instead of every row (issue 11: a selection)."""
        m = self.model
        head = list(range(min(len(rows), n_sum + MEASURE_HEAD)))
        if len(rows) <= len(head) + 8:
            return list(rows)
        values = m._values[col]
        if values is None:
            return head
        body = values[m._order[n_sum:len(rows)]]
        picks: list[int] = []
        if body.dtype.kind in "fiu":
            v = body.astype(float, copy=False)
            if np.isfinite(v).any():
                for k in (np.nanargmax(v), np.nanargmin(v), np.nanargmax(np.abs(v))):
                    picks.append(n_sum + int(k))
        else:
            lengths = np.fromiter((len(str(x)) for x in body), dtype=np.int64, count=len(body))
            picks.extend(n_sum + int(k) for k in np.argsort(-lengths, kind="stable")[:MEASURE_LONGEST])
        return head + sorted(set(picks) - set(head))

    def _widen_for_summary(self) -> None:
        date, end = self.model.column_index("_date"), self.model.column_index("_end")
        if date < 0 or end < 0 or not self.model.n_summary():
            return
        f = self.frozen.font()
        f.setBold(True)
        need = QFontMetrics(f).horizontalAdvance(M.SUMMARY_LABEL) + 16
        have = self.frozen.columnWidth(date) + self.frozen.columnWidth(end)
        if have < need:
            self.frozen.setColumnWidth(end, self.frozen.columnWidth(end) + need - have)

    def _fit_frozen(self) -> None:
        self._fit_header_height()
        width = sum(self.frozen.columnWidth(i) for i in range(min(N_FROZEN, self.model.columnCount()))
                    if not self.frozen.isColumnHidden(i))
        self.frozen.setFixedWidth(width + 2 * self.frozen.frameWidth() + 2)

    # -- column chooser ------------------------------------------------------------------------
    def _column_menu(self, pos: QPoint) -> None:
        menu = self.column_menu()
        menu.exec(self.view.horizontalHeader().mapToGlobal(pos))

    def column_menu(self) -> QMenu:
        """The header context menu: one checkable entry per metric column, grouped."""
        menu = QMenu(M.COLUMN_CHOOSER, self)
        menu.addAction(M.COLUMN_SHOW_ALL, lambda: self.set_hidden(set()))
        group = None
        for c in self.model.columns[N_FROZEN:]:
            if c.group != group:
                group = c.group
                menu.addSection(group or "")
            act = menu.addAction(c.header)
            act.setCheckable(True)
            act.setChecked(c.id not in self.hidden)
            act.setToolTip(c.tooltip)
            act.toggled.connect(lambda on, cid=c.id: self.set_column_visible(cid, on))
        return menu

    def set_column_visible(self, col_id: str, visible: bool) -> None:
        hidden = set(self.hidden)
        (hidden.discard if visible else hidden.add)(col_id)
        self.set_hidden(hidden)

    def set_hidden(self, hidden: set[str]) -> None:
        self.hidden = set(hidden)
        settings.set_list(HIDDEN_KEY, sorted(self.hidden))
        self._apply_visibility()

    # -- body menu and time window -------------------------------------------------------------
    def _body_menu(self, view: QTableView, pos: QPoint) -> None:
        menu = self.body_menu()
        if menu.actions():
            menu.exec(view.viewport().mapToGlobal(pos))

    def body_menu(self) -> QMenu:
        """The context menu of the table cells: the actions the window gave ``body_actions``."""
        menu = QMenu(self)
        for a in self.body_actions:
            if a is None:
                menu.addSeparator()
            else:
                menu.addAction(a)
        return menu

    def selected_window(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        """(earliest interval start, latest interval end) of the selected interval rows, UTC; None when
        no interval row is selected (summary rows do not count)."""
        rows = {i.row() for i in self.frozen.selectionModel().selectedIndexes()}
        df = self.model.frame
        if not rows or "interval_end" not in df.columns:
            return None
        pos = [self.model.frame_row(r) for r in sorted(rows) if not self.model.is_summary_row(r)]
        if not pos:
            return None
        part = df.iloc[pos]
        ends = pd.to_datetime(part["interval_end"])
        starts = pd.to_datetime(part["interval_start"]) if "interval_start" in part.columns else ends
        start, end = starts.min(), ends.max()
        if pd.isna(start) or pd.isna(end):
            return None
        return _utc(start), _utc(end)

    # -- copy ----------------------------------------------------------------------------------
    def selection_block(self) -> tuple[list[int], list[int]]:
        """View rows and visible columns of the selection (everything when nothing is selected)."""
        idx = self.frozen.selectionModel().selectedIndexes()
        visible = [i for i in range(self.model.columnCount())
                   if not (self.frozen if i < N_FROZEN else self.view).isColumnHidden(i)]
        if not idx:
            self.model.fetch_all()
            return list(range(self.model.rowCount())), visible
        rows = sorted({i.row() for i in idx})
        cols = sorted({i.column() for i in idx} | set(range(N_FROZEN)))
        return rows, [c for c in cols if c in visible]

    def copy_selection(self) -> str:
        """Put the selection on the clipboard as TSV (with headers) and as an HTML table."""
        rows, cols = self.selection_block()
        headers = [self.model.columns[c].header for c in cols]
        body = [[self.model._display(r, c) for c in cols] for r in rows]
        tsv = put_table(headers, body)
        self.copied.emit(len(rows), len(cols))
        return tsv

    def select_row(self, row: int) -> None:
        if 0 <= row:
            while row >= self.model.rowCount() and self.model.canFetchMore():
                self.model.fetchMore()
            self.frozen.selectRow(row)
            self.view.scrollTo(self.model.index(row, N_FROZEN))


def _utc(t: pd.Timestamp) -> pd.Timestamp:
    """``t`` as a UTC-aware Timestamp (naive values are UTC), the form the time window uses."""
    t = pd.Timestamp(t)
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")
