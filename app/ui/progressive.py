"""The first part of a big file, shown while the whole file is read (issue 23: the progressive open).

A plain SMF file of a clean RDW chain larger than :func:`threshold` (64 MB; ``NESTSCOPE_PROGRESSIVE_MB``
overrides, 0 turns it off) is read twice by its read worker: first its first records (about
:data:`PART_FRACTION` of the bytes, cut at a record boundary) by the whole-file reader, handed to the window
at once, then the whole file as before (today's path: the full result is exactly today's).

Every row the window shows from the first part must be the row the whole file gives.  Before the part is
handed over, the rest of the file is walked, on a thread beside the whole file's read (its record headers only,
in one compiled pass over the file read a megabyte at a time into one buffer, no page of it mapped:
:func:`rest_min_time`) for the earliest sample time still to come; a row of the part is final when its interval
ended a whole interval length before that time (:func:`final_rows`): no record of the rest can fall in it or
in the CPU sample before it, whatever the order of the file.  A file whose rest cannot be walked (damage, a
record this walk does not know) is read the usual way only.  No Qt here.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

PART_FRACTION = 0.03        # of the file's bytes in the first part
MIN_PART = 1 << 20          # bytes: a first part never smaller
SCAN_STEP = 64 << 20        # bytes of the rest walked at a time
THRESHOLD_MB = 64


def threshold() -> int:
    """Files larger than this many bytes are opened progressively (``NESTSCOPE_PROGRESSIVE_MB``; 0: never)."""
    raw = os.environ.get("NESTSCOPE_PROGRESSIVE_MB", "").strip()
    try:
        mb = float(raw) if raw else THRESHOLD_MB
    except ValueError:
        mb = THRESHOLD_MB
    return -1 if mb <= 0 else int(mb * (1 << 20))


@dataclass
class FirstPart:
    """The first part of a file: its read result, the fraction of the file's bytes it holds and the earliest
    sample time of the rest, per system and (key "") of all (a system not in it: the rest holds none of its
    samples)."""

    path: str
    result: Any              # formats.ReadResult of the first records
    fraction: float
    rest_min: dict[str, np.datetime64]


def cached(path: str, counters: Any) -> bool:
    """The workspace cache holds an entry for ``path`` (then the whole file comes from it, quickly)."""
    try:
        from app import cache as wc

        c = wc.default_cache()
        return c is not None and c.has_result(path, counters)
    except Exception:  # noqa: BLE001 - in doubt: no first part, the usual read
        return False


def first_part(path: str, counters: Any = None, cancel=None, fraction: float | None = None) -> FirstPart | None:
    """The first part of ``path`` (module docstring), or None when the file is not opened progressively (small,
    cached, not a clean RDW chain of SMF 113 records, or its rest cannot be walked): :func:`begin`, then the
    walk of the rest on this thread."""
    begun = begin(path, counters, fraction)
    return None if begun is None else begun.walk(cancel)


def wanted(path: str, counters: Any = None) -> bool:
    """``path`` is opened progressively as far as its size and the workspace cache tell (its records are looked
    at by :func:`begin`): larger than :func:`threshold`, not in the workspace cache."""
    limit = threshold()
    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return not (limit < 0 or size <= limit or cached(path, counters))


def begin(path: str, counters: Any = None, fraction: float | None = None, checked: bool = False) -> Begun | None:
    """The first part of ``path`` decoded, its rest not walked yet (:meth:`Begun.walk`); None when the file is
    not opened progressively (``checked``: :func:`wanted` said it is, only its records are left to look at).
    The read worker decodes the part and walks the rest on a thread of its own beside the whole file's read,
    which starts at once (the part's decode, about 0.05 CPU s on the month, no longer comes before it)."""
    if not checked and not wanted(path, counters):
        return None
    from app.formats import _display
    from app.formats.chunks import chunked, read_window
    from app.formats.kernel import rdw_offsets
    from app.formats.smf_resync import MIN_LEN

    fh = m = None
    try:
        fh = open(path, "rb")    # noqa: SIM115 - kept open for the walk of the rest (Begun.close)
        m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        if chunked(m):
            step = max(MIN_PART, int(len(m) * (PART_FRACTION if fraction is None else fraction)))
            _offs, end, status = rdw_offsets(m, 0, step, MIN_LEN)
            if status == 1 and end < len(m):
                result = read_window(m, 0, end, _display(path), counters)
                if getattr(result, "readable", False):
                    return Begun(path, fh, m, end, result)
    except Exception:  # noqa: BLE001 - the whole file's read says what is wrong with it
        pass
    Begun(path, fh, m, 0, None).close()
    return None


class Begun:
    """A first part decoded, its file still mapped for the walk of its rest."""

    def __init__(self, path: str, fh, m, end: int, result: Any) -> None:
        self.path, self._fh, self._m, self.end, self.result = path, fh, m, end, result

    def walk(self, cancel=None) -> FirstPart | None:
        """The part with the earliest sample times of the rest (:func:`rest_min_time`), or None; the file is
        closed after.  ``cancel()`` True stops the walk (:class:`~app.formats.schema.Cancelled`)."""
        try:
            rest = rest_min_time(self._m, self.end, cancel, self._fh)
            size = len(self._m)
        finally:
            self.close()
        return None if rest is None else FirstPart(self.path, self.result, self.end / max(size, 1), rest)

    def close(self) -> None:
        for f in (self._m, self._fh):
            if f is not None:
                f.close()
        self._m = self._fh = None


WALK_CHUNK = 1 << 20        # bytes of the rest read at a time by the compiled walk (records are < 64 KiB)
MAX_SYSTEMS = 4096          # systems the compiled walk keeps apart (more: the numpy walk)


def rest_min_time(buf, pos: int, cancel=None, fh=None) -> dict[str, np.datetime64] | None:
    """The earliest sample time (the record's CTM, as the reader decodes it) of the SMF 113 records of ``buf``
    from ``pos`` to its end, per system (SMF SID) and under "" of all; None when the rest is not a clean chain
    of records this walk knows (then nothing of the first part can be called final).

    With the compiled kernel the headers are walked in one pass (``_kernel.rdw_low_times``): from ``fh`` (the
    file of ``buf``, open for reading) read a :data:`WALK_CHUNK` at a time into one buffer when given (the
    file's pages are not mapped, so the walk leaves the page tables of the whole file's read alone), else over
    ``buf``; without it, the numpy walk (:func:`_rest_min_numpy`, the same result)."""
    from app.formats import kernel

    if not kernel.has_low_times():
        return _rest_min_numpy(buf, pos, cancel)
    from app.formats import smf113_layout as L
    from app.formats.pages import drop, populate
    from app.formats.schema import Cancelled
    from app.formats.smf_resync import MIN_LEN

    layout = np.array([113, L.OFF_RTY, L.OFF_STY, L.OFF_SID, L.OFF_DOF, L.S1_CTM, L.S2_CTM], np.int64)
    sids, lows, nsid = np.zeros(MAX_SYSTEMS, np.uint32), np.zeros(MAX_SYSTEMS, np.uint64), 0
    n, start = len(buf), pos
    chunk = memoryview(bytearray(WALK_CHUNK)) if fh is not None else None
    while pos < n:
        if cancel is not None and cancel():
            raise Cancelled()
        if chunk is not None:
            fh.seek(pos)
            got = fh.readinto(chunk)
            if not got:
                return None         # the file shrank under the walk: no guess
            nsid, used, status = kernel.low_times(chunk[:got], 0, got, MIN_LEN, layout, sids, lows, nsid)
            last = pos + got >= n   # this read reaches the file's end
            at = pos + used
        else:                       # a step of the map at a time, its pages handed back after it
            populate(buf, pos, pos + SCAN_STEP + 65536)
            nsid, at, status = kernel.low_times(buf, pos, pos + SCAN_STEP, MIN_LEN, layout, sids, lows, nsid)
            drop(buf, pos, min(at, n))
            last = True
        if status == -3:        # more systems than the table holds: the numpy walk, from the rest's start
            return _rest_min_numpy(buf, start, cancel)
        if status < 0 or (status == 2 and last):
            return None     # not a clean chain, a record this walk does not take apart, a cut last record
        if status == 0 and last:
            break
        if at <= pos:
            return None         # no progress (cannot happen on a file of records under 64 KiB): no guess
        pos = at
    return _low_times_out({int(s).to_bytes(4, "big"): int(v) for s, v in zip(sids[:nsid], lows[:nsid], strict=True)})


def _low_times_out(best: dict[bytes, int]) -> dict[str, np.datetime64]:
    """The walk's lowest time of each system (raw SID -> TOD clock value) as :func:`rest_min_time` gives it."""
    from app.formats import common

    top = np.iinfo(np.uint64).max
    out = {_sid_text(k): common.tod_to_datetime64(v)[()] for k, v in best.items() if v != top}
    out[""] = min(out.values()) if out else np.datetime64("NaT", "ns")
    return out


def _rest_min_numpy(buf, pos: int, cancel=None) -> dict[str, np.datetime64] | None:
    """:func:`rest_min_time` by numpy over the mapped ``buf`` (the compiled kernel not built, or off)."""
    from app.formats import smf113_layout as L
    from app.formats.kernel import rdw_offsets, rows_at
    from app.formats.pages import drop, populate
    from app.formats.schema import Cancelled
    from app.formats.smf_resync import MIN_LEN

    n = len(buf)
    best: dict[bytes, int] = {}
    while pos < n:
        if cancel is not None and cancel():
            raise Cancelled()
        stop = min(pos + SCAN_STEP, n)
        populate(buf, pos, stop + 65536)
        offs, end, status = rdw_offsets(buf, pos, stop, MIN_LEN)
        if status < 0:
            return None
        if len(offs):
            heads = rows_at(buf, offs, L.OFF_DOF + 4)
            lens = (heads[:, 0].astype(np.int64) << 8) | heads[:, 1]
            if (offs + lens > n).any():
                return None     # a cut last record: the reader's findings, not this walk's
            ours = heads[:, L.OFF_RTY] == 113
            sty = (heads[:, L.OFF_STY].astype(np.int64) << 8) | heads[:, L.OFF_STY + 1]
            dof = np.zeros(len(offs), np.int64)
            for k in range(4):
                dof = (dof << 8) | heads[:, L.OFF_DOF + k]
            at = dof + np.where(sty == 2, L.S2_CTM, L.S1_CTM)
            if (ours & (~np.isin(sty, (1, 2)) | (at + 8 > lens) | (dof < L.OFF_DOF + 4))).any():
                return None     # a record the reader may take apart otherwise: no guess
            if ours.any():
                tod = rows_at(buf, offs[ours] + at[ours], 8).view(">u8").ravel().astype(np.uint64)
                sid = np.ascontiguousarray(heads[ours, L.OFF_SID:L.OFF_SID + 4]).view(">u4").ravel()
                tod[tod == 0] = np.iinfo(np.uint64).max          # no time: no sample the reader keeps
                for s in np.unique(sid):
                    low = int(tod[sid == s].min())
                    key = int(s).to_bytes(4, "big")
                    best[key] = min(best.get(key, low), low)
        drop(buf, pos, min(end, n))
        if status == 0 or end <= pos:
            break
        pos = end
    return _low_times_out(best)


def _sid_text(raw: bytes) -> str:
    """An SMF system id as the reader names it (EBCDIC, trailing blanks and NULs left out)."""
    return raw.decode("cp037").rstrip(" \0")


def final_rows(table: pd.DataFrame, rest_min: dict[str, np.datetime64], systems: Any = ()) -> pd.DataFrame:
    """The rows of a first part's table the whole file gives unchanged: interval rows (no summary row) whose
    interval ended at least one interval length (the row's own, and at least a minute) before the earliest
    sample time still to come (``rest_min``): of the row's system for a row of one system of ``systems`` (those
    of the part: an LPAR, its classes and CPUs), of the whole rest for the others (a CEC's or a pool's rows)."""
    from app.ui.frames import SUMMARY_COL

    if table is None or not len(table) or "interval_end" not in table.columns:
        return table.iloc[0:0] if table is not None else table
    keep = np.ones(len(table), bool)
    if SUMMARY_COL in table.columns:
        keep &= ~table[SUMMARY_COL].fillna(False).astype(bool).to_numpy()
    end = pd.to_datetime(table["interval_end"])
    if getattr(end.dtype, "tz", None) is not None:
        end = end.dt.tz_convert("UTC").dt.tz_localize(None)
    span = pd.to_timedelta(pd.to_numeric(table["interval_s"], errors="coerce").fillna(0.0).clip(lower=60.0)
                           if "interval_s" in table.columns else 60.0, unit="s")
    whole = rest_min.get("", np.datetime64("NaT", "ns"))
    if "system" in table.columns and "_by" in table.columns:
        known = {str(x) for x in systems}
        own = ~table["_by"].astype(str).str.startswith("cec").to_numpy()
        names = table["system"].astype(str).to_numpy()
        limit = np.array([rest_min.get(x, np.datetime64("NaT", "ns")) if o and x in known else whole
                          for x, o in zip(names, own, strict=True)], dtype="datetime64[ns]")
    else:
        limit = np.full(len(table), whole, dtype="datetime64[ns]")
    due = (end + span).to_numpy(dtype="datetime64[ns]")
    keep &= np.isnat(limit) | (due < limit)      # NaT: nothing of it still to come
    return table.loc[keep].reset_index(drop=True)


def part_view(part: FirstPart, formula_sets: Any = None, keep_implausible: bool = False) -> Any:
    """What the window shows of ``part`` (a ViewData): the part added to a Workspace of its own, the tree's CEC
    and LPAR levels, the first LPAR's table (its interval rows, no summary row) cut to its final rows
    (:func:`final_rows`); no findings."""
    from app.engine import Workspace
    from app.ui.render import compute_view
    from app.ui.selection import Selection

    # no coverage notes: the part's rows end at its cut, not where the file's do, so a note of the part (an LPAR
    # covering less of the CEC's time than another) would not be the file's, and its pass over the part's rows
    # would delay the first table (about 0.05 CPU s on the month's part)
    # no summary rows either: final_rows leaves them out (a whole-window pass over the part's rows, about 0.05 CPU s
    # on the month's part, taken from the whole file's read on the other core); nor the findings of the records
    # alone, which are not shown (CPUs coming and going: 0.05-0.15 s on the month's part, whose cut leaves every
    # CPU of its last interval "vanishing")
    ws = Workspace(formula_sets=formula_sets, cache=False, keep_implausible=keep_implausible, coverage_notes=False,
                   record_findings=False)
    outcome = SimpleNamespace(path=part.path, digest="", result=part.result)     # a LoadOutcome's fields
    view = compute_view(ws, Selection(), [outcome], table=True, timeline=False,
                        values=False, deep=False, summary=False)
    if view.table is not None:
        view.table = final_rows(view.table, part.rest_min, part_systems(part))
    _blank_counts(view.roots or [], part.rest_min)
    view.findings = view.files = None       # the part's findings are not the file's
    view.added = []
    return view


def _blank_counts(nodes: list[Any], rest_min: dict[str, np.datetime64]) -> None:
    """The CPU count of a tree node whose system (an LPAR's own; all of them for a CEC or a pool) still has
    samples to come is left blank: it is not yet the whole file's."""
    for node in nodes:
        system = node.key[2] if node.level == "lpar" and len(node.key) > 2 else ""
        if not np.isnat(rest_min.get(system, np.datetime64("NaT", "ns"))) and "n_cpus" in node.info:
            node.info = dict(node.info, n_cpus=None)
        _blank_counts(node.children, rest_min)


def part_systems(part: FirstPart) -> set[str]:
    """The systems the part holds samples of."""
    samples = part.result.samples
    return set(samples["system"].astype(str).unique()) if "system" in samples.columns else set()
