"""Names from the data, made safe for every output: one rule, in one place.

System ids, LPAR and partition names, models and serials come from the records' bytes (EBCDIC decoded,
any of the 256 code points) and so may hold anything.  Every writer of text for a person or for another
program passes them through here:

* :func:`display_text` -- a name on one line: every character that ``str.isprintable()`` rejects
  (control characters C0/C1 and DEL, format characters such as U+200E, line/paragraph separators, other
  blank characters than the space, unassigned and private code points) is shown escaped the way Python
  writes it: ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u200e``, ``\\U000f0000``.  The result holds no
  character a terminal, a spreadsheet or an XML document could act on, and is the same text in the
  terminal, the CSV, the workbooks and the slides.  (A backslash is kept as it is: the escapes are for
  reading, not for decoding back.)
* :func:`terminal_text` -- a whole multi-line text for a terminal: the same escapes, line breaks kept.
* :func:`csv_text` -- a CSV text cell: :func:`display_text`, then a cell starting with ``=``, ``+``,
  ``-``, ``@``, tab or carriage return gets a leading apostrophe, so a spreadsheet never runs it as a
  formula; :func:`csv_line` quotes such a cell (and any cell holding a comma or a quote), so the
  apostrophe stays inside one quoted cell.  A CSV line never holds a line break inside a cell.
* :func:`paste_text` -- a cell of a table put on the clipboard (TSV and HTML, pasted into a spreadsheet):
  :func:`display_text`, and text starting like a formula gets the apostrophe; a number as the window shows
  it (``-0.38``, ``+1.2``, ``1,234``, ``12.5%``) stays a number.
* :func:`json_text` -- JSON text written with ``ensure_ascii`` has every control character escaped
  except DEL (U+007F), which this escapes too.

Workbooks (the XLSX export and the data behind the PPTX charts) store names as text cells, never as
formulas (``app.export.xlsx``, ``app.export.chart_data``); the cell text is :func:`display_text` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["display_text", "shown_text", "terminal_text", "csv_text", "csv_field", "csv_line", "paste_text", "json_text",
           "FORMULA_START"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")   # first characters a spreadsheet reads as a formula
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_QUOTE_IF = (",", '"', "\n", "\r")
_SHOWN_NUMBER = re.compile(r"[+-]?(\d[\d,]*)?\.?\d+(e[+-]?\d+)?%?|[+-]")   # -0.38, +1.2, 1,234, 1e-05, 12.5%


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def display_text(value: object) -> str:
    """``value`` as one line of printable text: every non-printable character escaped (``\\x1b``)."""
    s = value if isinstance(value, str) else str(value)
    if s.isprintable():                     # the common case: nothing to do (C speed)
        return s
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in s)


def shown_text(value: object) -> object:
    """A view's display value: text through :func:`display_text`, anything else (None, numbers) as it is."""
    return display_text(value) if isinstance(value, str) else value


def terminal_text(text: str) -> str:
    """A multi-line text for a terminal: line breaks kept, every other non-printable character escaped."""
    return "\n".join(display_text(line) for line in text.split("\n"))


def csv_text(value: object) -> str:
    """A text cell of a CSV file: :func:`display_text`, with a leading apostrophe when the raw or the shown
    text starts like a formula (``=1+1`` -> ``'=1+1``).  Write it with :func:`csv_line`."""
    raw = value if isinstance(value, str) else str(value)
    s = display_text(raw)
    return "'" + s if raw.startswith(FORMULA_START) or s.startswith(FORMULA_START) else s


def csv_field(cell: str) -> str:
    """One cell as it stands in the CSV line: quoted (quotes doubled) when it holds a comma, a quote or a
    line break, or starts with the apostrophe of a neutralised formula; as it is otherwise."""
    if cell.startswith("'") or any(c in cell for c in _QUOTE_IF):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def csv_line(cells: Iterable[str]) -> str:
    """One CSV line (``\\n``-terminated) of cells already made by :func:`csv_text` or number formatting
    (a line of one empty cell is written ``""``, as the csv module does, so it is not read as no cell)."""
    cells = cells if isinstance(cells, list) else list(cells)
    line = ",".join(cells)
    # the common row (numbers, plain names) needs no quoting: decided by a few scans of the joined line
    if line and line.count(",") == len(cells) - 1 and not any(c in line for c in _QUOTE_IF[1:] + ("'",)):
        return line + "\n"
    fields = [csv_field(c) for c in cells]
    return ('""' if fields == [""] else ",".join(fields)) + "\n"


def paste_text(value: object) -> str:
    """A cell of a table pasted into a spreadsheet: :func:`display_text`, with a leading apostrophe when it
    starts like a formula and is not a number as shown (``=1+2`` -> ``'=1+2``; ``-0.38`` stays)."""
    s = display_text(value)
    if s.startswith(FORMULA_START) and not _SHOWN_NUMBER.fullmatch(s):
        return "'" + s
    return s


def json_text(text: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=True)`` with DEL escaped as well (``\\u007f``); DEL
    can only stand inside a string there, so the document means the same."""
    return text.replace("\x7f", "\\u007f")
