"""Provenance of an export: source files (name, size, SHA-256), window, shift filter,
formula-set versions and the app version -- written into every export (XLSX About
sheet, every PPTX slide's notes, the JSON meta of ``compare``).

The document's windows are UTC (``...Z``; the JSON meta of ``compare`` adds its own offsets).  A request in
another zone (``request.tz``: ``local`` or an IANA name) adds ``doc["shown"]``: each window as ISO 8601 with the
offset of that zone (``local``: each system's own, from its records) and the zone's name, which the text lines
(:func:`provenance_lines`) and the About sheet write; in UTC they are as they always were."""

from __future__ import annotations

import hashlib
import os
import threading
from concurrent.futures import Future
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from app.engine.plausibility import IMPLAUSIBLE, LEFT_OUT

# level ids as analysts write them in titles
LEVEL_NAMES = {"lpar": "LPAR", "class": "processor class", "cec": "CEC", "cpu": "CPU", "interval": "interval"}

__all__ = ["file_info", "hash_ahead", "provenance", "provenance_lines", "iso", "zone_words"]

_HASH_CACHE: dict[tuple[str, int, int], str] = {}
# digests being taken on the hashing thread (hash_ahead), by the same key as _HASH_CACHE
_AHEAD: dict[tuple[str, int, int], Future] = {}
_AHEAD_LOCK = threading.Lock()


def iso(v: Any) -> str | None:
    """ISO 8601 UTC text of a time (``None`` for no time)."""
    if v is None:
        return None
    ts = pd.Timestamp(v)
    if pd.isna(ts):
        return None
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def _iso_at(v: Any, offset_s: float) -> str | None:
    """ISO 8601 text of a UTC time on the wall clock of ``offset_s`` (``...Z`` for 0, else ``...+02:00``)."""
    text = iso(v)
    if text is None or not offset_s:
        return text
    from app.engine.timezone import iso_time

    return iso_time(pd.Timestamp(text[:-1]), offset_s)


def zone_words(label: str) -> str:
    """The zone as the provenance names it: ``local, UTC+01:00/UTC+02:00`` (:meth:`Zones.label`) is
    ``local time of each system: UTC+01:00/UTC+02:00``; ``UTC`` and IANA names stay."""
    return f"local time of each system: {label[7:]}" if label.startswith("local, ") else label


def shown_path(path: str) -> str:
    """A file name as text every output can hold: bytes that are not UTF-8 (a name from another system, kept by
    Python as lone surrogates) shown as ``\\xNN``."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except (UnicodeError, TypeError, ValueError):
        return str(path).encode("utf-8", "backslashreplace").decode("utf-8")


def _hash_key(path: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return shown_path(os.path.abspath(path)), st.st_size, st.st_mtime_ns


def _sha256(path: str) -> str | None:
    """The file's SHA-256, read 1 MiB at a time into one buffer (no allocation per block: on the hashing thread
    beside an export's work it takes no heap of its own block by block)."""
    h = hashlib.sha256()
    buf = bytearray(1 << 20)
    try:
        with open(path, "rb", buffering=0) as fh, memoryview(buf) as view:
            while n := fh.readinto(buf):
                h.update(view[:n])
    except OSError:
        return None
    return h.hexdigest()


def hash_ahead(paths: Iterable[str]) -> None:
    """Start the SHA-256 of files an export's provenance names, on a thread of its own (hashlib lets go of the
    GIL on big blocks): :func:`file_info` then takes the digest made meanwhile, or waits for it, instead of reading
    the whole file on the export's thread when it writes the provenance (the month: 564 MB, 0.3-1.2 s).  Files
    hashed already, or being hashed, are not hashed again."""
    todo = []
    with _AHEAD_LOCK:
        for p in dict.fromkeys(str(p) for p in paths):
            key = _hash_key(p)
            if key is not None and key not in _HASH_CACHE and key not in _AHEAD:
                _AHEAD[key] = fut = Future()
                todo.append((p, fut))
    if todo:
        threading.Thread(target=_hash_all, args=(todo,), name="nestscope-sha256", daemon=True).start()


def _hash_all(todo: list[tuple[str, Future]]) -> None:
    for path, fut in todo:
        try:
            fut.set_result(_sha256(path))
        except BaseException as exc:  # noqa: BLE001 - raised again where the digest is asked for
            fut.set_exception(exc)


def file_info(path: str) -> dict[str, Any]:
    """``{"name", "path", "size", "sha256"}`` of one input file (size/sha256 None when it is gone)."""
    out: dict[str, Any] = {"name": shown_path(os.path.basename(path)), "path": shown_path(os.path.abspath(path)),
                           "size": None,
                           "sha256": None}
    key = _hash_key(path)
    if key is None:
        return out
    out["size"] = key[1]
    digest = _HASH_CACHE.get(key)
    if digest is None:
        with _AHEAD_LOCK:
            ahead = _AHEAD.pop(key, None)      # the file as it is now (same size and time) is being hashed
        digest = ahead.result() if ahead is not None else _sha256(path)
        if digest is None:
            return out
        _HASH_CACHE[key] = digest
    out["sha256"] = digest
    return out


