"""The main window: machine tree, interval table, timelines, data health.

Files are read by workers (see ``loader``); results are added to the one Workspace on the GUI thread; views render
from the Workspace and the shared SelectionState.  No formulas here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMainWindow, QTabWidget, QToolBar

from app.ui import first_table, settings
from app.ui import messages as M
from app.ui.actions import Actions
from app.ui.help import GlossaryDialog, show_about, show_error
from app.ui.implausible import apply_keep, install as install_implausible
from app.ui.palette import apply_palette, refresh_styles
from app.ui.status_bar import ElidingStatusBar
from app.ui.window_files import FilesMixin, sample_count
from app.ui.window_session import SessionMixin

# The window's views and models import pandas, numpy, pyqtgraph and the engine (~1.5 s): the start paints the
# window first, then imports them (issue 23).  ``_load_views`` binds these names here; as module attributes they
# load on first use (tests patch ``compute_view``).
_VIEWS = {"app.ui.frames": "generations_of", "app.ui.health": "HealthPanel", "app.ui.loader": "LoadController",
          "app.ui.render": "ViewData compute_view", "app.ui.selection": "Selection SelectionState",
          "app.ui.smt": "SmtPanel window_texts", "app.ui.table_view": "IntervalTable",
          "app.ui.timeline_shell": "TimelineShell", "app.ui.tree_panel": "TreePanel",
          "app.ui.window_chip": "WindowChip window_text", "app.ui.workers": "SerialRunner"}


def _load_views() -> None:
    from importlib import import_module

    if "pd" not in globals():
        for module, names in _VIEWS.items():
            for name in names.split():
                globals().setdefault(name, getattr(import_module(module), name))
        globals()["pd"] = import_module("pandas")     # last: the names are all bound once it is


def __getattr__(name: str) -> Any:
    if name == "pd" or any(name in names.split() for names in _VIEWS.values()):
        _load_views()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


STATUS_MS = 8000
FIRST_PAINT_MS = 3000   # after_first_paint runs its functions by then even when no paint came
# the tabs' own minimum width: above every page's minimum at its usual content (~500 px), so no page is narrowed
# below it in a window of 1024 px, but fixed: one page asking for more (a long text that does not wrap) is cut at
# the window's edge rather than forcing the window wider than the screen (a 1440 px window grew to 1540 px once)
TABS_MIN_WIDTH = 520


class MainWindow(FilesMixin, SessionMixin, QMainWindow):
    """NestScope's window over one Workspace."""

    def __init__(self, ws: Any = None, *, shell: bool = False) -> None:
        """The whole window; with ``shell``, only its frame (title, size, a "starting" page) until its first
        paint, the views built then (:meth:`_build`): the start shows the window before pandas, pyqtgraph and
        the engine are imported (issue 23)."""
        super().__init__()
        self.errors: list[str] = []  # unexpected exceptions shown to the user (tests assert it stays empty)
        self.setWindowTitle(M.APP_TITLE)
        self.setAcceptDrops(True)
        self.setStatusBar(ElidingStatusBar(self))    # long messages end in an ellipsis, whole in the tooltip
        self._painted = False        # the window has been painted once (after_first_paint)
        self._after_paint: list[Any] = []
        self._built, self._shell = False, shell
        if shell:
            self._ws_given = ws
            self._restore_geometry()
            if settings.get_bool("view/dark"):
                apply_palette(True)
            page = QLabel(M.STARTING)
            page.setObjectName("starting")
            page.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setCentralWidget(page)
            return
        self._build(ws)

    def _build(self, ws: Any = None) -> None:
        """The views, the workspace (a new one when ``ws`` is None), menus, toolbar and the saved layout."""
        _load_views()
        self._built = True
        if ws is None:
            from app.analysis import new_workspace

            ws = new_workspace()
        self.ws = ws
        self.selection = SelectionState(self)
        self._pending: list[Any] = []  # read outcomes not yet added to the workspace
        self._want_table = self._want_timeline = self._want_smt = False
        self._timeline_next = False  # a table job ran: the timeline's job follows it
        self._want_values = False    # the tree's values were left to the job after the table's
        self._want_deeper = False    # the tree shows its CEC and LPAR levels: the rest follows (issue 11)
        self._roots_partial = False  # the tree shown lacks the partition data: the next job sends it whole
        self._prep_tried: set[tuple] = set()   # (level, window) whose rows of every node were prepared
        self._write_pause = None               # app.cache.WritePause held from open_files to the first table
        self._smt_shown: Selection | None = None  # the selection the SMT tab shows (None: stale)
        self._loaded = False
        self._epoch = 0              # which Workspace a view was computed from (close_all starts a new one)
        self.runner = SerialRunner(self)
        self.runner.done.connect(self._apply)
        self.runner.failed.connect(self._on_view_failed)
        self.runner.idle.connect(self._on_runner_idle)
        self.loader = LoadController(self)
        self.loader.status_bar = self.statusBar()
        self.loader.counters = getattr(ws, "counters_needed", lambda: None)()   # decode only what it reads
        self.tree = TreePanel(self)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.tree.dock)
        self.table = IntervalTable()
        self.timeline = TimelineShell()   # the plots' view (pyqtgraph) made when first shown or used
        self.health = HealthPanel()
        self.smt = SmtPanel()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setMinimumWidth(TABS_MIN_WIDTH)
        self.tabs.addTab(self.table, M.TAB_TABLE)
        self.tabs.addTab(self.timeline, M.TAB_TIMELINE)
        self.tabs.addTab(self.smt, M.TAB_SMT)
        self.tabs.addTab(self.health, M.TAB_HEALTH)
        self.setCentralWidget(self.tabs)
        self.actions_ = Actions(self)
        self.actions_.build_menus(self)
        self.toolbar = QToolBar(M.TOOLBAR_TITLE)
        self.toolbar.setObjectName("main_toolbar")
        self.toolbar.setMovable(False)
        self.chip = WindowChip()   # the active time window, always visible
        self.toolbar.addWidget(self.chip)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self._init_session()
        self.actions_.view_menu.addAction(self.tree.dock.toggleViewAction())
        self.table.body_actions = [self.actions_.copy, None, self.actions_.window_from_rows,
                                   self.actions_.reset_window]
        self._connect()
        from app.ui.window_tabs import install_tabs   # Compare, Profile, Rankings tabs, Open Dataset

        install_tabs(self, later=self._shell)   # the start: after its first table (issue 23)
        from app.ui import window_partial   # issue 23: a big file's first part shown while it is read (imports pandas)

        window_partial.install(self)
        install_implausible(self)   # issue 20: View > Keep implausible intervals, status-bar count
        from app.ui.time_zone import install as install_time_zone  # issue 26: View > Local time, chip toggle

        install_time_zone(self)
        from app.ui import gc_guard

        gc_guard.install(self)      # garbage collection on the GUI thread only (a Qt destructor on a worker deadlocks)
        self._restore()
        if self.isVisible():         # a shell built after its first paint: no show event comes
            self.showEvent(None)

    def _connect(self) -> None:
        self.loader.file_read.connect(self._on_file_read)
        self.loader.message.connect(lambda text: self.statusBar().showMessage(text, STATUS_MS))
        self.loader.failed.connect(self._on_failed)
        self.loader.idle.connect(self._on_reads_done)
        self.loader.job_started.connect(self._load_started)
        self.loader.idle.connect(lambda: self.tree.set_loading(0))
        self.tree.nodes_selected.connect(self.selection.set_nodes)
        self.selection.nodes_changed.connect(self._on_nodes_changed)
        self.selection.window_changed.connect(self._on_window_changed)
        self.timeline.window_requested.connect(self.selection.set_window)
        self.chip.clear_requested.connect(self.selection.clear_window)
        self.health.finding_activated.connect(self.show_finding)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.smt.copied.connect(lambda r, c: self.statusBar().showMessage(M.STATUS_COPIED.format(rows=r, cols=c),
                                                                          STATUS_MS))
        self.table.copied.connect(lambda r, c: self.statusBar().showMessage(M.STATUS_COPIED.format(rows=r, cols=c),
                                                                            STATUS_MS))

    # -- opening files -------------------------------------------------------------------------
    def open_files(self, paths: list[str]) -> int:
        """Add ``paths`` (files or folders) to what is open; returns the number of reads started."""
        paths = [str(p) for p in paths if str(p)]
        if not paths:
            return 0
        first_table.begin(self)       # an empty window: the reads after the first wait for its table (issue 23)
        started = self.loader.open(paths)
        if started and self._write_pause is None:   # cache writes wait until the first table is shown (issue 11)
            try:
                from app import cache as wc

                self._write_pause = wc.pause_writes() if hasattr(wc, "pause_writes") else None
            except Exception:  # noqa: BLE001 - the cache never stops a load
                self._write_pause = None
        for p in paths:
            if Path(p).is_dir() and started == 0:
                self.statusBar().showMessage(M.STATUS_NO_FILES.format(name=p), STATUS_MS)
        settings.add_recent(paths)
        self.note_opened(paths)
        return started

    def open_dialog(self) -> None:
        start = settings.get_value("dialog/dir", "") or ""
        paths, _ = QFileDialog.getOpenFileNames(self, M.OPEN_DIALOG_TITLE, str(start), M.FILE_FILTERS)
        if paths:
            settings.set_value("dialog/dir", str(Path(paths[0]).parent))
            self.open_files(paths)

    def open_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, M.OPEN_FOLDER_TITLE, str(settings.get_value("dialog/dir", "")))
        if folder:
            self.open_files([folder])

    def fill_recent_menu(self) -> None:
        menu = self.actions_.recent_menu
        menu.clear()
        recent = settings.recent_files()
        for p in recent:
            menu.addAction(p, lambda p=p: self.open_files([p]))
        if not recent:
            menu.addAction(M.ACT_RECENT_EMPTY).setEnabled(False)
        self.fill_recent_workspaces(menu)
        if not recent and not settings.recent_workspaces():
            return
        menu.addSeparator()
        menu.addAction(M.ACT_RECENT_CLEAR, settings.clear_recent)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            if self._built:
                self.open_files(paths)
            else:                # dropped on the starting window: opened once it is built
                self.after_first_paint(lambda: self.open_files(paths))

    def _on_file_read(self, outcome: Any) -> None:
        """Queue a finished read; files finishing while a job runs are added together."""
        self._pending.append(outcome)
        self._note_outcome(outcome)
        self.request(table=True, timeline=True)

    @staticmethod
    def _status_of(outcome: Any) -> str:
        result, name = outcome.result, Path(outcome.path).name
        if getattr(result, "readable", True):
            return M.STATUS_LOADED.format(name=name, n=sample_count(result))
        why = next((f.message for f in result.findings if f.severity == "error"), "no CPU MF records")
        return M.STATUS_NOTHING.format(name=name, why=why)

    def _on_failed(self, path: str, text: str, details: str) -> None:
        self._note_failure(path)
        self._unexpected(f"{Path(path).name}: {text}", details)

    def _unexpected(self, what: str, details: str) -> None:
        self.errors.append(what)
        show_error(self, what, details)

    # -- rendering -----------------------------------------------------------------------------
    def busy(self) -> bool:
        """Files being read or views being computed (or the window still being built)."""
        if not self._built:
            return True
        return self.loader.busy() or self.runner.busy() or bool(self._pending)

    def loaded(self) -> bool:
        return self._loaded

    def request(self, table: bool = True, timeline: bool = True, smt: bool | None = None) -> None:
        """Recompute the views off the GUI thread (the latest request wins).

        The SMT tables are computed only while their tab is shown (``smt=None``: when it is current)."""
        self._want_table |= table
        self._want_timeline |= timeline
        self._want_smt |= self.tabs.currentWidget() is self.smt if smt is None else smt
        if self._want_smt and self._loaded and self._smt_shown != self.selection.value:
            self.smt.set_busy(M.SMT_COMPUTING.format(nodes=nodes_text(self.selection.value.nodes)))
        self.runner.submit(self._make_job)

    def _make_job(self):
        added, self._pending = self._pending, []
        table, timeline, smt = self._want_table, self._want_timeline, self._want_smt
        values = None
        if added and self._loaded and self.loader.busy():
            # more files are coming: fill the tree and health now, the table and plots once reads end
            table = timeline = smt = False
        else:
            self._want_table = self._want_timeline = self._want_smt = False
            if table and timeline:
                # the table first: its rows are shown before the tree's values and the timeline rows are
                # computed, which follow in the next job (issue 11); with the timelines on screen (and no new
                # files) both come in one job, the values after them
                if added or self.tabs.currentWidget() is not self.timeline:
                    timeline, self._want_timeline = False, True
                self._timeline_next = True
                values, self._want_values = False, True
            else:
                values, self._want_values = (True if self._want_values else None), False
        ws, sel = self.ws, self.selection.value
        # new files: the tree's CEC and LPAR levels now, its class and CPU levels in a later job (issue 11)
        deeper = False
        if added:
            self._want_deeper = True
        else:
            deeper, self._want_deeper = self._want_deeper, False
            if deeper is True:     # the class and CPU levels first, the values and whole tree next (issue 23)
                deeper, self._want_deeper, self._timeline_next = "levels", "whole", True
                if values:
                    values, self._want_values = False, True
        from app.ui import window_partial   # (imported by _build: no cost here)

        table, deeper, prep = window_partial.plan_job(self, added, table, deeper)   # a big file's part on screen
        # the first table of a load with more files still to read: its tree without the partition data (the
        # demo's MONWRITE file: 0.15-0.25 s less before the table, issue 23); the next job's tree is whole
        partitions, roots = True, False
        if added:
            coming = {o.path for o in added}
            partitions = bool(sel.nodes) or not any(j.path not in coming for j in self.loader.jobs.values())
            self._roots_partial = not partitions
        elif self._roots_partial:     # no file followed (their reads were cancelled): the whole tree now
            roots, self._roots_partial = True, False
        epoch = self._epoch
        keep = getattr(self, "keep_implausible", False)   # View > Keep implausible intervals (implausible.py)

        def job() -> ViewData:
            apply_keep(ws, keep)
            view = compute_view(ws, sel, added, table=table, timeline=timeline, smt=smt, values=values,
                                deep=not added, deeper=deeper, partitions=partitions, roots=roots,
                                prepare_table=prep)
            view.epoch = epoch
            if table or timeline:         # each system's UTC offsets (time_zone.py), from the intervals just used
                view.zones = getattr(ws, "zones", None)
            return view
        return job

    def _on_runner_idle(self) -> None:
        """Nothing to compute: prepare what selections are sliced from (:meth:`_prepare_next`); once nothing is
        left, the workspace cache may write what it holds (its writes would compete with the tree's deeper levels
        and the prepared frames for the two cores: issue 23)."""
        if not self._loaded or self.busy():
            return
        if not self._prepare_next():
            self._release_writes()

    def _prepare_next(self) -> bool:
        """The next idle job preparing the rows selections are sliced from (:func:`app.ui.idle_prep.prepare_next`);
        False when nothing was left to do."""
        from app.ui.idle_prep import prepare_next

        return prepare_next(self)

    def _release_writes(self) -> None:
        pause, self._write_pause = self._write_pause, None
        if pause is not None:
            pause.release()

    def _on_reads_done(self) -> None:
        if not self._pending and not self.runner.busy() and not self._loaded:
            self._release_writes()     # nothing readable: no table will come
        if self._want_table or self._want_timeline or self._want_smt or self._want_deeper:
            self.request(table=False, timeline=False)  # the deferred table/plot refresh

    def _on_view_failed(self, text: str, details: str) -> None:
        first_table.release(self)
        self._unexpected(text, details)

    def _apply(self, view: ViewData) -> None:
        """Show a computed ViewData (GUI thread; models only)."""
        if view.background or view.epoch != self._epoch:   # a job of a closed Workspace: never shown
            return
        from app.ui import window_partial   # (imported by _build: no cost here)

        if getattr(view, "partial", None) is not None:     # a big file's first part
            return window_partial.show(self, view)
        if view.added:
            self._prep_tried.clear()
        place = window_partial.keep_place(self, view)
        self._show_view(view)
        window_partial.restore_place(self, place)
        if self._timeline_next:   # the table is shown: now the timeline rows (queued after this job)
            self._timeline_next = False
            if (self._want_timeline or self._want_values or self._want_deeper) and not self.loader.busy():
                self.request(table=False, timeline=False)   # (files still read: once they are, _on_reads_done)

    def _show_view(self, view: ViewData) -> None:
        for o in view.added:
            self.statusBar().showMessage(self._status_of(o), STATUS_MS)
        current = self.selection.value
        if view.roots is not None:
            self.tree.set_roots(view.roots)
            if view.roots and not self._dock_sized and self.isVisible():
                self._size_dock()
            elif view.roots and self.isVisible():
                self._grow_dock()
        if not current.nodes and view.selection.nodes:
            self.selection.blockSignals(True)  # the first LPAR, chosen by the job: already rendered
            self.selection.set_nodes(view.selection.nodes)
            self.selection.blockSignals(False)
            current = self.selection.value
        if view.roots is not None:
            # a tree without its class and CPU levels yet: their selected keys are selected once they are built
            self.tree.select_keys(current.nodes, emit=not self._want_deeper)
        if view.deeper is not None:
            self.tree.add_deeper(view.deeper, current.nodes)
        if view.findings is not None:
            self._loaded = view.loaded
            self._show_health(view)
        if view.tree_values is not None and (view.selection.start, view.selection.end) == (current.start,
                                                                                          current.end):
            self.tree.set_values(view.tree_values, window_text(current.start, current.end)
                                 if current.has_window else None)
        if view.added:
            self._show_load_summary()
        fresh = view.selection.nodes == current.nodes
        if not view.loaded:
            first_table.release(self)      # nothing readable yet: no table to wait for
            if not self.loader.busy() and not self._pending:
                self._release_writes()     # nothing readable was loaded: no table is coming
            loading = self.loader.busy() or bool(self._pending)
            self.table.set_placeholder(M.LOADING if loading else M.PLACEHOLDER)
            self.timeline.set_frame(pd.DataFrame(), loaded=False)
            self.smt.set_placeholder(M.LOADING if loading else M.PLACEHOLDER, busy=loading)
            return
        if view.added:
            self._smt_shown = None  # new data: the SMT tables are stale
        if view.smt is not None and view.selection == current:
            self.smt.set_frames(*view.smt, window=window_texts(current, view.smt[0]))
            self._smt_shown = current
        elif self.tabs.currentWidget() is self.smt and self._smt_shown != current and not self._want_smt:
            self.request(table=False, timeline=False, smt=True)
        def show_table() -> None:
            if view.table is not None and fresh and (view.selection.start, view.selection.end) == (current.start,
                                                                                                current.end):
                self.table.model.quality_details = view.quality_details
                self.table.placeholder.setText(M.TABLE_NO_ROWS)
                self.table.model.set_frame(view.table, view.columns)
                if view.partition is not None and self.table.model.rowCount() == 0:
                    self.table.show_partition(view.partition, view.partition_source)

        def show_timeline() -> None:
            if view.timeline is not None and fresh:
                self.timeline.set_frame(view.timeline, cec_stack=view.cec_stack)
                if view.partition is not None and not len(view.timeline):
                    self.timeline.placeholder.setText(M.PARTITION_ONLY_TITLE.format(lpar=view.partition.lpar)
                                                      + ": " + M.TIMELINE_SEE_INTERVALS)
                self.timeline.set_window(current.start, current.end)

        # the view on screen first
        for show in ((show_timeline, show_table) if self.tabs.currentWidget() is self.timeline else
                     (show_table, show_timeline)):
            show()
        first_table.table_set(self)     # the next job and reads wait for the first table's paint (issue 23)
        self._workspace_ready()

    def _show_health(self, view: ViewData) -> None:
        findings = view.findings or []
        self._health_findings = findings   # the load summary counts these too (one source)
        self.health.set_findings(findings, view.files or [], view.loaded)
        i = self.tabs.indexOf(self.health)
        self.tabs.setTabText(i, M.TAB_HEALTH_N.format(n=len(findings)) if findings else M.TAB_HEALTH)
        self._color_health_tab(findings)

    def _on_tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.smt and self._loaded and self._smt_shown != self.selection.value:
            self.request(table=False, timeline=False, smt=True)

    def _on_nodes_changed(self, _sel: Selection) -> None:
        if self._loaded:
            self.request(table=True, timeline=True)

    def _on_window_changed(self, sel: Selection) -> None:
        self.timeline.set_window(sel.start, sel.end)
        self.chip.set_window(sel.start, sel.end)
        if sel.has_window:
            text = M.STATUS_WINDOW.format(window=window_text(sel.start, sel.end))
        else:
            text = M.STATUS_WINDOW_CLEARED
        self.statusBar().showMessage(text, STATUS_MS)
        if self._loaded:
            self.request(table=True, timeline=False)

    # -- commands ------------------------------------------------------------------------------
    def copy(self) -> None:
        """Ctrl+C: the tree when it has the focus, else the current tab (TSV with headers + HTML)."""
        focus = QApplication.focusWidget()
        if focus is not None and (focus is self.tree.view or self.tree.view.isAncestorOf(focus)):
            self.tree.copy_selection()
            self.statusBar().showMessage(M.STATUS_COPIED_TREE, STATUS_MS)
            return
        current = self.tabs.currentWidget()
        if current is self.health:
            self.health.copy_selection()
            self.statusBar().showMessage(M.STATUS_COPIED_HEALTH, STATUS_MS)
        elif current is self.smt:
            self.smt.copy_selection()
        else:
            self.table.copy_selection()

    def focus_filter(self) -> None:
        self.tree.dock.show()
        self.tree.filter.setFocus()
        self.tree.filter.selectAll()

    def clear_window(self) -> None:
        self.selection.clear_window()

    def window_from_table(self) -> None:
        """Ctrl+T: the time window becomes the selected interval rows' span (same state as the timeline region)."""
        span = self.table.selected_window()
        if span is None:
            self.statusBar().showMessage(M.STATUS_NO_ROWS_SELECTED, STATUS_MS)
            return
        self.selection.set_window(*span)

    def set_dark(self, dark: bool) -> None:
        apply_palette(dark)
        self.timeline.apply_theme(dark)
        self.table.model.dark = dark
        self.table.view.viewport().update()
        self.table.frozen.viewport().update()
        self.smt.set_dark(dark)
        self.table.partition.set_dark(dark)
        refresh_styles(self)
        settings.set_value("view/dark", dark)

    def show_glossary(self) -> GlossaryDialog:
        gens = generations_of(self.table.model.frame)
        dlg = GlossaryDialog(self, gens[0] if gens else None, ws=self.ws)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def show_guide(self):
        from app.ui.guide import GuideDialog

        dlg = GuideDialog(self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def show_about(self) -> None:
        show_about(self, self.ws, live=not self.busy())  # while reading: every set, nothing computed

    def show_finding(self, finding: Any) -> None:
        """Select the node a finding affects in the tree, and its interval in the table when possible."""
        key = tuple(self.tree.key_for_finding(finding.key or {}))
        if key:
            self.tree.select_keys([key])
            self.selection.set_nodes([key])
        when = (finding.key or {}).get("time") or (finding.key or {}).get("interval_end")
        if when is not None:
            self.tabs.setCurrentWidget(self.table)
            self.table.select_row(self.table.model.row_of(lambda r: _same_time(r.get("interval_end"), when)))

    # -- persistence ---------------------------------------------------------------------------
    def _restore_geometry(self) -> None:
        settings.restore_geometry(self)         # saved or 1440x900, within the screen's available area

    def _restore(self) -> None:
        if not self._shell:      # a shell's geometry was restored before it was shown (and may have changed since)
            self._restore_geometry()
        state = settings.get_value("window/state")
        self._state_restored = state is not None and bool(self.restoreState(state))
        self._dock_sized = self._state_restored  # a restored layout keeps the user's dock width
        if settings.get_bool("view/dark"):
            self.actions_.dark.setChecked(True)
        self._apply(ViewData(selection=Selection(), roots=[], findings=[], files=[], loaded=False))

    def after_first_paint(self, fn) -> None:
        """Run ``fn`` once the window has been painted (the start opens its files then: a read's worker thread
        started before would hold the GIL while the window is still black, issue 23); at once, through the event
        loop, when it has been painted already; after ``FIRST_PAINT_MS`` at the latest (a window never exposed)."""
        from PySide6.QtCore import QTimer

        if self._painted:
            QTimer.singleShot(0, fn)
            return
        self._after_paint.append(fn)
        QTimer.singleShot(FIRST_PAINT_MS, self._run_after_paint)

    def _run_after_paint(self) -> None:
        if not self._built:     # a shell: its views now, the functions after the built window's own paint
            self._build(self._ws_given)
            self._ws_given = None
            self._painted = False
            self.update()
            from PySide6.QtCore import QTimer

            QTimer.singleShot(FIRST_PAINT_MS, self._run_after_paint)
            return
        fns, self._after_paint = self._after_paint, []
        for fn in fns:
            fn()

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if not self._painted:
            from PySide6.QtCore import QTimer

            self._painted = True
            QTimer.singleShot(0, self._run_after_paint)   # after this paint has reached the screen

    def showEvent(self, event) -> None:
        if event is not None:
            super().showEvent(event)
        if self._built and not self._state_restored:  # first run: give the tree room for its labels
            self._state_restored = True
            self._size_dock()

    def _size_dock(self) -> None:
        """Default dock width by window width (first run, again once the first tree arrives)."""
        if self.tree.model.rowCount():
            self._dock_sized = True
        self._dock_width = self.tree.preferred_width(self.width())
        self._dock_widths = {self.tree.dock.width(), self._dock_width}   # the window's widths, applied or pending
        self.resizeDocks([self.tree.dock], [self._dock_width], Qt.Orientation.Horizontal)

    def _grow_dock(self) -> None:
        """A later tree with longer labels (a file read after the first, a z/VM system's "LPAR · system · z/VM")
        widens the dock the window sized, up to its cap, so the names are not elided; a dock the user sized (or
        a restored layout) keeps its width, as does one already wide enough (issue 26)."""
        set_to = getattr(self, "_dock_width", None)
        now = self.tree.dock.width()
        if set_to is None or not any(abs(now - x) <= 4 for x in self._dock_widths):     # the user's width
            return
        want = self.tree.preferred_width(self.width())
        if want > set_to:
            self._dock_width = want
            self._dock_widths |= {now, want}
            self.resizeDocks([self.tree.dock], [want], Qt.Orientation.Horizontal)

    def __getattr__(self, name: str) -> Any:
        """The tabs the start installs after its first table (app.ui.window_tabs), asked for before: now."""
        if name in ("compare", "views", "open_dataset_action") and self.__dict__.get("_built"):
            from app.ui.window_tabs import install_now

            install_now(self)
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def closeEvent(self, event) -> None:
        if not self._built:      # closed while starting: nothing open yet
            settings.set_value("window/geometry", self.saveGeometry())
            super().closeEvent(event)
            return
        self.loader.cancel_all()
        self._release_writes()
        self.save_session()
        settings.set_value("window/geometry", self.saveGeometry())
        settings.set_value("window/state", self.saveState())
        super().closeEvent(event)


def nodes_text(nodes: Any) -> str:
    """The selected nodes for a message: their names (``ZOSA, ZOSB``), at most four."""
    names = [str(k[-1]) for k in nodes or ()]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "") or "the selection"


def _same_time(a: Any, b: Any) -> bool:
    try:
        ta, tb = pd.Timestamp(a), pd.Timestamp(b)
        if (ta.tzinfo is None) != (tb.tzinfo is None):
            ta, tb = ta.tz_localize(None) if ta.tzinfo else ta, tb.tz_localize(None) if tb.tzinfo else tb
        return abs((ta - tb).total_seconds()) < 1
    except (TypeError, ValueError):
        return False

