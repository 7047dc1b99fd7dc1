"""The part every NestScope table model shares: a list of columns with headers and tooltips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from app.ui.frames import wrap_header

Index = QModelIndex | QPersistentModelIndex


class ColumnTableModel(QAbstractTableModel):
    """A flat table over ``self.columns`` (objects with ``header`` and ``tooltip``).

    Subclasses say how many rows are shown (``_row_total``) and answer ``data``;
    headers wrap onto two lines and explain the column in their tooltip.
    """

    columns: list[Any]

    def _row_total(self) -> int:
        raise NotImplementedError

    def column_index(self, col_id: str) -> int:
        """Position of the column ``col_id``, -1 when absent."""
        return next((i for i, c in enumerate(self.columns) if c.id == col_id), -1)

    def cell(self, index: Index) -> tuple[int, int] | None:
        """(row, column) of ``index`` when it is a valid cell of the table, else None."""
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        return (row, col) if 0 <= row < self._row_total() and 0 <= col < len(self.columns) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else self._row_total()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        c = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return wrap_header(c.header)
        if role == Qt.ItemDataRole.ToolTipRole:
            return c.tooltip or c.header
        return None


def pinned_first(pinned: np.ndarray) -> np.ndarray:
    """Frame positions with the ``pinned`` rows (summary / mean rows) first, each part in frame order."""
    return np.concatenate([np.flatnonzero(pinned), np.flatnonzero(~pinned)]).astype(int)


def pinned_sort(pinned: np.ndarray, values: np.ndarray, ascending: bool) -> np.ndarray:
    """Frame positions: the ``pinned`` rows first, then the others by ``values`` (stable, NaN last)."""
    rows = np.flatnonzero(~pinned)
    keys = pd.Series(values[rows])
    idx = keys.sort_values(ascending=ascending, na_position="last", kind="stable").index.to_numpy()
    return np.concatenate([np.flatnonzero(pinned), rows[idx]]).astype(int)
