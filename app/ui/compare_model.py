"""The Compare tab's data: the sides as the user set them, the off-thread computation, the table model.

All numbers come from :mod:`app.engine.compare`; this module only holds what the tab shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont

from app.engine.compare import TIMELINE_BY, RATIO_NOTE, Comparison, RelativeAxis, Selection, compare, pair_keys
from app.textsafe import shown_text
from app.ui.column_model import ColumnTableModel, Index
from app.ui.compare_charts import THEMES
from app.ui.frames import fmt_number

SIDES = ("before", "after")
# short row labels (the tab's note and each row's tooltip say ratio = before / after, delta = after - before): the
# table's last column, Workload Hint, fits a 1440x900 window without the scroll bar
ROW_TEXT = {"before": "Before", "after": "After", "ratio": "Ratio", "delta": "Delta"}
RATIO_DECIMALS = 2
MARK = "\u2020"   # dagger
TIME_FMT = "%Y-%m-%d %H:%M"


# ------------------------------------------------------------------ the state of one side
@dataclass(frozen=True)
class Side:
    """One side as the user set it: tree nodes, window (UTC, None = whole range) and shift texts."""

    nodes: tuple = ()
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    hours: str = ""
    days: str = ""

    @property
    def is_set(self) -> bool:
        return bool(self.nodes)

    def to_json(self) -> dict:
        return {"nodes": [list(n) for n in self.nodes], "start": _iso(self.start), "end": _iso(self.end),
                "hours": self.hours, "days": self.days}

    @classmethod
    def from_json(cls, doc: Any) -> Side:
        if not isinstance(doc, dict):
            return cls()
        nodes = tuple(tuple(str(v) for v in n) for n in doc.get("nodes") or [] if isinstance(n, (list, tuple)))
        return cls(nodes, _ts(doc.get("start")), _ts(doc.get("end")), str(doc.get("hours") or ""),
                   str(doc.get("days") or ""))


def _iso(t: Any) -> str | None:
    return None if t is None else pd.Timestamp(t).isoformat()


def _ts(v: Any) -> pd.Timestamp | None:
    if v in (None, ""):
        return None
    try:
        t = pd.Timestamp(v)
    except (TypeError, ValueError):
        return None
    if pd.isna(t):
        return None
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


# what a From / To field accepts: a date, optionally a time of day (UTC), "T" or a space between them
_TIME_TEXT = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?", re.ASCII)
YEARS = (1900, 2199)   # a window outside these years is a typing slip (pandas' nanosecond times end in 2262)


def parse_time(text: str, what: str) -> pd.Timestamp | None:
    """``"2026-10-05 08:00"`` (UTC) -> Timestamp; "" -> None; raises ValueError with a readable message.

    Only a full date (``YYYY-MM-DD``, optionally ``HH:MM`` or ``HH:MM:SS``) is a time: pandas reads ``08-17``
    as the year 1 and ``now`` as the clock, which no analyst means in a window field."""
    text = str(text).strip()
    if not text:
        return None
    bad = f"{what}: {text!r} is not a time (use YYYY-MM-DD HH:MM, UTC)"
    if not _TIME_TEXT.fullmatch(text):
        raise ValueError(bad)
    try:
        t = pd.Timestamp(text)
    except (TypeError, ValueError):   # (OutOfBoundsDatetime and DateParseError are ValueErrors)
        raise ValueError(bad) from None
    if pd.isna(t):
        raise ValueError(bad)
    if not YEARS[0] <= t.year <= YEARS[1]:
        raise ValueError(f"{what}: {text!r} is outside the years {YEARS[0]}-{YEARS[1]}")
    return t.tz_localize("UTC")


def _naive(t: pd.Timestamp | None) -> pd.Timestamp | None:
    if t is None:
        return None
    t = pd.Timestamp(t)
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t


def selection_of(ws: Any, side: Side, name: str) -> Selection:
    """The engine Selection of a side (raises ShiftError for bad hours/days)."""
    from app.analysis import make_selection

    return make_selection(ws, side.nodes, _naive(side.start), _naive(side.end), side.hours, side.days, name=name,
                          tz=_zone_mode())


def _zone_mode() -> str:
    """The window's time zone (View > Local time, :mod:`app.ui.time_zone`): shift hours are read in it."""
    from app.ui.time_zone import ZONE

    return ZONE.mode


@dataclass
class CompareData:
    """What the tab shows, computed off the GUI thread by :func:`compute_compare`."""

    comparison: Comparison
    axis: RelativeAxis | None
    describe: dict[str, str] = field(default_factory=dict)


def compute_compare(ws: Any, before: Side, after: Side, by: str) -> CompareData:
    """The comparison of two sides (runs in the window's SerialRunner)."""
    sb, sa = selection_of(ws, before, "before"), selection_of(ws, after, "after")
    cmp = compare(sb, sa, by=by)
    axis = with_pairs(cmp.timelines(TIMELINE_BY[by]), by)
    return CompareData(cmp, axis, {"before": sb.describe(), "after": sa.describe()})


def with_pairs(axis: RelativeAxis, by: str) -> RelativeAxis:
    """The timelines with a ``pair`` column (the comparison table's pair keys), so that the overlay shows the
    pair the waterfall shows: per processor class the class's intervals, not its LPAR's."""
    b, a = axis.before, axis.after
    if not len(b) and not len(a):
        return axis
    if (len(b) and "lpar" not in b.columns) or (len(a) and "lpar" not in a.columns):
        return axis
    b, a = _keyed(b), _keyed(a)
    kb, ka = pair_keys(b, a, by)
    return replace(axis, before=b.assign(pair=kb), after=a.assign(pair=ka))


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """An empty side's frame with the identity columns the pairing reads."""
    missing = {c: pd.Series(dtype=object) for c in ("cec", "lpar", "class") if c not in frame.columns}
    return frame.assign(**missing) if missing and not len(frame) else frame

