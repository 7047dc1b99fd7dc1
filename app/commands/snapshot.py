"""``nestscope snapshot``: render the real window offscreen to a PNG (for docs and checks)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from app.cli import EXIT_NOTHING, EXIT_OK, EXIT_USAGE
from app.userdirs import throwaway_settings

LOAD_TIMEOUT_S = 300
VIEWS = ("table", "timeline", "health", "smt")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help="render the window to a PNG (offscreen)",
                       description="Open FILEs (default: the bundled sample set) in the real window, offscreen, "
                                   "and save a PNG of it.")
    p.add_argument("files", nargs="*", metavar="FILE", help="SMF 113 or MONWRITE files or folders")
    p.add_argument("--out", required=True, metavar="PNG", help="PNG file to write")
    p.add_argument("--size", default="1440x900", metavar="WxH", help="window size (default 1440x900)")
    p.add_argument("--view", choices=VIEWS, default="table", help="tab to show (default table)")
    p.add_argument("--select", metavar="NODE", help="tree node to select: LPAR, system, CEC or 'LPAR/CLASS'")
    p.add_argument("--dark", action="store_true", help="dark palette")
    p.add_argument("--formulas", metavar="FILE", help="formula override file (JSON)")
    p.add_argument("--tz", choices=("local", "utc"), default=None,
                   help="times in the systems' local time (the default once the data states an offset) or UTC")
    from app.commands.report import add_keep_implausible

    add_keep_implausible(p)


def _size(text: str) -> tuple[int, int] | None:
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        return None


# what Qt's offscreen platform says for every window it shows: noise in a command's output, nothing to act on
OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)


class QuietQt:
    """A Qt message handler that drops :data:`OFFSCREEN_NOISE` (only that) while installed; every other message
    (real warnings) goes on to the handler that was there before, or to stderr as Qt's default handler writes
    it.  :meth:`install` returns ``self``; :meth:`remove` puts the previous handler back."""

    def __init__(self) -> None:
        self.previous = None
        self.installed = False
        self.dropped = 0

    def __call__(self, mode, context, message: str) -> None:
        if str(message).strip() in OFFSCREEN_NOISE:
            self.dropped += 1
            return
        if self.previous is not None:
            self.previous(mode, context, message)
            return
        category = getattr(context, "category", None) or "default"
        sys.stderr.write((f"{category}: " if category != "default" else "") + f"{message}\n")
        sys.stderr.flush()

    def install(self) -> QuietQt:
        from PySide6.QtCore import qInstallMessageHandler

        if not self.installed:
            self.previous = qInstallMessageHandler(self)
            self.installed = True
        return self

    def remove(self) -> None:
        from PySide6.QtCore import qInstallMessageHandler

        if self.installed:
            qInstallMessageHandler(self.previous)
            self.installed = False


_quiet = QuietQt()


def open_window(files: list[str], size: tuple[int, int], formulas: str | None = None,
                keep_implausible: bool = False):
    """The real MainWindow, offscreen, at ``size``, with ``files`` opened and every read and view job ended.

    Returns ``(qapp, window)``.  The Qt platform is offscreen unless one was chosen (its "does not support
    propagateSizeHints()" noise is dropped until :func:`teardown`, :class:`QuietQt`), and the settings go
    to a temporary file (never the user's).  Shared by ``snapshot`` and ``export --out FILE.png|.svg``;
    end with :func:`teardown`."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # never touch the user's settings from a snapshot
    throwaway_settings()
    from PySide6.QtWidgets import QApplication

    from app.commands.gui import make_workspace
    from app.ui.main_window import MainWindow
    from app.ui.palette import apply_palette

    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _quiet.install()   # until teardown
    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    apply_palette(False)
    window = MainWindow(make_workspace(formulas))
    window.keep_implausible_action.setChecked(bool(keep_implausible))    # the temporary settings only
    window.resize(*size)
    window.show()
    window.open_files(files)
    wait(qapp, window)
    return qapp, window


def run(args: argparse.Namespace) -> int:
    size = _size(args.size)
    if size is None or min(size) < 200:
        print(f"nestscope snapshot: --size {args.size!r}: expected WxH, e.g. 1440x900", file=sys.stderr)
        return EXIT_USAGE
    from app.commands.gui import sample_files

    files = list(args.files) or sample_files()
    from app.export import ExportError, atomic_output

    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        target = atomic_output(str(out), files)     # never over an input file, never half-written
    except (OSError, ExportError) as exc:
        print(f"nestscope snapshot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    qapp, window = open_window(files, size, args.formulas, getattr(args, "keep_implausible", False))
    if not any(getattr(r, "readable", True) for r in window.ws.files):
        print("nestscope snapshot: nothing readable in " + ", ".join(files or ["(no files)"]), file=sys.stderr)
        _teardown(qapp, window)
        return EXIT_NOTHING
    if args.dark:
        window.actions_.dark.setChecked(True)
    if getattr(args, "tz", None) and hasattr(window, "local_time_action"):     # View > Local time
        window.local_time_action.setChecked(args.tz == "local")
    select(window, args.select)
    _wait(qapp, window)
    window.tabs.setCurrentWidget({"table": window.table, "timeline": window.timeline, "health": window.health,
                                  "smt": window.smt}[args.view])
    _wait(qapp, window)  # the SMT tables are computed when their tab is shown
    for _ in range(5):
        qapp.processEvents()
    try:
        with target as tmp:
            if not window.grab().save(tmp, "PNG"):
                raise ExportError(f"{out}: cannot be written")
    except ExportError as exc:
        print(f"nestscope snapshot: {exc}", file=sys.stderr)
        _teardown(qapp, window)
        return EXIT_USAGE
    print(f"{out}: {size[0]}x{size[1]} {args.view}")
    _teardown(qapp, window)
    return EXIT_OK


def _teardown(qapp, window) -> None:
    """Let every worker end and delete the window while Qt still runs: a window left to the interpreter's
    exit could crash there (segmentation fault after the PNG was written, issue 14)."""
    from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool

    from app.ui.workers import read_pool

    window.loader.cancel_all()
    read_pool().waitForDone(10_000)
    QThreadPool.globalInstance().waitForDone(10_000)
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qapp.processEvents()
    _quiet.remove()


def _wait(qapp, window) -> None:
    """Spin the event loop until every read job has ended."""
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    qapp.processEvents()
    while (window.busy() or window.loader.running_workers()) and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.01)
    qapp.processEvents()


wait = _wait
teardown = _teardown


def select(window, wanted: str | None) -> None:
    """Select ``wanted`` (matched against node labels and keys) or the first LPAR."""
    key = None
    if wanted:
        parts = [p.lower() for p in wanted.split("/")]
        for node in window.tree.model.all_nodes():
            names = [str(k).lower() for k in node.key[1:]] + [str(node.label).lower(),
                                                              str((node.info or {}).get("system", "")).lower()]
            if parts[-1] in names and all(p in [str(k).lower() for k in node.key[1:]] + names for p in parts):
                key = tuple(node.key)
                break
    key = key or window.tree.first_key("lpar") or window.tree.first_key("cec")
    if key:
        window.tree.select_keys([key])
