"""The Profile tab (issue 26): each metric of the selected nodes by hour of day, day of week or both, over the
window's time window, and a heat map of hour (0-23) x day of week (Mon-Sun) for one metric at a time.

Every value is ``app.engine.views.profile``'s: the counters of all the intervals of an hour summed, then the
formulas (the CPI of 08:00 is the CPI of all the 08:00-09:00 work, never a mean of ratios).  The frames are
computed off the GUI thread (:func:`compute_profile`, run by the window's job runner)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ui.clipboard import put_table
from app.ui.views_model import ColourBar, FitTextDelegate, FrameCol, FrameModel, HeatModel, heat_grid

TAB_TITLE = "Profile"


def zone_label() -> str:
    """The zone the window shows times in (View > Local time): ``UTC`` or ``local, UTC+01:00``."""
    from app.ui.time_zone import ZONE

    return ZONE.label()


def zone_mode() -> str:
    """``local`` when the window shows each system's local time, else ``utc`` (the profile's hours)."""
    from app.ui.time_zone import ZONE

    return "local" if ZONE.local else "utc"
BY_CHOICES = (("hour", "Hour of day"), ("weekday", "Day of week"), ("hour-weekday", "Hour x day of week"))
HEAT_FIRST = ("CPI", "RNI", "L1MP", "LPARCPU")
_LEVEL = {"cec": "cec", "lpar": "lpar", "class": "class", "cpu": "class"}


@dataclass
class ProfileData:
    """What a profile job hands back: the table's frame (``by``), the hour x weekday frame, the metric columns."""

    by: str
    table: pd.DataFrame
    heat: pd.DataFrame | None          # None: computed by a second job (the table is shown first)
    metrics: list[tuple[str, str, int]] = field(default_factory=list)   # (id, header, decimals) with values
    nodes: tuple = ()
    start: Any = None
    end: Any = None


def node_label(row: Any, level: str, cpu: Any = None) -> str:
    """``ZOSA``, ``ZOSA zIIP``, ``ZOSA zIIP CPU 3`` or the CEC's name for a profile row."""
    if level == "cec":
        return str(row["cec"])
    text = str(row["lpar"])
    if level == "class":
        text += f" {row['class']}"
    return text + (f" CPU {cpu}" if cpu is not None else "")


def _one(ws: Any, by: str, level: str, nodes: list | None, start, end, cpu: Any = None) -> pd.DataFrame:
    from app.engine.views import profile

    p = profile(ws, by=by, level=level, start=start, end=end, nodes=nodes, tz=zone_mode())
    if not len(p):
        return p.assign(node=pd.Series(dtype=object))
    labels = [node_label(r, level, cpu) for _, r in p.iterrows()] if level != "cec" else p["cec"].astype(str).tolist()
    return p.assign(node=labels, level=level)


def profiles(ws: Any, by: str, nodes: tuple, start=None, end=None) -> pd.DataFrame:
    """``views.profile`` of the selected nodes (grouped by tree level; a CPU node is its own row; nothing selected:
    every LPAR), with a ``node`` label column."""
    if not nodes:
        return _one(ws, by, "lpar", None, start, end)
    parts, groups = [], {}
    for key in nodes:
        if key[0] == "cpu":
            parts.append(_one(ws, by, "class", [tuple(key)], start, end, cpu=key[-1]))
        else:
            groups.setdefault(_LEVEL.get(key[0], "lpar"), []).append(tuple(key))
    for level, keys in groups.items():
        parts.insert(0, _one(ws, by, level, keys, start, end))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else _one(ws, by, "lpar", [], start, end)


