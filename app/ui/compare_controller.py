"""Wiring the Compare tab into the window: tree menu "Set as before/after", jobs, File > Export, plot menus."""

from __future__ import annotations

from typing import Any

import pandas as pd
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu

from app.engine.shift import ShiftError
from app.ui.compare_jobs import WorkspaceJobs, _Tagged
from app.ui.compare_model import CompareData, compute_compare
from app.ui.compare_sides import _nodes_text
from app.ui.compare_tab import TAB_TITLE, CompareTab


def side_for_modifiers(mods: Any) -> str | None:
    """Shift while dragging the timelines' region sets "before", Ctrl (Cmd on macOS) sets "after"."""
    if mods & Qt.KeyboardModifier.ShiftModifier:
        return "before"
    if mods & Qt.KeyboardModifier.ControlModifier:
        return "after"
    return None


class CompareController(QObject):
    """Connects the tab to the window: tree menu, jobs, export action, plot menus."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.jobs = WorkspaceJobs(window)
        self.tab = CompareTab()
        self._token: object | None = None
        self._dirty = False
        i = window.tabs.indexOf(window.timeline)
        window.tabs.insertTab(i + 1 if i >= 0 else window.tabs.count(), self.tab, TAB_TITLE)
        self.tab.compare_requested.connect(self.recompute)
        self.tab.status.connect(self.status)
        # tree: Set as before / after
        view = window.tree.view
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._tree_menu)
        # File > Export (Ctrl+E)
        act = window.actions_.export
        act.setEnabled(True)
        tip = "Export the table, the comparison or a whole deck as CSV, XLSX, PPTX, PNG or SVG"
        act.setToolTip(tip)
        act.setStatusTip(tip)
        act.triggered.connect(lambda: self.export_dialog())
        export_table = QAction("Export...", window)
        export_table.setToolTip("Export this table (CSV, XLSX, PPTX) or a picture of the timelines")
        export_table.triggered.connect(lambda: self.export_dialog("table"))
        window.table.body_actions = [*window.table.body_actions, None, export_table]
        export_cmp = QAction("Export the comparison...", window)
        export_cmp.triggered.connect(lambda: self.export_dialog("comparison"))
        self.tab.table_actions = [None, export_cmp]
        # pictures of plots
        from app.ui.plot_export import install_plot_menu

        when_made = getattr(window.timeline, "when_made", None)   # the timelines' view is made when first needed
        (when_made or (lambda fn: fn(window.timeline)))(self._timeline_made)
        install_plot_menu(self.tab.wf_view, lambda: [self.tab.wf_plot], panel=self.tab.charts,
                          name="cpi_waterfall", status=self.status)
        install_plot_menu(self.tab.ov_view, lambda: [self.tab.ov_plot], panel=self.tab.charts,
                          name="compare_timelines", status=self.status)
        # workspace files save / restore the comparison
        # Edit > Copy (Ctrl+C) copies the comparison table while the Compare tab is shown
        copy = window.actions_.copy
        try:
            copy.triggered.disconnect(window.copy)
            copy.triggered.connect(self.copy)
        except (RuntimeError, TypeError):
            pass
        window.actions_.dark.toggled.connect(self.tab.apply_theme)
        if window.actions_.dark.isChecked():
            self.tab.apply_theme(True)
        window.comparison_state = self.tab.state
        window.restore_comparison = self.tab.restore
        window.show_comparison_sides = self.show_sides
        window.runner.done.connect(self._on_view)
        window.tabs.currentChanged.connect(self._on_tab)

    def status(self, text: str) -> None:
        self.w.statusBar().showMessage(text, 8000)

    def _tree_menu(self, pos) -> None:
        self.tree_menu(pos).exec(self.w.tree.view.viewport().mapToGlobal(pos))

    def tree_menu(self, pos) -> QMenu:
        """The tree's context menu at ``pos``: Set as before / after (the selected rows, or the row clicked)."""
        view = self.w.tree.view
        idx = view.indexAt(pos)
        keys = self.w.tree.selected_keys()
        from app.ui.roles import Role

        key = idx.data(Role.NODE_KEY) if idx.isValid() else None
        if key and tuple(key) not in keys:
            keys = [tuple(key)]
        menu = QMenu(view)
        a = menu.addAction("Set as before", lambda: self.set_side("before", keys))
        b = menu.addAction("Set as after", lambda: self.set_side("after", keys))
        a.setEnabled(bool(keys))
        b.setEnabled(bool(keys))
        a.setToolTip("Compare: the selected nodes with the current time window become the before side")
        for add_actions in getattr(self.w, "tree_menu_hooks", ()):   # other views' entries (views_controller)
            add_actions(menu, keys)
        menu.addSeparator()
        menu.addAction("Copy", self.w.tree.copy_selection)
        return menu

    def copy(self, *_args) -> None:
        """Ctrl+C: the comparison table on the Compare tab (unless the tree has the focus), else the window's copy."""
        focus = QApplication.focusWidget()
        tree = self.w.tree.view
        in_tree = focus is not None and (focus is tree or tree.isAncestorOf(focus))
        if self.w.tabs.currentWidget() is self.tab and not in_tree and self.tab.comparison is not None:
            self.tab.copy_table()
            self.status(f"Copied the comparison table ({self.tab.model.rowCount()} rows)")
            return
        self.w.copy()

    def _timeline_made(self, tl: Any) -> None:
        """The timelines' picture menu and their region's Shift/Ctrl-drag (once their view exists)."""
        from app.ui.plot_export import install_plot_menu

        install_plot_menu(tl.glw, lambda: list(tl._data_plots().values()), panel=tl.glw, name="timelines",
                          status=self.status, header=self.timeline_header)
        # Shift-drag / Ctrl-drag of the timelines' window region: that window of the selection becomes a side
        tl.region.sigRegionChangeFinished.connect(self._region_dragged)
        tl.region.setToolTip("Drag to choose the time window; hold Shift while dragging to also set the selected "
                             "nodes over this window as the comparison's before side, Ctrl for the after side")

    def timeline_header(self) -> str:
        """The timelines' node legend (a label above the plots on screen) for their pictures."""
        legend = getattr(self.w.timeline, "legend", None)
        return legend.text() if legend is not None and legend.text() and not legend.isHidden() else ""

    def _region_dragged(self, *_args) -> None:
        side = side_for_modifiers(QApplication.keyboardModifiers())
        if side is None:
            return
        lo, hi = self.w.timeline.region.getRegion()
        nodes = list(self.w.selection.value.nodes)
        if not nodes or hi <= lo:
            return
        self.set_side(side, nodes, pd.Timestamp(lo, unit="s", tz="UTC"), pd.Timestamp(hi, unit="s", tz="UTC"))

    def set_side(self, name: str, keys: list[tuple], start: Any = "window", end: Any = "window") -> None:
        """The tree nodes ``keys`` with the window's current time window become side ``name``."""
        keys = [tuple(k) for k in keys if k]
        if not keys:
            return
        sel = self.w.selection.value
        if isinstance(start, str):   # default: the window's current time window
            start, end = sel.start, sel.end
        old = self.tab.boxes[name]
        self.tab.set_side(name, keys, start, end, old.hours.text().strip(), old.days.text().strip())
        other = "after" if name == "before" else "before"
        if self.tab.is_set():
            self.w.tabs.setCurrentWidget(self.tab)
            self.status(f"Comparing: {name} set to {_nodes_text(tuple(keys))}")
        else:
            self.status(f"{name.capitalize()}: {_nodes_text(tuple(keys))}. Now set the {other} side "
                        f"(right-click a node, 'Set as {other}').")

    def recompute(self) -> None:
        if not self.w.ws.files:
            self.tab.show_message("Open files first.", error=True)
            return
        try:
            before, after = self.tab.side("before"), self.tab.side("after")
        except (ValueError, ShiftError) as exc:
            self.tab.show_message(str(exc), error=True)
            return
        by = self.tab.current_by()
        ws = self.w.ws
        if self._token is not None:
            self.jobs.discard(self._token)
        self._token = self.jobs.run(lambda: compute_compare(ws, before, after, by), self._done, self._failed)

    def _done(self, data: CompareData) -> None:
        self._token = None
        self.tab.set_data(data)

    def _failed(self, text: str, details: str) -> None:
        self._token = None
        self.tab.show_failure(text)
        self.w._unexpected(f"Compare: {text}", details)

    def busy(self) -> bool:
        return self._token is not None

    def show_sides(self, doc: Any) -> None:
        """Open Workspace: the saved comparison's sides on the Compare tab at once, shown while the workspace's
        files are read; it is computed once they are (``restore_comparison``, issue 23)."""
        if not isinstance(doc, dict):
            return
        from app.ui.compare_model import SIDES, Side

        self.tab.by.blockSignals(True)
        self.tab.set_by(str(doc.get("by") or "lpar"))
        self.tab.by.blockSignals(False)
        for s in SIDES:
            self.tab.boxes[s].set_side(Side.from_json(doc.get(s)))
        if self.tab.is_set():
            self._dirty = False
            self.tab.show_message("Reading the workspace's files; the comparison follows.")
            self.w.tabs.setCurrentWidget(self.tab)

    def _on_view(self, view: Any) -> None:
        """New files were added: the comparison is recomputed (now when its tab is shown, else when it is); while
        a workspace's files are read, once they all are (its restore asks for it)."""
        if isinstance(view, _Tagged) or not getattr(view, "added", None) or not self.tab.is_set():
            return
        if getattr(self.w, "_ws_pending", None) is not None:
            return
        if self.w.tabs.currentWidget() is self.tab:
            self.tab.request()
        else:
            self._dirty = True

    def _on_tab(self, _i: int) -> None:
        if self._dirty and self.w.tabs.currentWidget() is self.tab:
            self._dirty = False
            self.tab.request()

    def export_dialog(self, what: str | None = None):
        """File > Export: the dialog (one per window, kept between uses)."""
        from app.ui.export_dialog import ExportDialog

        if what is None:
            what = "comparison" if self.w.tabs.currentWidget() is self.tab and self.tab.comparison else "table"
        dlg = getattr(self, "dialog", None)
        if dlg is None:
            dlg = self.dialog = ExportDialog(self.w, self, what=what)
        elif not dlg.running():
            dlg.reset(what)   # no "Written..." of the last run, a file name that names what is exported
        dlg.show()
        dlg.raise_()
        return dlg


def install(window: Any) -> CompareController:
    """Add the Compare tab, Set as before/after, File > Export and plot pictures to ``window``."""
    ctl = CompareController(window)
    window.compare = ctl
    return ctl


__all__ = ["install", "CompareController", "side_for_modifiers"]
