"""What the views show, computed from the Workspace off the GUI thread.  No Qt here.

``compute_view`` is the only function that touches the Workspace for the
views; it runs in the SerialRunner, one call at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from app.ui.frames import FROZEN, ColDef, generations_of, interval_frame, metric_columns
from app.ui.selection import Selection


@dataclass
class ViewData:
    """An immutable snapshot for the views (models keep it; the Workspace is not read again)."""

    selection: Selection
    roots: list[Any] | None = None         # None: the tree did not change
    findings: list[Any] | None = None
    files: list[str] | None = None
    loaded: bool = False
    table: pd.DataFrame | None = None
    columns: list[ColDef] = field(default_factory=list)
    timeline: pd.DataFrame | None = None   # None: the plotted series did not change
    quality_details: dict[str, str] = field(default_factory=dict)
    added: list[Any] = field(default_factory=list)  # LoadOutcomes added by this job
    smt: tuple[pd.DataFrame, pd.DataFrame] | None = None  # ws.smt by type, by core (None: not computed)


def first_lpar(roots: list[Any]) -> tuple | None:
    """The first LPAR with CPU data, in tree order."""
    for cec in roots:
        for node in cec.children:
            if node.level == "lpar" and not (node.info or {}).get("partition_only"):
                return tuple(node.key)
    return None


def compute_view(ws: Any, sel: Selection, added: list[Any], table: bool = True, timeline: bool = True,
                 smt: bool = False) -> ViewData:
    """Add ``added`` read outcomes to ``ws`` and compute what the views need for ``sel``."""
    out = ViewData(selection=sel, added=list(added))
    if added:
        results = [o.result for o in added]
        if hasattr(ws, "add_all"):
            ws.add_all(results)
        else:
            for r in results:
                ws.add(r)
    out.loaded = bool(ws.files)
    if added or not sel.nodes:
        out.roots = list(ws.tree())
        out.findings = list(ws.findings)
        out.files = [r.file for r in ws.files]
        if not sel.nodes and (first := first_lpar(out.roots)):
            sel = Selection(nodes=(first,), start=sel.start, end=sel.end)
            out.selection = sel
            timeline = table = True
    if not out.loaded:
        return out
    if table:
        df = interval_frame(ws, sel, windowed=True, summary=True)
        out.table = df
        out.columns = [*FROZEN, *metric_columns(ws, generations_of(df))]
        out.quality_details = {f.code: f.message for f in ws.findings}
    if timeline:
        out.timeline = interval_frame(ws, Selection(nodes=sel.nodes), windowed=False, summary=False)
    if smt and hasattr(ws, "smt"):
        from app.ui.smt import smt_frames

        out.smt = smt_frames(ws, sel)
    return out