def metric_columns(ws: Any, frame: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(id, header, decimals) of the presentation's metrics that have a value in ``frame``, in IBM's order."""
    from app.engine.layout import presentation_columns

    out: dict[str, tuple[str, str, int]] = {}
    gens = [g for g in dict.fromkeys(frame.get("generation", pd.Series(dtype=object)).astype(str)) if g]
    for gen in gens or ["generic"]:
        for spec in presentation_columns(gen, getattr(ws, "formula_sets", None)):
            if spec.id in frame.columns and spec.id not in out and \
                    pd.to_numeric(frame[spec.id], errors="coerce").notna().any():
                out[spec.id] = (spec.id, spec.header, spec.decimals)
    return list(out.values())


def compute_profile(ws: Any, sel: Any, by: str, heat: Any = True) -> ProfileData:
    """The Profile tab's frames for a Selection (off the GUI thread).  ``heat``: True computes the hour x weekday
    profile too, False leaves it (None) to :func:`heat_profile`, a frame is used as it is (the same selection's)."""
    table = profiles(ws, by, sel.nodes, sel.start, sel.end)
    if by == "hour-weekday":
        heat = table
    elif heat is True:
        heat = heat_profile(ws, sel)
    elif heat is False:
        heat = None
    return ProfileData(by, table, heat, metric_columns(ws, table), sel.nodes, sel.start, sel.end)


def heat_profile(ws: Any, sel: Any) -> pd.DataFrame:
    """The hour x weekday profile of a Selection's nodes (the heat map's frame)."""
    return profiles(ws, "hour-weekday", sel.nodes, sel.start, sel.end)


def table_columns(by: str, metrics: list[tuple[str, str, int]]) -> list[FrameCol]:
    cols = [FrameCol("node", "Node")]
    if by != "hour":
        cols.append(FrameCol("weekday", "Day", None, f"Day of week of the intervals' midpoints ({zone_label()})"))
    if by != "weekday":
        cols.append(FrameCol("hour", f"Hour ({zone_label()})", 0, "Hour of day of the intervals' midpoints: every "
                             "interval of that hour, of every day in the window, summed"))
    tip = "counters of every interval of the row's hour/day summed, then the formula (never a mean of ratios)"
    return cols + [FrameCol(mid, header, dec, f"{header}: {tip}") for mid, header, dec in metrics]


class ProfileTab(QWidget):
    """The table of a profile and the heat map of one metric of one node."""

    recompute_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: ProfileData | None = None
        self.by = QComboBox()
        for key, text in BY_CHOICES:
            self.by.addItem(text, key)
        self.by.setToolTip("Rows of the table: one per hour of day (0-23), per day of week, or per both")
        self.by.currentIndexChanged.connect(lambda _i: self.recompute_requested.emit())
        self.what = QLabel()
        self.what.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Profile by:"))
        top.addWidget(self.by)
        top.addWidget(self.what, 1)
        self.model = FrameModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # the heat map
        self.metric = QComboBox()
        self.metric.setToolTip("The metric the heat map colours")
        self.node = QComboBox()
        self.node.setToolTip("The node the heat map shows")
        for combo in (self.by, self.metric, self.node):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.metric.currentIndexChanged.connect(lambda _i: self.show_heat())
        self.node.currentIndexChanged.connect(lambda _i: self.show_heat())
        hrow = QHBoxLayout()
        hrow.addWidget(QLabel("Heat map:"))
        hrow.addWidget(self.metric)
        hrow.addWidget(QLabel("of"))
        hrow.addWidget(self.node)
        hrow.addStretch(1)
        self.heat_model = HeatModel()
        self.heat_model.zone = zone_label()
        self.heat = QTableView()
        self.heat.setModel(self.heat_model)
        self.heat.setItemDelegate(FitTextDelegate(self.heat))
        self.heat.setShowGrid(True)
        self.heat.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.heat.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.heat.horizontalHeader().setMinimumSectionSize(18)
        self.heat.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.heat.horizontalHeader().setToolTip(f"Hour of day ({zone_label()})")
        self.heat.verticalHeader().setToolTip("Day of week")
        self.heat.setMinimumHeight(150)
        self.x_label = QLabel(f"Hour of day ({zone_label()}) \u2192")
        self.x_label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.y_label = QLabel("Day\nof\nweek\n\u2193")
        self.y_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = ColourBar()
        grid = QHBoxLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.y_label)
        col = QVBoxLayout()
        col.setContentsMargins(0, 0, 0, 0)
        col.addWidget(self.x_label)
        col.addWidget(self.heat, 1)
        grid.addLayout(col, 1)
        heat_box = QWidget()
        hl = QVBoxLayout(heat_box)
        hl.setContentsMargins(0, 4, 0, 0)
        hl.addLayout(hrow)
        hl.addLayout(grid, 1)
        hl.addWidget(self.bar)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(heat_box)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.split, 1)
        self.show_message("Open files and select nodes in the tree: their metrics by hour of day show here.")

    def current_by(self) -> str:
        return str(self.by.currentData())

    def show_message(self, text: str) -> None:
        self.what.setText(text)

    def set_data(self, data: ProfileData) -> None:
        self.data = data
        if data.by != self.current_by():
            return    # a result of the previous choice; the new one is computed
        self.model.set_frame(data.table, table_columns(data.by, data.metrics))
        self.table.resizeColumnsToContents()
        zone = zone_label()          # the zone the hours were computed in (View > Local time)
        self.heat_model.zone = zone
        self.x_label.setText(f"Hour of day ({zone}) \u2192")
        self.heat.horizontalHeader().setToolTip(f"Hour of day ({zone})")
        from app.ui.window_chip import window_text

        nodes = list(dict.fromkeys(data.table["node"].astype(str))) if len(data.table) else []
        if not len(data.table):
            self.show_message("No intervals for the selection in this time window.")
        else:
            self.show_message(f"{', '.join(nodes[:4])}{' ...' if len(nodes) > 4 else ''}: "
                              f"{window_text(data.start, data.end)}; each row sums the counters of every interval "
                              "of its hour (all days of the window), then the formulas")
        keep_metric, keep_node = self.metric.currentData(), self.node.currentText()
        self.metric.blockSignals(True)
        self.node.blockSignals(True)
        self.metric.clear()
        ids = [m[0] for m in data.metrics]
        order = [m for m in HEAT_FIRST if m in ids] + [m for m in ids if m not in HEAT_FIRST]
        headers = {m[0]: m[1] for m in data.metrics}
        for mid in order:
            self.metric.addItem(headers[mid], mid)
        i = self.metric.findData(keep_metric)
        self.metric.setCurrentIndex(i if i >= 0 else 0)
        self.node.clear()
        self.node.addItems(nodes)
        j = self.node.findText(keep_node)
        self.node.setCurrentIndex(j if j >= 0 else 0)
        self.node.setEnabled(len(nodes) > 1)
        self.metric.blockSignals(False)
        self.node.blockSignals(False)
        self.show_heat()

    def show_heat(self) -> None:
        data = self.data
        metric = self.metric.currentData()
        if data is None or metric is None:
            self.heat_model.set_grid(np.full((7, 24), np.nan), "", None)
            self.bar.set_range(np.nan, np.nan, None, "")
            return
        if data.heat is None:
            self.heat_model.set_grid(np.full((7, 24), np.nan), "", None)
            self.bar.set_range(np.nan, np.nan, None, "Computing the heat map...")
            return
        node = self.node.currentText()
        part = data.heat[data.heat["node"].astype(str) == node] if len(data.heat) else data.heat
        dec = next((m[2] for m in data.metrics if m[0] == metric), 2)
        header = self.metric.currentText()
        self.heat_model.set_grid(heat_grid(part, metric), header, dec, node)
        self.bar.set_range(self.heat_model.lo, self.heat_model.hi, dec, f"{header} of {node}")

    def set_heat(self, frame: pd.DataFrame) -> None:
        """The hour x weekday frame of the data on show, computed after its table."""
        if self.data is not None:
            self.data.heat = frame
            self.show_heat()

    def copy_table(self) -> int:
        """The profile table to the clipboard (TSV + HTML, as shown); returns the rows copied."""
        rows = range(self.model.rowCount())
        cols = range(self.model.columnCount())
        put_table([self.model.columns[c].header for c in cols], [[self.model.text(r, c) for c in cols] for r in rows])
        return len(rows)

    def copy_heat(self) -> int:
        """The heat map's grid (days down, hours across; empty cells empty) to the clipboard; returns 7."""
        hm = self.heat_model
        put_table([f"{hm.metric} {hm.node}".strip()] + [f"{h:02d}" for h in range(24)],
                  [[hm.headerData(d, Qt.Orientation.Vertical)] + [hm.data(hm.index(d, h)) for h in range(24)]
                   for d in range(7)])
        return 7


__all__ = ["ProfileTab", "ProfileData", "compute_profile", "heat_profile", "profiles", "metric_columns", "TAB_TITLE"]
