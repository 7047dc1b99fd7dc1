"""Local time: each system's UTC offset derived from its own records, and the time zone times are shown in.

Every SMF record header states the local time of day (SMF113TME/DTE) beside the UTC TOD values of the CPU MF
data, and z/VM's D1R4 states the system's zone offset; the readers put it in the sample column ``local_time``
(naive local time).  The offset of a record is ``local_time - time`` rounded to the nearest quarter hour: TME is
when the record entered the SMF buffer, a little after the interval end, and the TOD clock may run ahead of UTC
by the leap seconds.  The offset is kept per record, so a daylight-saving switch inside the data is a change of
offset (a finding, ``local-time-change``), never a gap; a system (machine + LPAR key) without a usable local time
stays in UTC and says so (``no-local-time``).

The interval frame carries the offset the record that ends each interval states (``utc_offset_s``, seconds east
of UTC, NaN when unknown).  The offset in force at a time ``t`` is the one of the system's last record at or
before ``t`` (its first record's before the data starts): an interval's midpoint takes the offset of the record
that opened it, so the interval before a switch stays in the old offset.

A time-zone choice (``--tz``, the window's switch) is ``local`` (each system's own offsets), ``utc`` or an IANA
zone name (zoneinfo).  Pure pandas/numpy, no Qt.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.engine.keys import LPAR_KEY
from app.findings import Finding, make_finding

__all__ = ["LOCAL", "UTC", "QUARTER_S", "TzError", "parse_tz", "record_offsets", "add_utc_offsets", "utc_offsets",
           "Zones", "offset_text", "iso_time"]

LOCAL, UTC = "local", "utc"
QUARTER_S = 900
OFFSET_COLUMN = "utc_offset_s"
_NS = 1_000_000_000


class TzError(ValueError):
    """A --tz text that is neither local, utc nor a known IANA zone name."""


def parse_tz(text: str | None) -> str:
    """``local`` / ``utc`` (also ``UTC``, ``Z``) / an IANA zone name such as ``Europe/Berlin``; raises TzError."""
    t = (text or LOCAL).strip()
    if t.lower() in (LOCAL, UTC, "z", "gmt"):
        return LOCAL if t.lower() == LOCAL else UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(t)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise TzError(f"--tz {t!r}: not 'local', 'utc' or an IANA time-zone name (e.g. Europe/Berlin, "
                      "America/New_York)") from None
    return t


def offset_text(seconds: float | None) -> str:
    """``3600`` -> ``UTC+01:00``, ``-16200`` -> ``UTC-04:30``; None/NaN -> ``UTC``."""
    if seconds is None or not np.isfinite(seconds):
        return "UTC"
    s = int(seconds)
    sign = "-" if s < 0 else "+"
    s = abs(s)
    return f"UTC{sign}{s // 3600:02d}:{s % 3600 // 60:02d}"


def iso_time(v, offset_s: float | None = None) -> str:
    """A UTC time as ISO 8601 in the given offset: ``...Z`` for 0 / unknown, ``...+02:00`` otherwise."""
    if v is None or v is pd.NaT:
        return ""
    ts = pd.Timestamp(v)
    if pd.isna(ts):
        return ""
    off = 0 if offset_s is None or not np.isfinite(offset_s) else int(offset_s)
    ts = ts + pd.Timedelta(seconds=off)
    frac = f".{ts.microsecond:06d}" if ts.microsecond else ""
    return ts.strftime("%Y-%m-%dT%H:%M:%S") + frac + ("Z" if off == 0 else offset_text(off)[3:])


# ------------------------------------------------------------------ derivation
def record_offsets(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One row per system and record time: cec, lpar, system, time, offset_s (local - UTC, to the nearest
    quarter hour), source and offset (the first record stating it).  Records without a usable local time
    are left out."""
    cols = [*LPAR_KEY, "time", "offset_s", "source", "file_offset"]
    parts: dict[str, list[np.ndarray]] = {c: [] for c in cols}
    for f in frames:
        if "local_time" not in f.columns or not len(f):
            continue
        loc = f["local_time"].to_numpy("datetime64[ns]")
        t = f["time"].to_numpy("datetime64[ns]")
        ok = ~np.isnat(loc) & ~np.isnat(t)
        if not ok.any():
            continue
        # the first record of each system and time (its CPUs' records state the same), found on codes: the
        # strings are made for those rows only
        ok = np.flatnonzero(ok)
        ok = ok[_firsts(t[ok].view(np.int64), [_text_codes(f[c]) for c in LPAR_KEY], ok)]
        diff = (loc[ok].view(np.int64) - t[ok].view(np.int64)) / _NS
        for c in (*LPAR_KEY, "source"):
            parts[c].append(_text_at(f[c], ok))
        parts["time"].append(t[ok])
        parts["offset_s"].append(np.round(diff / QUARTER_S).astype(np.int64) * QUARTER_S)
        parts["file_offset"].append(f["offset"].to_numpy()[ok])
    if not parts["time"]:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in cols})
    a = {c: (v[0] if len(v) == 1 else np.concatenate(v)) for c, v in parts.items()}
    # one row per system and time (the first, in frame order), in the order of (cec, lpar, system, time): a
    # stable sort on the texts' ranks (numpy's order of strings is Python's, as pandas sorts them) and the
    # times, the first row of each key kept -- what drop_duplicates, then a stable sort_values, gave
    ranks = [np.unique(a[c], return_inverse=True)[1].reshape(-1) for c in LPAR_KEY]
    tv = a["time"].view(np.int64)
    order = np.lexsort((tv, *ranks[::-1]))
    new = np.ones(len(order), bool)
    if len(order) > 1:
        same = tv[order[1:]] == tv[order[:-1]]
        for r in ranks:
            same &= r[order[1:]] == r[order[:-1]]
        new[1:] = ~same
    order = order[new]
    return pd.DataFrame({c: a[c][order] for c in cols})


