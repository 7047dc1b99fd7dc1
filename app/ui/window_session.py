"""The main window's session: save/open workspace files, recent workspaces, the summary of a load.

A mixin of MainWindow (it uses the window's loader, selection, workspace and status bar).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QStyle

from app.ui import messages as M
from app.ui import settings
from app.ui import workspace_file as wsf

ERROR_TAB_COLOR = QColor(214, 39, 40)
WARNING_TAB_COLOR = QColor(200, 120, 0)


class SessionMixin:
    """Workspace files and the load summary (needs ``ws``, ``loader``, ``selection``, ``tabs``, ``health``)."""

    def _init_session(self) -> None:
        self._batch: list[tuple[str, bool, str]] = []   # (file name, readable, worst severity) since the last idle
        self._ws_pending: wsf.WorkspaceState | None = None   # a workspace being reopened (applied once loaded)
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
        bad = [name for name, _ok, sev in self._batch if sev == "error"]
        warned = sum(1 for _n, _ok, sev in self._batch if sev == "warning")
        names = ", ".join(bad[:3]) + (", ..." if len(bad) > 3 else "")
        text = M.STATUS_LOAD_SUMMARY.format(read=sum(1 for _n, ok, _s in self._batch if ok), total=len(self._batch),
                                            errors=len(bad), warnings=warned,
                                            detail=M.STATUS_LOAD_ERRORS_DETAIL.format(names=names) if bad else "")
        self.load_summary.setText(text)
        self.load_summary.setToolTip(M.STATUS_LOAD_SUMMARY_TIP)
        self.load_summary.setStyleSheet(f"QLabel {{ color: {ERROR_TAB_COLOR.name()}; }}" if bad else "")
        self._batch = []

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
        """Open a workspace's files (those not open yet) and restore its selection, window and comparison
        once they are read.  A bad file gives a message naming it, never a traceback."""
        try:
            state = wsf.load(path)
        except wsf.WorkspaceFileError as e:
            box = QMessageBox(QMessageBox.Icon.Warning, M.WS_ERROR_TITLE, str(e), QMessageBox.StandardButton.Ok,
                              self)
            box.open()
            self.statusBar().showMessage(str(e), 8000)
            return False
        settings.add_recent_workspace(path)
        missing = [f for f in state.files if not Path(f).exists()]
        present = [f for f in state.files if Path(f).exists()]
        open_now = {str(Path(r.file).resolve()) for r in self.ws.files}
        todo = [f for f in present if str(Path(f).resolve()) not in open_now]
        name = Path(path).name
        if missing:
            self.statusBar().showMessage(M.STATUS_WS_MISSING.format(
                name=name, n=len(missing), names=", ".join(Path(f).name for f in missing)), 0)
        else:
            self.statusBar().showMessage(M.STATUS_WS_OPENED.format(name=name, n=len(state.files)), 8000)
        self._ws_pending = state
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
