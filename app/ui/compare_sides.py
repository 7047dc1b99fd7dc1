"""The Compare tab's side boxes: what one side compares (nodes, window, shift)."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QLineEdit, QWidget

from app.engine.shift import make_shift
from app.ui.compare_model import TIME_FMT, Side, parse_time


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
