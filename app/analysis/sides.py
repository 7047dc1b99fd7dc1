"""The workspace of a comparison export's own files, taken from the two sides instead of a third workspace.

``export --before A --after B --out deck.pptx`` (no ``FILE...``) exports the files of both sides.  Its request
once held a third Workspace over A and B together: a third read of the interval cache entry (both sides' rows in
one frame) and a third zone pass, while a deck or a CSV of a comparison reads from it only the provenance (files,
first and last interval, implausible counts, formula sets), the left-out line and the default zone.
:func:`export_workspace` gives instead:

* the side's Workspace itself when both sides read the very same files in the order the export reads them (one
  workspace over the same read results is the same computation);
* a :class:`SidesWorkspace` when the sides share no CEC: every interval row of the files together is then a row
  of exactly one side (deltas, duplicates, buckets and bounds are per CPU, system and CEC), so what the
  provenance reads is the sides' rows side by side; whatever else is asked of it is answered by the combined
  Workspace, made on first use;
* else None: the caller makes the combined Workspace as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd

__all__ = ["SidesWorkspace", "export_workspace"]

# what a SidesWorkspace answers itself; any other attribute is the combined Workspace's
_OWN = ("files", "intervals", "formula_sets", "formula_file", "keep_implausible", "formula_versions",
        "left_out_count", "default_zone", "has_intervals", "sides")


class SidesWorkspace:
    """The files of both sides of a comparison whose sides share no CEC, read as one workspace.

    ``files``: the readable read results in the export's order; ``before``/``after``: the sides' Workspaces;
    ``combined()``: makes the Workspace over ``files`` (only when something beyond :data:`_OWN` is asked).
    ``intervals`` holds both sides' rows, the before side's first, with their identity, time and quality
    columns (the counters are the sides' own: metrics come from the combined Workspace)."""

    def __init__(self, files: list, before: Any, after: Any, combined: Callable[[], Any]) -> None:
        self.files = list(files)
        self.before, self.after = before, after
        self._make = combined
        self._combined = None
        self._iv: pd.DataFrame | None = None
        self._lock = threading.Lock()

    # -- what the sides tell -------------------------------------------------------------
    @property
    def formula_sets(self) -> dict:
        return self.before.formula_sets

    @property
    def formula_file(self) -> Any:
        return getattr(self.before, "formula_file", None)

    @property
    def keep_implausible(self) -> bool:
        return bool(self.before.keep_implausible)

    @property
    def intervals(self) -> pd.DataFrame:
        """Both sides' interval rows (identity, time and quality columns: those up to ``qbits``)."""
        with self._lock:
            if self._iv is None:
                parts = []
                for ws in (self.before, self.after):
                    iv = ws.intervals
                    cols = list(iv.columns)
                    parts.append(iv[cols[:cols.index("qbits") + 1]] if "qbits" in cols else iv)
                self._iv = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
            return self._iv

    def sides(self) -> tuple[Any, Any]:
        """The before and the after side's Workspaces: every row of :attr:`intervals` is a row of exactly one (what
        reads rows one by one, as the provenance's window and implausible counts, reads them side by side)."""
        return self.before, self.after

    def has_intervals(self) -> bool:
        return bool(self.before.has_intervals() or self.after.has_intervals())

    def formula_versions(self) -> dict[str, str]:
        """generation -> formula-set version of the generations in either side's rows, in the formula sets'
        order (every set when neither side has a row), as the combined Workspace gives them."""
        present: set[str] | None = None
        for ws in (self.before, self.after):
            iv = ws.intervals
            if len(iv):
                present = (present or set()) | {str(g) for g in iv["generation"].unique()}
        return {g: fs.version for g, fs in self.formula_sets.items() if present is None or g in present}

    def left_out_count(self) -> tuple[int, int]:
        (a, b), (c, d) = self.before.left_out_count(), self.after.left_out_count()
        return a + c, b + d

    def default_zone(self) -> str:
        """``local`` when a system of either side has a known offset other than 0 (``Zones.default``)."""
        from app.engine.timezone import LOCAL, UTC

        return LOCAL if LOCAL in (self.before.zones.default(), self.after.zones.default()) else UTC

    # -- everything else: the combined workspace -------------------------------------------
    def combined(self) -> Any:
        with self._lock:
            if self._combined is None:
                self._combined = self._make()
            return self._combined

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _OWN or name in ("_make", "_combined", "_iv", "_lock", "before",
                                                               "after"):
            raise AttributeError(name)
        return getattr(self.combined(), name)


def _cecs(ws: Any) -> set[str]:
    iv = ws.intervals
    if not len(iv):
        return set()
    col = iv["cec"]
    vals = col.cat.remove_unused_categories().cat.categories if isinstance(col.dtype, pd.CategoricalDtype) \
        else col.unique()
    return {str(v) for v in vals}


def export_workspace(results: list, comparison: Any, make: Callable[[], Any], formulas: Any,
                     keep_implausible: bool) -> Any:
    """The workspace of an export of a comparison's own files (``results``: every file read, in the export's
    order; ``make()``: the combined Workspace), or None when it must be the combined one (see the module)."""
    files = [r for r in results if r.readable]
    before, after = comparison.before.workspace, comparison.after.workspace
    for ws in (before, after):
        if getattr(ws, "formula_file", None) != (str(formulas) if formulas else None) \
                or bool(ws.keep_implausible) != bool(keep_implausible):
            return None
    if before is after:
        same = len(before.files) == len(files) and all(a is b for a, b in zip(before.files, files))
        return before if same else None
    if _cecs(before) & _cecs(after):
        return None
    return SidesWorkspace(files, before, after, make)
