"""The Timelines tab's page before its plots are needed: the window's start does not import pyqtgraph (issue 23).

:class:`TimelineShell` is what the window puts in the tab (an :class:`app.ui.lazy_widget.LazyWidget`): it keeps
the last rows, window and theme the window gives and makes the real :class:`app.ui.timeline.TimelineView` when the
tab is first shown or anything else of the view is first asked for (``w.timeline.plots``, a picture's ``glw``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QWidget

from app.ui import messages as M
from app.ui.lazy_widget import LazyWidget


def _make_view(parent: QWidget) -> Any:
    from app.ui.timeline import TimelineView

    return TimelineView(parent)


class TimelineShell(LazyWidget):
    """A tab page standing for a TimelineView until the view is first needed (then it holds the view)."""

    window_requested = Signal(object, object)  # the view's own, passed on
    KEPT = ("apply_theme", "set_frame", "set_window")     # the window's own order of these
    OWN = LazyWidget.OWN | {"placeholder", "on_built", "_built"}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(_make_view, parent)
        self._built = False          # as TimelineView._built: no plots yet (app.ui.time_zone reads it)
        self.on_built: list = []     # functions called once the view's plots are built (TimelineView.on_built)
        self.placeholder = QLabel(M.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._lay.addWidget(self.placeholder)

    def _before_kept(self, view: Any) -> None:
        view.on_built.extend(self.on_built)
        view.window_requested.connect(self.window_requested)
        self._lay.removeWidget(self.placeholder)
        self.placeholder.hide()
        self.placeholder.deleteLater()
        self._text = self.placeholder.text()
        del self.placeholder, self._built, self.on_built     # from now on the view's own (through __getattr__)

    def _after_kept(self, view: Any) -> None:
        if "set_frame" in self._kept_names:      # a text the window set after the rows (a partition-only LPAR)
            view.placeholder.setText(self._text)

    def view(self) -> Any:
        self._kept_names = set(self._kept)
        return super().view()

    # the view's attributes whose names QWidget has too (found on the page before ``__getattr__``)
    @property
    def scroll(self) -> Any:
        return self.view().scroll

    @property
    def window(self) -> Any:
        """The view's time window (``TimelineView.window``), not ``QWidget.window()``."""
        return self.view().window

    # -- what the window gives before the view is needed: kept, given to it when it is made -----
    def set_frame(self, df: Any, loaded: bool = True, cec_stack: Any = None) -> None:
        if not self.made:
            self.placeholder.setText(M.TIMELINE_NO_DATA if loaded else M.PLACEHOLDER)   # as the view's
        self.keep("set_frame", df, loaded=loaded, cec_stack=cec_stack)

    def set_window(self, start: Any, end: Any) -> None:
        self.keep("set_window", start, end)

    def apply_theme(self, dark: bool) -> None:
        self.keep("apply_theme", dark)
