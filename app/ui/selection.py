"""The one place holding what the views show: selected tree nodes and the time window.

Views never talk to each other; they set and observe this state.  ``changed``
carries the whole state so a late subscriber can render from it alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
from PySide6.QtCore import QObject, Signal

NodeKey = tuple[str, ...]

# tree level -> ws.metrics(by=...) giving one row per node per interval
# (pool and SMT core nodes are class-like rows, app.engine.node_rows)
BY_OF_LEVEL = {"cec": "cec_interval", "pool": "class_interval", "lpar": "lpar_interval", "class": "class_interval",
               "core": "class_interval", "cpu": "cpu"}
LEVEL_ORDER = ("cec", "pool", "lpar", "class", "core", "cpu")


@dataclass(frozen=True)
class Selection:
    """Selected nodes (tree order) and the time window (None = whole range)."""

    nodes: tuple[NodeKey, ...] = ()
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None

    @property
    def has_window(self) -> bool:
        return self.start is not None and self.end is not None

    def levels(self) -> list[str]:
        """Levels present in the selection, coarse to fine."""
        present = {k[0] for k in self.nodes}
        return [lv for lv in LEVEL_ORDER if lv in present]


class SelectionState(QObject):
    """Holds a Selection and broadcasts it when it changes."""

    changed = Signal(object)          # the new Selection
    nodes_changed = Signal(object)    # the new Selection (nodes differ)
    window_changed = Signal(object)   # the new Selection (window differs)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.value = Selection()

    def set_nodes(self, nodes: list[NodeKey] | tuple[NodeKey, ...]) -> None:
        nodes = tuple(tuple(n) for n in nodes)
        if nodes == self.value.nodes:
            return
        self.value = replace(self.value, nodes=nodes)
        self.nodes_changed.emit(self.value)
        self.changed.emit(self.value)

    def set_window(self, start: pd.Timestamp | None, end: pd.Timestamp | None) -> None:
        if start is not None and end is not None and end < start:
            start, end = end, start
        if (start, end) == (self.value.start, self.value.end):
            return
        self.value = replace(self.value, start=start, end=end)
        self.window_changed.emit(self.value)
        self.changed.emit(self.value)

    def clear_window(self) -> None:
        self.set_window(None, None)
