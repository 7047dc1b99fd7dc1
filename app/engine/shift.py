"""Shift filter: keep only intervals in some hours of the day and days of the week.

A shift such as the prime shift "08:00-17:00, Monday to Friday" is a
:class:`ShiftFilter`.  An interval belongs to the shift when its *midpoint*
(``interval_start + (interval_end - interval_start) / 2``, read in the filter's zone: UTC,
each system's local time or an IANA zone, :mod:`app.engine.timezone`) falls into the hours ``[first, last)`` on one of the days.  Hours may
wrap midnight (``22-06`` is the night shift); the day is the midpoint's day.  A
comma list of ranges (``08-12,13-17``, ``0-6,22-24``) keeps a midpoint that lies
in any of them.

The filter works on interval rows (one row per CPU per interval), before the
counters are summed, so whole-window rows of a shifted selection are ratios of
the counter sums of the shift's intervals only, and LPARCPU is the busy of the
shift's time (the time covered counts only the shift's intervals).

Used by :mod:`app.engine.compare`, the exports, ``report --hours/--days`` and, written as SQL with the same
rule, ``query --hours/--days`` (:func:`app.dataset.query.shift_sql`).
Pure pandas/numpy.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from app.engine.metrics import compute_metrics

__all__ = ["ShiftFilter", "ShiftError", "parse_hours", "parse_hour_ranges", "parse_days", "make_shift", "shift_mask",
           "apply_shift", "shifted_metrics", "DAY_NAMES", "shared_shift_rows"]

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_NS_MIN = 60 * 1_000_000_000


class ShiftError(ValueError):
    """A --hours / --days text that cannot be read (the message says what is expected)."""


@dataclass(frozen=True)
class ShiftFilter:
    """Hours of the day and days of the week an interval's midpoint must fall into.

    ``start_min``/``end_min``: minutes after midnight, ``[start_min, end_min)``;
    ``end_min < start_min`` wraps midnight; ``None`` for both = every hour.
    ``days``: weekday numbers (0 = Monday ... 6 = Sunday); ``None`` = every day.
    ``more``: further ``(start, end)`` minute ranges of a comma list (``08-12,13-17``); a midpoint in
    any range is in the shift (:attr:`hour_ranges` lists them all).
    ``tz``: the zone the hours and days are read in (:mod:`app.engine.timezone`: ``utc``, ``local`` = each
    system's own offsets, or an IANA zone name).
    """

    start_min: int | None = None
    end_min: int | None = None
    days: frozenset[int] | None = None
    more: tuple[tuple[int, int], ...] = ()
    tz: str = "utc"

    @property
    def hour_ranges(self) -> tuple[tuple[int, int], ...]:
        """Every ``(start, end)`` minute range of the filter, the first one first (``()`` = every hour)."""
        if self.start_min is None:
            return ()
        return ((self.start_min, self.end_min), *self.more)

    @property
    def is_empty(self) -> bool:
        """True when the filter keeps every interval."""
        return self.start_min is None and self.days is None

    def describe(self) -> str:
        """Human text, e.g. ``08:00-17:00 UTC, Mon-Fri`` (``all hours, all days`` when empty)."""
        if self.is_empty:
            return "all hours, all days"
        parts = []
        if self.start_min is not None:
            parts.append(f"{_ranges_text(self.hour_ranges)} {self.zone_name}")
        else:
            parts.append("all hours")
        parts.append(_days_text(self.days) if self.days is not None else "all days")
        return ", ".join(parts)

    @property
    def zone_name(self) -> str:
        return {"utc": "UTC", "local": "local time"}.get(self.tz, self.tz)

    def to_dict(self) -> dict:
        """JSON-friendly form (``hours`` as "HH:MM-HH:MM" or None, ``days`` as names or None)."""
        hours = None if self.start_min is None else _ranges_text(self.hour_ranges)
        days = None if self.days is None else [DAY_NAMES[d] for d in sorted(self.days)]
        return {"hours": hours, "days": days, "tz": self.tz, "text": self.describe()}


def _hhmm(m: int | None) -> str:
    return "" if m is None else f"{m // 60:02d}:{m % 60:02d}"


def _ranges_text(ranges) -> str:
    return ",".join(f"{_hhmm(a)}-{_hhmm(b)}" for a, b in ranges)


def _days_text(days: frozenset[int]) -> str:
    ds = sorted(days)
    if not ds:
        return "no days"
    runs: list[list[int]] = [[ds[0], ds[0]]]
    for d in ds[1:]:
        if d == runs[-1][1] + 1:
            runs[-1][1] = d
        else:
            runs.append([d, d])
    names = [n.capitalize() for n in DAY_NAMES]
    return ",".join(names[a] if a == b else f"{names[a]}-{names[b]}" for a, b in runs)


_TIME = re.compile(r"^\s*(\d{1,2})(?::(\d{2}))?\s*$")


def _minute(text: str, what: str) -> int:
    m = _TIME.match(text)
    if not m:
        raise ShiftError(f"{what}: {text!r} is not an hour (use HH or HH:MM)")
    h, mi = int(m.group(1)), int(m.group(2) or 0)
    if h > 24 or mi > 59 or (h == 24 and mi):
        raise ShiftError(f"{what}: {text!r} is not an hour of the day (00:00..24:00)")
    return h * 60 + mi


def parse_hours(text: str) -> tuple[int, int]:
    """``"08-17"``, ``"8-17"``, ``"08:00-17:30"``, ``"22-06"`` (wraps midnight) -> (start, end) minutes.

    The end is exclusive: ``08-17`` keeps intervals whose midpoint is 08:00 <= t < 17:00.
    """
    if "," in str(text):
        raise ShiftError(f"hours: {text!r} is a list of ranges (parse_hour_ranges reads lists)")
    parts = str(text).split("-")
    if len(parts) != 2:
        raise ShiftError(f"hours: {text!r} is not a range (use e.g. 08-17 or 08:00-17:30 or 22-06)")
    a, b = _minute(parts[0], "hours"), _minute(parts[1], "hours")
    if a == b:
        raise ShiftError(f"hours: {text!r} is an empty range")
    return a % 1440, (b if b == 1440 else b % 1440)


def parse_hour_ranges(text: str) -> tuple[tuple[int, int], ...]:
    """``"08-17"`` -> ``((480, 1020),)``; a comma list ``"08-12,13-17"``, ``"0-6,22-24"`` -> one (start, end)
    per range, in the order given (each read by :func:`parse_hours`)."""
    items = [t.strip() for t in str(text).split(",")]
    if not any(items):
        raise ShiftError("hours: empty (use e.g. 08-17 or 08:00-17:30 or 22-06)")
    if not all(items):
        raise ShiftError(f"hours: {text!r} has an empty item (use e.g. 08-12,13-17)")
    return tuple(parse_hours(t) for t in items)


def parse_days(text: str) -> frozenset[int]:
    """``"mon-fri"``, ``"sat,sun"``, ``"mon,wed-fri"``, ``"fri-mon"`` (wraps) -> weekday numbers (Mon = 0)."""
    out: set[int] = set()
    items = [t.strip().lower() for t in str(text).split(",")]
    if not any(items):
        raise ShiftError("days: empty (use e.g. mon-fri or sat,sun)")
    for item in items:
        ends = [t.strip()[:3] for t in item.split("-")]
        if len(ends) > 2 or any(e not in DAY_NAMES for e in ends):
            raise ShiftError(f"days: {item!r} is not a day or a range of days (use mon, tue, wed, thu, fri, sat, "
                             "sun, e.g. mon-fri)")
        a = DAY_NAMES.index(ends[0])
        b = DAY_NAMES.index(ends[-1])
        d = a
        while True:
            out.add(d)
            if d == b:
                break
            d = (d + 1) % 7
    return frozenset(out)


def make_shift(hours: str | None = None, days: str | None = None, tz: str = "utc") -> ShiftFilter | None:
    """Build a filter from the CLI texts (hours and days read in ``tz``); ``None`` when neither is given.
    Raises :class:`ShiftError`."""
    if not hours and not days:
        return None
    a = b = None
    more: tuple[tuple[int, int], ...] = ()
    if hours:
        (a, b), *rest = parse_hour_ranges(hours)
        more = tuple(rest)
    return ShiftFilter(a, b, parse_days(days) if days else None, more, tz)


def shift_mask(starts: pd.Series, ends: pd.Series, shift: ShiftFilter | None,
               offsets_s: np.ndarray | None = None) -> np.ndarray:
    """True where the interval's midpoint lies in the shift (all True for ``None`` / an empty filter);
    ``offsets_s``: seconds east of UTC of each midpoint in the shift's zone (None: UTC)."""
    n = len(ends)
    if shift is None or shift.is_empty:
        return np.ones(n, dtype=bool)
    e = ends.to_numpy(dtype="datetime64[ns]").view(np.int64)
    s = starts.to_numpy(dtype="datetime64[ns]").view(np.int64)
    s = np.where(s == np.iinfo(np.int64).min, e, s)       # NaT start: use the end
    mid = s + (e - s) // 2
    if offsets_s is not None:
        mid = mid + np.round(np.asarray(offsets_s, np.float64) * 1e9).astype(np.int64)
    keep = np.ones(n, dtype=bool)
    if shift.start_min is not None:
        minute = (mid // _NS_MIN) % 1440
        hours = np.zeros(n, dtype=bool)
        for a, b in shift.hour_ranges:
            hours |= ((minute >= a) & (minute < b)) if a < b else ((minute >= a) | (minute < b))
        keep &= hours
    if shift.days is not None:
        day = (mid // (_NS_MIN * 1440) + 3) % 7           # 1970-01-01 was a Thursday (3)
        keep &= np.isin(day, sorted(shift.days))
    return keep


# inside shared_shift_rows(): (id of the interval frame, shift) -> (the frame, its shifted rows); the zones are
# those of the frame either way (the workspace's Zones are made from its interval frame)
_SHARED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("nestscope_shift_rows", default=None)


@contextlib.contextmanager
def shared_shift_rows():
    """Inside: :func:`apply_shift` of one frame and shift gives the same rows frame every time (one mask and copy
    of the CPU-interval rows, and the per-row arrays :func:`app.engine.aggregate.aggregate` keeps per frame, for
    every level a deck or a workbook computes).  The rows are let go when the block ends."""
    outer = _SHARED.get()
    token = _SHARED.set({} if outer is None else outer)
    try:
        yield
    finally:
        _SHARED.reset(token)


def apply_shift(iv: pd.DataFrame, shift: ShiftFilter | None, zones=None) -> pd.DataFrame:
    """Interval rows of ``iv`` (``interval_start``/``interval_end`` columns) that fall into ``shift``, read in
    the shift's zone (``zones``: the workspace's :class:`app.engine.timezone.Zones`, else made from ``iv``)."""
    if shift is None or shift.is_empty or not len(iv):
        return iv
    shared = _SHARED.get()
    if shared is not None:
        key = (id(iv), shift)
        got = shared.get(key)
        if got is not None and got[0] is iv:
            return got[1]
        rows = _shifted(iv, shift, zones)
        shared[key] = (iv, rows)
        return rows
    return _shifted(iv, shift, zones)


def _shifted(iv: pd.DataFrame, shift: ShiftFilter, zones) -> pd.DataFrame:
    offs = None
    if shift.tz != "utc":
        from app.engine.timezone import Zones

        offs = (zones if zones is not None else Zones(iv)).midpoint_offsets(shift.tz, iv)
    return iv.loc[shift_mask(iv["interval_start"], iv["interval_end"], shift, offs)]


def shifted_metrics(ws, by: str = "interval", start=None, end=None, nodes=None, shift: ShiftFilter | None = None,
                    summary: bool = False) -> pd.DataFrame:
    """``Workspace.metrics`` restricted to a shift (the same frame as ``ws.metrics`` when ``shift`` is empty);
    ``by="pool"``: the CEC pools of :func:`app.engine.views.pools` over the window."""
    if by == "pool":
        from app.engine.views import pools
        return pools(ws, start=start, end=end, nodes=list(nodes) if nodes is not None else None, shift=shift)
    if nodes is not None and any(tuple(k)[0] in ("pool", "core") for k in nodes) and shift is not None \
            and not shift.is_empty:
        from app.engine.node_rows import extra_metrics
        return extra_metrics(ws, by, start, end, list(nodes), summary, shift=shift)
    if shift is None or shift.is_empty:
        return ws.metrics(by=by, start=start, end=end, nodes=list(nodes) if nodes is not None else None,
                          summary=summary)
    nodes = list(nodes) if nodes is not None else None

    def compute() -> pd.DataFrame:
        return compute_metrics(apply_shift(ws.intervals, shift, ws.zones if shift.tz != "utc" else None), ws.formula_sets, ws.counters, by=by, start=start,
                               end=end, nodes=nodes, summary=summary)
    cached = getattr(ws, "_cached", None)      # the workspace's frame cache (emptied when files are added)
    if cached is None:
        return compute()
    key = ("shift", shift, by, str(start), str(end), tuple(tuple(n) for n in nodes) if nodes is not None else None,
           bool(summary))
    return cached(key, compute)
