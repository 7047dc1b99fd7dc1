"""CSV export: UTF-8, the columns of ``report --format csv``, numbers without float noise,
text cells that a spreadsheet would run as a formula neutralised.

* Numbers are written with 12 significant digits and no trailing zeros, so 5.199999999999999
  becomes ``5.2`` (the counters behind the metrics carry far fewer significant digits).
* Text cells follow the one rule of :mod:`app.textsafe`: non-printable characters escaped (``\x1b``),
  a cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading apostrophe
  (``'=cmd``) and is quoted, so a system name never becomes an Excel formula nor starts a new row.
* With a comparison in the request, the file holds the comparison table instead: ``pair``,
  ``row`` (before / after / ratio / delta), ``label``, then the report columns; a side's times in the
  request's zone by that side's own offsets (each cell with its offset, as the level CSV).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from app.textsafe import csv_line, csv_text

__all__ = ["number_text", "safe_text", "cell", "rows_csv", "write_csv", "compare_columns", "level_columns"]

_TIMES = ("interval_start", "interval_end")


def number_text(v: float) -> str:
    """A number without float noise: 12 significant digits, no trailing zeros (5.199999999999999 -> 5.2)."""
    f = float(v)
    if not math.isfinite(f):
        return ""
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return format(f, ".12g")


def safe_text(s: str) -> str:
    """A text cell (:func:`app.textsafe.csv_text`): control characters escaped, a formula neutralised."""
    return csv_text(s)


def _iso(v: Any) -> str:
    if v is None:
        return ""
    ts = pd.Timestamp(v)
    if pd.isna(ts):
        return ""
    return ts.strftime("%Y-%m-%dT%H:%M:%S") + (f".{ts.microsecond:06d}" if ts.microsecond else "") + "Z"


def cell(column: str, v: Any) -> str:
    """One CSV cell of ``column``: ISO UTC times, noise-free numbers, safe text, empty for no value."""
    if column in _TIMES:
        return _iso(v)
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return number_text(v)
    if v is pd.NaT:
        return ""
    return safe_text(str(v))


def level_columns(by: str, ids: list[str]) -> list[str]:
    """The columns of ``report --format csv --by <by>``."""
    from app.export.tables import csv_columns

    return csv_columns(by, ids)


def compare_columns(by: str, ids: list[str]) -> list[str]:
    """Columns of a comparison CSV: pair, row, label, then the report columns of the level."""
    return ["pair", "row", "label"] + level_columns(by, ids)


def rows_csv(frame: pd.DataFrame, columns: list[str], offsets: dict | None = None) -> list[list[str]]:
    """Rows of cells (without the header) for ``columns`` of ``frame`` (missing columns stay empty);
    ``offsets``: seconds east of UTC per row of a time column: its cells carry that offset."""
    from app.engine.timezone import iso_time

    data = {c: (frame[c].tolist() if c in frame.columns else [None] * len(frame)) for c in columns}
    offsets = offsets or {}
    return [[iso_time(data[c][i], offsets[c][i]) if c in offsets else cell(c, data[c][i]) for c in columns]
            for i in range(len(frame))]


def write_csv(request, path: str, steps) -> dict[str, int]:
    """Write the request's CSV to ``path`` (see the module docstring); returns ``{"rows": n}``."""
    from app.engine.metrics import metric_ids

    c = request.comparison
    if c is not None:
        ids = list(dict.fromkeys(metric_ids(c.before.workspace.formula_sets)
                                 + metric_ids(c.after.workspace.formula_sets)))
        frame, columns = c.table, compare_columns(c.by, ids)
    else:
        ids = metric_ids(request.workspace.formula_sets)
        steps(0.1, "computing metrics")
        frame, columns = request.metrics(), level_columns(request.by, ids)
        if request.nodes is None and request.by != "pool":
            # the coverage and partition-data columns (and partition-only LPAR rows) of `report --format csv`
            from app.engine.partitions import enrich

            frame = enrich(request.workspace, frame, request.by, request.start, request.end)
    steps(0.5, "writing rows")
    tz = getattr(request, "tz", "utc")
    offs = {}
    if c is not None:           # a side's rows in the request's zone by that side's offsets (UTC: none)
        from app.export.tables import comparison_offsets

        offs = comparison_offsets(c, tz)
    elif tz != "utc" and len(frame):      # times in the request's zone, each cell with its offset
        from app.export.tables import zone_offsets        # a CEC pool row: its CEC's offsets

        offs = {t: zone_offsets(request.workspace, tz, frame, t) for t in _TIMES if t in frame.columns}
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(csv_line(csv_text(c) for c in columns))
        chunk = 20000
        for i in range(0, max(len(frame), 1), chunk):
            part = {t: o[i:i + chunk] for t, o in offs.items()}
            fh.writelines(csv_line(r) for r in rows_csv(frame.iloc[i:i + chunk], columns, part))
            steps(0.5 + 0.5 * min(1.0, (i + chunk) / max(len(frame), 1)), "writing rows")
    return {"rows": len(frame)}
