"""Models of the Profile and Rankings & peaks tabs (issue 26): a plain table over an engine frame, the hour x
day-of-week heat map with its colour scale, and the delegate and legend that draw it.  No formulas here: the
frames come from ``app.engine.views``; the one value formatter is the engine's (``frames.fmt_number``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QLinearGradient, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QWidget

from app.export.profile import SCALE_STOPS, heat_grid
from app.textsafe import shown_text
from app.ui.column_model import ColumnTableModel, Index
from app.ui.frames import fmt_number
from app.ui.roles import Role

TIME_FMT = "%Y-%m-%d %H:%M"
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# a sequential scale readable in light and dark themes (viridis' stops, as the exported pictures)
_STOPS = SCALE_STOPS
EMPTY_BRUSH = QBrush(QColor(150, 150, 150, 170), Qt.BrushStyle.BDiagPattern)   # no intervals: hatched, no value


def scale_colour(t: float) -> QColor:
    """The heat map's colour of ``t`` in 0..1 (clipped)."""
    t = min(max(float(t), 0.0), 1.0) * (len(_STOPS) - 1)
    i = min(int(t), len(_STOPS) - 2)
    r, g, b = _STOPS[i] + (_STOPS[i + 1] - _STOPS[i]) * (t - i)
    return QColor(int(round(r)), int(round(g)), int(round(b)))


def ink_for(colour: QColor) -> QColor:
    """Black or white text, whichever reads on ``colour``."""
    lum = 0.299 * colour.red() + 0.587 * colour.green() + 0.114 * colour.blue()
    return QColor(0, 0, 0) if lum > 140 else QColor(255, 255, 255)


@dataclass(frozen=True)
class FrameCol:
    """One column of a :class:`FrameModel`: frame column id, header, decimals (None: text; -1: a time)."""

    id: str
    header: str
    decimals: int | None = None
    tooltip: str = ""


