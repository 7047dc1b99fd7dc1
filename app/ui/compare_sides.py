"""The Compare tab's side boxes: what one side compares (nodes, window, shift).

Every field is checked as it is typed: a wrong one gets a red message under the fields (the box keeps its height:
the message line is always reserved, the node text is one elided line), and the side is computed only from
fields that read.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QGridLayout, QGroupBox, QLabel, QLineEdit, QSizePolicy, QWidget

from app.engine.shift import ShiftError, make_shift
from app.ui.compare_model import TIME_FMT, Side, parse_time
from app.ui.palette import error_style, named

NOT_SET = "not set"


class ElidedLabel(QLabel):
    """One line of text cut with "..." where it does not fit; the whole text in the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self.fontMetrics().height() + 2)
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full = str(text)
        self.setToolTip(self.full if self.full else "")
        self._elide()

    def setText(self, text: str) -> None:   # noqa: N802 - Qt's name: callers set the whole text
        self.set_full_text(text)

    def text(self) -> str:
        """The whole text (what is painted may be cut)."""
        return self.full

    def _elide(self) -> None:
        fm = QFontMetrics(self.font())
        super().setText(fm.elidedText(self.full, Qt.TextElideMode.ElideRight, max(self.width(), 40)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._elide()


class SideBox(QGroupBox):
    """Controls of one side: what is selected, its window and its shift filter."""

    changed = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(name.capitalize(), parent)
        self.name = name
        self.nodes: tuple = ()
        self.what = ElidedLabel(NOT_SET)
        self.start = QLineEdit()
        self.end = QLineEdit()
        for e, tip in ((self.start, "from (UTC), e.g. 2026-10-05 00:00; empty = first interval"),
                       (self.end, "to (UTC), e.g. 2026-10-07 00:00; empty = last interval")):
            e.setPlaceholderText("YYYY-MM-DD HH:MM")
            e.setToolTip(tip)
        self.hours = QLineEdit()
        self.hours.setPlaceholderText("all hours, e.g. 08-17")
        self.hours.setToolTip("Shift hours in the window's time zone (UTC, or local time with View > Local time): "
                              "intervals whose midpoint is in [first, last); 22-06 wraps midnight")
        self.days = QLineEdit()
        self.days.setPlaceholderText("all days, e.g. mon-fri")
        self.days.setToolTip("Shift days: mon..sun, ranges and lists, e.g. mon-fri or sat,sun")
        self.error = ElidedLabel("")   # the fields' messages, red; its line is reserved so nothing moves
        self.error.setObjectName(f"{name}_field_error")
        self.error.setStyleSheet(error_style(True, bold=False))
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
        lay.addWidget(self.error, 3, 0, 1, 4)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)
        for e in self.fields():
            e.editingFinished.connect(self._edited)
            e.textChanged.connect(lambda _t: self.check())
            e.setMinimumWidth(60)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def fields(self) -> tuple[QLineEdit, ...]:
        return (self.start, self.end, self.hours, self.days)

    def _edited(self) -> None:
        self.changed.emit()

    def set_side(self, side: Side) -> None:
        self.nodes = tuple(side.nodes)
        for e, v in ((self.start, side.start), (self.end, side.end)):
            e.setText("" if v is None else pd.Timestamp(v).strftime(TIME_FMT))
        self.hours.setText(side.hours)
        self.days.setText(side.days)
        self.what.set_full_text(_nodes_text(self.nodes) if self.nodes else NOT_SET)

    def field_errors(self) -> dict[str, str]:
        """The message of each field that does not read (field name -> text); empty when all read."""
        out: dict[str, str] = {}
        times = {}
        for key, edit, what in (("start", self.start, "from"), ("end", self.end, "to")):
            try:
                times[key] = parse_time(edit.text(), what)
            except ValueError as exc:
                out[key] = str(exc)
        if times.get("start") is not None and times.get("end") is not None and times["end"] <= times["start"]:
            out["end"] = "'to' must be after 'from'"
        for key, edit, args in (("hours", self.hours, lambda t: (t, None)), ("days", self.days, lambda t: (None, t))):
            text = edit.text().strip()
            try:
                make_shift(*args(text or None))
            except ShiftError as exc:
                out[key] = str(exc)
        return out

    def check(self) -> dict[str, str]:
        """Show the fields' messages under them (a wrong field's text is red: a palette change, so no field
        changes its size); returns them."""
        errors = self.field_errors()
        self.error.set_full_text("; ".join(errors.values()))
        for key, edit in zip(("start", "end", "hours", "days"), self.fields()):
            edit.setProperty("invalid", key in errors)
            pal = QApplication.palette(edit)
            if key in errors:
                pal.setColor(QPalette.ColorRole.Text, named("error"))
            edit.setPalette(pal)
        return errors

    def side(self) -> Side:
        """The side as edited; raises ValueError / ShiftError with a readable message."""
        errors = self.check()
        if errors:
            raise ValueError(f"{self.name} {next(iter(errors.values()))}")
        start = parse_time(self.start.text(), f"{self.name} from")
        end = parse_time(self.end.text(), f"{self.name} to")
        return Side(self.nodes, start, end, self.hours.text().strip(), self.days.text().strip())

    def apply_theme(self) -> None:
        """The message's red follows the theme."""
        self.error.setStyleSheet(error_style(True, bold=False))
        self.check()


def _nodes_text(nodes: tuple) -> str:
    parts = []
    for n in nodes:
        level, *rest = n
        parts.append(f"{level} " + " / ".join(str(v) for v in rest))
    return "; ".join(parts)
