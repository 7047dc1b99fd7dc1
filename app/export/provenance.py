"""Provenance of an export: source files (name, size, SHA-256), window, shift filter,
formula-set versions and the app version -- written into every export (XLSX About
sheet, every PPTX slide's notes, the JSON meta of ``compare``)."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import pandas as pd

from app.engine.plausibility import IMPLAUSIBLE, LEFT_OUT

# level ids as analysts write them in titles
LEVEL_NAMES = {"lpar": "LPAR", "class": "processor class", "cec": "CEC", "cpu": "CPU", "interval": "interval"}

__all__ = ["file_info", "provenance", "provenance_lines", "iso"]

_HASH_CACHE: dict[tuple[str, int, int], str] = {}


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


def shown_path(path: str) -> str:
    """A file name as text every output can hold: bytes that are not UTF-8 (a name from another system, kept by
    Python as lone surrogates) shown as ``\\xNN``."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except (UnicodeError, TypeError, ValueError):
        return str(path).encode("utf-8", "backslashreplace").decode("utf-8")


def file_info(path: str) -> dict[str, Any]:
    """``{"name", "path", "size", "sha256"}`` of one input file (size/sha256 None when it is gone)."""
    out: dict[str, Any] = {"name": shown_path(os.path.basename(path)), "path": shown_path(os.path.abspath(path)),
                           "size": None,
                           "sha256": None}
    try:
        st = os.stat(path)
    except OSError:
        return out
    out["size"] = st.st_size
    key = (out["path"], st.st_size, st.st_mtime_ns)
    digest = _HASH_CACHE.get(key)
    if digest is None:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        except OSError:
            return out
        digest = _HASH_CACHE[key] = h.hexdigest()
    out["sha256"] = digest
    return out


def _selection(ws, start, end, shift, nodes) -> dict[str, Any]:
    iv = ws.intervals
    first = last = None
    bad = out = 0
    if len(iv):
        from app.engine.aggregate import select_rows
        from app.engine.shift import apply_shift

        rows = apply_shift(select_rows(iv, start, end, nodes), shift)
        if len(rows):
            first, last = rows["interval_start"].min(), rows["interval_end"].max()
            qb = rows["qbits"].to_numpy(dtype=np.int64)
            bad, out = int(((qb & IMPLAUSIBLE) != 0).sum()), int(((qb & LEFT_OUT) != 0).sum())
    return {"files": [file_info(r.meta.get("path") or r.file) for r in ws.files],
            "window": {"from": iso(start), "to": iso(end), "first": iso(first), "last": iso(last)},
            "shift": shift.to_dict() if shift is not None and not shift.is_empty else None,
            "nodes": [list(map(str, n)) for n in nodes] if nodes is not None else None,
            "formula_sets": ws.formula_versions(),
            "formulas_file": getattr(ws, "formula_file", None),
            "implausible": {"cpu_intervals": bad, "left_out": out}}


def provenance(request) -> dict[str, Any]:
    """Provenance of an :class:`app.export.ExportRequest` (with ``before``/``after`` when it has a comparison)."""
    from app import __version__

    doc: dict[str, Any] = {"app": f"NestScope {__version__}", "level": request.by}
    doc.update(_selection(request.workspace, request.start, request.end, request.shift, request.nodes))
    c = request.comparison
    if c is not None:
        doc["comparison"] = {
            "by": c.by, "ratio": c.ratio_note,
            "before": _selection(c.before.workspace, c.before.start, c.before.end, c.before.shift, c.before.nodes),
            "after": _selection(c.after.workspace, c.after.start, c.after.end, c.after.shift, c.after.nodes)}
    return doc


def _sel_lines(sel: dict[str, Any], indent: str = "") -> list[str]:
    lines = []
    for f in sel["files"]:
        size = f"{f['size']:,} bytes" if f["size"] is not None else "size unknown"
        lines.append(f"{indent}File {f['name']} ({size}, SHA-256 {f['sha256'] or 'unknown'})")
    w = sel["window"]
    lines.append(f"{indent}Window: {w['from'] or 'start of data'} .. {w['to'] or 'end of data'} "
                 f"(intervals {w['first'] or '-'} .. {w['last'] or '-'}, UTC)")
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
    lines += _sel_lines(doc)
    c = doc.get("comparison")
    if c:
        lines.append(f"Comparison per {LEVEL_NAMES.get(c['by'], c['by'])}; {c['ratio']}")
        for side in ("before", "after"):
            lines.append(f"{side.capitalize()}:")
            lines += _sel_lines(c[side], "  ")
    return lines
