"""Data health: every reader and engine finding, filterable by file and severity."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.textsafe import shown_text
from app.ui import messages as M
from app.ui.clipboard import put_table
from app.ui.palette import named
from app.ui.roles import Role

Index = QModelIndex | QPersistentModelIndex
COL_FILE, COL_OFFSET, COL_SEVERITY, COL_CODE, COL_MESSAGE = range(5)
FILE_MAX_W = 170       # px; long names elide on the left, the full path is in the tooltip
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


class FindingsModel(QAbstractTableModel):
    """A thin adapter over a list of Finding values."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.findings: list[Any] = []

    def set_findings(self, findings: list[Any]) -> None:
        self.beginResetModel()
        self.findings = list(findings)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.findings)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(M.HEALTH_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return M.HEALTH_HEADERS[section] if 0 <= section < len(M.HEALTH_HEADERS) else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.findings):
            return None
        f = self.findings[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:    # names from the data in messages: control characters escaped
            return shown_text(self._text(f, col))
        if role == Role.SORT:
            return self._raw(f, col)
        if role == Role.FINDING:
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            return f.file if col == COL_FILE else f.message
        if role == Qt.ItemDataRole.TextAlignmentRole and col == COL_OFFSET:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_SEVERITY:
            return named(f.severity) if f.severity in ("error", "warning") else None   # readable in both themes
        return None

    @staticmethod
    def _raw(f: Any, col: int) -> Any:
        if col == COL_FILE:
            return f.file
        if col == COL_OFFSET:
            return -1 if f.offset is None else int(f.offset)
        if col == COL_SEVERITY:
            return SEVERITY_RANK.get(f.severity, 9)
        return f.code if col == COL_CODE else f.message

    @staticmethod
    def _text(f: Any, col: int) -> str:
        if col == COL_FILE:
            return Path(f.file).name
        if col == COL_OFFSET:
            return "" if f.offset is None else f"{f.offset} (0x{f.offset:X})"
        if col == COL_SEVERITY:
            return f.severity
        if col == COL_CODE:
            return f.code
        # the File and Offset columns already say where: show what happened (full sentence in the tooltip)
        where = f"offset {f.offset} (0x{f.offset:X})" if f.offset is not None else "whole file"
        for prefix in (f"{f.file}: {where}: ", f"{f.file}: "):
            if f.message.startswith(prefix):
                return f.message[len(prefix):]
        return f.message


class LeftElide(QStyledItemDelegate):
    """Elide on the left: a sample's name differs in its LPAR, near the end ("...ZOSA_smf113.rdw.gz"); the
    whole path is the cell's tooltip."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft


class FindingsProxy(QSortFilterProxyModel):
    """Filter by file path and severity; sort by raw values."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.file: str | None = None
        self.severity: str | None = None
        self.setSortRole(Role.SORT)

    def set_filter(self, file: str | None, severity: str | None) -> None:
        self.beginFilterChange()
        self.file, self.severity = file, severity
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        f = self.sourceModel().findings[source_row]
        return (self.file is None or f.file == self.file) and (self.severity is None or f.severity == self.severity)


class HealthPanel(QWidget):
    """Table of findings with file and severity filters; double-click asks to show the affected node."""

    finding_activated = Signal(object)  # the Finding double-clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FindingsModel(self)
        self.proxy = FindingsProxy(self)
        self.proxy.setSourceModel(self.model)
        self.file_combo = QComboBox()
        self.file_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.severity_combo = QComboBox()
        self.severity_combo.addItem(M.ALL_SEVERITIES, None)
        for s in ("error", "warning", "info"):
            self.severity_combo.addItem(s, s)
        self.file_combo.currentIndexChanged.connect(self._filter)
        self.severity_combo.currentIndexChanged.connect(self._filter)
        self.count_label = QLabel()
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setWordWrap(False)
        self.view.setItemDelegateForColumn(COL_FILE, LeftElide(self.view))  # names keep their distinguishing end
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.sortByColumn(COL_SEVERITY, Qt.SortOrder.AscendingOrder)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COL_MESSAGE, QHeaderView.ResizeMode.Stretch)  # the most important column
        self.view.selectionModel().currentRowChanged.connect(self._show_details)
        self.view.doubleClicked.connect(self._activated)
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details = QLabel(M.HEALTH_DETAILS_EMPTY)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setMinimumHeight(3 * self.details.fontMetrics().lineSpacing())
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        table = QWidget()
        tl = QVBoxLayout(table)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.view, 1)
        tl.addWidget(self.details)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(table)
        bar = QHBoxLayout()
        bar.addWidget(self.file_combo)
        bar.addWidget(self.severity_combo)
        bar.addWidget(self.count_label, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(self.stack, 1)
        self._fill_files([])

    def set_findings(self, findings: list[Any], files: list[str], loaded: bool) -> None:
        self.model.set_findings(findings)
        self._fill_files(files)
        self.placeholder.setText(M.HEALTH_CLEAN if loaded else M.PLACEHOLDER)
        self.stack.setCurrentIndex(1 if findings else 0)
        for col in (COL_FILE, COL_OFFSET, COL_SEVERITY, COL_CODE):
            self.view.resizeColumnToContents(col)
        self.view.setColumnWidth(COL_FILE, min(self.view.columnWidth(COL_FILE), FILE_MAX_W))
        if findings and not self.view.currentIndex().isValid():
            self.view.setCurrentIndex(self.proxy.index(0, COL_MESSAGE))  # the top (most severe) one, in full below
        self._show_details(self.view.currentIndex())
        self._update_count()

    def _show_details(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        """The whole finding of the current row, word-wrapped under the table."""
        f = self.proxy.data(self.proxy.index(current.row(), 0), Role.FINDING) if current.isValid() else None
        if f is None:
            self.details.setText(M.HEALTH_DETAILS_EMPTY)
            self.details.setToolTip("")
            return
        self.details.setToolTip(f.file)
        where = "" if f.offset is None else f" @ {FindingsModel._text(f, COL_OFFSET)}"
        self.details.setText(f"<b>{html.escape(f.severity)} {html.escape(f.code)}</b> "
                             f"{html.escape(Path(f.file).name)}{where}<br>{html.escape(FindingsModel._text(f, COL_MESSAGE))}")

    def copy_selection(self) -> str:
        """Selected rows (all shown rows when none) as TSV with headers and HTML, on the clipboard.

        File is the full path, Message the full text."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        if not rows:
            rows = list(range(self.proxy.rowCount()))
        body = []
        for r in rows:
            f = self.proxy.data(self.proxy.index(r, 0), Role.FINDING)
            body.append([f.file, FindingsModel._text(f, COL_OFFSET), f.severity, f.code, f.message])
        return put_table(list(M.HEALTH_HEADERS), body)

    def _fill_files(self, files: list[str]) -> None:
        current = self.file_combo.currentData()
        self.file_combo.blockSignals(True)
        self.file_combo.clear()
        self.file_combo.addItem(M.ALL_FILES, None)
        for f in files:
            self.file_combo.addItem(Path(f).name, f)
        i = self.file_combo.findData(current)
        self.file_combo.setCurrentIndex(max(i, 0))
        self.file_combo.blockSignals(False)
        self._filter()

    def _filter(self) -> None:
        self.proxy.set_filter(self.file_combo.currentData(), self.severity_combo.currentData())
        self._update_count()

    def _update_count(self) -> None:
        self.count_label.setText(f"{self.proxy.rowCount()} / {self.model.rowCount()}")

    def _activated(self, index: QModelIndex) -> None:
        f = self.proxy.data(index, Role.FINDING)
        if f is not None:
            self.finding_activated.emit(f)
