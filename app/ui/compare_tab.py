"""The Compare tab: two selections ("before", "after") side by side, the CPI waterfall, overlaid timelines.

All numbers come from :mod:`app.engine.compare` (``compare``, ``Comparison.table``/``marks``/``cpi``,
``waterfall``, ``relative_axis``, ``node_labels``); this module only shows them.  The comparison is
computed off the GUI thread through the window's SerialRunner (:class:`app.ui.compare_jobs.WorkspaceJobs`),
the one place that touches the Workspace.

:func:`app.ui.compare_controller.install` hooks everything of issue 10 into a MainWindow: the tab, "Set as
before/after" in the tree's context menu, File > Export (Ctrl+E, :mod:`app.ui.export_dialog`), right-click >
Export on the interval table, and picture export on the timeline plots (:mod:`app.ui.plot_export`).

The tab's parts live in their own modules: :mod:`app.ui.compare_model` (sides, computation, table model),
:mod:`app.ui.compare_charts` (waterfall, fitted axis, overlay), :mod:`app.ui.compare_sides` (the side boxes),
:mod:`app.ui.compare_jobs` (jobs over the workspace) and :mod:`app.ui.compare_controller` (the wiring).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.engine.compare import RATIO_NOTE, Comparison
from app.engine.shift import ShiftError
from app.ui.compare_charts import OVERLAY_METRICS, FittedAxis, apply_plot_theme, draw_overlay, draw_waterfall, \
    waterfall_text
from app.ui.compare_model import MARK, SIDES, CompareData, CompareModel, Side, _ts
from app.ui.compare_sides import SideBox
from app.ui.palette import error_style

TAB_TITLE = "Compare"
BY_TEXT = {"lpar": "per LPAR", "class": "per processor class"}
HINT = ("Nothing to compare yet. Right-click an LPAR (or a class, or several) in the Machines tree and choose "
        "'Set as before', then another and 'Set as after' (or hold Shift / Ctrl while dragging the time-window "
        "region of the Timelines: that window of the selected nodes becomes the before / after side). The time "
        "window at that moment becomes the side's window; hours and days filter a shift (e.g. 08-17, mon-fri).")
NARROW = 900   # tab width (px) below which the charts are laid out for a small window


class CompareTab(QWidget):
    """Before/after table, CPI waterfall and overlaid timelines of two selections."""

    compare_requested = Signal()
    status = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: CompareData | None = None
        self.boxes = {s: SideBox(s) for s in SIDES}
        for b in self.boxes.values():
            b.changed.connect(self.request)
        self.by = QComboBox()
        for key, text in BY_TEXT.items():
            self.by.addItem(text, key)
        self.by.setToolTip("Pair the two sides per LPAR or per LPAR and processor class")
        self.by.currentIndexChanged.connect(lambda _i: self.request())
        self.all_columns = QCheckBox("All columns")
        self.all_columns.setToolTip("Show the TLB, MT and other columns too (default: the presentation's main "
                                    "columns)")
        self.all_columns.toggled.connect(lambda _on: self._show_table())
        self.swap = QPushButton("Swap")
        self.swap.setToolTip("Exchange before and after")
        self.swap.clicked.connect(self.swap_sides)
        self.note = QLabel(RATIO_NOTE)
        self.note.setWordWrap(True)
        self.note.setObjectName("compare_ratio_note")
        self.message = QLabel(HINT)
        self.message.setWordWrap(True)
        self.message.setObjectName("compare_message")
        self.model = CompareModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(21)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._table_menu)
        self.table_actions: list[QAction | None] = []
        # waterfall
        self.pair = QComboBox()
        self.pair.setToolTip("The LPAR pair (or LPAR and processor class pair) whose CPI change the waterfall splits")
        self.pair.currentIndexChanged.connect(lambda _i: self._show_pair())
        self.wf_view = pg.PlotWidget(background="w", axisItems={"left": FittedAxis()})
        self.wf_plot = self.wf_view.getPlotItem()
        self.wf_plot.setMenuEnabled(False)
        self.wf_plot.hideButtons()
        self.wf_plot.setMouseEnabled(x=False, y=False)
        self.wf_plot.getAxis("bottom").setHeight(38)
        self.wf_plot.showGrid(y=True, alpha=0.25)
        self.wf_numbers = QLabel()
        self.wf_numbers.setTextFormat(Qt.TextFormat.RichText)
        self.wf_numbers.setWordWrap(True)
        self.wf_numbers.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.wf_numbers.setMinimumWidth(210)
        self.wf_numbers.setMaximumWidth(290)
        self.wf_numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # overlay
        self.metric_box = QComboBox()
        self.metric_box.currentIndexChanged.connect(lambda _i: self._show_overlay())
        self.ov_view = pg.PlotWidget(background="w")
        self.ov_plot = self.ov_view.getPlotItem()
        self.ov_plot.setMenuEnabled(False)
        self.ov_plot.showGrid(x=True, y=True, alpha=0.25)
        for v in (self.wf_view, self.ov_view):
            apply_plot_theme(v, False)
        self._build()
        self._clear_charts()

    def _build(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.boxes["before"], 1)
        top.addWidget(self.boxes["after"], 1)
        opts = QHBoxLayout()
        opts.addWidget(self.by)
        opts.addWidget(self.all_columns)
        opts.addWidget(self.swap)
        opts.addWidget(self.note, 1)
        self.wf_head = QWidget()   # the charts' controls: left out of the charts' pictures (picture_controls)
        wf_head = QHBoxLayout(self.wf_head)
        wf_head.setContentsMargins(0, 0, 0, 0)
        wf_head.addWidget(QLabel("CPI change of"))
        wf_head.addWidget(self.pair, 1)
        wf_body = QHBoxLayout()
        wf_body.addWidget(self.wf_view, 1)
        wf_body.addWidget(self.wf_numbers)
        self.charts = QWidget()   # the two charts: one picture when exported
        wf_box = QWidget()
        wl = QVBoxLayout(wf_box)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.addWidget(self.wf_head)
        wl.addLayout(wf_body, 1)
        self.ov_head = QWidget()
        ov_head = QHBoxLayout(self.ov_head)
        ov_head.setContentsMargins(0, 0, 0, 0)
        ov_head.addWidget(QLabel("Timelines of"))
        ov_head.addWidget(self.metric_box, 1)
        ov_box = QWidget()
        ol = QVBoxLayout(ov_box)
        ol.setContentsMargins(0, 0, 0, 0)
        ol.addWidget(self.ov_head)
        ol.addWidget(self.ov_view, 1)
        cl = QHBoxLayout(self.charts)
        cl.setContentsMargins(0, 0, 0, 0)
        self.chart_split = QSplitter(Qt.Orientation.Horizontal)
        self.chart_split.addWidget(wf_box)
        self.chart_split.addWidget(ov_box)
        self.chart_split.setStretchFactor(0, 5)
        self.chart_split.setStretchFactor(1, 4)
        cl.addWidget(self.chart_split)
        # a picture of the charts (File > Export, right-click, export --out X.png) holds the charts, their titles
        # and legends and the numbers, not the combo boxes that choose them nor the splitter's grip dots
        # (app.ui.plot_export hides these while it paints)
        self.charts.picture_controls = [self.wf_head, self.ov_head, self.chart_split.handle(1)]
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.charts)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addLayout(opts)
        lay.addWidget(self.message)
        lay.addWidget(self.split, 1)

    # -- state -----------------------------------------------------------------------------------
    def side(self, name: str) -> Side:
        return self.boxes[name].side()

    @property
    def comparison(self) -> Comparison | None:
        return self.data.comparison if self.data is not None else None

    def current_by(self) -> str:
        return str(self.by.currentData() or "lpar")

    def is_set(self) -> bool:
        return all(self.boxes[s].nodes for s in SIDES)

    def set_side(self, name: str, nodes, start=None, end=None, hours: str = "", days: str = "") -> None:
        """Set one side (tree nodes, window, shift texts) and recompute when both are set."""
        self.boxes[name].set_side(Side(tuple(tuple(n) for n in nodes), _ts(start), _ts(end), hours, days))
        self.request()

    def set_by(self, by: str) -> None:
        i = self.by.findData(by)
        if i >= 0:
            self.by.setCurrentIndex(i)

    def swap_sides(self) -> None:
        try:
            b, a = self.side("before"), self.side("after")
        except (ValueError, ShiftError):
            b = Side(self.boxes["before"].nodes)
            a = Side(self.boxes["after"].nodes)
        self.boxes["before"].set_side(a)
        self.boxes["after"].set_side(b)
        self.request()

    def state(self) -> dict | None:
        """JSON-able state (saved in workspace files); None when nothing is set."""
        if not any(self.boxes[s].nodes for s in SIDES):
            return None
        out: dict[str, Any] = {"by": self.current_by()}
        for s in SIDES:
            try:
                out[s] = self.side(s).to_json()
            except (ValueError, ShiftError):
                out[s] = Side(self.boxes[s].nodes).to_json()
        return out

    def restore(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        self.by.blockSignals(True)
        self.set_by(str(doc.get("by") or "lpar"))
        self.by.blockSignals(False)
        for s in SIDES:
            self.boxes[s].set_side(Side.from_json(doc.get(s)))
        self.request()

    # -- computing -------------------------------------------------------------------------------
    def request(self) -> None:
        """Ask for a recomputation (the window runs :func:`compute_compare`)."""
        if not self.is_set():
            missing = [s for s in SIDES if not self.boxes[s].nodes]
            self.show_message(HINT if len(missing) == 2 else
                              f"Set the {missing[0]} side too: right-click a node in the Machines tree, "
                              f"'Set as {missing[0]}'.")
            return
        try:
            for s in SIDES:
                self.side(s)
        except (ValueError, ShiftError) as exc:
            self.show_message(str(exc), error=True)
            return
        self.show_message("Computing the comparison...")
        self.compare_requested.emit()

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self._message_error = error
        self.message.setStyleSheet(error_style(error))
        self.message.setVisible(bool(text))

    def set_data(self, data: CompareData) -> None:
        self.data = data
        cmp = data.comparison
        for s in SIDES:
            desc = data.describe.get(s, "")
            self.boxes[s].what.setText(desc)
            self.boxes[s].what.setToolTip(desc)
        self.note.setText(f"<b>ratio = before / after</b> (as IBM's '% improvement' rows: CPI 8.2 before, 7.5 "
                          f"after gives 1.09); delta = after - before. {MARK} italic: the formula differs between "
                          f"the generations (see the header's tooltip).")
        self.note.setToolTip(cmp.ratio_note)
        empty = [s for s in SIDES if not len(cmp.table) or not (cmp.table["row"].eq(s)
                                                                & cmp.table["CPI"].notna()).any()]
        self.show_message(f"No intervals on the {' and '.join(empty)} side (check its window and shift)."
                          if empty else "", error=bool(empty))
        self._show_table()
        chosen = self.pair.currentData()   # the analyst's pair stays chosen when the comparison is computed again
        self.pair.blockSignals(True)
        self.pair.clear()
        for p in (cmp.cpi["pair"].tolist() if len(cmp.cpi) else []):
            self.pair.addItem(str(p), p)
        self.pair.setCurrentIndex(max(self.pair.findData(chosen), 0) if chosen is not None else 0)
        self.pair.blockSignals(False)
        self._show_waterfall()
        current = self.metric_box.currentData()
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        heads = {c.id: c.header for c in cmp.columns}
        axis = data.axis
        for mid in OVERLAY_METRICS:
            if axis is not None and any(mid in f.columns and pd.to_numeric(f[mid], errors="coerce").notna().any()
                                        for f in (axis.before, axis.after)):
                self.metric_box.addItem(heads.get(mid, mid), mid)
        i = self.metric_box.findData(current)
        self.metric_box.setCurrentIndex(max(i, 0))
        self.metric_box.blockSignals(False)
        self._show_overlay()

    def show_failure(self, text: str) -> None:
        self.show_message(f"The comparison could not be computed: {text}", error=True)

    def _show_table(self) -> None:
        self.model.set_comparison(self.comparison, self.all_columns.isChecked())
        rows = self.model.rowCount()
        head = self.table.horizontalHeader().sizeHint().height()
        want = head + rows * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth() + 18
        self.table.setMinimumHeight(min(want, 260))
        total = max(self.split.height(), 400)
        self.split.setSizes([min(want, total // 2), total - min(want, total // 2)])

    def apply_theme(self, dark: bool) -> None:
        """Follow the window's light / dark palette (View > Dark)."""
        for v in (self.wf_view, self.ov_view):
            apply_plot_theme(v, dark)
        for box in self.boxes.values():
            box.apply_theme()
        self.message.setStyleSheet(error_style(getattr(self, "_message_error", False)))
        self.model.dark = dark
        self.table.viewport().update()
        self._show_waterfall()
        self._show_overlay()

    def _clear_charts(self) -> None:
        draw_waterfall(self.wf_plot, pd.DataFrame(), "CPI change decomposition")
        self.wf_numbers.setText("")
        draw_overlay(self.ov_plot, None, "CPI", "CPI")

    def _show_waterfall(self) -> None:
        cmp = self.comparison
        if cmp is None or not len(cmp.cpi):
            self._clear_charts()
            return
        pair = self.pair.currentData()
        rec = cmp.cpi.loc[cmp.cpi["pair"] == pair].iloc[0] if pair is not None else cmp.cpi.iloc[0]
        wf = cmp.waterfall(rec["pair"])
        gens = (str(rec.get("generation_before") or ""), str(rec.get("generation_after") or ""))
        self._wf_labels = draw_waterfall(self.wf_plot, wf, f"CPI change: {rec['pair']} ({gens[0]} \u2192 {gens[1]})")
        self._fit_wf_labels()
        self.wf_numbers.setText(waterfall_text(dict(rec), gens))

    def _show_overlay(self) -> None:
        data = self.data
        mid = self.metric_box.currentData() or "CPI"
        head = self.metric_box.currentText() or mid
        draw_overlay(self.ov_plot, data.axis if data is not None else None, mid, head, self.shown_pair())

    def _show_pair(self) -> None:
        """The pair box: both charts follow it."""
        self._show_waterfall()
        self._show_overlay()

    def shown_pair(self) -> str | None:
        """The pair both charts show (the waterfall's; None: no comparison)."""
        cmp = self.comparison
        if cmp is None or not len(cmp.cpi):
            return None
        pair = self.pair.currentData()
        return str(pair if pair is not None else cmp.cpi.iloc[0]["pair"])

    def _fit_wf_labels(self) -> None:
        """Values on the bars only when the bars are wide enough to hold them (they are beside the chart too)."""
        labels = getattr(self, "_wf_labels", [])
        if not labels:
            return
        per_bar = (self.wf_view.width() - 70) / max(len(labels), 1)
        for item in labels:
            item.setVisible(per_bar >= 50)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        narrow = self.width() < NARROW
        if narrow != getattr(self, "_narrow", None):   # small windows: the waterfall gets more of the width
            self._narrow = narrow
            self.wf_numbers.setMinimumWidth(175 if narrow else 210)
            self.wf_numbers.setStyleSheet("QLabel { font-size: 8pt; }" if narrow else "")
            font = QFont()
            font.setPointSizeF(7.5 if narrow else 9)
            self.wf_plot.getAxis("bottom").setStyle(tickFont=font)
            total = max(self.chart_split.width(), 200)
            share = 0.64 if narrow else 0.55
            self.chart_split.setSizes([int(total * share), total - int(total * share)])
        self._fit_wf_labels()

    def pairs(self) -> list[str]:
        """The pairs the waterfall can show (the pair combo's entries)."""
        return [str(self.pair.itemData(i)) for i in range(self.pair.count())]

    def set_pair(self, name: str) -> bool:
        """Show the waterfall of pair ``name`` (case and spacing aside, "/" read as a space: "zosb", "ZOSA zIIP",
        "ZOSA/zIIP"); False when the comparison has no such pair."""
        def norm(text: str) -> str:
            return " ".join(str(text).replace("/", " ").split()).upper()

        want = norm(name)
        i = next((k for k, p in enumerate(self.pairs()) if norm(p) == want), -1)
        if i < 0:
            return False
        self.pair.setCurrentIndex(i)
        return True

    def waterfall_frame(self) -> pd.DataFrame:
        """The waterfall steps shown now (for tests and exports)."""
        cmp = self.comparison
        if cmp is None:
            return pd.DataFrame()
        return cmp.waterfall(self.pair.currentData())

    # -- menus -----------------------------------------------------------------------------------
    def _table_menu(self, pos) -> None:
        menu = QMenu(self)
        menu.addAction("Copy the comparison table", self.copy_table)
        for a in self.table_actions:
            if a is None:
                menu.addSeparator()
            else:
                menu.addAction(a)
        menu.exec(self.table.viewport().mapToGlobal(pos))

    def copy_table(self) -> str:
        from app.ui.clipboard import put_table

        headers, body = self.model.table_texts()
        return put_table(headers, body)


__all__ = ["CompareTab", "TAB_TITLE", "BY_TEXT", "HINT"]
