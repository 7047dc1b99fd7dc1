"""Whole-column cell writes for XlsxWriter's constant-memory mode: the rows of a big sheet as one XML text per
block of rows.

XlsxWriter writes a cell through ``write_number`` / ``write_string`` (argument checks, a cell tuple, then the XML
of that cell when its row is flushed): about 3-5 microseconds a cell, a minute for the month's 10 million cells.
Here a sheet's data is given as whole columns (numpy arrays of numbers, lists of texts); every column's cells of a
block of rows are formatted in one comprehension and the block's ``<row>`` elements are written in one call to
the worksheet's row-data file, the file XlsxWriter's constant-memory mode keeps its flushed rows in (the same XML
it writes: numbers as ``<v>`` values, texts as inline strings escaped by XlsxWriter's own rules).  Only one block
of rows is held as text at a time.

:func:`write_columns` falls back to XlsxWriter's per-cell calls when the workbook is not in constant-memory
mode or this XlsxWriter lacks the internals used (a newer release may rename them); the result is the same
workbook either way (``tests/export/test_xlsx_rows.py`` reads both back).

:func:`zip_level`: the deflate level XlsxWriter packs a workbook's parts at when it is closed.  XlsxWriter zips
them with :mod:`zipfile` at zlib's default level (6) and has no option for it; the month's workbook is 104 MB of
XML, and level 6 spends 3-4 s compressing it (level 1: a third of that, the file 17 % larger).  Inside it the
big parts are deflated in pieces on two threads (zlib runs without the GIL).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import zipfile
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from itertools import chain, repeat
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.export.pptx_zip import deflating
from app.textsafe import display_text

try:
    from xlsxwriter.utility import _preserve_whitespace
except ImportError:                 # another XlsxWriter release: the same rule
    def _preserve_whitespace(s: str) -> bool:
        return bool(s) and (s[0].isspace() or s[-1].isspace())

__all__ = ["SheetColumn", "write_columns", "BLOCK_ROWS", "fast_path_available", "zip_level"]

_MISS = object()
BLOCK_ROWS = 4096                 # rows formatted per block (a few MB of XML text at a time)


@dataclass
class SheetColumn:
    """One column of cells: ``col`` (0-based column), ``kind`` ("num": a float64 array, NaN = empty cell;
    "text": a list of objects, None/NaN = empty, bools as yes/no, texts through :func:`display_text`) and the
    XlsxWriter ``fmt`` of its cells (None: no cell format); ``texts``: a "num" column's values as ``repr`` gives
    them, when the caller has them already (a chart's points, also written into the chart's XML)."""

    col: int
    kind: str
    data: Any
    fmt: Any = None
    texts: Sequence[str] | None = None


def _letters(col: int) -> str:
    s, i = "", col + 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def fast_path_available(sh) -> bool:
    """True when ``sh`` is a constant-memory worksheet with the internals the fast path writes through."""
    return bool(getattr(sh, "constant_memory", False)) and all(
        hasattr(sh, a) for a in ("_write_single_row", "_check_dimensions", "fh", "previous_row",
                                 "_escape_control_characters", "_escape_data"))


def _text_value(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return display_text(v)


def write_columns(sh, columns: Sequence[SheetColumn], first_row: int, n: int, progress=None) -> None:
    """Write ``n`` rows of ``columns`` from row ``first_row`` (0-based) down.  Every cell above ``first_row``
    must be written already and nothing may be written at or below it afterwards (constant-memory mode).
    ``progress(done_rows)`` is called after each block (it may raise to cancel)."""
    columns = sorted(columns, key=lambda c: c.col)
    if n <= 0 or not columns:
        return
    if not fast_path_available(sh):
        _write_cells(sh, columns, first_row, n, progress)
        return
    last = first_row + n - 1
    if sh._check_dimensions(last, columns[-1].col) or sh._check_dimensions(first_row, columns[0].col):
        raise ValueError(f"rows {first_row}..{last} are outside the sheet or already written")
    sh._write_single_row(last + 1)           # flush the rows above (header); later writes below are refused
    texts: list[dict[Any, Any]] = [{} for _ in columns]
    styles = [f' s="{c.fmt._get_xf_index()}"' if c.fmt is not None else "" for c in columns]
    letters = [_letters(c.col) for c in columns]
    for a in range(0, n, BLOCK_ROWS):
        b = min(n, a + BLOCK_ROWS)
        refs = [str(r) for r in range(first_row + a + 1, first_row + b + 1)]     # 1-based row numbers of the XML
        cells = []
        for c, style, letter, cache in zip(columns, styles, letters, texts):
            if c.kind == "num":
                vals = np.asarray(c.data[a:b], dtype=np.float64)
                # every value's text in one call: a list's repr is its items' reprs joined by ", " (v!r each)
                shown = c.texts[a:b] if c.texts is not None else repr(vals.tolist())[1:-1].split(", ")
                head, mid = f'<c r="{letter}', f'"{style}><v>'
                out = [f"{head}{r}{mid}{t}</v></c>" for r, t in zip(refs, shown)]
                for i in np.flatnonzero(~np.isfinite(vals)).tolist():
                    out[i] = ""                 # NaN and infinities: no cell
                cells.append(out)
            else:
                pieces = []
                for v in c.data[a:b]:
                    key = v if type(v) is str else (type(v), repr(v))     # a text "None" is not None
                    xml = cache.get(key, _MISS)
                    if xml is _MISS:
                        xml = cache[key] = _inline(sh, _text_value(v), style, letter)
                    pieces.append(xml)
                cells.append([f"{xml[0]}{r}{xml[1]}" if xml else "" for r, xml in zip(refs, pieces)])
        # the block's rows in one text: each row's opening tag, its cells column by column, its closing tag
        sh.fh.write("".join(chain.from_iterable(zip([f'<row r="{r}">' for r in refs], *cells, repeat("</row>")))))
        if progress is not None:
            progress(b)


def _inline(sh, text: str | None, style: str, letter: str) -> tuple[str, str] | None:
    """The inline-string cell of ``text`` in column ``letter`` as the XML before and after its row number (None
    for no cell), escaped as XlsxWriter's constant-memory mode escapes it."""
    if text is None:
        return None
    s = sh._escape_control_characters(text)
    keep = ' xml:space="preserve"' if _preserve_whitespace(s) else ""
    return f'<c r="{letter}', f'"{style} t="inlineStr"><is><t{keep}>{sh._escape_data(s)}</t></is></c>'


