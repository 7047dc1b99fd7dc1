"""Interval table model: one row per node per interval, over an engine metric frame.

No item per cell: cells are read from numpy arrays of the frame.  Summary rows
(whole selection over the window) are pinned on top and bold; sorting orders
the interval rows below them.  Rows load in pages of ``ROWS_TO_LOAD``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from app.textsafe import shown_text
from app.ui import messages as M
from app.ui.column_model import ColumnTableModel, Index, pinned_first, pinned_sort
from app.ui.frames import (
    FROZEN,
    SUMMARY_COL,
    ColDef,
    fmt_number,
    node_texts,
    system_texts,
)
from app.ui.roles import Role
from app.ui.time_zone import ZONE

ROWS_TO_LOAD = 2000
_ROLES = frozenset(int(r) for r in (Qt.ItemDataRole.DisplayRole, Role.SORT, Qt.ItemDataRole.TextAlignmentRole,
                                     Role.SUMMARY, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.BackgroundRole,
                                     Qt.ItemDataRole.ToolTipRole))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
TINT_LIGHT = QColor(255, 226, 170)
TINT_DARK = QColor(110, 80, 30)
SUMMARY_LIGHT = QColor(228, 236, 248)
SUMMARY_DARK = QColor(45, 60, 85)


class IntervalTableModel(ColumnTableModel):
    """A thin adapter over a metric frame and its column definitions."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.dark = False
        self.quality_details: dict[str, str] = {}  # finding code -> explanation for tooltips
        self._set(pd.DataFrame(), list(FROZEN))

    # -- data replacement ----------------------------------------------------------------------
    def set_frame(self, df: pd.DataFrame, columns: list[ColDef]) -> None:
        self.beginResetModel()
        self._set(df, columns)
        self.endResetModel()

    def _set(self, df: pd.DataFrame, columns: list[ColDef]) -> None:
        self.frame = df.reset_index(drop=True)
        self.columns = list(columns)
        n = len(self.frame)
        summ = self.frame[SUMMARY_COL].to_numpy(dtype=bool) if SUMMARY_COL in self.frame else np.zeros(n, bool)
        self._summary = summ
        self._values: list[np.ndarray | None] = [self._column_values(c) for c in self.columns]
        self._quality = (self.frame["quality"].fillna("").astype(str).to_numpy()
                         if "quality" in self.frame else np.full(n, "", dtype=object))
        self._left_out = (self.frame["left_out"].fillna(0).to_numpy(dtype=np.int64)
                          if "left_out" in self.frame else np.zeros(n, np.int64))   # implausible rows left out
        self._order = pinned_first(summ)
        self._texts: dict[tuple[int, int], str] = {}    # display texts of the cells painted so far
        self._loaded = min(n, ROWS_TO_LOAD)
        self._ranges_cache: np.ndarray | None | bool = False   # tooltips' texts, made on the first tooltip

    @property
    def _ranges(self) -> np.ndarray | None:
        if self._ranges_cache is False:
            self._ranges_cache = _range_texts(self.frame)
        return self._ranges_cache  # type: ignore[return-value]

    def distinct(self, col_id: str) -> int:
        """Number of distinct texts of an identification column (``_node``, ``_system``) over the rows."""
        i = self.column_index(col_id)
        values = self._values[i] if i >= 0 else None
        return 0 if values is None else len(set(values.tolist()))

    def below_lpar(self) -> bool:
        """Some row is a processor class or a logical CPU (not a whole LPAR or CEC)."""
        return "_by" in self.frame.columns and bool(self.frame["_by"].isin(["class_interval", "cpu"]).any())

    def n_summary(self) -> int:
        return int(self._summary.sum())

    def _column_values(self, col: ColDef) -> np.ndarray | None:
        df = self.frame
        if df.empty:
            return None
        if col.id == "_system":
            return np.array(system_texts(df), dtype=object)
        if col.id == "_node":
            return np.array(node_texts(df), dtype=object)
        if col.id in ("_date", "_end"):
            return _time_texts(df, col.id, self._summary)
        if col.id not in df.columns:
            return None
        return df[col.id].to_numpy()

    # -- lookups -------------------------------------------------------------------------------
    def frame_row(self, row: int) -> int:
        """Frame position of view row ``row``."""
        return int(self._order[row])

    def row_of(self, pred) -> int:
        """First view row whose frame row satisfies ``pred(series)``, -1 when none."""
        for row, pos in enumerate(self._order):
            if pred(self.frame.iloc[int(pos)]):
                return row
        return -1

    def is_summary_row(self, row: int) -> bool:
        return bool(self._summary[self._order[row]])

    def raw(self, row: int, col: int) -> Any:
        values = self._values[col]
        if values is None:
            return None
        v = values[self._order[row]]
        if isinstance(v, float) and np.isnan(v):
            return None
        return v

    def text(self, row: int, col: int) -> str:
        c = self.columns[col]
        v = self.raw(row, col)
        if not c.numeric or c.frozen:
            return "" if v is None else str(v)
        return fmt_number(v, c.decimals)

    # -- paging --------------------------------------------------------------------------------
    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:
        return not parent.isValid() and self._loaded < len(self._order)

    def fetchMore(self, parent: Index = QModelIndex()) -> None:
        if parent.isValid():
            return
        more = min(ROWS_TO_LOAD, len(self._order) - self._loaded)
        if more <= 0:
            return
        self.beginInsertRows(QModelIndex(), self._loaded, self._loaded + more - 1)
        self._loaded += more
        self.endInsertRows()

    def fetch_all(self) -> None:
        while self.canFetchMore():
            self.fetchMore()

    # -- Qt model API --------------------------------------------------------------------------
    def _row_total(self) -> int:
        return self._loaded

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if role not in _ROLES or not index.isValid():    # the delegate asks ~7 roles per painted cell
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < self._loaded and 0 <= col < len(self.columns)):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            key = (row, col)
            text = self._texts.get(key)
            if text is None:
                text = self._texts[key] = shown_text(self._display(row, col))   # names from the data: escaped
            return text
        if role == Role.SORT:
            return self.raw(row, col)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if self.columns[col].numeric and not self.columns[col].frozen else _LEFT
        if role == Role.SUMMARY:
            return self.is_summary_row(row)
        if role == Qt.ItemDataRole.FontRole and self.is_summary_row(row):
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._background(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, col)
        return None

    def _display(self, row: int, col: int) -> str:
        if self.is_summary_row(row) and self.columns[col].id in ("_date", "_end"):
            return M.SUMMARY_LABEL if self.columns[col].id == "_date" else ""
        return self.text(row, col)

    def _background(self, row: int) -> QColor | None:
        pos = self._order[row]
        if self._quality[pos]:
            return TINT_DARK if self.dark else TINT_LIGHT
        if self._summary[pos]:
            return SUMMARY_DARK if self.dark else SUMMARY_LIGHT
        return None

    def _tooltip(self, row: int, col: int = -1) -> str | None:
        pos = self._order[row]
        start, end = self._ranges[pos] if self._ranges is not None else ("", "")
        codes = str(self._quality[pos])
        if codes:
            lines = [M.QUALITY_TIP.format(codes=codes)]
            lines += [self.quality_details[c] for c in codes.split(",") if c.strip() in self.quality_details]
            if self._left_out[pos]:
                lines.append(M.LEFT_OUT_TIP.format(n=int(self._left_out[pos])))
            return "\n".join(lines)
        if self._summary[pos]:
            rng = _zoned(M.SUMMARY_RANGE_TIP.format(start=start, end=end)) if start or end else ""
            return "\n".join(t for t in (rng, M.SUMMARY_TIP) if t)
        if 0 <= col < len(self.columns) and self.columns[col].frozen and (start or end):
            return _zoned(M.INTERVAL_TIP.format(start=start, end=end))
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        """The Date and End headers name the time zone when the window shows local time (tooltip: always)."""
        out = super().headerData(section, orientation, role)
        if (orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns)
                and self.columns[section].id in ("_date", "_end") and out is not None):
            if role == Qt.ItemDataRole.DisplayRole and ZONE.local:
                return f"{out}\nlocal"
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{out} ({ZONE.label()})"
        return out

    def zone_changed(self) -> None:
        """The window's time zone changed (:mod:`app.ui.time_zone`): the time texts are written again."""
        self._texts = {}
        self._ranges_cache = False
        if not self.frame.empty:
            for i, c in enumerate(self.columns):
                if c.id in ("_date", "_end"):
                    self._values[i] = _time_texts(self.frame, c.id, self._summary)
        if self.columnCount():
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self.columnCount() - 1)
        if self.rowCount() and self.columnCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort interval rows by raw value (NaN last); summary rows stay on top."""
        if not 0 <= column < len(self.columns) or self._values[column] is None:
            return
        self.layoutAboutToBeChanged.emit()
        values = self._values[column]
        if self.columns[column].id == "_end" or self.columns[column].id == "_date":
            values = self.frame["interval_end"].to_numpy() if "interval_end" in self.frame else values
        self._order = pinned_sort(self._summary, values, order == Qt.SortOrder.AscendingOrder)
        self._texts = {}
        self.layoutChanged.emit()


def _zoned(text: str) -> str:
    """A tooltip that names UTC, naming the window's time zone instead when it shows local time."""
    return text.replace("UTC", ZONE.label()) if ZONE.local else text


