"""Put a block of cells on the clipboard as TSV (with headers) and as an HTML table."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication


def put_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Copy ``headers`` + ``body`` (rows of display texts); returns the TSV text."""
    lines = [list(headers), *[list(r) for r in body]]
    tsv = "\n".join("\t".join(str(v).replace("\t", " ").replace("\n", " ") for v in line) for line in lines) + "\n"
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    trs = [f"<tr>{cells}</tr>"] + ["<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in line) + "</tr>"
                                   for line in body]
    mime = QMimeData()
    mime.setText(tsv)
    mime.setHtml("<table>" + "".join(trs) + "</table>")
    QGuiApplication.clipboard().setMimeData(mime)
    return tsv