class FrameModel(ColumnTableModel):
    """A thin, sortable adapter over one engine frame (values from numpy arrays; no item per cell)."""

    def __init__(self, columns: list[FrameCol] | None = None, parent=None) -> None:
        super().__init__(parent)
        self.columns = list(columns or [])
        self.frame = pd.DataFrame()
        self._values: list[np.ndarray] = []
        self._texts: list[list[str]] = []
        self._order = np.zeros(0, dtype=int)

    def set_frame(self, frame: pd.DataFrame | None, columns: list[FrameCol] | None = None) -> None:
        self.beginResetModel()
        if columns is not None:
            self.columns = list(columns)
        self.frame = (pd.DataFrame() if frame is None else frame).reset_index(drop=True)
        n = len(self.frame)
        self._values = [self.frame[c.id].to_numpy() if c.id in self.frame else np.full(n, None, dtype=object)
                        for c in self.columns]
        self._texts = [self._column_texts(c, v) for c, v in zip(self.columns, self._values)]
        self._order = np.arange(n)
        self.endResetModel()

    @staticmethod
    def _column_texts(c: FrameCol, values: np.ndarray) -> list[str]:
        if c.decimals == -1:
            t = pd.to_datetime(pd.Series(values), errors="coerce").dt.strftime(TIME_FMT)
            return t.fillna("").tolist()
        if c.decimals is None:
            return ["" if v is None or (isinstance(v, float) and v != v) else shown_text(str(v)) for v in values]
        return [fmt_number(v, c.decimals) for v in values]

    def frame_row(self, row: int) -> int:
        return int(self._order[row])

    def text(self, row: int, col: int) -> str:
        return self._texts[col][self._order[row]]

    def value(self, row: int, col_id: str) -> Any:
        """The raw frame value of view row ``row`` in column ``col_id`` (None when absent)."""
        if col_id not in self.frame.columns or not 0 <= row < len(self._order):
            return None
        return self.frame[col_id].iloc[self.frame_row(row)]

    def _row_total(self) -> int:
        return len(self.frame)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        at = self.cell(index)
        if at is None:
            return None
        row, col = at
        c = self.columns[col]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, col)
        if role == Role.SORT:
            v = self._values[col][self._order[row]]
            return None if v is None or v is pd.NaT or (isinstance(v, float) and v != v) else v
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignLeft if c.decimals is None else Qt.AlignmentFlag.AlignRight
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return c.tooltip or None
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by raw value, missing values last."""
        if not 0 <= column < len(self.columns) or self.frame.empty:
            return
        self.layoutAboutToBeChanged.emit()
        keys = pd.Series(self._values[column])
        if self.columns[column].decimals not in (None, -1):
            keys = pd.to_numeric(keys, errors="coerce")
        asc = order == Qt.SortOrder.AscendingOrder
        self._order = keys.sort_values(ascending=asc, na_position="last", kind="stable").index.to_numpy()
        self.layoutChanged.emit()


class HeatModel(ColumnTableModel):
    """Hour of day (columns 0..23) x day of week (rows Mon..Sun) of one metric; a cell without intervals is empty
    (no text, hatched, its tooltip says so), never zero."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.columns = [FrameCol(str(h), f"{h:02d}", None, f"{h:02d}:00-{h:02d}:59") for h in range(24)]
        self.grid = np.full((7, 24), np.nan)
        self.decimals: int | None = 2
        self.metric = ""
        self.node = ""
        self.zone = "UTC"
        self.lo = self.hi = float("nan")

    def set_grid(self, grid: np.ndarray, metric: str, decimals: int | None, node: str = "") -> None:
        self.beginResetModel()
        self.grid = np.asarray(grid, dtype=float).reshape(7, 24)
        self.metric, self.decimals, self.node = metric, decimals, node
        finite = self.grid[np.isfinite(self.grid)]
        self.lo, self.hi = (float(finite.min()), float(finite.max())) if finite.size else (np.nan, np.nan)
        self.endResetModel()

    def value(self, day: int, hour: int) -> float:
        """The metric of weekday ``day`` (0 = Monday) and ``hour``; NaN for an empty cell."""
        return float(self.grid[day, hour])

    def fraction(self, v: float) -> float:
        span = self.hi - self.lo
        return 0.5 if not span > 0 else (v - self.lo) / span

    def _row_total(self) -> int:
        return 7

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Vertical and 0 <= section < 7:
            if role == Qt.ItemDataRole.DisplayRole:
                return DAYS[section]
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < 24 and role == Qt.ItemDataRole.DisplayRole:
            return f"{section:02d}"
        return super().headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        at = self.cell(index)
        if at is None:
            return None
        day, hour = at
        v = self.grid[day, hour]
        empty = not np.isfinite(v)
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if empty else fmt_number(v, self.decimals)
        if role == Role.SORT:
            return None if empty else float(v)
        if role == Qt.ItemDataRole.BackgroundRole:
            return EMPTY_BRUSH if empty else QBrush(scale_colour(self.fraction(v)))
        if role == Qt.ItemDataRole.ForegroundRole and not empty:
            return ink_for(scale_colour(self.fraction(v)))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            when = f"{DAYS[day]} {hour:02d}:00-{hour:02d}:59 {self.zone}"
            who = f"{self.node}: " if self.node else ""
            if empty:
                return f"{who}{when}: no intervals in this hour (empty, not zero)"
            return f"{who}{self.metric} {fmt_number(v, self.decimals)} ({when})"
        return None