def _zoned_window(ws, tz: str, start, end, rows: pd.DataFrame | None) -> dict[str, Any]:
    """``{"window": from/to/first/last as ISO 8601 in tz, "zone": its name}`` of one selection.  ``first`` and
    ``last`` take the offset of the system whose row holds them; a window bound the offset the selected systems
    share at that time (none selected: the offset all systems share); where they differ it stays UTC (``...Z``)."""
    from app.engine.keys import LPAR_KEY

    zones = ws.zones
    win: dict[str, Any] = {"from": None, "to": None, "first": None, "last": None}
    used: list[float] = []
    systems = None
    if rows is not None and len(rows) and all(c in rows.columns for c in LPAR_KEY):
        systems = rows[LPAR_KEY].drop_duplicates().reset_index(drop=True)
    for key, v in (("from", start), ("to", end)):
        if v is None or pd.isna(pd.Timestamp(v)):
            continue
        t = pd.Timestamp(v)
        t = (t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t).to_datetime64()
        if systems is not None:
            offs = set(zones.offsets(tz, [t] * len(systems), systems).tolist())
            off = offs.pop() if len(offs) == 1 else None
        else:
            off = float(zones.offsets(tz, [t])[0])
        win[key] = _iso_at(t, off or 0.0)
        if off is not None:                   # a bound in UTC because the systems differ there names no offset
            used.append(off)
    if rows is not None and len(rows):
        for key, col, pick in (("first", "interval_start", "idxmin"), ("last", "interval_end", "idxmax")):
            times = pd.to_datetime(rows[col].reset_index(drop=True))
            if times.isna().all():
                continue
            i = getattr(times, pick)()
            one = rows.iloc[[i]]
            off = float(zones.offsets(tz, [times.iloc[i].to_datetime64()], one)[0])
            win[key] = _iso_at(times.iloc[i], off)
            used.append(off)
    return {"window": win, "zone": zone_words(zones.label(tz, np.asarray(used, np.float64) if used else None))}


def _row_facts(ws, start, end, shift, nodes) -> tuple[Any, Any, int, int, pd.DataFrame | None]:
    """(first interval start, last interval end, implausible CPU-intervals, left-out ones, the rows) of one
    selection's interval rows (window, nodes, shift)."""
    iv = ws.intervals
    first = last = None
    bad = out = 0
    rows = None
    if len(iv):
        from app.engine.aggregate import select_rows
        from app.engine.shift import apply_shift

        if shift is not None and not shift.is_empty and shift.tz == "utc":
            # a UTC shift's rows do not depend on the zones: the shifted rows the export's levels already share
            # (app.engine.shift.shared_shift_rows), then the window and nodes; the same rows in the same order
            rows = select_rows(apply_shift(iv, shift), start, end, nodes)
        else:                    # a zoned shift keeps reading the offsets of the selected rows (Zones(rows))
            rows = apply_shift(select_rows(iv, start, end, nodes), shift)
        if len(rows):
            first, last = rows["interval_start"].min(), rows["interval_end"].max()
            qb = rows["qbits"].to_numpy(dtype=np.int64)
            bad, out = int(((qb & IMPLAUSIBLE) != 0).sum()), int(((qb & LEFT_OUT) != 0).sum())
    return first, last, bad, out, rows


def _sides_facts(ws, start, end, shift, nodes) -> tuple[Any, Any, int, int, None] | None:
    """:func:`_row_facts` of a workspace of a comparison's sides that share no CEC
    (:class:`app.analysis.sides.SidesWorkspace`: its rows are the sides' rows side by side) from each side's rows
    (the rows each side's levels shifted already), without the rows of both in one frame; None for another
    workspace or a zoned shift (whose offsets are read from the rows together)."""
    sides = getattr(ws, "sides", None)
    if not callable(sides) or (shift is not None and not shift.is_empty and shift.tz != "utc"):
        return None
    facts = [_row_facts(side, start, end, shift, nodes) for side in sides()]
    firsts = [f[0] for f in facts if f[0] is not None]
    lasts = [f[1] for f in facts if f[1] is not None]
    return (min(firsts) if firsts else None, max(lasts) if lasts else None, sum(f[2] for f in facts),
            sum(f[3] for f in facts), None)


