"""Wiring the Profile and Rankings & peaks tabs into the window (issue 26): their jobs run through the window's
job runner (never two jobs over the Workspace at once), only while the tab is shown; they follow the tree selection
and the time window.  A click on a peak sets the time window; that window does not re-run the peak search (the
list stays, so the next peak is one click away)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer

from app.ui.profile_tab import TAB_TITLE as PROFILE_TITLE
from app.ui.profile_tab import ProfileTab, compute_profile, heat_profile
from app.ui.rank_tab import TAB_TITLE as RANK_TITLE
from app.ui.rank_tab import RankPeaksTab, compute_peaks, compute_ranking, peak_level, ranking_parent

PEAK_CONTEXT_S = 3 * 3600     # the timelines show at least this much either side of a double-clicked peak


class ViewsController(QObject):
    """Computes what the two tabs show, when they are shown."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.jobs = window.compare.jobs       # the window's one WorkspaceJobs (compare_controller installs it)
        self.profile = ProfileTab()
        self.rank = RankPeaksTab()
        i = window.tabs.indexOf(window.timeline)
        window.tabs.insertTab(i + 1, self.profile, PROFILE_TITLE)
        window.tabs.insertTab(i + 2, self.rank, RANK_TITLE)
        self._tokens: dict[str, object] = {}
        self._stale = {"profile", "rank", "peaks"}
        self._peak_window: tuple | None = None    # the window a peak click set (it does not re-run the search)
        self._search: tuple = (None, None)        # the window the peaks on show were searched in
        self._keep_peaks = False                  # a peak's node being selected: the list stays
        self._zoom_to: tuple[float, float] | None = None   # a peak to show on the timelines once they are drawn
        self._heat: tuple[tuple, Any] | None = None   # (selection key, hour x weekday frame): kept while it holds
        self.profile.recompute_requested.connect(lambda: self.request("profile"))
        self.rank.rank_requested.connect(lambda: self.request("rank"))
        self.rank.peaks_requested.connect(lambda: self.request("peaks"))
        self.rank.node_activated.connect(self.select_node)
        self.rank.peak_clicked.connect(self.go_to_peak)
        self.rank.peak_activated.connect(self.show_peak)
        window.selection.nodes_changed.connect(self._nodes_changed)
        window.selection.window_changed.connect(self._window_changed)
        window.runner.done.connect(self._on_view)
        window.runner.idle.connect(self._zoom_timelines)
        window.tabs.currentChanged.connect(lambda _i: self.refresh())
        window.tree_menu_hooks = [*getattr(window, "tree_menu_hooks", ()), self.add_tree_actions]
        copy = window.actions_.copy       # Edit > Copy (Ctrl+C): these tabs' tables while they are shown
        try:
            copy.triggered.disconnect(window.compare.copy)
        except (RuntimeError, TypeError):
            pass
        copy.triggered.connect(self.copy)

    # -- when -----------------------------------------------------------------------------------
    def _nodes_changed(self, sel: Any) -> None:
        self._stale |= {"profile", "rank"}
        if not self._keep_peaks:
            self.rank.set_peak_level(peak_level(sel.nodes))
            self._stale.add("peaks")
        self.refresh()

    def _window_changed(self, sel: Any) -> None:
        self._stale |= {"profile", "rank"}
        if (sel.start, sel.end) != self._peak_window:
            self._peak_window = None
            self._stale.add("peaks")
        self.refresh()

    def _on_view(self, view: Any) -> None:
        if getattr(view, "added", None):          # new files: everything is stale
            self._heat = None
            self._stale |= {"profile", "rank", "peaks"}
            self.refresh()

    def refresh(self) -> None:
        """Recompute what the current tab shows and is stale."""
        current = self.w.tabs.currentWidget()
        if current is self.profile and "profile" in self._stale:
            self.request("profile")
        elif current is self.rank:
            for what in ("rank", "peaks"):
                if what in self._stale:
                    self.request(what)

    # -- jobs ----------------------------------------------------------------------------------
    def request(self, what: str) -> None:
        if not self.w.ws.files or not self.w.loaded():
            self._stale.add(what)
            return
        self._stale.discard(what)
        ws, sel = self.w.ws, self.w.selection.value
        if what == "profile":
            by = self.profile.current_by()
            key = (sel.nodes, sel.start, sel.end)
            heat = self._heat[1] if self._heat is not None and self._heat[0] == key else False
            fn = lambda: compute_profile(ws, sel, by, heat)  # noqa: E731
            self.profile.show_message("Computing the profile...")
        elif what == "heat":      # after the table: the hour x weekday profile (seven times its buckets)
            fn = lambda: heat_profile(ws, sel)  # noqa: E731
        elif what == "rank":
            parent, metric = ranking_parent(sel.nodes), self.rank.rank_choice()
            fn = lambda: compute_ranking(ws, parent, metric, sel.start, sel.end)  # noqa: E731
        else:
            metric, level, top = self.rank.peak_choice()
            if not self._peak_window:
                self._search = (sel.start, sel.end)
            start, end = self._search
            sel = type(sel)(sel.nodes, start, end)
            fn = lambda: compute_peaks(ws, sel.nodes, metric, level, top, start, end)  # noqa: E731
        old = self._tokens.pop(what, None)
        if old is not None:
            self.jobs.discard(old)
        self._tokens[what] = self.jobs.run(fn, lambda data, what=what, sel=sel: self._done(what, data, sel),
                                           lambda text, details, what=what: self._failed(what, text, details))

    def _done(self, what: str, data: Any, sel: Any) -> None:
        from app.ui.window_chip import window_text

        self._tokens.pop(what, None)
        window = window_text(sel.start, sel.end)
        key = (sel.nodes, sel.start, sel.end)
        if what == "profile":
            self.profile.set_data(data)
            if data.heat is None:
                self.request("heat")
            else:
                self._heat = (key, data.heat)
        elif what == "heat":
            self._heat = (key, data)
            if self.profile.data is not None and (self.profile.data.nodes, self.profile.data.start,
                                                  self.profile.data.end) == key:
                self.profile.set_heat(data)
        elif what == "rank":
            self.rank.set_ranking(data, window)
        else:
            self.rank.set_peaks(data, window)

    def _failed(self, what: str, text: str, details: str) -> None:
        self._tokens.pop(what, None)
        self.w._unexpected(f"{'Profile' if what in ('profile', 'heat') else 'Rankings & peaks'}: {text}", details)

    def busy(self) -> bool:
        return bool(self._tokens)

    def copy(self, *_args) -> None:
        """Ctrl+C on the Profile tab: its table (the heat map's grid when that has the focus); on Rankings & peaks:
        the table with the focus (the peaks by default); elsewhere the window's (and Compare's) copy."""
        from PySide6.QtWidgets import QApplication

        focus = QApplication.focusWidget()
        current = self.w.tabs.currentWidget()
        tree = self.w.tree.view
        if focus is not None and (focus is tree or tree.isAncestorOf(focus)) or current not in (self.profile,
                                                                                                self.rank):
            self.w.compare.copy()
            return
        if current is self.profile:
            heat = focus is not None and (focus is self.profile.heat or self.profile.heat.isAncestorOf(focus))
            n = self.profile.copy_heat() if heat else self.profile.copy_table()
            what = "heat map" if heat else "profile table"
        else:
            ranked = focus is not None and (focus is self.rank.rank_view or self.rank.rank_view.isAncestorOf(focus))
            n = self.rank.copy_table(ranked)
            what = "ranking" if ranked else "peaks"
        self.w.statusBar().showMessage(f"Copied the {what} ({n} rows)", 8000)

    # -- the tree's context menu -------------------------------------------------------------------
    def add_tree_actions(self, menu: Any, keys: list) -> None:
        """Rank children by... (a CEC or an LPAR) and Peak intervals by... (any node): one click to the answer."""
        from app.ui.rank_tab import METRICS

        keys = [tuple(k) for k in keys]
        menu.addSeparator()
        rank = menu.addMenu("Rank children by")
        peak = menu.addMenu("Peak intervals by")
        for metric in METRICS[:4]:
            rank.addAction(metric, lambda m=metric: self.rank_by(keys, m))
            peak.addAction(metric, lambda m=metric: self.peaks_by(keys, m))
        rank.setEnabled(ranking_parent(tuple(keys)) is not None)
        rank.setToolTip("The LPARs of a CEC, or the processor classes of an LPAR, largest first")
        peak.setEnabled(bool(keys))

    def _focus(self, keys: list) -> None:
        if keys and tuple(keys) != self.w.selection.value.nodes:
            self.w.tree.select_keys(keys)
            self.w.selection.set_nodes(keys)
        self.w.tabs.setCurrentWidget(self.rank)

    def rank_by(self, keys: list, metric: str) -> None:
        """Tree menu: select ``keys``, show the ranking by ``metric``."""
        combo = self.rank.rank_metric
        combo.blockSignals(True)
        combo.setCurrentIndex(max(0, combo.findData(metric)))
        combo.blockSignals(False)
        self._stale.add("rank")
        self._focus(keys)
        self.refresh()

    def peaks_by(self, keys: list, metric: str) -> None:
        """Tree menu: select ``keys``, show their peak intervals by ``metric``."""
        combo = self.rank.peak_metric
        combo.blockSignals(True)
        combo.setCurrentIndex(max(0, combo.findData(metric)))
        combo.blockSignals(False)
        self._stale.add("peaks")
        self._focus(keys)
        self.refresh()

    # -- clicks --------------------------------------------------------------------------------
    def select_node(self, key: tuple) -> None:
        """A ranking row double-clicked: that node is the tree's selection."""
        self.w.tree.select_keys([key])
        self.w.selection.set_nodes([key])

    def go_to_peak(self, start: Any, end: Any) -> None:
        """A peak clicked: the time window becomes its interval (the chip and the timelines' region show it)."""
        self._peak_window = (start, end)
        self.w.selection.set_window(start, end)
        self.w.statusBar().showMessage(f"Time window: the peak interval {start:%Y-%m-%d %H:%M} - {end:%H:%M} UTC",
                                       8000)

    def show_peak(self, start: Any, end: Any, key: tuple) -> None:
        """A peak double-clicked: its window and its node, on the timelines."""
        self.go_to_peak(start, end)
        self._keep_peaks = True
        try:
            self.select_node(key)
        finally:
            self._keep_peaks = False
        self.w.tabs.setCurrentWidget(self.w.timeline)
        self._zoom_to = (start.timestamp(), end.timestamp())
        QTimer.singleShot(0, self._zoom_timelines)

    def _zoom_timelines(self) -> None:
        """The timelines (once drawn) show a few hours around the peak, the crosshair and readout on it."""
        if self._zoom_to is None or self.w.busy() or self.w.tabs.currentWidget() is not self.w.timeline:
            return
        (a, b), self._zoom_to = self._zoom_to, None
        tl = self.w.timeline
        lo, hi = tl.data_range()
        pad = max(8 * (b - a), PEAK_CONTEXT_S)
        tl.base_vb.setXRange(max(lo, a - pad), min(hi, b + pad) if hi > lo else b + pad, padding=0)
        tl.show_cursor_at((a + b) / 2)


def install(window: Any) -> ViewsController:
    """Add the Profile and Rankings & peaks tabs to ``window`` (after the Compare tab is installed)."""
    ctl = ViewsController(window)
    window.views = ctl
    return ctl


__all__ = ["install", "ViewsController"]
