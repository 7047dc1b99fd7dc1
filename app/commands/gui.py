"""``nestscope gui [FILE...]``: open the window (what a plain start opens: :func:`app.ui.window_files.start_plan`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the window (default command)",
                       description="Open the NestScope window. Files and folders given are opened; with none, "
                                   "the bundled sample set is opened on a first start, and once you have opened "
                                   "files of your own, the files of your last session (or an empty window). "
                                   "Help > Open Sample opens the samples at any time.")
    p.add_argument("files", nargs="*", metavar="FILE", help="SMF 113 or MONWRITE files or folders (gzip allowed)")
    p.add_argument("--formulas", metavar="FILE", help="formula override file (JSON; File > Formula Sets... in the "
                                                      "window loads one too)")
    p.add_argument("--no-sample", action="store_true", help="start with an empty window even on a first start "
                                                             "(no bundled sample set)")


def samples_dir() -> Path:
    """The bundled sample folder (``NESTSCOPE_SAMPLES`` overrides it)."""
    from app.ui.window_files import samples_dir as folder

    return folder()


def sample_files() -> list[str]:
    """Every sample file except those under ``broken/`` (and hidden files / notes)."""
    from app.ui.window_files import sample_files as files

    return files()


def make_workspace(formulas: str | None):
    from app.analysis import new_workspace

    return new_workspace(formulas)


def _no_display() -> bool:
    """True on a Linux/BSD machine with no X11 or Wayland display and no Qt platform chosen.

    Qt would abort there ("could not connect to display", exit 134); say what to do instead.
    """
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run(args: argparse.Namespace) -> int:
    if _no_display():
        print("nestscope: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open.\n"
              "  Run it on a desktop session (or over ssh -X), render the window to a PNG with\n"
              "  `nestscope snapshot --out view.png`, or use `nestscope info` / `nestscope report`.",
              file=sys.stderr)
        return 2
    from PySide6.QtWidgets import QApplication

    from app.ui import quick_feature_check

    quick_feature_check()    # before the window's modules, pandas and the engine are imported (issue 23)
    from app.ui.main_window import MainWindow
    from app.ui.palette import apply_palette

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    qapp.setApplicationName("NestScope")
    qapp.setOrganizationName("NestScope")
    apply_palette(False)
    ws = None     # the window makes it after its first paint (pandas and the engine are imported then: issue 23)
    if getattr(args, "formulas", None):
        try:
            ws = make_workspace(args.formulas)
        except Exception as exc:  # a bad --formulas file: say so, no traceback
            print(f"nestscope: {exc}", file=sys.stderr)
            return 2
    from app.ui.window_files import start_plan

    window = MainWindow(ws, shell=True)   # painted first, its views built after that paint
    window.show()
    files, session = start_plan(list(args.files), args.no_sample)

    def start() -> None:
        if files:
            window.open_files(files)
            if not args.files:
                window.mark_unchanged(files)     # the demo: opening a workspace replaces it without asking to save
        elif session:
            window.open_workspace(session)
    window.after_first_paint(start)      # the window on screen first, then the reads (issue 23)
    return int(qapp.exec())
