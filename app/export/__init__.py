"""Exports for slide decks and spreadsheets: CSV, XLSX, PPTX -- one code path for the GUI and the CLI.

>>> from app.export import ExportRequest, export
>>> req = ExportRequest(workspace, by="lpar", shift=make_shift("08-17", "mon-fri"), comparison=cmp)
>>> export(req, "deck.pptx", progress=lambda f, text: ..., cancel=lambda: False)

* The format comes from the extension (:data:`FORMATS`): ``.csv`` (the level's rows with the
  columns of ``report --format csv``, or the comparison table when a comparison is set),
  ``.xlsx`` (one sheet per level, a native timeline chart, Compare and About sheets), ``.pptx``
  (16:9 deck with native tables and editable charts; provenance in every slide's notes).
  PNG/SVG pictures of plots are made by the window (it renders what the screen shows); here
  they raise :class:`ExportError` saying so.
* ``progress(fraction, text)`` is called now and then (0.0 .. 1.0); ``cancel()`` is polled and
  when it returns True the export stops with :class:`ExportCancelled` and leaves nothing behind.
  Both may be ``None``.  Run :func:`export` in a worker thread from the GUI: it never touches Qt.
* An export never writes over one of its input files and never leaves a half-written file:
  it writes a temporary file in the target folder and renames it (``os.replace``) at the end.
* Errors that are the user's (bad extension, unwritable folder, target is an input file) raise
  :class:`ExportError` with a one-line message naming the file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from app.analysis.request import ExportRequest
from app.fileio import TargetBusy, replace, same_file

__all__ = ["ExportRequest", "ExportResult", "ExportError", "ExportCancelled", "FORMATS", "IMAGE_FORMATS",
           "export", "atomic_output", "write_text", "format_of", "Progress", "LEVELS", "export_table", "import_writers_ahead"]

Progress = Callable[[float, str], None]
FORMATS = {".csv": "CSV (UTF-8)", ".xlsx": "Excel workbook", ".pptx": "PowerPoint deck (16:9)"}
IMAGE_FORMATS = (".png", ".svg")
IMAGE_NAMES = {".png": "picture of the plots", ".svg": "vector picture of the plots"}
LEVELS = ("interval", "cpu", "class", "lpar", "cec", "pool")


class ExportError(Exception):
    """An export that cannot be made; the message names the file and says why."""


class ExportCancelled(ExportError):
    """The cancel callback asked to stop; no file was written."""


@dataclass
class ExportResult:
    """``path`` written, ``kind`` (csv/xlsx/pptx), ``items`` (rows, sheets or slides written, by name)."""

    path: str
    kind: str
    items: dict[str, int] = field(default_factory=dict)


def format_of(path: str) -> str:
    """The export format of a path from its extension (``.csv`` -> "csv"); raises :class:`ExportError`."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext in FORMATS:
        return ext[1:]
    if ext in IMAGE_FORMATS:
        raise ExportError(f"{path}: PNG and SVG pictures are drawn from the window's plots (File > Export, "
                          "right-click > Export on a plot, or `nestscope export ... --out FILE.png|.svg`); the "
                          "table writers take .csv, .xlsx or .pptx")
    raise ExportError(f"{path}: unknown export format {ext or '(no extension)'!r}; NestScope writes "
                      + ", ".join(f"{e} ({what})" for e, what in {**FORMATS, **IMAGE_NAMES}.items()))


