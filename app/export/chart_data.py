"""Chart data for the PPTX deck whose embedded workbooks hold names as text, never as formulas.

python-pptx writes the data behind each native chart (what PowerPoint's "Edit Data" opens) as a small
workbook through XlsxWriter's ``worksheet.write()``, which by default turns a string starting with ``=``
into a formula (``<f>1+2</f>``: "Edit Data" would compute it) and a string looking like a URL into a
hyperlink.  These subclasses open that workbook with ``strings_to_formulas``, ``strings_to_urls`` and
``strings_to_numbers`` off, so every series name and category is stored as a text cell.  (They hook
python-pptx's workbook-writer classes, ``pptx.chart.xlsx``; ``tests/export/test_names_everywhere.py``
opens the embedded workbooks of a real deck and fails if a formula cell ever comes back.)

XY series are given as whole arrays (:meth:`TextXyChartData.add_array_series`: the engine frame's columns, no
data-point object per point), and the workbook of a chart with many points is written in XlsxWriter's
constant-memory mode as whole columns (:mod:`app.export.xlsx_rows`): a deck of a month's timelines holds some
300,000 points.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import threading

import numpy as np
from pptx.chart.data import CategoryChartData, XyChartData, XySeriesData
from pptx.chart.xlsx import CategoryWorkbookWriter, XyWorkbookWriter
from pptx.util import lazyproperty

__all__ = ["TextCategoryChartData", "TextXyChartData", "ArrayXySeries", "WORKBOOK_OPTIONS"]

WORKBOOK_OPTIONS = {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
                    "strings_to_numbers": False}
# the workbooks of XY charts above STREAM_POINTS points: rows streamed as whole columns (XlsxWriter's
# constant-memory layout: inline strings, rows written once) into a text buffer, the package assembled in memory
# (XlsxWriter's constant-memory mode alone writes the rows and every part to temporary files, about 10 ms a
# chart); a tiny chart's workbook is written cell by cell.  bench/bench_exports.py --only charts measures both.
STREAM_POINTS = 100


class ArrayXySeries(XySeriesData):
    """An XY series over two float arrays: x (points with a non-finite x are left out) and y (NaN: no value)."""

    def __init__(self, chart_data, name, xs, ys, number_format=None):
        super().__init__(chart_data, name, number_format)
        x = np.asarray(xs, dtype=np.float64)
        y = np.asarray(ys, dtype=np.float64)
        keep = np.isfinite(x)
        self.x_array, self.y_array = x[keep], np.where(np.isfinite(y[keep]), y[keep], np.nan)
        self.same_x: ArrayXySeries | None = None        # an earlier series of the chart with these very x

    def __len__(self):
        return len(self.x_array)

    def __getitem__(self, index):
        raise TypeError("an array series has no data-point objects; read x_array / y_array")

    def append(self, data_point):
        raise TypeError("an array series takes its points as arrays (TextXyChartData.add_array_series)")

    @property
    def x_values(self):
        return _Points(self.x_array.tolist(), self.x_texts)

    @property
    def y_values(self):
        return _Points([None if v != v else v for v in self.y_array.tolist()], self.y_texts)

    @lazyproperty
    def x_texts(self) -> list[str]:
        """Each x as its text (``repr``), made once for the chart's XML and its workbook (and once for the series of
        a chart over the same times: the parts of CPI, the sourcing levels)."""
        if self.same_x is not None:
            return self.same_x.x_texts
        return [repr(v) for v in self.x_array.tolist()]

    @lazyproperty
    def y_texts(self) -> list[str]:
        """Each y as its text (``repr``; ``nan`` where there is no value, written in neither place)."""
        return [repr(v) for v in self.y_array.tolist()]


class _Points(list):
    """A series' values (None: no point) with ``texts``, their texts: the chart XML's points take them."""

    def __init__(self, values, texts):
        super().__init__(values)
        self.texts = texts


class _TextCells:
    """Mixin of a python-pptx workbook writer: the workbook is opened with :data:`WORKBOOK_OPTIONS`."""

    @contextlib.contextmanager
    def _open_worksheet(self, xlsx_file):
        from xlsxwriter import Workbook

        workbook = Workbook(xlsx_file, WORKBOOK_OPTIONS)
        worksheet = workbook.add_worksheet()
        yield workbook, worksheet
        _close(workbook)


def _close(workbook) -> None:
    """Close (write) a chart's workbook, its parts deflated in line as the deck's parts are (:mod:`app.export.pptx_zip`:
    ISA-L's level 1 about 6x faster than zlib's level 1 on these parts, which was 2.5x faster than zlib's default)."""
    from app.export.pptx_zip import DECK_ZIP_LEVEL, deck_deflater
    from app.export.xlsx_rows import zip_level

    with zip_level(DECK_ZIP_LEVEL, pieces=False, deflater=deck_deflater):
        workbook.close()


_XML_LOCK = threading.Lock()
_PT_HEAD, _PT_MID, _PT_TAIL = '                <c:pt idx="', '">\n                  <c:v>', '</c:v>\n                </c:pt>\n'


def _pt_xml(self, values) -> str:
    """The ``<c:ptCount>`` and ``<c:pt>`` elements of ``values`` (None: no point), as python-pptx writes them: the
    points' texts joined by the text between two points (one formatting per point, not three pieces)."""
    texts = getattr(values, "texts", None)
    if texts is not None:          # an array series: the texts its workbook writes too
        parts = [f"{i}{_PT_MID}{t}" for i, (v, t) in enumerate(zip(values, texts)) if v is not None]
    else:
        parts = [f"{i}{_PT_MID}{v}" for i, v in enumerate(values) if v is not None]
    body = f"{_PT_HEAD}{(_PT_TAIL + _PT_HEAD).join(parts)}{_PT_TAIL}" if parts else ""
    return f'                <c:ptCount val="{len(values)}"/>\n{body}'


_LIGHT = threading.local()          # .points: {marker: the points' XML} while a light chart XML is made
_MARKS = itertools.count()
MARK = re.compile(rb"<!--nestscope-pts (\d+)-->")


def _pt_mark(self, values) -> str:
    """:func:`_pt_xml` of a light chart XML: an array series' points as a marker comment, their XML (as the deck
    saves it: no indentation) kept in ``_LIGHT.points`` under the marker's number."""
    texts = getattr(values, "texts", None)
    points = getattr(_LIGHT, "points", None)
    if texts is None or points is None:
        return _pt_xml(self, values)
    key = next(_MARKS)
    points[key] = "".join([f'<c:pt idx="{i}"><c:v>{t}</c:v></c:pt>'
                           for i, (v, t) in enumerate(zip(values, texts)) if v is not None]).encode("ascii")
    return f'                <c:ptCount val="{len(values)}"/><!--nestscope-pts {key}-->\n'


def splice_points(blob: bytes, points: dict[int, bytes]) -> bytes:
    """A light chart XML (or the part's serialized XML) with each marker replaced by its points' XML."""
    return MARK.sub(lambda m: points[int(m.group(1))], blob)


def _memory_rows_sheet():
    """XlsxWriter's worksheet in its constant-memory layout whose flushed rows go to a text buffer, not to a
    temporary file (the class is made on first use: xlsxwriter is imported by the first chart)."""
    global _MemoryRowsSheet
    if _MemoryRowsSheet is None:
        from xlsxwriter.worksheet import Worksheet

        class MemoryRowsSheet(Worksheet):
            def _initialize(self, init_data):
                super()._initialize(dict(init_data, constant_memory=False))     # no temporary file
                self.constant_memory = True
                self.row_data_fh = self.fh = io.StringIO()

            def _opt_close(self):           # the rows stay in the buffer until the sheet is assembled
                pass

            def _opt_reopen(self):
                pass

            def _write_optimized_sheet_data(self):
                if self.dim_rowmin is None:
                    self._xml_empty_tag("sheetData")
                    return
                self._xml_start_tag("sheetData")
                self.fh.write(self.row_data_fh.getvalue())
                self._xml_end_tag("sheetData")
                self.row_data_fh = None

        _MemoryRowsSheet = MemoryRowsSheet
    return _MemoryRowsSheet


_MemoryRowsSheet = None


class _XyWriter(_TextCells, XyWorkbookWriter):
    @contextlib.contextmanager
    def _open_worksheet(self, xlsx_file):
        from xlsxwriter import Workbook

        points = sum(len(series) for series in self._chart_data)
        workbook = Workbook(xlsx_file, WORKBOOK_OPTIONS)
        if points > STREAM_POINTS:
            workbook.constant_memory = True       # the package in memory, the sheet in the streamed layout
            worksheet = workbook.add_worksheet(worksheet_class=_memory_rows_sheet())
        else:
            worksheet = workbook.add_worksheet()
        yield workbook, worksheet
        _close(workbook)

    def _populate_worksheet(self, workbook, worksheet):
        """python-pptx's XY layout (per series: its name over column B, then x in A and y in B; a blank row
        between series), written as whole columns in row order."""
        from app.export.xlsx_rows import SheetColumn, write_columns

        chart_fmt = workbook.add_format({"num_format": self._chart_data.number_format})
        for series in self._chart_data:
            series_fmt = workbook.add_format({"num_format": series.number_format})
            offset = self.series_table_row_offset(series)
            worksheet.write_string(offset, 1, series.name)
            xs = getattr(series, "x_array", None)
            xs = np.asarray(series.x_values if xs is None else xs, dtype=np.float64)
            ys = getattr(series, "y_array", None)
            ys = np.asarray([np.nan if v is None else v for v in series.y_values] if ys is None else ys,
                            dtype=np.float64)
            xt, yt = getattr(series, "x_texts", None), getattr(series, "y_texts", None)
            write_columns(worksheet, [SheetColumn(0, "num", xs, chart_fmt, xt), SheetColumn(1, "num", ys, series_fmt,
                                                                                          yt)],
                          offset + 1, len(xs))


class _CategoryWriter(_TextCells, CategoryWorkbookWriter):
    pass


class TextXyChartData(XyChartData):
    """``XyChartData`` whose embedded workbook stores series names as text.  :meth:`prepare` makes the chart's light
    XML and workbook ahead (plain bytes: on another thread too), the ones the deck's ``add_chart`` then takes."""

    _ready = None          # (chart type, light XML bytes, their points, workbook bytes) made by prepare()

    @lazyproperty
    def _workbook_writer(self):
        return _XyWriter(self)

    def prepare(self, chart_type) -> None:
        """Make the chart's light XML (of ``chart_type``, :meth:`light_xml`) and its embedded workbook now;
        :meth:`light_xml` and :attr:`xlsx_blob` return them (the same bytes, apart from the workbook's time of
        writing)."""
        self._ready = (chart_type, *self.light_xml(chart_type), self.xlsx_blob)

    def light_xml(self, chart_type) -> tuple[bytes, dict[int, bytes]]:
        """The chart XML with each array series' point list (thousands of ``<c:pt>`` in a deck's timelines) left
        out, a marker comment in its place, and those point lists' XML by marker (:func:`splice_points` puts them
        back).  python-pptx then parses, styles and serializes the chart's few elements, not its points: the
        deck's parts are spliced when it is saved (:mod:`app.export.pptx_zip`).  The spliced XML is what
        python-pptx's parse and serialization of :meth:`xml_bytes` gives (no indentation)."""
        ready = self._ready
        if ready is not None and ready[0] == chart_type:
            return ready[1], ready[2]
        _LIGHT.points = points = {}
        try:
            xml = self._xml(chart_type, light=True).encode("utf-8")
        finally:
            _LIGHT.points = None
        return xml, points

    @property
    def xlsx_blob(self):
        ready = self._ready
        return ready[3] if ready is not None else super().xlsx_blob

    def _xml(self, chart_type, light: bool = False):
        """python-pptx's chart XML, its point lists written by :func:`_pt_xml` (one join instead of a format and
        a concatenation per point: the same text); ``light``: by :func:`_pt_mark` (:meth:`light_xml`)."""
        from pptx.chart import xmlwriter

        with _XML_LOCK:
            plain = xmlwriter._XySeriesXmlWriter
            if not hasattr(plain, "pt_xml"):          # another python-pptx: its own writer
                return super()._xml(chart_type)
            xmlwriter._XySeriesXmlWriter = type("_FastPtXySeriesXmlWriter", (plain,),
                                                {"pt_xml": _pt_mark if light else _pt_xml})
            try:
                return super()._xml(chart_type)
            finally:
                xmlwriter._XySeriesXmlWriter = plain

    def add_array_series(self, name, xs, ys, number_format=None) -> ArrayXySeries:
        """A series over whole arrays (see :class:`ArrayXySeries`)."""
        series = ArrayXySeries(self, name, xs, ys, number_format)
        x = series.x_array.view(np.int64)              # the same bits (0.0 and -0.0 have other texts)
        series.same_x = next((s for s in self if isinstance(s, ArrayXySeries) and s.same_x is None
                              and len(s.x_array) == len(x) and np.array_equal(s.x_array.view(np.int64), x)), None)
        self.append(series)
        return series


class TextCategoryChartData(CategoryChartData):
    """``CategoryChartData`` whose embedded workbook stores series names and categories as text."""

    @lazyproperty
    def _workbook_writer(self):
        return _CategoryWriter(self)
