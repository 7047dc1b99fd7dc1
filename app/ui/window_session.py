"""The main window's session: save/open workspace files, recent workspaces, the summary of a load.

A mixin of MainWindow (it uses the window's loader, selection, workspace and status bar).  Opening a workspace
replaces what is open (issue 20: the bundled demo stayed loaded under a reopened workspace and moved its
numbers): the window starts over on a new, empty Workspace, after asking to save changes that were not saved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QStyle

from app.ui import messages as M
from app.ui import settings
from app.ui import workspace_file as wsf
from app.ui.palette import error_style

ERROR_TAB_COLOR = QColor(214, 39, 40)
WARNING_TAB_COLOR = QColor(200, 120, 0)


class SessionMixin:
    """Workspace files and the load summary (needs ``ws``, ``loader``, ``selection``, ``tabs``, ``health``)."""

    def _init_session(self) -> None:
        self._batch: list[tuple[str, bool, str]] = []   # (file name, readable, worst severity) since the last idle
        self._ws_pending: wsf.WorkspaceState | None = None   # a workspace being reopened (applied once loaded)
        self._ws_path: str | None = None                     # the workspace file last saved or opened
        self._clean: tuple | None = None     # what was open when last saved / opened (``_snapshot``); None: nothing
        self._clean_files_only = False       # the clean state is a set of files only (the demo): views may change
        self.load_summary = QLabel("")
        self.load_summary.setObjectName("load_summary")
        self.statusBar().addPermanentWidget(self.load_summary)

    # -- load summary --------------------------------------------------------------------------
    def _note_outcome(self, outcome: Any) -> None:
        result = outcome.result
        sev = {getattr(f, "severity", "") for f in getattr(result, "findings", [])}
        readable = bool(getattr(result, "readable", True))
        self._batch.append((Path(outcome.path).name, readable,
                            "error" if not readable or "error" in sev else "warning" if "warning" in sev else ""))

    def _note_failure(self, path: str) -> None:
        self._batch.append((Path(path).name, False, "error"))

    def _show_load_summary(self) -> None:
        """After the last file of a load: files read, files with errors and warnings (stays in the status bar)."""
        if not self._batch or self.loader.busy() or self._pending:
            return
        # one source with the Data health tab: its findings (reader and engine alike), grouped by file
        findings = getattr(self, "_health_findings", [])
        worst: dict[str, str] = {}
        for f in findings:
            name, sev = Path(str(getattr(f, "file", "") or "")).name, getattr(f, "severity", "")
            if sev == "error" or (sev == "warning" and worst.get(name) != "error"):
                worst[name] = sev
        batch = [(name, ok, "error" if sev == "error" or worst.get(name) == "error" else
                  "warning" if sev == "warning" or worst.get(name) == "warning" else "")
                 for name, ok, sev in self._batch]
        bad = [name for name, _ok, sev in batch if sev == "error"]
        warned = sum(1 for _n, _ok, sev in batch if sev == "warning")
        n_warn = sum(1 for f in findings if getattr(f, "severity", "") == "warning")
        names = ", ".join(bad[:3]) + (", ..." if len(bad) > 3 else "")
        text = M.STATUS_LOAD_SUMMARY.format(read=sum(1 for _n, ok, _s in batch if ok), total=len(batch),
                                            errors=len(bad), warnings=warned,
                                            detail=M.STATUS_LOAD_ERRORS_DETAIL.format(names=names) if bad else "")
        if n_warn:
            text += M.STATUS_LOAD_WARNINGS.format(n=n_warn)
        self.load_summary.setText(text)
        self.load_summary.setToolTip(M.STATUS_LOAD_SUMMARY_TIP)
        self.load_summary.setStyleSheet(error_style(bool(bad), bold=False))
        self._batch = []

    def _load_started(self, _path: str = "") -> None:
        """A load began: the last load's summary gives way to what is being read now."""
        n = len(self.loader.jobs)
        self.load_summary.setText(M.STATUS_LOAD_RUNNING.format(n=n))
        self.load_summary.setStyleSheet("")
        self.tree.set_loading(n)
        if not self._loaded:   # nothing shown yet: the tabs say the files are being read, not "Open files"
            self.table.set_placeholder(M.LOADING)
            self.smt.set_placeholder(M.LOADING, busy=True)

    def _color_health_tab(self, findings: list[Any]) -> None:
        """The Data health tab in red with a warning icon while any finding is an error."""
        i = self.tabs.indexOf(self.health)
        errors = any(getattr(f, "severity", "") == "error" for f in findings)
        warnings = any(getattr(f, "severity", "") == "warning" for f in findings)
        bar = self.tabs.tabBar()
        # no problems: an invalid colour gives the tab back the palette's (light and dark alike)
        bar.setTabTextColor(i, ERROR_TAB_COLOR if errors else WARNING_TAB_COLOR if warnings else QColor())
        self.tabs.setTabIcon(i, self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning) if errors
                             else QIcon())
        self.tabs.setTabToolTip(i, M.HEALTH_TAB_ERRORS_TIP if errors else "")

    # -- workspace files -----------------------------------------------------------------------
    def workspace_state(self) -> wsf.WorkspaceState:
        sel = self.selection.value
        comparison = None
        getter = getattr(self, "comparison_state", None)   # the comparison view, when there is one
        if callable(getter):
            comparison = getter()
        return wsf.WorkspaceState([r.file for r in self.ws.files], list(sel.nodes), sel.start, sel.end,
                                  comparison)

    def save_workspace(self, path: str) -> None:
        if not path.endswith(".json"):
            path += wsf.SUFFIX
        try:
            wsf.save(self.workspace_state(), path)
        except wsf.WorkspaceFileError as e:
            QMessageBox(QMessageBox.Icon.Warning, M.WS_SAVE_ERROR_TITLE, str(e), QMessageBox.StandardButton.Ok,
                        self).open()
            self.statusBar().showMessage(str(e), 8000)
            return
        self._ws_path = path
        self.mark_unchanged()
        settings.add_recent_workspace(path)
        self.statusBar().showMessage(M.STATUS_WS_SAVED.format(path=path), 8000)

    def save_workspace_dialog(self) -> None:
        start = str(settings.get_value("dialog/dir", "") or "")
        path, _ = QFileDialog.getSaveFileName(self, M.ACT_SAVE_WS.replace("&", "").rstrip("."), start, wsf.FILTER)
        if path:
            self.save_workspace(path)

    def open_workspace_dialog(self) -> None:
        start = str(settings.get_value("dialog/dir", "") or "")
        path, _ = QFileDialog.getOpenFileName(self, M.ACT_OPEN_WS.replace("&", "").rstrip("."), start, wsf.FILTER)
        if path:
            self.open_workspace(path)

    def open_workspace(self, path: str) -> bool:
        """Open a workspace: every open file is closed first (after asking to save unsaved changes), then its
        files are read and its selection, window and comparison restored once they are.  A bad file gives a
        message naming it, never a traceback.  False when nothing was opened (bad file, or the user cancelled)."""
        try:
            state = wsf.load(path)
        except wsf.WorkspaceFileError as e:
            box = QMessageBox(QMessageBox.Icon.Warning, M.WS_ERROR_TITLE, str(e), QMessageBox.StandardButton.Ok,
                              self)
            box.open()
            self.statusBar().showMessage(str(e), 8000)
            return False
        if not self._may_close_all(Path(path).name):
            return False
        settings.add_recent_workspace(path)
        closed = self.close_all()
        missing = [f for f in state.files if not Path(f).exists()]
        todo = [f for f in state.files if Path(f).exists()]
        name = Path(path).name
        if closed:
            self.statusBar().showMessage(M.STATUS_WS_CLOSED.format(n=closed, name=name), 8000)
        if missing:
            self.statusBar().showMessage(M.STATUS_WS_MISSING.format(
                name=name, n=len(missing), names=", ".join(Path(f).name for f in missing)), 0)
        else:
            self.statusBar().showMessage(M.STATUS_WS_OPENED.format(name=name, n=len(state.files)), 8000)
        self._ws_pending = state
        self._ws_path = path
        sides = getattr(self, "show_comparison_sides", None)
        if todo and state.comparison is not None and callable(sides):
            sides(state.comparison)      # the Compare tab with its sides now, computed once the files are read
        if todo:
            self.open_files(todo)
        else:
            self._apply_workspace_state()
        return True

    def _apply_workspace_state(self) -> None:
        """Restore the pending workspace's selection, window and comparison (after its files are read)."""
        state, self._ws_pending = self._ws_pending, None
        if state is None:
            return
        if state.selection:
            self.tree.select_keys(state.selection)
            self.selection.set_nodes(state.selection)
        self.selection.set_window(state.start, state.end)
        setter = getattr(self, "restore_comparison", None)
        if state.comparison is not None and callable(setter):
            setter(state.comparison)
        self.mark_unchanged()

    # -- replacing what is open ---------------------------------------------------------------------
    def _open_paths(self) -> frozenset[str]:
        """Resolved paths of every file open, being read or waiting to be added."""
        paths = [r.file for r in self.ws.files] + [o.path for o in self._pending] + \
            [j.path for j in self.loader.jobs.values()]
        return frozenset(str(Path(p).resolve()) for p in paths)

    def _snapshot(self) -> tuple:
        st = self.workspace_state()
        return (self._open_paths(), tuple(st.selection), st.start, st.end, repr(st.comparison))

    def mark_unchanged(self, paths: list[str] | None = None) -> None:
        """What is open now counts as saved (after a save or an open).  With ``paths`` (the bundled demo, opened
        by the window itself): those files count as saved whatever the selection, window and comparison."""
        if paths is None:
            self._clean, self._clean_files_only = self._snapshot(), False
        else:
            self._clean = (frozenset(str(Path(p).resolve()) for p in paths), (), None, None, repr(None))
            self._clean_files_only = True

    def has_unsaved_changes(self) -> bool:
        """Files are open that no save or open accounts for, or the selection, window or comparison changed
        since the workspace was saved or opened."""
        now = self._snapshot()
        if not now[0]:
            return False
        if self._clean is None or now[0] != self._clean[0]:
            return True
        return not self._clean_files_only and now != self._clean

    def _may_close_all(self, name: str, text: str | None = None) -> bool:
        """Ask to save unsaved changes before they are closed: Save (then go on once saved), Discard, Cancel."""
        if not self.has_unsaved_changes():
            return True
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(self, M.WS_UNSAVED_TITLE, text or M.WS_UNSAVED_TEXT.format(name=name),
                                      buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
        if answer == buttons.Discard:
            return True
        if answer != buttons.Save:
            return False
        target = self._ws_path
        if not target:
            start = str(settings.get_value("dialog/dir", "") or "")
            target, _ = QFileDialog.getSaveFileName(self, M.ACT_SAVE_WS.replace("&", "").rstrip("."), start,
                                                    wsf.FILTER)
        if not target:
            return False
        self.save_workspace(target)
        return True

    def close_all(self) -> int:
        """Close every open file: reads are cancelled, the window starts over on a new, empty Workspace with the
        same formulas, counters and cache, and views computed from the old one are never shown.  Returns the
        number of files that were open."""
        from app.analysis.workspace import fresh_like
        from app.ui.render import ViewData
        from app.ui.selection import Selection

        n = len(self._open_paths())
        self.loader.cancel_all()
        self.loader.opened.clear()
        self._pending = []
        self._batch = []
        old = self.ws
        self.ws = fresh_like(old)
        self._epoch += 1
        self._loaded = False
        self._prep_tried.clear()
        self._smt_shown = None
        self._ws_pending = None
        self.selection.set_nodes([])
        self.selection.clear_window()
        self._apply(ViewData(selection=Selection(), roots=[], findings=[], files=[], loaded=False,
                             epoch=self._epoch))
        self.load_summary.setText("")
        compare = getattr(self, "compare", None)
        if compare is not None:      # the comparison of the closed files goes too (compare_tab.py is over the
            if compare._token is not None:    # size limit: its parts are reset from here)
                compare.jobs.discard(compare._token)
                compare._token = None
            compare.tab.data = None
            compare.tab.model.set_comparison(None)
            compare.tab._clear_charts()
            compare.tab.restore({"by": compare.tab.current_by()})    # both sides empty
        self._clean, self._clean_files_only = None, False
        return n

    def _workspace_ready(self) -> None:
        if self._ws_pending is not None and not self.loader.busy() and not self._pending and self._loaded:
            self._apply_workspace_state()

    def fill_recent_workspaces(self, menu) -> None:
        recent = settings.recent_workspaces()
        if not recent:
            return
        menu.addSection(M.RECENT_WORKSPACES)
        for p in recent:
            menu.addAction(p, lambda p=p: self.open_workspace(p))
