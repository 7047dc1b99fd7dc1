"""A page standing for a widget that is costly to make (a pyqtgraph chart): the window's start does not make it
nor import its modules (issue 23).

:class:`LazyWidget` keeps the last call of each of a few methods (``KEPT``: the data, the theme) and makes the real
widget when it is first shown or when anything else of it is first asked for; the widget then gets the kept calls
(in ``KEPT``'s order) and the page holds it, so it behaves as if it had been there from the start.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget


class LazyWidget(QWidget):
    """A page holding the widget ``make()`` returns, made when first shown or used."""

    KEPT: tuple[str, ...] = ()    # methods whose last call is kept until the widget is made (replayed in this order)
    OWN = frozenset({"_view", "_kept", "_made", "_make", "_lay"})   # the page's own (never the widget's)

    def __init__(self, make: Callable[[QWidget], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view: Any = None
        self._make = make
        self._kept: dict[str, tuple] = {}
        self._made: list = []        # functions given the widget once it is made
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)

    @property
    def made(self) -> bool:
        """The real widget exists."""
        return self._view is not None

    def view(self) -> Any:
        """The real widget, made now if it was not."""
        if self._view is None:
            view = self._view = self._make(self)
            self._before_kept(view)
            self._lay.addWidget(view)
            for name in self.KEPT:
                if name in self._kept:
                    args, kwargs = self._kept[name]
                    getattr(view, name)(*args, **kwargs)
            self._kept.clear()
            self._after_kept(view)
            fns, self._made = self._made, []
            for fn in fns:
                fn(view)
            if self.isVisible():
                view.setGeometry(self.contentsRect())     # its final size before its own show event (the page's)
                view.show()
        return self._view

    def _before_kept(self, view: Any) -> None:
        """A subclass' own hand-over, before the kept calls."""

    def _after_kept(self, view: Any) -> None:
        """A subclass' own hand-over, after the kept calls."""

    def when_made(self, fn: Callable[[Any], None]) -> None:
        """Call ``fn(widget)`` once the widget exists (at once when it does)."""
        if self._view is not None:
            fn(self._view)
        else:
            self._made.append(fn)

    def keep(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Call the widget's ``name`` now if it exists, else keep the call for when it is made."""
        if self._view is not None:
            getattr(self._view, name)(*args, **kwargs)
        else:
            self._kept[name] = (args, kwargs)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._view is None:
            self.view()

    def __getattr__(self, name: str) -> Any:
        """Anything else of the widget: made now (Qt's own attributes and the page's are found before this)."""
        if name.startswith("__") or name in type(self).OWN and self.__dict__.get("_view") is None:
            raise AttributeError(name)
        return getattr(self.view(), name)