def _write_cells(sh, columns: Sequence[SheetColumn], first_row: int, n: int, progress=None) -> None:
    """XlsxWriter's per-cell calls (the reference the fast path is tested against)."""
    for i in range(n):
        r = first_row + i
        for c in columns:
            v = c.data[i]
            if c.kind == "num":
                if v is not None and math.isfinite(float(v)):
                    sh.write_number(r, c.col, float(v), c.fmt)
            else:
                t = _text_value(v)
                if t is not None:
                    sh.write_string(r, c.col, t, c.fmt)
        if progress is not None and (i + 1) % BLOCK_ROWS == 0:
            progress(i + 1)
    if progress is not None:
        progress(n)


# the deflate level of the zip files XlsxWriter makes in this context (None: zipfile's default, zlib's level 6)
_ZIP_LEVEL: contextvars.ContextVar[int | None] = contextvars.ContextVar("nestscope_xlsx_zip_level", default=None)
# whether its parts are deflated in pieces on two threads (False: in line, for workbooks of small parts)
_ZIP_PIECES: contextvars.ContextVar[bool] = contextvars.ContextVar("nestscope_xlsx_zip_pieces", default=True)
# in line (no pieces): what makes each deflated part's compressobj from the level (None: zlib's compressobj)
_ZIP_DEFLATER: contextvars.ContextVar[Any] = contextvars.ContextVar("nestscope_xlsx_zip_deflater", default=None)
PIECE_BYTES = 4 << 20         # a part's bytes deflated as one piece (the month's Intervals sheet: 17 pieces)
_PIECES_HELD = 4              # pieces deflated or being deflated at a time, per part


