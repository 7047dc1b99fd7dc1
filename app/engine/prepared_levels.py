"""The workspace's prepared level frames: every node's rows of a level (with its summary rows) computed in one
grouped pass and kept, so the window's selection of a node is a slice (:class:`PreparedLevels`, a part of
:class:`app.engine.workspace.Workspace`).  The LPAR, class and CEC interval levels, the CEC pools and one LPAR's
CPUs are prepared this way; the CPU level keeps an index of its rows instead."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from app.engine.aggregate import WINDOW_OF, forget_rows
from app.engine.level_frame import NODE_COLS as _NODE_COLS
from app.engine.level_frame import LevelFrame
from app.engine.metrics import level_metrics, metrics_level, with_summary
from app.engine.parallel import parallel_map

__all__ = ["PreparedLevels", "SLICED_LEVELS"]

# levels whose every node's rows are kept as one frame (prepare_level) and sliced for a selection
SLICED_LEVELS = ("lpar_interval", "class_interval", "cec_interval")
_LEVEL_FRAMES = 9          # prepared (level, window) frames kept (LRU); the month's three are ~23 MB, its pools ~3 MB


class PreparedLevels:
    """The prepared-frame methods of :class:`app.engine.workspace.Workspace` (its ``_lv`` LRU of
    :class:`LevelFrame`, ``_rows_index``, ``_wm`` and the intervals' cache are the workspace's)."""

    def prepare_level(self, by: str, start=None, end=None, cached_only: bool = False) -> bool:
        """Compute every node's rows of an interval level (with summary rows) for the window ``(start, end]`` in
        one grouped pass and keep them, so :meth:`metrics` answers a selection of nodes by slicing (a few ms
        instead of a pass over the intervals).  Whole-range frames of cached intervals are kept in the workspace
        cache too.  Returns False when ``by`` is not a sliced level (:data:`SLICED_LEVELS`), or with
        ``cached_only`` when the frame is neither prepared nor in the workspace cache (then nothing is computed)."""
        return self.prepare_levels((by,), start, end, cached_only)

    def prepare_levels(self, bys: Iterable[str], start=None, end=None, cached_only: bool = False) -> bool:
        """:meth:`prepare_level` of several levels at once: the frames not prepared nor cached are computed
        together, their interval rows and summary rows on two threads (:mod:`app.engine.parallel`); ``"pool"``:
        the CEC pools' rows (:meth:`prepare_pools`), computed beside the levels' on the two threads when some
        level is computed too (else after them).  True when every level is prepared."""
        bys = list(dict.fromkeys(bys))
        ok = self._prepare_levels([b for b in bys if b != "pool"], start, end, cached_only, pool="pool" in bys)
        if "pool" in bys:     # kept by _prepare_levels when computed there: then a lookup
            ok &= self.prepare_pools(start, end, cached_only)
        return ok

    def prepare_pools(self, start=None, end=None, cached_only: bool = False) -> bool:
        """Compute every CEC pool's interval rows with their summary rows for the window (one pass over the
        intervals, :func:`app.engine.node_rows.pool_level_frame`) and keep them, so a selected pool is a slice.
        The whole-range frame of cached intervals is kept in the workspace cache too (an ``lv`` entry beside the
        levels', keyed by the intervals' key: files, counters, formula sets, engine version, implausible rows
        kept or not), so a second open reads it.  False when there are no pool rows (or, with ``cached_only``,
        when they are neither prepared nor in the workspace cache)."""
        key = ("pool", str(start), str(end))
        if key in self._lv:
            self._lv.move_to_end(key)
            return True
        whole = start is None and end is None
        cache, base = self._iv_cache(self.counters_needed(), derived=True) if whole else (None, None)
        got = cache.load_frames("lv", f"{base}-pool") if base is not None else None
        frame = got.get("pool") if got else None
        if frame is None:
            if cached_only or not self.has_intervals():
                return False
            from app.engine.node_rows import pool_level_frame

            frame = pool_level_frame(self, start, end)
            if base is not None:
                cache.store_frames("lv", f"{base}-pool", {"pool": frame}, [{"path": r.file} for r in self._files])
        self._keep_frame(key, frame, ("cec", "class"))
        return len(frame) > 0

    def _keep_pools(self, frame: pd.DataFrame, cache, base: str | None) -> None:
        """Keep the pools' whole-range level frame computed with the tree's pool rows (``Workspace.window_metrics``)
        as :meth:`prepare_pools` keeps it (and in the workspace cache beside cached intervals)."""
        if base is not None:
            cache.store_frames("lv", f"{base}-pool", {"pool": frame}, [{"path": r.file} for r in self._files])
        self._keep_frame(("pool", "None", "None"), frame, ("cec", "class"))

    def _prepare_levels(self, bys: list[str], start, end, cached_only: bool, pool: bool = False) -> bool:
        ok, todo = True, []
        for by in bys:
            level = metrics_level(by)
            if level == "cpu" and not cached_only:    # the CPU level is not kept whole: its rows index instead
                self._node_rows([("cpu", "", "", "", 0)])
                ok &= 4 in self._rows_index
            elif level not in SLICED_LEVELS:
                ok = False
            elif (level, str(start), str(end)) in self._lv:
                self._lv.move_to_end((level, str(start), str(end)))
            else:
                todo.append(level)
        if not todo:
            return ok
        if not self._computed():
            self._compute()
        whole = start is None and end is None
        cache, base = self._iv_cache(self.counters_needed(), derived=True) if whole else (None, None)
        frames: dict[str, pd.DataFrame] = {}
        for level in todo:
            got = cache.load_frames("lv", f"{base}-{level}") if base is not None else None
            if got and got.get(level) is not None:
                frames[level] = got[level]
        missing = [lv for lv in todo if lv not in frames]
        if missing and cached_only:
            ok = False
        elif missing:
            iv, counters = self._ensure(), self.counters
            # (level, True): its whole-window summary rows; the tree's whole-window rows are those rows
            parts = [(lv, False) for lv in missing] + [(lv, True) for lv in missing
                                                       if not (whole and WINDOW_OF[lv] in self._wm)]
            pool_key = ("pool", str(start), str(end))
            pool = pool and len(iv) > 0 and pool_key not in self._lv
            got = cache.load_frames("lv", f"{base}-pool") if pool and base is not None else None
            if got and got.get("pool") is not None:     # cached: kept as prepare_pools keeps it
                self._keep_frame(pool_key, got["pool"], ("cec", "class"))
                pool = False
            if pool:    # the pools' rows (prepare_pools) beside the levels', the longest first (issue 23)
                from app.engine.node_rows import pool_level_frame
                parts.insert(0, ("pool", None))

            def compute(part: tuple[str, bool | None]) -> pd.DataFrame:
                lv, is_summary = part
                if is_summary is None:
                    return pool_level_frame(self, start, end)
                return level_metrics(iv, self.formula_sets, counters, WINDOW_OF[lv] if is_summary else lv,
                                     start, end, None, is_summary)
            done = dict(zip(parts, parallel_map(compute, parts), strict=True))
            if pool:
                frame = done.pop(("pool", None))
                if base is not None:
                    cache.store_frames("lv", f"{base}-pool", {"pool": frame}, [{"path": r.file} for r in self._files])
                self._keep_frame(pool_key, frame, ("cec", "class"))
            for lv in missing:
                window = done.get((lv, True))
                if window is None:
                    window = self._wm[WINDOW_OF[lv]].copy()
                    window["summary"] = True
                elif whole:     # the tree's whole-window rows of the level are these rows (window_metrics)
                    self._keep_window(WINDOW_OF[lv], window, cache, base)
                frames[lv] = with_summary(done[(lv, False)], window, lv)
                if base is not None:
                    cache.store_frames("lv", f"{base}-{lv}", {lv: frames[lv]}, [{"path": r.file} for r in self._files])
            if whole and all((lv, "None", "None") in self._lv or lv in frames for lv in SLICED_LEVELS):
                forget_rows(iv)      # every whole-range level is computed: the shared per-row arrays go
        for level in todo:
            if level in frames:
                self._keep_frame((level, str(start), str(end)), frames[level])
        return ok

    def _keep_window(self, lv: str, rows: pd.DataFrame, cache, base: str | None) -> None:
        """Keep a level's whole-range summary rows ``rows`` (computed for its prepared frame) as the workspace's
        whole-window rows of ``lv`` (``Workspace.window_metrics``: the same rows, not flagged as summary rows,
        in the report order), in the workspace cache too as window_metrics keeps them; the tree's values then
        do not compute them again (issue 23: a big file's table after its part prepares its level first)."""
        if lv in self._wm:
            return
        frame = with_summary(rows.assign(summary=False), None, lv)
        self._wm[lv] = frame
        if base is not None:
            cache.store_frames("wm", f"{base}-{lv}", {lv: frame}, [{"path": r.file} for r in self._files])

    def _keep_frame(self, key: tuple, frame: pd.DataFrame, cols: tuple[str, ...] = _NODE_COLS) -> None:
        """Keep a prepared frame (LRU of :data:`_LEVEL_FRAMES` level, pool and CPU frames)."""
        self._lv[key] = LevelFrame(frame, cols)
        while len(self._lv) > _LEVEL_FRAMES:
            self._lv.popitem(last=False)

    def prepare_cpus(self, cec: str, lpar: str, start=None, end=None) -> bool:
        """Compute the CPU-level rows (with each CPU's summary row) of every CPU of one LPAR for the window
        ``(start, end]`` and keep them, so that selecting one of its CPUs is a slice (the window prepares the
        CPUs of the selected LPAR or class while it is idle).  The CPU level aggregates nothing across CPUs, so
        a CPU's rows equal those computed for it alone.  False when the LPAR has no interval rows."""
        key = ("cpu", str(start), str(end), str(cec), str(lpar))
        if key in self._lv:
            self._lv.move_to_end(key)
            return True
        rows = self._node_rows([("lpar", str(cec), str(lpar))])
        if rows is None or not len(rows):
            return False
        body = level_metrics(rows, self.formula_sets, self.counters, "cpu", start, end, None, False)
        window = level_metrics(rows, self.formula_sets, self.counters, WINDOW_OF["cpu"], start, end, None, True)
        self._keep_frame(key, with_summary(body, window, "cpu"))
        return True

    def cpus_prepared(self, cec: str, lpar: str, start=None, end=None) -> bool:
        """True when :meth:`prepare_cpus` has the LPAR's CPU rows for this window."""
        return ("cpu", str(start), str(end), str(cec), str(lpar)) in self._lv

    def prepared(self, by: str, start=None, end=None) -> bool:
        """True when :meth:`prepare_level` has the frame of ``by`` for this window (CPU level: the index of the
        CPUs' interval rows, for any window; ``"pool"``: :meth:`prepare_pools`)."""
        if by == "pool":
            return ("pool", str(start), str(end)) in self._lv
        if metrics_level(by) == "cpu":
            return 4 in self._rows_index
        return (metrics_level(by), str(start), str(end)) in self._lv
