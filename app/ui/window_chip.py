"""The time-window chip of the toolbar: always shows the active window (start and end with dates) or
"whole range", with a button that clears it."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from app.ui import messages as M


def window_text(start: pd.Timestamp | None, end: pd.Timestamp | None) -> str:
    """``2026-11-02 16:56 - 2026-11-03 00:00 UTC`` (both dates always written; in the window's time zone,
    :mod:`app.ui.time_zone`, named at the end), or the whole-range text."""
    if start is None or end is None:
        return M.CHIP_WHOLE_RANGE
    from app.ui.time_zone import ZONE

    fmt = "%Y-%m-%d %H:%M"
    text = M.CHIP_WINDOW.format(start=ZONE.wall(start).strftime(fmt), end=ZONE.wall(end).strftime(fmt))
    return text[:-3] + ZONE.label() if ZONE.local and text.endswith("UTC") else text


class WindowChip(QWidget):
    """A rounded label with the window and a clear button (hidden while no window is set)."""

    clear_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("window_chip")
        self.label = QLabel(M.CHIP_WHOLE_RANGE)
        self.label.setObjectName("window_chip_label")
        self.clear = QToolButton()
        self.clear.setText("\u2715")
        self.clear.setAutoRaise(True)
        self.clear.setToolTip(M.CHIP_CLEAR_TIP)
        self.clear.clicked.connect(self.clear_requested)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 0, 2, 0)
        lay.setSpacing(2)
        title = QLabel(M.CHIP_TITLE)
        lay.addWidget(title)
        lay.addWidget(self.label)
        lay.addWidget(self.clear)
        # UTC / local time (app.ui.time_zone): shown once the data states a local time other than UTC
        self.zone_button = QToolButton()
        self.zone_button.setObjectName("zone_button")
        self.zone_button.setCheckable(True)
        self.zone_button.setText("Local")
        self.zone_button.setToolTip("Times in the systems' local time (checked) or in UTC")
        self.zone_button.toggled.connect(lambda on: self.zone_button.setText("Local" if on else "UTC"))
        self.zone_button.setVisible(False)
        lay.addWidget(self.zone_button)
        self.active = False
        self.set_window(None, None)

    def set_window(self, start: pd.Timestamp | None, end: pd.Timestamp | None) -> None:
        self.active = start is not None and end is not None
        self.label.setText(window_text(start, end))
        self.clear.setVisible(self.active)
        self.label.setToolTip(M.CHIP_ACTIVE_TIP if self.active else M.CHIP_IDLE_TIP)
        # an active window stands out: a tinted, rounded chip (palette-neutral colours read in light and dark)
        style = ("QLabel#window_chip_label { background: rgba(70,130,220,70); border: 1px solid rgba(70,130,220,160);"
                 " border-radius: 8px; padding: 1px 8px; font-weight: bold; }" if self.active else
                 "QLabel#window_chip_label { border: 1px solid rgba(128,128,128,110); border-radius: 8px;"
                 " padding: 1px 8px; }")
        self.label.setStyleSheet(style)
        self.label.setAlignment(Qt.AlignmentFlag.AlignVCenter)
