"""Put a block of cells on the clipboard as TSV (with headers) and as an HTML table."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

from app.textsafe import paste_text


def put_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Copy ``headers`` + ``body`` (rows of display texts); returns the TSV text.

    Every cell by :func:`app.textsafe.paste_text`: names from the data with control characters escaped (a tab,
    CR or line break never splits a cell or a row) and text that a spreadsheet would run as a formula
    neutralised (``'=1+2``); numbers stay numbers."""
    lines = [[paste_text(v) for v in line] for line in (headers, *body)]
    tsv = "\n".join("\t".join(line) for line in lines) + "\n"
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in lines[0])
    trs = [f"<tr>{cells}</tr>"] + ["<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in line) + "</tr>"
                                   for line in lines[1:]]
    mime = QMimeData()
    mime.setText(tsv)
    mime.setHtml("<table>" + "".join(trs) + "</table>")
    QGuiApplication.clipboard().setMimeData(mime)
    return tsv