def _text_at(s: pd.Series, rows: np.ndarray) -> np.ndarray:
    """``s.iloc[rows].to_numpy().astype(str)``: a categorical's text made once per category (a missing value
    'nan', as ``astype(str)`` gives it)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        cat = s.array
        labels = np.append(cat.categories.to_numpy(dtype=object), np.nan).astype(str)
        return labels[cat.codes[rows]]          # code -1 (missing): the last label, 'nan'
    return s.iloc[rows].to_numpy().astype(str)


def _firsts(t: np.ndarray, codes: list[tuple[np.ndarray, int]], rows: np.ndarray) -> np.ndarray:
    """Positions (ascending) of the first of ``rows`` with each distinct time ``t`` (one per row) and text codes
    (``_text_codes`` of the whole frame, taken at ``rows``)."""
    key, size = pd.factorize(t)[0].astype(np.int64, copy=False), max(len(t), 1)
    for code, n in codes:
        if size * n >= 2 ** 62:           # the codes no longer fit one integer: number the pairs so far first
            key, size = pd.factorize(key)[0].astype(np.int64), max(len(key), 1)
        key, size = key * n + code[rows], size * n
    first = pd.factorize(key)[0]          # numbered in order of first appearance: a first exceeds every code before it
    return np.flatnonzero(first > np.concatenate(([-1], np.maximum.accumulate(first)[:-1])))


def _text_codes(s: pd.Series) -> tuple[np.ndarray, int]:
    """Codes of ``s`` equal where its values' text (``numpy.astype(str)``) is: a categorical's per category."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        labels = np.append(s.cat.categories.to_numpy(dtype=object), np.nan).astype(str)
        lab, n = pd.factorize(labels)[0], len(labels)
        return lab.astype(_narrow(n))[s.cat.codes.to_numpy()], n      # a row's code as narrow as they fit
    c, u = pd.factorize(s.to_numpy().astype(str))
    return c.astype(_narrow(len(u)), copy=False), max(len(u), 1)


def _narrow(n: int) -> type:
    """The narrowest signed integer dtype holding the codes 0..n-1 (the per-row codes of a frame's text columns:
    an LPAR key's three columns at one byte a row, not eight)."""
    return np.int8 if n <= 1 << 7 else np.int16 if n <= 1 << 15 else np.int32 if n <= 1 << 31 else np.int64


def add_utc_offsets(iv: pd.DataFrame, frames: Sequence[pd.DataFrame], rec: pd.DataFrame | None = None
                    ) -> list[Finding]:
    """Set ``iv['utc_offset_s']`` (the offset the record ending each interval states; NaN unknown) and return
    the findings: each switch of a system's offset, and each system whose offset cannot be derived.  ``rec``:
    ``record_offsets(frames)`` when made already (it reads the samples only: it may be made beside the
    intervals)."""
    col, findings = utc_offsets(iv, record_offsets(frames) if rec is None else rec)
    iv[OFFSET_COLUMN] = col
    return findings