def _time_texts(df: pd.DataFrame, col_id: str, summary: np.ndarray) -> np.ndarray:
    """Compact identification texts: ``2026-11-02`` dates, ``00:15`` times (seconds only when some interval has them).

    Summary rows say "Summary" in the Date cell (see ``_display``); their range is in the tooltip.
    """
    if "interval_end" not in df.columns:
        return np.full(len(df), "", dtype=object)
    end = pd.to_datetime(df["interval_end"])
    if getattr(end.dt, "tz", None) is not None:        # the wall-clock texts strftime gave
        end = end.dt.tz_localize(None)
    end = ZONE.wall_series(end)                        # in the window's time zone (UTC or local)
    ns = end.to_numpy(dtype="datetime64[ns]")
    iso = np.datetime_as_string(ns.astype("datetime64[s]"), unit="s")     # 2026-11-02T00:15:00, 'NaT'
    if col_id == "_date":
        a, b = 0, 10
    else:
        secs = end.dt.second.fillna(0).to_numpy() != 0
        a, b = 11, (19 if bool(secs.any()) else 16)
    texts = np.array([t[a:b] for t in iso.tolist()], dtype=object)    # strftime's text, without its per-row cost
    texts[np.isnat(ns)] = ""
    texts[summary] = M.SUMMARY_LABEL if col_id == "_date" else ""
    return texts


def _range_texts(df: pd.DataFrame) -> np.ndarray | None:
    """(start, end) texts per frame row, full date and time, for tooltips."""
    if df.empty or "interval_end" not in df.columns:
        return None
    end = ZONE.wall_series(pd.to_datetime(df["interval_end"])).dt.strftime("%Y-%m-%d %H:%M:%S").fillna("")
    start = (ZONE.wall_series(pd.to_datetime(df["interval_start"])).dt.strftime("%Y-%m-%d %H:%M:%S").fillna("")
             if "interval_start" in df.columns else pd.Series("", index=df.index))
    return np.array(list(zip(start.tolist(), end.tolist())), dtype=object)
