"""Whole-window frames computed behind other work (issue 23: the window's tree levels sooner).

The tree's class and CPU levels (and the tree's values) need every level's whole-window frame
(:meth:`Workspace.window_metrics`): about a second of grouped sums over the month's intervals.  The window asks
for them in the job after the first table; with :func:`start` they are computed from the moment the intervals
are known, on the engine's pool thread (:func:`app.engine.parallel.start_map`), while the job's own thread
computes the tree's first levels and the table.  :meth:`Workspace.window_metrics` then takes what was computed
(:func:`take`): the calling thread computes the levels no pool thread has started by then, waits for those it
has, and every frame is the one it would have computed itself (the same function of the same intervals).

Only the frames themselves are computed behind (pure functions of the intervals, the formula sets and the
counter columns, as :meth:`Workspace.window_metrics` already runs two of them at a time); reading and writing
the workspace cache stays with :meth:`Workspace.window_metrics` on the job's thread.  With one thread
(``NESTSCOPE_THREADS=1``) nothing is started.
"""

from __future__ import annotations

from typing import Any

from app.engine.parallel import start_map, threads

__all__ = ["TREE_LEVELS", "start", "take"]

# every whole-window frame the deep tree and its values ask for (build_tree, render.tree_values' extra values):
# the pools' first (a frame of their own rows, the longest)
TREE_LEVELS = ("pool", "core", "cpu_window", "class", "lpar", "cec")


class _Behind:
    """The frames of ``levels`` being computed for one intervals frame."""

    def __init__(self, ws: Any, iv: Any, levels: list[str]) -> None:
        self.iv, self.levels = iv, levels
        self._finish = start_map(lambda lv: ws._window_frame(iv, lv), levels)

    def results(self) -> dict[str, Any]:
        return dict(zip(self.levels, self._finish(), strict=True))


def start(ws: Any, levels: tuple[str, ...] = TREE_LEVELS) -> bool:
    """Start computing the whole-window frames of ``levels`` that ``ws`` does not hold yet, on the pool thread,
    from its intervals as they are now (computed: nothing is computed here when they are not, nor when the
    workspace cache could answer them, nor with one thread).  True when something was started."""
    if threads() < 2 or getattr(ws, "_behind", None) is not None or ws._iv is None:
        return False
    cache, key = ws._iv_cache(ws.counters_needed(), derived=True)
    want = [lv for lv in levels if lv not in ws._wm and not (key is not None and hasattr(cache, "has_frames")
                                                             and cache.has_frames("wm", f"{key}-{lv}"))]
    if not want:
        return False
    ws._behind = _Behind(ws, ws._iv, want)
    return True


def take(ws: Any, iv: Any) -> dict[str, Any]:
    """The frames computed behind for ``iv``, every started one finished first (the calling thread computes those
    no pool thread has started); {} when nothing was started, or for other intervals (files added since)."""
    started, ws._behind = getattr(ws, "_behind", None), None
    if started is None:
        return {}
    got = started.results()
    return got if started.iv is iv else {}
