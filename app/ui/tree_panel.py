"""Left dock: the filter box and the machine tree; the tree selection drives every view."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStackedWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M
from app.ui.clipboard import put_table
from app.ui.palette import error_style
from app.ui.roles import Role
from app.ui.tree_model import MachineTreeModel, TreeFilterProxy


class TreePanel(QObject):
    """Owns the dock, the filter box, the tree view, its model and filter proxy."""

    nodes_selected = Signal(list)  # NodeKeys of the selected rows, in tree order

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.model = MachineTreeModel(self)
        self.proxy = TreeFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.view = QTreeView()
        self.view.setModel(self.proxy)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setUniformRowHeights(True)
        self.view.setIndentation(14)     # CEC > LPAR > class > core > thread: the labels keep room in a narrow dock
        # sorting by any column (click a header; a third click: the engine's tree order); the proxy keeps the sort
        # column over a data reload (dynamic sort), children sorted within their parent
        self.view.header().setSortIndicatorClearable(True)
        self.view.header().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)
        self.view.header().sortIndicatorChanged.connect(lambda *_: self.resize_columns())
        self.view.setAlternatingRowColors(True)
        self.view.header().setStretchLastSection(False)
        self.view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.view.selectionModel().selectionChanged.connect(self._selection_changed)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(M.FILTER_PLACEHOLDER)
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_changed)
        self.filter_note = QLabel("")   # "nothing matches", under the filter box
        self.filter_note.setObjectName("tree_filter_note")
        self.filter_note.setVisible(False)
        self.placeholder = QLabel(M.TREE_PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.view)
        self.note = QLabel(M.TREE_WHOLE_NOTE)   # which time range Busy and CPI are over
        self.note.setWordWrap(True)
        self.note.setStyleSheet("QLabel { font-size: 8pt; }")
        self.view.header().setToolTip(M.TREE_HEADER_TIPS[2])
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.filter)
        lay.addWidget(self.filter_note)
        lay.addWidget(self.note)
        lay.addWidget(self.stack, 1)
        self.dock = QDockWidget(M.DOCK_TREE, parent)
        self.dock.setObjectName("machines_dock")
        self.dock.setWidget(body)
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable |
                              QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self._muted = False
        self._arrow_px = 0                          # a header section's room for the sort arrow (resize_columns)
        self._shown_values: tuple | None = None   # (values, window) last shown by set_values

    # -- data ----------------------------------------------------------------------------------
    def set_roots(self, roots: list[Any]) -> None:
        self._muted = True
        self._shown_values = None
        try:
            self.model.set_roots(roots)
            self.view.expandToDepth(1)  # CECs and LPARs open, classes closed
            self.resize_columns()
        finally:
            self._muted = False
        self.stack.setCurrentIndex(1 if roots else 0)
        self.check_filter()

    def add_deeper(self, roots: list[Any], keys: list[tuple] | tuple[tuple, ...] = ()) -> None:
        """The class and CPU levels under the LPARs already shown (see MachineTreeModel.add_deeper); ``keys``
        (the selection) are selected again, as some may only exist now."""
        if not self.model.add_deeper(roots):
            return
        self.select_keys(keys, emit=False)
        self.resize_columns()

    def set_values(self, values: dict[tuple, dict], window: str | None) -> None:
        """Busy and CPI over the time window ``window`` (its text; None = whole range)."""
        if self._shown_values == (values, window):   # a selection change recomputes the same values
            return
        self._shown_values = (values, window)
        self.model.set_values(values, window is not None)
        self.note.setText(M.TREE_WINDOW_NOTE.format(window=window) if window else M.TREE_WHOLE_NOTE)
        self.note.setStyleSheet("QLabel { font-size: 8pt; font-weight: bold; }" if window else
                                "QLabel { font-size: 8pt; }")
        self.resize_columns()

    def resize_columns(self) -> None:
        """Numbers as narrow as their contents; the Node column (stretch) gets the rest.

        A sortable header sizes every section for a sort arrow (about 20 px each); only the sorted column shows
        one, so the others are measured without it (the three spare arrows took the plots' width: at 1024x700
        the CPI legend wrapped and the plot lost 14 px, issue 26)."""
        header = self.view.header()
        header.setMinimumSectionSize(24)
        shown = header.isSortIndicatorShown()
        sorted_col = header.sortIndicatorSection() if shown else -1
        header.setSortIndicatorShown(False)
        try:
            plain = header.sectionSizeHint(1)
            for col in (1, 2, 3):
                header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
                self.view.resizeColumnToContents(col)
        finally:
            header.setSortIndicatorShown(shown)
        self._arrow_px = max(0, header.sectionSizeHint(1) - plain) if shown else 0
        for col in (1, 2, 3):
            width = self.view.columnWidth(col)
            if col == sorted_col:          # its arrow beside the title
                width = max(width, header.sectionSizeHint(col))
            self.view.setColumnWidth(col, width + 2)

    def preferred_width(self, window_width: int) -> int:
        """Dock width for a window ``window_width`` wide: room for the longest CEC/LPAR label if the window
        allows (at most ~a third of it), never below 240 px."""
        self.view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        need = sum(self.view.columnWidth(c) for c in range(1, self.proxy.columnCount()))
        need += self.view.sizeHintForColumn(0) + 8    # the labels with their indentation
        need += self.view.verticalScrollBar().sizeHint().width() + 2 * self.view.frameWidth() + 16
        # room for one sort arrow: a sorted number column widens by it, and the labels keep their room (issue 26)
        need += self._arrow_px if self.view.header().sortIndicatorSection() not in (1, 2, 3) else 0
        self.view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        return max(240, min(need, int(window_width * 0.32)))

    def copy_selection(self) -> str:
        """Selected rows (all top-level rows when none) as TSV with headers and HTML, on the clipboard."""
        rows = self.view.selectionModel().selectedRows(0)
        if not rows:
            rows = [self.proxy.index(r, 0) for r in range(self.proxy.rowCount())]
        rows.sort(key=self._path)
        headers = [str(self.proxy.headerData(c, Qt.Orientation.Horizontal)) for c in range(self.proxy.columnCount())]
        body = []
        for idx in rows:
            body.append([str(self.proxy.index(idx.row(), c, idx.parent()).data() or "")
                         for c in range(self.proxy.columnCount())])
        return put_table(headers, body)

    # -- selection -----------------------------------------------------------------------------
    def selected_keys(self) -> list[tuple]:
        rows = self.view.selectionModel().selectedRows(0)
        rows.sort(key=lambda i: self._path(i))
        return [tuple(i.data(Role.NODE_KEY)) for i in rows if i.data(Role.NODE_KEY)]

    def _path(self, index) -> list[int]:
        path = []
        while index.isValid():
            path.insert(0, index.row())
            index = index.parent()
        return path

    def select_keys(self, keys: list[tuple] | tuple[tuple, ...], emit: bool = True) -> None:
        """Select the rows of ``keys`` (unknown keys are skipped) without re-emitting twice; ``emit=False``
        selects without telling the views (they already show ``keys``, of which some may not be built yet)."""
        if not emit:
            self._muted, muted = True, self._muted
            try:
                self.select_keys(keys)
            finally:
                self._muted = muted
            return
        sel = QItemSelection()
        for key in keys:
            src = self.model.index_of_key(tuple(key))
            idx = self.proxy.mapFromSource(src)
            if idx.isValid():
                sel.select(idx, idx)
                self.view.scrollTo(idx)
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.selectionModel().select(sel, flags)
        if sel.indexes():
            self.view.selectionModel().setCurrentIndex(sel.indexes()[0], QItemSelectionModel.SelectionFlag.NoUpdate)

    def _selection_changed(self, *_args) -> None:
        if not self._muted:
            self.nodes_selected.emit(self.selected_keys())

    def _filter_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if text:
            self.view.expandAll()
        self.check_filter()

    def check_filter(self) -> str:
        """The filter's inline message: what it does not find (empty when it finds something or is empty)."""
        text = self.filter.text()
        note = M.FILTER_NO_MATCH.format(text=text) if text and self.model.rowCount() and \
            not self.proxy.rowCount() else ""
        self.filter_note.setText(note)
        self.filter_note.setToolTip(note)
        self.filter_note.setStyleSheet(error_style(bool(note), bold=False))
        self.filter_note.setVisible(bool(note))
        return note

    def set_loading(self, n: int) -> None:
        """``n`` files are being read: the empty tree says so (not "No files open"); 0: back to normal."""
        self.placeholder.setText(M.TREE_LOADING.format(n=n) if n else M.TREE_PLACEHOLDER)
        self.model.set_loading(n > 0)

    # -- lookups -------------------------------------------------------------------------------
    def first_key(self, level: str) -> tuple | None:
        """The first node of ``level`` in tree order (e.g. the first LPAR with CPU data)."""
        for node in self.model.all_nodes():  # pre-order = tree order
            if node.level == level and not (node.info or {}).get("partition_only"):
                return tuple(node.key)
        return None

    def key_for_finding(self, key: dict) -> tuple:
        """The most specific tree node a finding's key names (machine, system/lpar, class, cpu); a finding that
        names its machine (``cec``) never selects a clone of its system id on another machine."""
        system = key.get("system") or key.get("lpar")
        cpu, cec = key.get("cpu"), key.get("cec")
        best: tuple = ()
        for node in self.model.all_nodes():
            info = node.info or {}
            if node.level in ("lpar", "cpu") and cec is not None and node.key[1] != cec:
                continue
            if node.level == "lpar" and system is not None and system in (info.get("system"), node.key[-1]):
                best = best or tuple(node.key)
            if (node.level == "cpu" and cpu is not None and str(node.key[-1]) == str(cpu)
                    and (system is None or system in (node.key[2], info.get("system")))):
                return tuple(node.key)
        if not best and key.get("cec"):
            best = next((tuple(n.key) for n in self.model.all_nodes() if n.level == "cec"
                         and n.key[-1] == key["cec"]), ())
        return best