class atomic_output:  # noqa: N801 - used as a function: ``with atomic_output(path) as tmp:``
    """Yield a temporary path in the target folder; on success rename it to ``path``.

    Raises :class:`ExportError` when ``path`` is one of ``inputs`` or the folder cannot be
    written.  On any exception (including :class:`ExportCancelled`, and a SIGTERM or SIGHUP raised as
    ``KeyboardInterrupt``) the temporary file is removed and ``path`` is left as it was: also when the signal
    lands the instant after the temporary file was made, before the body runs (the file is made inside the
    clean-up's reach, under a name chosen first).
    """

    def __init__(self, path: str, inputs: list[str] = (), suffix: str = ""):
        self.path = path = str(path)
        for p in inputs:
            if same_file(path, p):
                raise ExportError(f"{path}: is one of the input files; choose another name")
        self.folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(self.folder):
            raise ExportError(f"{path}: folder {self.folder} does not exist")
        self.suffix = suffix or os.path.splitext(path)[1] + ".part"
        self.tmp: str | None = None

    def __enter__(self) -> str:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
        for _ in range(tempfile.TMP_MAX):
            name = os.path.join(self.folder, f".nestscope-{secrets.token_hex(4)}{self.suffix}")
            try:
                self.tmp = name                  # named before it exists: a signal after os.open still finds it
                os.close(os.open(name, flags, 0o600))
                return name
            except FileExistsError:
                self.tmp = None                  # another file's name: never ours to remove
            except OSError as exc:
                self.tmp = None
                raise ExportError(f"{self.path}: cannot write in {self.folder} ({exc.strerror or exc})") from None
            except BaseException:
                self._remove()
                raise
        raise ExportError(f"{self.path}: cannot write in {self.folder} (no free temporary name)")

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                try:
                    os.chmod(self.tmp, _mode_for(self.path))
                    replace(self.tmp, self.path)
                except TargetBusy as err:
                    raise ExportError(f"{self.path}: cannot be replaced: {err.strerror}") from None
                except OSError as err:
                    raise ExportError(f"{self.path}: cannot be written ({err.strerror or err})") from None
        finally:
            self._remove()

    def _remove(self) -> None:
        if self.tmp is not None and os.path.exists(self.tmp):
            with contextlib.suppress(OSError):
                os.remove(self.tmp)