def utc_offsets(iv: pd.DataFrame, rec: pd.DataFrame) -> tuple[np.ndarray, list[Finding]]:
    """What :func:`add_utc_offsets` sets and returns, from the records' offsets ``rec``; ``iv`` is only read."""
    col = np.full(len(iv), np.nan)
    if not len(iv):
        return col, []
    findings: list[Finding] = []
    known: dict[tuple, list[int]] = {}      # each system's rows of ``rec``, in order (a row a system and time)
    for i, k in enumerate(zip(*(rec[c].to_numpy(dtype=object) for c in LPAR_KEY)) if len(rec) else ()):
        known.setdefault(k, []).append(i)
    ends = iv["interval_end"].to_numpy("datetime64[ns]").view(np.int64)
    for key, rows in _system_rows(iv):
        key = tuple(str(k) for k in key)
        at = known.get(key)
        g = None if at is None else rec.iloc[at]
        if g is None:
            src = iv["source"].iloc[rows[0]] if "source" in iv.columns else ""
            findings.append(make_finding(str(src), None, "info", "no-local-time",
                                         f"{key[1]} ({key[0]}): the local time offset cannot be derived (no usable "
                                         "local time in its records)", "its times are shown in UTC",
                                         cec=key[0], lpar=key[1], system=key[2]))
            continue
        t = g["time"].to_numpy("datetime64[ns]").view(np.int64)
        off = g["offset_s"].to_numpy(np.int64)
        idx = np.clip(np.searchsorted(t, ends[rows], side="right") - 1, 0, len(t) - 1)
        col[rows] = off[idx]
        for j in np.flatnonzero(np.diff(off)) + 1:
            when = pd.Timestamp(int(t[j]))
            findings.append(make_finding(str(g["source"].iloc[j]), int(g["file_offset"].iloc[j]), "info",
                                         "local-time-change",
                                         f"{key[1]}: local time changed from {offset_text(off[j - 1])} to "
                                         f"{offset_text(off[j])} at {when:%Y-%m-%d %H:%M} UTC",
                                         "a daylight-saving or zone change: the day has more or fewer local hours, "
                                         "not a gap in the data", cec=key[0], lpar=key[1], system=key[2],
                                         time=when.isoformat()))
    return col, findings


def _system_rows(iv: pd.DataFrame):
    """``iv.groupby(LPAR_KEY, observed=True, sort=True).indices.items()``: each system's key and its rows
    (ascending), in the order of the key; from the category codes when the key's columns are categoricals
    (the engine's intervals: a groupby of them cost 5 ms a chunk for the one or few systems there are)."""
    cols = [iv[c].array for c in LPAR_KEY]
    if not all(isinstance(a, pd.Categorical) for a in cols):
        yield from iv.groupby(LPAR_KEY, observed=True, sort=True).indices.items()
        return
    codes = [a.codes for a in cols]
    r = np.flatnonzero(np.logical_and.reduce([c >= 0 for c in codes]))      # a missing name: no group
    if not len(r):
        return
    sr = r[np.lexsort([c[r] for c in codes[::-1]])]        # by the codes (the categories' order), rows ascending
    k = np.stack([c[sr] for c in codes])
    cut = np.flatnonzero((k[:, 1:] != k[:, :-1]).any(axis=0)) + 1
    for rows in np.split(sr, cut):
        yield tuple(a.categories[c[rows[0]]] for a, c in zip(cols, codes)), rows


