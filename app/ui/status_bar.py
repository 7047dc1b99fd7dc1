"""The window's status bar: a message longer than the room left of the permanent widgets ends in an ellipsis (Qt
cuts it off mid-word otherwise: "the file looks like text: it was" beside the files' summary), the whole message
its tooltip; a resize of the window or a permanent widget's change of width elides it again from the whole text."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QSizeGrip, QSizePolicy, QStatusBar, QWidget

MARGIN = 12      # pixels between the message's end and the first permanent widget (Qt's own margins and spacing)


class ElidingStatusBar(QStatusBar):
    """QStatusBar whose temporary messages are elided to the room they have, the whole text in the tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # as QMainWindow's own status bar: its width never widens the window (three reads' progress bars and
        # Cancel buttons, a long files' summary would push a 1024 px window past the screen)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._full = ""              # the message as given (elided only on screen)
        self._until = 0.0            # when it times out (monotonic seconds; 0: stays)
        self.messageChanged.connect(self._changed)

    def full_message(self) -> str:
        """The message shown now, whole (``currentMessage()`` is what fits)."""
        return self._full if self.currentMessage() else ""

    def room(self) -> int:
        """Pixels the message may take: from the bar's left to the first visible permanent widget."""
        lefts = [w.geometry().left() for w in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
                 if w.isVisible() and not isinstance(w, QSizeGrip) and w.geometry().left() > 0]
        return max(40, min(lefts, default=self.width()) - MARGIN)

    def elided(self, text: str) -> str:
        """``text`` on one line (line breaks as spaces), ending in an ellipsis when it is wider than :meth:`room`."""
        one, fm, room = " ".join(text.split("\n")), self.fontMetrics(), self.room()
        if fm.horizontalAdvance(one) <= room:
            return one           # as it is (Qt's elision drops some control characters even from a text that fits)
        return fm.elidedText(one, Qt.TextElideMode.ElideRight, room)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 - Qt's name
        self._full = text or ""
        self._until = time.monotonic() + timeout / 1000.0 if timeout > 0 else 0.0
        shown = self.elided(self._full)
        super().showMessage(shown, timeout)
        self.setToolTip(self._full if shown != self._full else "")

    def _changed(self, text: str) -> None:
        if not text:                 # cleared or timed out
            self._full = ""
            self.setToolTip("")

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.refit()

    def event(self, event: QEvent) -> bool:
        done = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:   # a permanent widget came, went or changed its width
            self.refit()
        return done

    def refit(self) -> None:
        """The message elided again from its whole text for the room it has now (its time left kept)."""
        if not self._full or not self.currentMessage():
            return
        shown = self.elided(self._full)
        if shown == self.currentMessage():
            return
        left = max(1, int((self._until - time.monotonic()) * 1000)) if self._until else 0
        super().showMessage(shown, left)     # Qt's own: the whole text and its time out stay as they were
        self.setToolTip(self._full if shown != self._full else "")