class FitTextDelegate(QStyledItemDelegate):
    """Draws a heat-map cell's text only where it fits whole (the value is always in the tooltip): no "..."."""

    def paint(self, painter: QPainter, option, index: QModelIndex) -> None:
        brush = index.data(Qt.ItemDataRole.BackgroundRole)
        if isinstance(brush, QBrush):
            painter.fillRect(option.rect, brush)
        text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        font = QFont(option.font)
        base = font.pointSizeF() if font.pointSizeF() > 0 else 9.0
        for scale in (1.0, 0.88, 0.78):     # a smaller font before giving up on the text of a narrow cell
            font.setPointSizeF(base * scale)
            if text and QFontMetrics(font).horizontalAdvance(text) <= option.rect.width() - 2:
                ink = index.data(Qt.ItemDataRole.ForegroundRole)
                painter.save()
                painter.setFont(font)
                if isinstance(ink, QColor):
                    painter.setPen(ink)
                painter.drawText(option.rect, int(Qt.AlignmentFlag.AlignCenter), text)
                painter.restore()
                break
        if option.state & QStyle.StateFlag.State_Selected:
            painter.save()
            painter.setPen(option.palette.highlight().color())
            painter.drawRect(option.rect.adjusted(0, 0, -1, -1))
            painter.restore()


class ColourBar(QWidget):
    """The heat map's colour scale: a gradient from the lowest to the highest value, labelled at both ends and the
    middle, with the metric's name, and a hatched swatch for "no intervals"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lo = self.hi = float("nan")
        self.decimals: int | None = 2
        self.title = ""
        self.setMinimumHeight(self.sizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(360, self.fontMetrics().height() * 2 + 16)

    def set_range(self, lo: float, hi: float, decimals: int | None, title: str) -> None:
        self.lo, self.hi, self.decimals, self.title = lo, hi, decimals, title
        self.setToolTip(f"Colour scale of {title}: lowest {fmt_number(lo, decimals)}, highest "
                        f"{fmt_number(hi, decimals)}; hatched cells have no intervals" if title else "")
        self.update()

    def labels(self) -> list[str]:
        if not (np.isfinite(self.lo) and np.isfinite(self.hi)):
            return []
        return [fmt_number(v, self.decimals) for v in (self.lo, (self.lo + self.hi) / 2, self.hi)]

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        fm = self.fontMetrics()
        fh = fm.height()
        text_pen = self.palette().windowText().color()
        p.setPen(text_pen)
        title_w = fm.horizontalAdvance(self.title) + 12 if self.title else 0
        empty_text = "no intervals"
        empty_w = 22 + fm.horizontalAdvance(empty_text) + 8
        x0, x1 = title_w + 4, max(title_w + 40, self.width() - empty_w - 12)
        bar = QRect(x0, 4, x1 - x0, fh)
        if self.title:
            p.drawText(QRect(0, 4, title_w, fh), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                       self.title)
        labels = self.labels()
        if labels:
            grad = QLinearGradient(bar.left(), 0, bar.right(), 0)
            for k in range(len(_STOPS)):
                grad.setColorAt(k / (len(_STOPS) - 1), scale_colour(k / (len(_STOPS) - 1)))
            p.fillRect(bar, grad)
            p.drawRect(bar.adjusted(0, 0, -1, -1))
            y = bar.bottom() + 2
            for text, align, x in ((labels[0], Qt.AlignmentFlag.AlignLeft, bar.left()),
                                   (labels[1], Qt.AlignmentFlag.AlignHCenter, bar.center().x() - 60),
                                   (labels[2], Qt.AlignmentFlag.AlignRight, bar.right() - 120)):
                p.drawText(QRect(x, y, 120, fh), int(align | Qt.AlignmentFlag.AlignTop), text)
        sw = QRect(x1 + 12, 4, 18, fh)
        p.fillRect(sw, EMPTY_BRUSH)
        p.drawRect(sw.adjusted(0, 0, -1, -1))
        p.drawText(QRect(sw.right() + 6, 4, empty_w, fh), int(Qt.AlignmentFlag.AlignVCenter), empty_text)
        p.end()


__all__ = ["FrameCol", "FrameModel", "HeatModel", "FitTextDelegate", "ColourBar", "heat_grid", "scale_colour",
           "ink_for", "DAYS", "EMPTY_BRUSH"]