# ------------------------------------------------------------------ use
class Zones:
    """The offsets of every system of an interval frame, and conversions of UTC times to a time-zone choice."""

    def __init__(self, iv: pd.DataFrame) -> None:
        self.points: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.unknown: list[tuple[str, str, str]] = []
        if not len(iv) or OFFSET_COLUMN not in iv.columns:
            if len(iv):
                self.unknown = [tuple(str(x) for x in k) for k in
                                iv[LPAR_KEY].drop_duplicates().itertuples(index=False)]
            return
        u = iv[[*LPAR_KEY, "interval_end", OFFSET_COLUMN]].drop_duplicates([*LPAR_KEY, "interval_end"])
        for key, g in u.groupby(LPAR_KEY, observed=True, sort=True):
            key = tuple(str(k) for k in key)
            g = g.sort_values("interval_end")
            off = g[OFFSET_COLUMN].to_numpy(np.float64)
            if np.isnan(off).all():
                self.unknown.append(key)
                continue
            ok = ~np.isnan(off)
            self.points[key] = (g["interval_end"].to_numpy("datetime64[ns]").view(np.int64)[ok], off[ok])

    # -- facts ------------------------------------------------------------------------
    @property
    def known(self) -> bool:
        """True when at least one system's offset is known (the default choice is then ``local``)."""
        return bool(self.points)

    def default(self) -> str:
        """``local`` once some system's offset is known and not 0 (local time that is UTC is shown as UTC)."""
        return LOCAL if any(np.any(off != 0) for _t, off in self.points.values()) else UTC

    def switches(self) -> list[tuple[tuple[str, str, str], pd.Timestamp, float, float]]:
        """Every offset change: (system key, UTC time of the first record with the new offset, from, to)."""
        out = []
        for key, (t, off) in self.points.items():
            for j in np.flatnonzero(np.diff(off)) + 1:
                out.append((key, pd.Timestamp(int(t[j])), float(off[j - 1]), float(off[j])))
        return sorted(out, key=lambda x: x[1])

    def system_offsets(self) -> dict[tuple[str, str, str], list[float]]:
        """Distinct offsets of each known system, in time order."""
        return {k: list(dict.fromkeys(off.tolist())) for k, (_t, off) in self.points.items()}

    def _series_for(self, cec: str | None, lpar: str | None, system: str | None):
        if lpar is not None:
            for key, p in self.points.items():
                if key[0] == str(cec) and key[1] == str(lpar) and (system is None or key[2] == str(system)):
                    return p
            if cec is None:
                for key, p in self.points.items():
                    if key[1] == str(lpar):
                        return p
            return None
        # a CEC (or everything): the offsets of its systems when they all state the same ones
        cands = [p for k, p in self.points.items() if cec is None or k[0] == str(cec)]
        if not cands:
            return None
        first = set(cands[0][1].tolist())
        if all(set(p[1].tolist()) == first for p in cands[1:]):
            return max(cands, key=lambda p: len(p[0]))
        return None

    # -- conversions ------------------------------------------------------------------
    def offsets(self, tz: str, times, keys: pd.DataFrame | None = None) -> np.ndarray:
        """Seconds east of UTC of each of ``times`` (UTC) in the choice ``tz``: 0 for ``utc`` and for a system
        whose offset is unknown; ``keys`` (rows with cec / lpar / system columns, as many as ``times``) names
        the system of each time for ``local`` (none: the offsets all systems share, else UTC)."""
        t = pd.to_datetime(pd.Series(np.asarray(times))).to_numpy("datetime64[ns]")
        out = np.zeros(len(t), np.float64)
        if not len(t) or tz == UTC:
            return out
        nat = np.isnat(t)
        tv = t.view(np.int64)
        if tz != LOCAL:
            idx = pd.DatetimeIndex(np.where(nat, np.datetime64(0, "ns"), t)).tz_localize("UTC").tz_convert(tz)
            off = (idx.tz_localize(None) - idx.tz_convert("UTC").tz_localize(None)).total_seconds()
            return np.where(nat, 0.0, np.asarray(off, np.float64))
        if keys is None or not len(keys):
            groups = {(None, None, None): np.arange(len(t))}
        else:
            cols = [c for c in LPAR_KEY if c in keys.columns]
            if not cols:
                groups = {(None, None, None): np.arange(len(t))}
            else:
                kf = keys[cols].astype(str).reset_index(drop=True)
                groups = {}
                for k, rows in kf.groupby(cols, sort=False).indices.items():
                    k = k if isinstance(k, tuple) else (k,)
                    d = dict(zip(cols, k))
                    groups[(d.get("cec"), d.get("lpar"), d.get("system"))] = rows
        for (cec, lpar, system), rows in groups.items():
            p = self._series_for(cec, lpar, system)
            if p is None:
                continue
            pt, poff = p
            j = np.clip(np.searchsorted(pt, tv[rows], side="right") - 1, 0, len(pt) - 1)
            out[rows] = poff[j]
        out[nat] = 0.0
        return out

    def midpoint_offsets(self, tz: str, iv: pd.DataFrame) -> np.ndarray:
        """The offset in force at each interval's midpoint (what the shift filter and hour profiles use)."""
        e = iv["interval_end"].to_numpy("datetime64[ns]").view(np.int64)
        s = iv["interval_start"].to_numpy("datetime64[ns]").view(np.int64) if "interval_start" in iv.columns else e
        s = np.where(s == np.iinfo(np.int64).min, e, s)
        mid = (s + (e - s) // 2).view("datetime64[ns]")
        return self.offsets(tz, mid, iv if any(c in iv.columns for c in LPAR_KEY) else None)

    def local(self, tz: str, times, keys: pd.DataFrame | None = None) -> np.ndarray:
        """``times`` (UTC) as naive wall-clock times in ``tz``."""
        t = pd.to_datetime(pd.Series(np.asarray(times))).to_numpy("datetime64[ns]")
        return t + (self.offsets(tz, t, keys) * _NS).astype(np.int64).astype("timedelta64[ns]")

    def label(self, tz: str, offsets: np.ndarray | None = None) -> str:
        """The zone's name for headers and axes: ``UTC``, ``local, UTC+01:00``, ``local, UTC+01:00/UTC+02:00``,
        ``Europe/Berlin``; ``local`` whose offsets are all 0 is ``UTC``."""
        if tz == UTC:
            return "UTC"
        if tz != LOCAL:
            return tz
        if offsets is None:
            offs = sorted({o for _k, (_t, off) in self.points.items() for o in off.tolist()})
        else:
            offs = sorted(set(np.asarray(offsets, np.float64)[np.isfinite(offsets)].tolist()))
        if not offs or offs == [0.0]:
            return "UTC"
        return "local, " + "/".join(offset_text(o) for o in offs)
