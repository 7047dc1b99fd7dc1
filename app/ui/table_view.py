"""Interval table widget: frozen identification columns, column chooser, TSV/HTML copy."""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QMimeData, QPoint, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M
from app.ui import settings
from app.ui.frames import N_FROZEN
from app.ui.table_model import IntervalTableModel

RESIZE_BUDGET_S = 0.25   # time box for resizing columns to contents
RESIZE_ROWS = 300        # rows looked at per column when resizing
HIDDEN_KEY = "table/hidden_columns"


def _make_view() -> QTableView:
    v = QTableView()
    v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
    v.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    v.setSortingEnabled(True)
    v.setAlternatingRowColors(True)
    v.setWordWrap(False)
    v.verticalHeader().setVisible(False)
    v.verticalHeader().setDefaultSectionSize(22)
    v.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    v.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
    v.horizontalHeader().setHighlightSections(False)
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
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
        self.hidden: set[str] = set(settings.get_list(HIDDEN_KEY))

    # -- state ---------------------------------------------------------------------------------
    def set_placeholder(self, text: str) -> None:
        self.placeholder.setText(text)
        self.stack.setCurrentIndex(0)

    def _after_reset(self) -> None:
        has_rows = self.model.rowCount() > 0
        self.stack.setCurrentIndex(1 if has_rows else 0)
        if not has_rows and self.placeholder.text() != M.PLACEHOLDER:
            self.placeholder.setText(M.TABLE_NO_ROWS)
        self._apply_visibility()
        self.resize_columns()

    def _apply_visibility(self) -> None:
        for i, c in enumerate(self.model.columns):
            frozen = i < N_FROZEN
            self.frozen.setColumnHidden(i, not frozen)
            self.view.setColumnHidden(i, frozen or c.id in self.hidden)

    def resize_columns(self) -> None:
        """Resize visible columns to their contents, within a time budget."""
        t0 = time.monotonic()
        for i in range(self.model.columnCount()):
            view = self.frozen if i < N_FROZEN else self.view
            if view.isColumnHidden(i):
                continue
            if time.monotonic() - t0 > RESIZE_BUDGET_S:
                view.setColumnWidth(i, max(view.columnWidth(i), 70))
                continue
            view.resizeColumnToContents(i)
            view.setColumnWidth(i, view.columnWidth(i) + 6)
        self._fit_frozen()

    def _fit_frozen(self) -> None:
        width = sum(self.frozen.columnWidth(i) for i in range(min(N_FROZEN, self.model.columnCount())))
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
        tsv = "\n".join("\t".join(line) for line in [headers, *body]) + "\n"
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
        trs = [f"<tr>{cells}</tr>"] + ["<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in line) + "</tr>"
                                       for line in body]
        mime = QMimeData()
        mime.setText(tsv)
        mime.setHtml("<table>" + "".join(trs) + "</table>")
        QGuiApplication.clipboard().setMimeData(mime)
        self.copied.emit(len(rows), len(cols))
        return tsv

    def select_row(self, row: int) -> None:
        if 0 <= row:
            while row >= self.model.rowCount() and self.model.canFetchMore():
                self.model.fetchMore()
            self.frozen.selectRow(row)
            self.view.scrollTo(self.model.index(row, N_FROZEN))
