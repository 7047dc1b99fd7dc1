"""Chart data for the PPTX deck whose embedded workbooks hold names as text, never as formulas.

python-pptx writes the data behind each native chart (what PowerPoint's "Edit Data" opens) as a small
workbook through XlsxWriter's ``worksheet.write()``, which by default turns a string starting with ``=``
into a formula (``<f>1+2</f>``: "Edit Data" would compute it) and a string looking like a URL into a
hyperlink.  These subclasses open that workbook with ``strings_to_formulas``, ``strings_to_urls`` and
``strings_to_numbers`` off, so every series name and category is stored as a text cell.  (They hook
python-pptx's workbook-writer classes, ``pptx.chart.xlsx``; ``tests/export/test_names_everywhere.py``
opens the embedded workbooks of a real deck and fails if a formula cell ever comes back.)
"""

from __future__ import annotations

import contextlib

from pptx.chart.data import CategoryChartData, XyChartData
from pptx.chart.xlsx import CategoryWorkbookWriter, XyWorkbookWriter
from pptx.util import lazyproperty

__all__ = ["TextCategoryChartData", "TextXyChartData", "WORKBOOK_OPTIONS"]

WORKBOOK_OPTIONS = {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
                    "strings_to_numbers": False}


class _TextCells:
    """Mixin of a python-pptx workbook writer: the workbook is opened with :data:`WORKBOOK_OPTIONS`."""

    @contextlib.contextmanager
    def _open_worksheet(self, xlsx_file):
        from xlsxwriter import Workbook

        workbook = Workbook(xlsx_file, WORKBOOK_OPTIONS)
        worksheet = workbook.add_worksheet()
        yield workbook, worksheet
        workbook.close()


class _XyWriter(_TextCells, XyWorkbookWriter):
    pass


class _CategoryWriter(_TextCells, CategoryWorkbookWriter):
    pass


class TextXyChartData(XyChartData):
    """``XyChartData`` whose embedded workbook stores series names as text."""

    @lazyproperty
    def _workbook_writer(self):
        return _XyWriter(self)


class TextCategoryChartData(CategoryChartData):
    """``CategoryChartData`` whose embedded workbook stores series names and categories as text."""

    @lazyproperty
    def _workbook_writer(self):
        return _CategoryWriter(self)