# ------------------------------------------------------------------ the comparison table
@dataclass(frozen=True)
class CmpCol:
    id: str
    header: str
    decimals: int | None = None
    tooltip: str = ""
    mark: str = ""        # why the formula differs (empty: same formula)
    numeric: bool = True


class CompareModel(ColumnTableModel):
    """Rows of ``Comparison.table`` (before, after, ratio, delta per pair) in the presentation's columns."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.frame = pd.DataFrame()
        self.columns: list[CmpCol] = []
        self.ratio_note = RATIO_NOTE
        self.dark = False

    def _row_total(self) -> int:
        return len(self.frame)

    def set_comparison(self, cmp: Comparison | None, all_columns: bool = False) -> None:
        self.beginResetModel()
        if cmp is None:
            self.frame, self.columns = pd.DataFrame(), []
        else:
            self.frame = cmp.table.reset_index(drop=True)
            self.ratio_note = cmp.ratio_note
            specs = cmp.columns if all_columns else cmp.main_columns()
            cols = [CmpCol("_row", "Row", numeric=False, tooltip=cmp.ratio_note),
                    CmpCol("_label", "LPAR (CEC, generation)" if cmp.by == "lpar" else "LPAR class (CEC, generation)",
                           numeric=False, tooltip="CEC type-serial and generation are named where LPAR names "
                                                  "alone would clash")]
            for s in specs:
                why = cmp.marks.get(s.id, "")
                cols.append(CmpCol(s.id, s.header + (" " + MARK if why else ""), s.decimals,
                                   s.tooltip or s.header, why, numeric=s.id != "Workload_Hint"))
            cols += [CmpCol("_window", "Intervals (UTC)", numeric=False,
                            tooltip="first interval start .. last interval end of the side"),
                     CmpCol("n_cpus", "CPUs", 0, "logical CPUs"),
                     CmpCol("generation", "Gen", numeric=False, tooltip="machine generation"),
                     CmpCol("formula_set", "Formula set", numeric=False, tooltip="formula set version")]
            self.columns = [c for c in cols if c.id.startswith("_") or c.id in self.frame.columns]
        self.endResetModel()

    def kind(self, row: int) -> str:
        return str(self.frame.iloc[row]["row"]) if 0 <= row < len(self.frame) else ""

    def value(self, row: int, col_id: str) -> Any:
        v = self.frame.iloc[row].get(col_id)
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else v

    def text(self, row: int, col: int) -> str:
        c = self.columns[col]
        rec = self.frame.iloc[row]
        kind = str(rec["row"])
        if c.id == "_row":
            return ROW_TEXT.get(kind, kind)
        if c.id == "_label":
            return str(rec["label"]) if kind in ("before", "after") else str(rec["pair"])
        if c.id == "_window":
            s, e = rec.get("interval_start"), rec.get("interval_end")
            if kind not in ("before", "after") or s is None or pd.isna(s):
                return ""
            return f"{pd.Timestamp(s).strftime(TIME_FMT)} .. {pd.Timestamp(e).strftime(TIME_FMT)}"
        v = self.value(row, c.id)
        if v is None:
            return ""
        if not c.numeric:
            return str(v)
        dec = RATIO_DECIMALS if kind == "ratio" else c.decimals
        if isinstance(v, (int, float)) and round(float(v), 2 if dec is None else dec) == 0:
            v = 0.0   # no "-0.0"
        return fmt_number(v, dec)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        """The base model's header, plus the formula-difference mark (tooltip line, italic)."""
        base = super().headerData(section, orientation, role)
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return base
        c = self.columns[section]
        if role == Qt.ItemDataRole.ToolTipRole and c.mark:
            return f"{base}\n{MARK} {c.mark}"
        if role == Qt.ItemDataRole.FontRole and c.mark:
            f = QFont()
            f.setItalic(True)
            return f
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        at = self.cell(index)
        if at is None:
            return None
        row, col = at
        c = self.columns[col]
        kind = self.kind(row)
        if role == Qt.ItemDataRole.DisplayRole:    # names from the data: control characters escaped
            return shown_text(self.text(row, col))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignRight if c.numeric else Qt.AlignmentFlag.AlignLeft
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole:
            f = QFont()
            f.setBold(kind == "ratio")
            f.setItalic(bool(c.mark))
            return f
        if role == Qt.ItemDataRole.BackgroundRole:
            if kind == "ratio":
                return QColor(*THEMES[self.dark]["ratio"])
            if kind == "delta":
                return QColor(*THEMES[self.dark]["delta"])
            return None
        if role == Qt.ItemDataRole.ForegroundRole and kind in ("ratio", "delta"):   # on their light tint
            return QColor(*THEMES[self.dark]["text"])
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = []
            if c.mark:
                lines.append(f"{MARK} {c.mark}")
            if kind == "ratio":
                lines.append(self.ratio_note)
            elif kind == "delta":
                lines.append("delta = after - before")
            return "\n".join(lines) or None
        return None

    def table_texts(self) -> tuple[list[str], list[list[str]]]:
        headers = [c.header for c in self.columns]
        body = [[self.text(r, c) for c in range(len(self.columns))] for r in range(len(self.frame))]
        return headers, body