def _selection(ws, start, end, shift, nodes, tz: str = "utc", shown: dict | None = None) -> dict[str, Any]:
    """One selection's provenance (windows in UTC); with a zone other than UTC, ``shown[...]`` gets its
    windows in that zone (:func:`_zoned_window`)."""
    zoned = shown is not None and tz not in (None, "utc") and getattr(ws, "zones", None) is not None
    facts = None if zoned else _sides_facts(ws, start, end, shift, nodes)
    first, last, bad, out, rows = facts if facts is not None else _row_facts(ws, start, end, shift, nodes)
    if zoned:
        shown.update(_zoned_window(ws, tz, start, end, rows))
    return {"files": [file_info(r.meta.get("path") or r.file) for r in ws.files],
            "window": {"from": iso(start), "to": iso(end), "first": iso(first), "last": iso(last)},
            "shift": shift.to_dict() if shift is not None and not shift.is_empty else None,
            "nodes": [list(map(str, n)) for n in nodes] if nodes is not None else None,
            "formula_sets": ws.formula_versions(),
            "formulas_file": getattr(ws, "formula_file", None),
            "implausible": {"cpu_intervals": bad, "left_out": out}}


def provenance(request) -> dict[str, Any]:
    """Provenance of an :class:`app.export.ExportRequest` (with ``before``/``after`` when it has a comparison);
    ``doc["shown"]`` holds the windows in the request's zone when that is not UTC (``{"window", "zone"}``, and
    ``{"before": ..., "after": ...}`` of a comparison)."""
    from app import __version__

    tz = getattr(request, "tz", None) or "utc"
    shown: dict[str, Any] = {}
    doc: dict[str, Any] = {"app": f"NestScope {__version__}", "level": request.by}
    doc.update(_selection(request.workspace, request.start, request.end, request.shift, request.nodes, tz, shown))
    c = request.comparison
    if c is not None:
        sides: dict[str, dict] = {"before": {}, "after": {}}
        doc["comparison"] = {
            "by": c.by, "ratio": c.ratio_note,
            "before": _selection(c.before.workspace, c.before.start, c.before.end, c.before.shift, c.before.nodes,
                                 tz, sides["before"]),
            "after": _selection(c.after.workspace, c.after.start, c.after.end, c.after.shift, c.after.nodes,
                                tz, sides["after"])}
        if sides["before"] or sides["after"]:
            shown.update(sides)
    if shown:
        doc["shown"] = shown
    return doc


def window_texts(sel: dict[str, Any], shown: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """``(window, intervals, zone)`` texts of a selection: ``2026-03-29T01:00:00+01:00 .. end of data``,
    ``... .. ...``, ``local time of each system: UTC+01:00/UTC+02:00``; in UTC (no ``shown``) the UTC ones."""
    w, zone = sel["window"], "UTC"
    if shown and shown.get("window"):
        w, zone = shown["window"], shown["zone"]
    window = f"{w['from'] or 'start of data'} .. {w['to'] or 'end of data'}"
    return window, f"{w['first'] or '-'} .. {w['last'] or '-'}", zone


def _sel_lines(sel: dict[str, Any], indent: str = "", shown: dict[str, Any] | None = None) -> list[str]:
    lines = []
    for f in sel["files"]:
        size = f"{f['size']:,} bytes" if f["size"] is not None else "size unknown"
        lines.append(f"{indent}File {f['name']} ({size}, SHA-256 {f['sha256'] or 'unknown'})")
    window, intervals, zone = window_texts(sel, shown)
    lines.append(f"{indent}Window: {window} (intervals {intervals}, {zone})")
    lines.append(f"{indent}Shift filter: {sel['shift']['text'] if sel['shift'] else 'none (all hours, all days)'}")
    if sel.get("nodes"):
        lines.append(f"{indent}Nodes: " + "; ".join("/".join(n[1:]) for n in sel["nodes"]))
    bad = sel.get("implausible") or {}
    if bad.get("cpu_intervals"):
        how = (f"{bad['left_out']} left out of every sum" if bad.get("left_out")
               else "kept in the sums (--keep-implausible)")
        lines.append(f"{indent}Implausible CPU-intervals (counter deltas beyond physical bounds, "
                     f"docs/physical-bounds.md; see the 'implausible' findings): {bad['cpu_intervals']}, {how}")
    else:
        lines.append(f"{indent}Implausible CPU-intervals: none")
    fs = ", ".join(sel["formula_sets"].values()) or "-"
    lines.append(f"{indent}Formula sets: {fs}" + (f" (overrides: {sel['formulas_file']})"
                                                  if sel.get("formulas_file") else ""))
    return lines


def provenance_lines(doc: dict[str, Any]) -> list[str]:
    """The provenance as plain text lines (for slide notes and the About sheet)."""
    lines = [f"Made with {doc['app']}; level {doc['level']}"]
    shown = doc.get("shown") or {}
    lines += _sel_lines(doc, "", shown)
    c = doc.get("comparison")
    if c:
        lines.append(f"Comparison per {LEVEL_NAMES.get(c['by'], c['by'])}; {c['ratio']}")
        for side in ("before", "after"):
            lines.append(f"{side.capitalize()}:")
            lines += _sel_lines(c[side], "  ", shown.get(side))
    return lines