class _PieceDeflate:
    """What zipfile asks of a zlib compressobj (``compress``, ``flush``) for one part, its bytes deflated in
    pieces of :data:`PIECE_BYTES` on a pool's threads (zlib lets go of the GIL): each piece a raw deflate stream
    of its own ended by a sync flush (byte-aligned, not the final block), the last one by a finish, so the pieces
    one after the other are one deflate stream (the way pigz splits its work)."""

    def __init__(self, level: int, pool: Any) -> None:
        self.level, self.pool = level, pool
        self.held: list[bytes] = []
        self.size = 0
        self.pieces: deque = deque()

    def _deflate(self, data: bytes, last: bool) -> bytes:
        c = zlib.compressobj(self.level, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    def compress(self, data: bytes) -> bytes:
        self.held.append(bytes(data))
        self.size += len(data)
        if self.size >= PIECE_BYTES:
            self.pieces.append(self.pool.submit(self._deflate, b"".join(self.held), False))
            self.held, self.size = [], 0
        done = []
        while self.pieces and (self.pieces[0].done() or len(self.pieces) > _PIECES_HELD):
            done.append(self.pieces.popleft().result())
        return b"".join(done)

    def flush(self, mode: int = zlib.Z_FINISH) -> bytes:
        self.pieces.append(self.pool.submit(self._deflate, b"".join(self.held), True))
        self.held, self.size = [], 0
        done = [f.result() for f in self.pieces]
        self.pieces.clear()
        return b"".join(done)


class _LevelZipFile(zipfile.ZipFile):
    """zipfile.ZipFile at the level of :func:`zip_level` when the caller names none (XlsxWriter names none), its
    deflated parts written in pieces deflated on two threads (:class:`_PieceDeflate`), or in line at that level
    (also the parts an in-memory workbook gives with a ZipInfo of its own, which zipfile would deflate at 6)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        level = _ZIP_LEVEL.get()
        if level is not None and len(args) < 5 and "compresslevel" not in kwargs:
            kwargs["compresslevel"] = level
        super().__init__(*args, **kwargs)
        self._pool = None
        self._deflater = _ZIP_DEFLATER.get() if level is not None else None
        if level is not None and _ZIP_PIECES.get():
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(2, thread_name_prefix="nestscope-deflate")

    def open(self, name: Any, mode: str = "r", pwd: Any = None, *, force_zip64: bool = False) -> Any:
        part = super().open(name, mode, pwd, force_zip64=force_zip64)
        if self.compresslevel is not None and deflating(part, mode):
            info = part._zinfo
            if self._pool is not None:
                part._compressor = _PieceDeflate(self.compresslevel, self._pool)
            elif self._deflater is not None:        # every part by the deflater of zip_level
                part._compressor = self._deflater(self.compresslevel)
            elif getattr(info, "_compresslevel", None) is None:    # a ZipInfo of its own (an in-memory workbook)
                part._compressor = zlib.compressobj(self.compresslevel, zlib.DEFLATED, -15)
        return part

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None


def _packs_with_level() -> bool:
    """XlsxWriter's workbook module makes its zip through :class:`_LevelZipFile` (installed once; outside
    :func:`zip_level` it is zipfile's ZipFile with nothing changed).  False when this XlsxWriter packs otherwise."""
    try:
        import xlsxwriter.workbook as xw
    except ImportError:
        return False
    made = getattr(xw, "ZipFile", None)
    if made is _LevelZipFile:
        return True
    if made is not zipfile.ZipFile:
        return False
    xw.ZipFile = _LevelZipFile
    return True


@contextlib.contextmanager
def zip_level(level: int, pieces: bool = True, deflater: Any = None) -> Iterator[bool]:
    """Inside (this thread or task only): a workbook closed by XlsxWriter is deflated at ``level`` (zlib's 1-9),
    its parts in pieces on two threads unless ``pieces`` is False (a small workbook: threads cost more than they
    save); in line, each part by ``deflater(level)`` (a raw deflate compressobj, e.g. the deck's
    :func:`app.export.pptx_zip.deck_deflater`) when one is given.  Yields False when this XlsxWriter cannot be
    told (its default level is used then)."""
    ok = _packs_with_level()
    token = _ZIP_LEVEL.set(level)
    split = _ZIP_PIECES.set(pieces)
    how = _ZIP_DEFLATER.set(deflater if not pieces else None)
    try:
        yield ok
    finally:
        _ZIP_DEFLATER.reset(how)
        _ZIP_PIECES.reset(split)
        _ZIP_LEVEL.reset(token)
