"""File > Export (Ctrl+E): what to export, at which level, to which file; run off the GUI thread.

The format comes from the file's extension: ``.csv``, ``.xlsx`` and ``.pptx`` are written by
:func:`app.export.export` (the CLI's code path) in a worker of the window's SerialRunner, with a
progress bar and Cancel; ``.png`` and ``.svg`` are pictures of the timeline panel or of the
comparison's charts, rendered by :mod:`app.ui.plot_export` at the chosen size.  Errors are shown
in the dialog as one line naming the file; nothing is ever half-written.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.export import FORMATS, IMAGE_FORMATS, ExportCancelled, ExportError, ExportRequest, export
from app.ui.palette import error_style
from app.ui.plot_export import MAX_SIDE, MIN_SIDE, parse_size

WHAT = {"table": "Current table: the selected nodes over the time window",
        "comparison": "Comparison: before / after table, CPI waterfall, both sides' sheets",
        "deck": "Whole deck: every LPAR of the open files (with the comparison when one is set)"}
LEVELS = {"lpar": "LPAR (one row per LPAR)", "class": "Processor class", "cpu": "Logical CPU",
          "cec": "CEC (machine)", "interval": "Intervals (class per interval)",
          "pool": "CEC pools (one row per CEC and processor type)"}
FILTERS = ";;".join(["PowerPoint deck (*.pptx)", "Excel workbook (*.xlsx)", "CSV, UTF-8 (*.csv)",
                     "PNG picture (*.png)", "SVG picture (*.svg)"])
KINDS = {**FORMATS, ".png": "PNG picture", ".svg": "SVG picture"}
DIR_KEY = "export/dir"
# the file name the dialog suggests for each "What" (folder and extension are the last ones used)
DEFAULT_NAMES = {"table": "nestscope_table", "comparison": "nestscope_comparison", "deck": "nestscope_deck"}


class _Bridge(QObject):
    """Carries progress from the worker thread to the dialog (queued across threads)."""

    progress = Signal(float, str)


def run_export(request: ExportRequest, path: str, progress, cancel) -> tuple[str, Any]:
    """Run :func:`app.export.export`; returns ("ok", ExportResult) / ("cancelled", text) / ("error", text)."""
    try:
        return "ok", export(request, path, progress=progress, cancel=cancel)
    except ExportCancelled as exc:
        return "cancelled", str(exc)
    except ExportError as exc:
        return "error", str(exc)
    except OSError as exc:
        return "error", f"{path}: {exc.strerror or exc}"


def window_zone() -> str:
    """The zone a file exported from the window writes its times in: ``local`` (each system's own offsets, as
    the CLI's ``--tz local``) where View > Local time is on and the data state a local time other than UTC (also
    where the systems' zones differ: each time then carries its own offset), else ``utc`` (issue 26)."""
    from app.ui.time_zone import LOCAL, ZONE

    return LOCAL if ZONE.mode == LOCAL and (ZONE.local or ZONE.can_mix) else "utc"


class ExportDialog(QDialog):
    """What / level / file, a progress bar and Cancel."""

    finished_export = Signal(str, str)   # outcome ("ok", "cancelled", "error"), text

    def __init__(self, window: Any, controller: Any, what: str = "table") -> None:
        super().__init__(window)
        self.w, self.ctl = window, controller
        self.setWindowTitle("Export")
        self.setMinimumWidth(660)       # the longest "What" entry and the CPU-sheet box unclipped
        self._cancel = threading.Event()
        self._token: object | None = None
        self.last: tuple[str, str] = ("", "")   # the last outcome ("ok" / "cancelled" / "error", text)
        self.bridge = _Bridge(self)
        self.bridge.progress.connect(self._on_progress)
        self.what = QComboBox()
        for key, text in WHAT.items():
            self.what.addItem(text, key)
        self.level = QComboBox()
        for key, text in LEVELS.items():
            self.level.addItem(text, key)
        self.level.setToolTip("Level of the CSV rows and of the deck's summary table; the workbook has every level")
        self.path = QLineEdit()
        self.path.setPlaceholderText("file name: .pptx, .xlsx, .csv, .png or .svg")
        self.browse = QPushButton("Browse...")
        self.browse.clicked.connect(self._browse)
        self.size = QLineEdit("1600x900")
        self.size.setToolTip("Picture size in pixels, width x height (PNG and SVG only)")
        self.size_error = QLabel("")   # the fields are checked as they are typed: red lines under them
        self.size_error.setObjectName("export_size_error")
        self.kind = QLabel()
        self.title = QLineEdit("CPU MF analysis")
        self.profile = QComboBox()   # issue 26: the profile sheet / slides
        for key, text in ((None, "none"), ("hour", "by hour of day"), ("weekday", "by day of week"),
                          ("hour-weekday", "by hour and day of week")):
            self.profile.addItem(text, key)
        self.profile.setToolTip("Add the profile of the level's nodes: a Profile sheet (.xlsx) or slides with hour x "
                                "day-of-week heat maps of CPI, RNI, L1MP and LPARCPU (.pptx)")
        self.cpu_sheet = QCheckBox("CPU intervals sheet (one row per logical CPU and interval)")
        self.cpu_sheet.setObjectName("export_cpu_sheet")
        self.cpu_sheet.setToolTip("Workbook only: the sheet of every logical CPU's intervals (a month of one CEC "
                                  "holds 368,640 such rows and takes most of the export's time and size); left "
                                  "out unless ticked, and the About sheet says so")
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.state = QLabel("")
        self.state.setWordWrap(True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        file_row = QWidget()
        fr = QHBoxLayout(file_row)
        fr.setContentsMargins(0, 0, 0, 0)
        fr.addWidget(self.path, 1)
        fr.addWidget(self.browse)
        form = QFormLayout()
        form.addRow("What", self.what)
        form.addRow("Level", self.level)
        form.addRow("File", file_row)
        form.addRow("Format", self.kind)
        form.addRow("Picture size", self.size)
        form.addRow("", self.size_error)
        form.addRow("Title", self.title)
        form.addRow("Profile", self.profile)
        form.addRow("Workbook", self.cpu_sheet)
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton("Cancel export", QDialogButtonBox.ButtonRole.ActionRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.close)
        self.cancel_button.setEnabled(False)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.progress)
        lay.addWidget(self.state)
        lay.addWidget(self.buttons)
        self.path.textChanged.connect(self._update)
        self.size.textChanged.connect(self._update)
        self.what.currentIndexChanged.connect(self._what_changed)
        folder = _settings_get(DIR_KEY) or os.path.expanduser("~")
        self.path.setText(os.path.join(str(folder), DEFAULT_NAMES["table"] + ".pptx"))
        self.set_what(what)
        self._what_changed()

    def reset(self, what: str) -> None:
        """Open again for ``what``: no result of the last run is shown, and a suggested file name names it."""
        if self.running():
            return
        self.progress.setValue(0)
        self.state.setStyleSheet("")
        self.state.setText("")
        self.last = ("", "")
        self.set_what(what)
        self._what_changed()

    def _what_changed(self, *_args) -> None:
        """A suggested file name follows "What" (a name the user typed stays); a deck is never a picture."""
        what = self.what.currentData()
        folder, name = os.path.split(self.path.text().strip())
        stem, ext = os.path.splitext(name)
        if not stem or stem in DEFAULT_NAMES.values() or stem == "nestscope":
            if what == "deck" and ext.lower() in IMAGE_FORMATS or ext.lower() not in KINDS:
                ext = ".pptx"
            self.path.setText(os.path.join(folder, DEFAULT_NAMES.get(what, "nestscope") + ext))
        self._update()

    # -- fields ----------------------------------------------------------------------------------
    def set_what(self, what: str) -> None:
        i = self.what.findData(what)
        if i >= 0:
            self.what.setCurrentIndex(i)

    def set_level(self, level: str) -> None:
        i = self.level.findData(level)
        if i >= 0:
            self.level.setCurrentIndex(i)

    def _ext(self) -> str:
        return os.path.splitext(self.path.text().strip())[1].lower()

    def _update(self) -> None:
        ext = self._ext()
        has_cmp = self.ctl is not None and self.ctl.tab.comparison is not None
        item = self.what.model().item(self.what.findData("comparison"))
        if item is not None:
            item.setEnabled(has_cmp)
            item.setToolTip("" if has_cmp else "Set a before and an after side first (tree: right-click)")
        self.kind.setText(KINDS.get(ext, "unknown: use .pptx, .xlsx, .csv, .png or .svg"))
        self.kind.setStyleSheet(error_style(ext not in KINDS, bold=False))
        image = ext in IMAGE_FORMATS
        size_bad = image and parse_size(self.size.text()) is None
        self.size_error.setText(f"{self.size.text().strip()!r} is not WxH, each side {MIN_SIDE}..{MAX_SIDE} "
                                "(e.g. 1600x900)" if size_bad else "")
        self.size_error.setStyleSheet(error_style(size_bad, bold=False))
        self.size.setEnabled(image)
        self.level.setEnabled(not image)
        self.title.setEnabled(ext in (".pptx", ".xlsx"))
        self.profile.setEnabled(ext in (".pptx", ".xlsx") and self.what.currentData() != "comparison")
        self.cpu_sheet.setEnabled(ext == ".xlsx")

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), FILTERS)
        if path:
            self.path.setText(path)

    def request(self) -> ExportRequest:
        """The ExportRequest for the fields (data formats)."""
        from app.analysis import NoComparison, window_request

        sel = self.w.selection.value
        cmp = self.ctl.tab.comparison if self.ctl is not None else None
        # the sides' descriptions were computed with the comparison (never the workspace on this thread)
        desc = self.ctl.tab.data.describe if cmp is not None else None
        try:
            req = window_request(self.w.ws, self.what.currentData(), self.level.currentData(), self.title.text(),
                                  sel.start, sel.end, sel.nodes, cmp, desc,
                                  self.profile.currentData() if self.profile.isEnabled() else None)
            req.cpu_sheet = self.cpu_sheet.isEnabled() and self.cpu_sheet.isChecked()
            req.tz = window_zone()
            return req
        except NoComparison as exc:
            raise ExportError(f"{self.path.text().strip()}: {exc}") from None

    # -- running ---------------------------------------------------------------------------------
    def running(self) -> bool:
        return self._token is not None

    def start(self) -> bool:
        """Start the export of the fields; False (with the reason shown) when it cannot start."""
        if self.running():
            return False
        path = self.path.text().strip()
        if not path:
            return self._fail("give a file name (.pptx, .xlsx, .csv, .png or .svg)")
        path = os.path.abspath(os.path.expanduser(path))
        if not self.w.ws.files:
            return self._fail(f"{path}: nothing to export yet; open SMF 113 or MONWRITE files first")
        ext = self._ext()
        if ext in IMAGE_FORMATS:
            return self._picture(path)
        if ext not in FORMATS:
            return self._fail(f"{path}: unknown format {ext or '(no extension)'!r}; use .pptx, .xlsx, .csv, "
                              ".png or .svg")
        try:
            req = self.request()
        except ExportError as exc:
            return self._fail(str(exc))
        self._cancel.clear()
        self._set_running(True)
        self.progress.setValue(0)
        self.state.setStyleSheet("")
        self.state.setText(f"Exporting {os.path.basename(path)}..." if not self.ctl.jobs.runner.busy() else
                           "Waiting for the window's computation to end...")
        emit, cancel = self.bridge.progress.emit, self._cancel.is_set
        self._token = self.ctl.jobs.run(lambda: run_export(req, path, emit, cancel), self._done, self._crashed)
        _settings_set(DIR_KEY, os.path.dirname(path))
        return True

    def _picture(self, path: str) -> bool:
        from app.ui.plot_export import save_picture

        size = parse_size(self.size.text())
        if size is None:
            return self._fail(f"{path}: picture size {self.size.text()!r} is not WxH (e.g. 1600x900)")
        what = self.what.currentData()
        if what == "deck":
            return self._fail(f"{path}: a picture shows plots: choose 'Current table' (the timelines) or "
                              "'Comparison' (its charts), or export the deck as .pptx")
        if what == "comparison":
            if self.ctl.tab.comparison is None:
                return self._fail(f"{path}: no comparison is set")
            target, name = self.ctl.tab.charts, "comparison charts"
        else:
            self.w.timeline.ensure_drawn()   # a hidden timeline tab draws only when shown
            target, name = self.w.timeline.glw, "timelines"
        header = self.ctl.timeline_header() if what == "table" else ""
        try:
            save_picture(target, path, size, title=name, header=header)
        except ExportError as exc:
            return self._fail(str(exc))
        self.progress.setValue(100)
        self._finish("ok", f"Written: {path} ({size[0]}x{size[1]}, {name})")
        _settings_set(DIR_KEY, os.path.dirname(path))
        return True

    def cancel(self) -> None:
        """Stop the running export; nothing is written."""
        if not self.running():
            return
        self._cancel.set()
        self.state.setText("Cancelling...")

    def _on_progress(self, fraction: float, text: str) -> None:
        if self.running():
            self.progress.setValue(int(round(fraction * 100)))
            self.state.setText(text)

    def _done(self, outcome: tuple[str, Any]) -> None:
        self._token = None
        self._set_running(False)
        kind, value = outcome
        if kind == "ok":
            self.progress.setValue(100)
            items = ", ".join(f"{k}: {v}" for k, v in (value.items or {}).items())
            self._finish("ok", f"Written: {value.path}" + (f" ({items})" if items else ""))
        elif kind == "cancelled":
            self.progress.setValue(0)
            self._finish("cancelled", f"Cancelled: {value}")
        else:
            self._finish("error", str(value), error=True)

    def _crashed(self, text: str, details: str) -> None:
        self._token = None
        self._set_running(False)
        self._finish("error", f"{self.path.text().strip()}: the export failed: {text}", error=True)
        self.w._unexpected(f"Export: {text}", details)

    def _fail(self, text: str) -> bool:
        self._finish("error", text, error=True)
        return False

    def _finish(self, kind: str, text: str, error: bool = False) -> None:
        self.state.setStyleSheet(error_style(error))
        self.state.setText(text)
        self.last = (kind, text)
        if kind == "ok":
            self.w.statusBar().showMessage(text, 8000)
        self.finished_export.emit(kind, text)

    def _set_running(self, on: bool) -> None:
        self.export_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        for wdg in (self.what, self.level, self.path, self.browse, self.size, self.title, self.profile):
            wdg.setEnabled(not on)
        if not on:
            self._update()

    def closeEvent(self, event) -> None:
        self.cancel()   # closing stops a running export (nothing is written)
        super().closeEvent(event)

    def reject(self) -> None:
        self.cancel()
        super().reject()


def _settings_get(key: str) -> str:
    from app.ui import settings

    return str(settings.get_value(key, "") or "")


def _settings_set(key: str, value: str) -> None:
    from app.ui import settings

    settings.set_value(key, value)