def write_text(path: str, text: str, inputs: list[str] = ()) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` through :class:`atomic_output`: never over one of
    ``inputs``, never half-written.  A ``path`` that is there and no regular file (a FIFO, ``/dev/stdout``) is
    written to as it is, not replaced.  Raises :class:`ExportError` with the reason."""
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False
    if special:
        try:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as exc:
            raise ExportError(f"{path}: cannot be written ({exc.strerror or exc})") from None
        return
    with atomic_output(path, list(inputs)) as tmp:
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as exc:
            raise ExportError(f"{path}: cannot be written ({exc.strerror or exc})") from None


def _mode_for(path: str) -> int:
    """Permissions of the file written to ``path``: those of the file it replaces, else the usual ones (mkstemp
    makes 0600)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _Steps:
    """Progress/cancel helper handed to the writers."""

    def __init__(self, progress: Progress | None, cancel: Callable[[], bool] | None):
        self._progress, self._cancel = progress, cancel

    def __call__(self, fraction: float, text: str) -> None:
        if self._cancel is not None and self._cancel():
            raise ExportCancelled("export cancelled; nothing was written")
        if self._progress is not None:
            self._progress(max(0.0, min(1.0, float(fraction))), text)


def export(request: ExportRequest, path: str, progress: Progress | None = None,
           cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write ``request`` to ``path`` in the format of its extension (see the module docstring)."""
    kind = format_of(path)
    if request.by not in LEVELS:
        raise ExportError(f"{path}: level {request.by!r} cannot be exported; use one of {', '.join(LEVELS)}")
    if request.profile is not None:
        from app.export.profile import PROFILES
        if request.profile not in PROFILES:
            raise ExportError(f"{path}: profile {request.profile!r} is none of {', '.join(PROFILES)}")
        if kind == "csv":
            raise ExportError(f"{path}: the profile is a sheet of a workbook (.xlsx) or slides of a deck (.pptx); "
                              "for CSV use `nestscope report --by hour|weekday|hour-weekday --format csv`")
    steps = _Steps(progress, cancel)
    steps(0.0, f"exporting {os.path.basename(str(path))}")
    from app.engine.shift import shared_shift_rows
    from app.export.provenance import hash_ahead

    hash_ahead(request.input_paths())          # the provenance's SHA-256 while the writer computes its levels
    _imports_done()

    # one shifted copy of each side's CPU-interval rows for every level the writer asks for
    with atomic_output(str(path), request.input_paths()) as tmp, shared_shift_rows():
        if kind == "csv":
            from app.export.csv import write_csv
            items = write_csv(request, tmp, steps)
        elif kind == "xlsx":
            from app.export.xlsx import write_xlsx
            items = write_xlsx(request, tmp, steps)
        else:
            from app.export.pptx import write_pptx
            items = write_pptx(request, tmp, steps)
        steps(1.0, "done")
    return ExportResult(str(path), kind, items)


# the modules a deck's writers import when they start (python-pptx, its chart and workbook writers, XlsxWriter),
# including those imported inside their functions; about 0.4 CPU s of Python on a cold start
DECK_MODULES = ("app.export.pptx", "app.export.pptx_compare", "app.export.chart_data", "app.export.pptx_zip",
                "app.export.xlsx_rows", "pptx.chart.xmlwriter", "pptx.chart.series", "pptx.opc.serialized",
                "pptx.enum.chart", "pptx.enum.text", "pptx.dml.color", "pptx.oxml.ns", "xlsxwriter.worksheet",
                "encodings.utf_16_le", "encodings.cp437")


_AHEAD: list = []        # the import_writers_ahead threads started in this process


def _imports_done() -> None:
    """Wait for the writer modules' imports started ahead: a writer then never imports a module that thread is
    importing (two threads importing modules that import each other can deadlock; Python then raises)."""
    while _AHEAD:
        _AHEAD.pop().join()


def wait_imports_ahead() -> None:
    """:func:`_imports_done` for another thread than the writers' (a comparison deck's before side, about to make
    its chart data): it waits too, leaving the threads for the writers to wait for.  Importing the writer modules
    beside that thread could meet python-pptx's package half imported there (Python's answer to two threads
    importing modules that import each other): an element class registration of ``pptx.oxml`` then missing for
    good, the deck failed at its first slide ("'lxml.etree._Element' object has no attribute 'type'"), seen with
    two small files (the bundled samples' before side read before the imports were over)."""
    for th in list(_AHEAD):
        th.join()


def import_writers_ahead(kind: str):
    """Import the writer modules of ``kind`` ("pptx"; other kinds: nothing) on a daemon thread and return it
    (None when nothing is to be done): the CLI's deck starts it before the files are read, so the imports run
    while the reads wait on the gzip inflate, the reader's kernel and Arrow (without the GIL), not on the
    writers' thread once they start.  An import that fails here is left for the writers to raise."""
    import sys
    import threading

    names = [m for m in DECK_MODULES if m not in sys.modules] if kind == "pptx" else []
    if not names:
        return None

    def run() -> None:
        import importlib

        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the writers import it again and report
                pass
    th = threading.Thread(target=run, name="nestscope-import-ahead", daemon=True)
    th.start()
    _AHEAD.append(th)
    return th


def export_table(frame, path: str, columns: list[str] | None = None, headers: list[str] | None = None,
                 inputs: list[str] = ()) -> ExportResult:
    """Write one table (e.g. the rows a view shows) to ``.csv`` or ``.xlsx`` -- right-click > Export.

    ``columns``: frame columns in order (default all); ``headers``: header texts (default the column
    names).  CSV cells follow the rules of the CSV export (no float noise, formulas neutralised); the
    XLSX sheet has a frozen, filtered header row.  Atomic like :func:`export`; never writes over ``inputs``.
    """
    from app.export.csv import cell
    from app.textsafe import csv_line, csv_text

    kind = format_of(path)
    if kind == "pptx":
        raise ExportError(f"{path}: a single table is exported as .csv or .xlsx; use File > Export for a deck")
    columns = list(columns if columns is not None else frame.columns)
    headers = list(headers if headers is not None else columns)
    with atomic_output(str(path), list(inputs)) as tmp:
        if kind == "csv":
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(csv_line(csv_text(h) for h in headers))
                data = {c: frame[c].tolist() for c in columns}
                for i in range(len(frame)):
                    fh.write(csv_line(cell(c, data[c][i]) for c in columns))
        else:
            from app.export.xlsx import write_table
            write_table(frame, tmp, columns, headers)
    return ExportResult(str(path), kind, {"rows": len(frame)})
