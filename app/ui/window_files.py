"""What a desktop tool does with the files it has open: File > New, File > Close Files, Help > Open Sample,
File > Formula Sets..., and what a plain start opens.

* **New** empties the window: a fresh Workspace (same formula file), no files, no selection, no comparison.
* **Close Files** keeps the other files: the window starts over on a fresh Workspace and adds the kept read results
  again (nothing is read from disk again).
* **Formula Sets...** loads a user formulas file (``--formulas`` at start-up does the same): the open files are
  added again to a Workspace over the new sets, so every table, plot and export names the loaded set's version.
* **A plain start** (no files on the command line) opens the bundled sample set only until the user has opened
  files of their own; after that it reopens the last session's files (saved when the window closes) or nothing.

A mixin of MainWindow, as :mod:`app.ui.window_session`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
)

from app.ui import messages as M
from app.ui import settings

OWN_FILES_KEY = "start/own_files"      # the user opened files that are not the bundled samples
SESSION_NAME = "last-session.nsw.json"   # the files, selection and window of the last session (next to settings)


def samples_dir() -> Path:
    """The bundled sample folder (``NESTSCOPE_SAMPLES`` overrides it)."""
    env = os.environ.get("NESTSCOPE_SAMPLES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "resources" / "samples"


def sample_files() -> list[str]:
    """Every sample file except those under ``broken/`` (and hidden files / notes)."""
    root = samples_dir()
    if not root.is_dir():
        return []
    out = []
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root)
        if not f.is_file() or rel.parts[0] == "broken" or any(p.startswith(".") for p in rel.parts):
            continue
        if f.suffix.lower() in (".md", ".txt", ".json", ".csv", ".py"):
            continue
        out.append(str(f))
    return out


def is_sample(path: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(samples_dir().resolve())
    except OSError:
        return False


def session_file() -> Path:
    return Path(settings.settings().fileName()).parent / SESSION_NAME


def start_plan(files: list[str], no_sample: bool) -> tuple[list[str], str | None]:
    """What a start opens: (files, workspace file).  Files given win; then the sample set on a first start (not
    with ``--no-sample``); once the user has opened files of their own, the last session (or nothing)."""
    if files:
        return list(files), None
    if settings.get_bool(OWN_FILES_KEY):
        last = session_file()
        return [], (str(last) if last.is_file() else None)
    return ([] if no_sample else sample_files()), None


class FilesMixin:
    """New, Close Files, Open Sample, Formula Sets and the session kept for the next start (needs MainWindow)."""

    def note_opened(self, paths: list[str]) -> None:
        """Files the user opened: once any is not a bundled sample, a plain start no longer opens the samples."""
        if any(not is_sample(p) for p in paths):
            settings.set_value(OWN_FILES_KEY, True)

    # -- New / Close Files ---------------------------------------------------------------------
    def new_workspace(self) -> bool:
        """File > New: an empty window, after asking to save unsaved changes (Save / Discard / Cancel, as Open
        Workspace does); False when the user cancelled."""
        if not self._may_close_all("", M.WS_UNSAVED_NEW_TEXT):
            return False
        return self._start_over([])

    def close_files(self, paths: list[str] | None = None) -> bool:
        """File > Close Files: close ``paths`` (None: every file); the others stay open."""
        drop = None if paths is None else {str(Path(p).resolve()) for p in paths}
        keep = [] if drop is None else [r for r in self.ws.files if str(Path(r.file).resolve()) not in drop]
        return self._start_over(keep)

    def _start_over(self, keep: list[Any], formula_file: str | None = "same") -> bool:
        """A fresh Workspace holding the read results ``keep`` (added again through the window's own path)."""
        if self.runner.busy():     # a job runs over the old workspace: start over once it has ended
            self.statusBar().showMessage(M.STATUS_WAIT_JOB, 8000)
            return False
        from app.analysis import new_workspace
        from app.ui.compare_model import Side
        from app.ui.render import ViewData
        from app.ui.selection import Selection
        from app.ui.workers import LoadOutcome

        self.loader.cancel_all()
        ffile = self.ws.formula_file if formula_file == "same" else formula_file
        ws = new_workspace(ffile)
        kept = {str(Path(r.file).resolve()) for r in keep}
        self.loader.opened = [f for f in self.loader.opened if f.resolved in kept]
        self.ws = ws
        self.loader.counters = getattr(ws, "counters_needed", lambda: None)()
        self._pending, self._batch, self._loaded = [], [], False
        self._prep_tried.clear()
        self._smt_shown = None
        self._want_table = self._want_timeline = self._want_smt = False
        self.selection.blockSignals(True)
        self.selection.set_nodes([])
        self.selection.clear_window()
        self.selection.blockSignals(False)
        self.chip.set_window(None, None)
        self.load_summary.setText("")
        self.table.model.set_frame(self.table.model.frame.iloc[0:0], self.table.model.columns)
        tab = self.compare.tab
        for box in tab.boxes.values():
            box.set_side(Side())
        tab.data = None
        tab.model.set_comparison(None)
        tab._clear_charts()
        tab.request()
        self._apply(ViewData(selection=Selection(), roots=[], findings=[], files=[], loaded=False))
        for r in keep:
            self._on_file_read(LoadOutcome(r.file, "", r))
        self.statusBar().showMessage(M.STATUS_CLOSED.format(n=len(keep)) if keep else M.STATUS_NEW, 8000)
        return True

    def close_files_dialog(self) -> QDialog:
        """File > Close Files...: the open files, those of the selected tree nodes chosen; Close or Close All."""
        dlg = QDialog(self)
        dlg.setWindowTitle(M.CLOSE_FILES_TITLE)
        files = QListWidget()
        files.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        chosen = self._files_of_selection()
        for r in self.ws.files:
            item = QListWidgetItem(Path(r.file).name)
            item.setToolTip(r.file)
            item.setData(256, r.file)
            files.addItem(item)
            item.setSelected(r.file in chosen)
        buttons = QDialogButtonBox()
        close = buttons.addButton(M.CLOSE_SELECTED, QDialogButtonBox.ButtonRole.AcceptRole)
        close_all = buttons.addButton(M.CLOSE_ALL, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        close.clicked.connect(lambda: (self.close_files([i.data(256) for i in files.selectedItems()]), dlg.accept()))
        close_all.clicked.connect(lambda: (self.close_files(None), dlg.accept()))
        buttons.rejected.connect(dlg.reject)
        lay = QVBoxLayout(dlg)
        lay.addWidget(QLabel(M.CLOSE_FILES_TEXT))
        lay.addWidget(files)
        lay.addWidget(buttons)
        dlg.files = files
        dlg.open()
        return dlg

    def _files_of_selection(self) -> set[str]:
        """The files holding the selected tree nodes' LPARs (by the read results' samples)."""
        lpars = {(k[1], k[2]) for k in self.selection.value.nodes if len(k) >= 3}
        out = set()
        for r in self.ws.files:
            s = getattr(r, "samples", None)
            if s is not None and len(s) and {"cec", "lpar"} <= set(s.columns):
                if lpars & set(zip(s["cec"].astype(str), s["lpar"].astype(str))):
                    out.add(r.file)
        return out

    # -- samples, formula sets, the next start -------------------------------------------------
    def open_sample(self) -> int:
        """Help > Open Sample: the bundled sample set (added to what is open)."""
        files = sample_files()
        if not files:
            self.statusBar().showMessage(M.STATUS_NO_SAMPLES.format(path=samples_dir()), 8000)
            return 0
        return self.open_files(files)

    def load_formulas(self, path: str) -> bool:
        """Load a user formulas file: the open files are added again over its sets.  A bad file is a message."""
        from app.engine import load_formula_sets

        try:
            load_formula_sets(path)
        except Exception as exc:  # noqa: BLE001 - any reason the file cannot be used is told, no traceback
            self._formula_error = f"{path}: {exc}"
            box = QMessageBox(QMessageBox.Icon.Warning, M.FORMULAS_ERROR_TITLE, self._formula_error,
                              QMessageBox.StandardButton.Ok, self)
            box.open()
            self.statusBar().showMessage(self._formula_error, 8000)
            return False
        if not self._start_over(list(self.ws.files), formula_file=path):
            return False
        settings.set_value("formulas/file", path)
        versions = ", ".join(sorted(set(self.ws.formula_versions().values())))
        self.statusBar().showMessage(M.STATUS_FORMULAS.format(name=Path(path).name, versions=versions), 0)
        return True

    def formula_sets_dialog(self) -> QDialog:
        """File > Formula Sets...: the loaded sets and their versions, and a button to load a user file."""
        dlg = QDialog(self)
        dlg.setWindowTitle(M.FORMULAS_TITLE)
        text = QLabel()
        text.setWordWrap(True)

        def show() -> None:
            rows = "".join(f"<tr><td>{g}</td><td>{v}</td></tr>" for g, v in sorted(self.ws.formula_versions().items()))
            src = self.ws.formula_file or M.FORMULAS_BUILTIN
            text.setText(M.FORMULAS_TEXT.format(source=src, rows=rows))

        def pick() -> None:
            path, _ = QFileDialog.getOpenFileName(dlg, M.FORMULAS_PICK, str(settings.get_value("dialog/dir", "")),
                                                  "Formula sets (*.json);;All files (*)")
            if path and self.load_formulas(path):
                show()

        buttons = QDialogButtonBox()
        buttons.addButton(M.FORMULAS_LOAD, QDialogButtonBox.ButtonRole.ActionRole).clicked.connect(pick)
        buttons.addButton(QDialogButtonBox.StandardButton.Close).clicked.connect(dlg.accept)
        lay = QVBoxLayout(dlg)
        lay.addWidget(text)
        lay.addWidget(buttons)
        show()
        dlg.text = text
        dlg.open()
        return dlg

    def save_session(self) -> None:
        """Keep the open files, selection and window for the next plain start (none open: nothing kept)."""
        path = session_file()
        try:
            if self.ws.files and settings.get_bool(OWN_FILES_KEY):
                from app.ui import workspace_file as wsf

                path.parent.mkdir(parents=True, exist_ok=True)
                wsf.save(self.workspace_state(), str(path))
            elif path.exists():
                path.unlink()
        except OSError as exc:   # a read-only settings folder: the next start is empty, nothing breaks
            self.statusBar().showMessage(f"{path}: {exc.strerror or exc}", 8000)


def sample_count(result: Any) -> int:
    """Samples of a read result without loading them: a cached result (app/cache.py) knows the count, and
    reading its samples from Parquet on the GUI thread just to count them cost ~1.3 s on a month (issue 11)."""
    import pandas as pd

    meta = getattr(result, "_meta", None)
    if isinstance(meta, dict) and "n_samples" in meta and not isinstance(vars(result).get("_samples"),
                                                                          pd.DataFrame):
        return int(meta["n_samples"])
    return len(getattr(result, "samples", []))
