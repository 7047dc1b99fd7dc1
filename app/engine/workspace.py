"""The analyst's workspace: files read so far, their intervals, metrics and tree.

``Workspace.add`` only stores the already decoded :class:`ReadResult` -- files
are never decoded again.  Intervals (deltas) are recomputed from all samples
when needed (duplicates and runs may span files) and cached; ``add``
invalidates the caches.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from app.engine.aggregate import LEVELS, WINDOW_OF, NodeKey
from app.engine.catalog import FormulaSet, load_formula_sets
from app.engine.deltas import compute_intervals
from app.engine.level_frame import NODE_COLS as _NODE_COLS
from app.engine.level_frame import LevelFrame
from app.engine.metrics import level_metrics, metrics_level, with_summary
from app.engine.parallel import parallel_map, start_map
from app.engine.prepared_levels import PreparedLevels
from app.engine.plausibility import IMPLAUSIBLE, LEFT_OUT, left_out
from app.engine.plausibility import check as check_bounds
from app.engine.plausibility import scan as scan_bounds
from app.engine.timezone import OFFSET_COLUMN, Zones, record_offsets, utc_offsets
from app.findings import Finding
from app.memory import release
from app.formats.schema import ReadResult, is_counter_column

__all__ = ["Workspace"]

PARTITION_COLUMNS = ["cec", "lpar", "lpar_number", "class", "cpus", "weight", "capped", "busy_pct", "time"]
_CACHE = 16
# inside frames_not_kept() (per thread): metrics frames are handed over as computed, not kept in the frame cache
_NOT_KEPT: contextvars.ContextVar[bool] = contextvars.ContextVar("nestscope_frames_not_kept", default=False)


@contextlib.contextmanager
def frames_not_kept():
    """Inside (on this thread only): a metrics frame a workspace computes is handed over without a copy kept in its
    frame cache (frames already kept are still reused).  For a writer that computes each level once and lets it go
    when written (the workbook): its peak holds the level being written, not every level's frames twice."""
    token = _NOT_KEPT.set(True)
    try:
        yield
    finally:
        _NOT_KEPT.reset(token)


def _trim() -> None:      # freed heap pages back to the system (no garbage collection)
    release(collect=False)


def _fid(f: Finding) -> tuple:
    return (f.file, f.offset, f.code, f.message)


def _counter_columns(iv: pd.DataFrame) -> list[str]:
    """Counter columns of an intervals frame (those after ``qbits``)."""
    return list(iv.columns[list(iv.columns).index("qbits") + 1:])


def _nodes_key(nodes: list[NodeKey] | None) -> tuple | None:
    return tuple(tuple(n) for n in nodes) if nodes is not None else None


class Workspace(PreparedLevels):
    """Files, findings, intervals, metrics and the CEC tree of one analysis.

    Parameters
    ----------
    formula_file : path, optional
        User formula override file (``--formulas``); errors raise
        :class:`app.engine.catalog.FormulaFileError` naming the line.
    counters : {"used", "all"}
        Keep only the counters some formula reads plus all basic and
        problem-state counters (default, saves memory), or every counter.
    formula_sets : dict, optional
        Ready formula sets (overrides ``formula_file``).
    cache : app.cache.Cache or bool, optional
        Where the intervals of files read through :func:`app.cache.read_file` are kept (default: the
        user's cache; ``False``: never).  Files read otherwise are never cached.
    keep_implausible : bool
        Keep CPU-intervals that break a physical bound (:mod:`app.engine.plausibility`) in every sum; by
        default their counters are NaN (left out), their rows marked ``implausible,left-out``.
    coverage_notes : bool
        The tree's CEC and LPAR nodes carry coverage notes (default).  False: none, and no pass over the
        intervals makes them (:meth:`coverage_frames` gives empty CEC and LPAR frames): a workspace of the first
        part of a file, whose rows end at the part's cut and not where the file's do.
    record_findings : bool
        The engine findings include those of the records alone (default: CPUs appearing late or vanishing early,
        systems moving between CECs).  False: not those, and no pass over the samples makes them (the same
        intervals; nothing stored in the workspace cache): a workspace of a file's first part, whose findings are
        not shown.
    """

    def __init__(self, formula_file: str | Path | None = None, counters: str = "used",
                 formula_sets: dict[str, FormulaSet] | None = None, cache: Any = None,
                 keep_implausible: bool = False, coverage_notes: bool = True, record_findings: bool = True):
        self.formula_sets: dict[str, FormulaSet] = formula_sets or load_formula_sets(formula_file)
        self.formula_file = str(formula_file) if formula_file else None
        self._keep_all = counters == "all"
        self._files: list[ReadResult] = []
        self._iv: pd.DataFrame | None = None
        self._engine_findings: list[Finding] = []
        self._mcache: OrderedDict[Any, pd.DataFrame] = OrderedDict()
        self._tree = None
        self._wm: dict[str, pd.DataFrame] = {}
        self._lv: OrderedDict[tuple, LevelFrame] = OrderedDict()   # (level, start, end) -> prepared frame
        self._cov: dict[str, pd.DataFrame] | None = None            # coverage_frames
        self._rows_index: dict[int, dict[tuple, np.ndarray]] = {}  # node depth -> key -> interval row positions
        self._iv_load: Callable[[], pd.DataFrame | None] | None = None   # cached intervals, read on first use
        self._iv_lock = threading.RLock()
        # intervals of files read through app.cache are cached too: None/True = the user's cache, False = never,
        # or an app.cache.Cache
        self.cache = cache
        self._keep_implausible = bool(keep_implausible)
        self._coverage_notes = bool(coverage_notes)
        self._record_findings = bool(record_findings)

    @property
    def keep_implausible(self) -> bool:
        """Implausible CPU-intervals are kept in every sum (see the class docstring)."""
        return self._keep_implausible

    def set_keep_implausible(self, keep: bool) -> None:
        """Keep (True) or leave out implausible CPU-intervals; the intervals are taken again (from the cache or
        the samples) and every derived frame is recomputed."""
        if bool(keep) != self._keep_implausible:
            self._keep_implausible = bool(keep)
            self._invalidate()

    # -- files -------------------------------------------------------------------------
    def add(self, result: ReadResult, defer: bool = False) -> list[Finding]:
        """Add one read file (never decoded again); returns the engine findings this addition raised.

        With ``defer=True`` nothing is computed now (returns ``[]``); intervals are
        recomputed lazily on the next access -- use it when adding many files in a row.
        """
        return self.add_all([result], defer=defer)

    def add_all(self, results: Iterable[ReadResult], defer: bool = False) -> list[Finding]:
        """Add several read files at once (one recomputation); returns new engine findings."""
        if defer:
            self._files.extend(results)
            self._invalidate()
            return []
        if not self._computed() and self._files:
            self._compute()
        before = {_fid(f) for f in self._engine_findings}
        self._files.extend(results)
        self._invalidate()
        self._compute()
        return [f for f in self._engine_findings if _fid(f) not in before]

    def _invalidate(self) -> None:
        self._iv = None
        self._iv_load = None
        self._wm = {}
        self._lv = OrderedDict()
        self._cov = None
        self._rows_index = {}
        self._mcache.clear()
        self._tree = None

    @property
    def files(self) -> list[ReadResult]:
        return list(self._files)

    @property
    def findings(self) -> list[Finding]:
        """Reader findings of every file, then the engine findings."""
        if not self._computed():
            self._compute()
        out: list[Finding] = []
        for r in self._files:
            out.extend(r.findings)
        return out + list(self._engine_findings)

    # -- data --------------------------------------------------------------------------
    def counters_needed(self) -> set[str] | None:
        """The counter columns this workspace reads and keeps in its intervals (None: every counter): files
        read for it need decode no others (``app.cache.read_file(path, counters=ws.counters_needed())``)."""
        if self._keep_all:
            return None
        keep: set[str] = {f"B{i}" for i in range(32)} | {f"P{i}" for i in range(32, 64)}
        for fs in self.formula_sets.values():
            keep |= fs.counters()
        return keep

    def _computed(self) -> bool:
        """The intervals are known: computed, or cached and read on first use."""
        return self._iv is not None or self._iv_load is not None

    def _compute(self, lazy: bool = True) -> None:
        keep = self.counters_needed()
        cache, key = self._iv_cache(keep)
        if key is not None:
            names = [r.file for r in self._files]
            if lazy and hasattr(cache, "open_intervals"):
                # the engine findings now, the intervals when something needs them: the tree, the first table
                # and the selections of the second open come from frames cached beside them (issue 11)
                got = cache.open_intervals(key, names)
                if got is not None:
                    self._engine_findings, self._iv_load = got
                    return
            hit = cache.load_intervals(key, names)
            if hit is not None:
                self._iv, self._engine_findings = self._left_out(hit[0]), hit[1]
                return
        # samples the files can give again are let go (app.cache.let_go_samples), their frames handed to
        # compute_intervals, which frees them as the deltas are made (an export's peak: samples beside intervals)
        from app import cache as wc

        wc.let_go_samples(self._files, cached=False)
        frames = [r.samples for r in self._files if r.samples is not None and len(r.samples)]
        handed = wc.let_go_samples(self._files)
        # the records' UTC offsets (identity columns only) on the pool thread while this one computes the intervals
        offsets_done = start_map(record_offsets, [[f[[c for c in f.columns if not is_counter_column(c)]]
                                                   for f in frames]])
        iv, findings = compute_intervals(frames, self.formula_sets, keep, consume=True,
                                         released=_trim if handed else None, record_findings=self._record_findings)
        if handed:    # the samples' identity and the deltas' working arrays went at its return: heap pages back
            _trim()   # before the checks and the cache write (a month's cold export: 119 MB, then its peak)
        rec = offsets_done()[0]
        # each system's UTC offset from its records' local time, and the physical bounds, found side by side
        counters = _counter_columns(iv)
        scanned, (offsets, f) = parallel_map(lambda job: job(), [
            lambda: scan_bounds(iv, self.formula_sets, counters), lambda: utc_offsets(iv, rec)])
        iv[OFFSET_COLUMN] = offsets
        findings += f
        findings += check_bounds(iv, self.formula_sets, _counter_columns(iv), scanned)   # marks implausible rows
        self._engine_findings = findings
        if key is not None:       # cached as computed, implausible rows marked, not left out
            cache.store_intervals(key, [{"path": r.file} for r in self._files], iv, findings)
        self._iv = self._left_out(iv)
        if handed:      # the entry written now, the intervals read back from it when used (an export's peak)
            load = wc.settle_intervals(cache, key, [r.file for r in self._files]) if lazy and len(iv) else None
            self._iv, self._iv_load = (None, load) if load is not None else (self._iv, None)
            _trim()

    def _cache_damaged(self, why: str) -> list[Finding]:
        """Info findings: the cached intervals of these files failed a check and were computed again."""
        from app.findings import make_finding

        return [make_finding(r.file, None, "info", "cache-damaged",
                             f"its cached intervals failed a check ({why}) and were removed",
                             "the intervals were computed again from the file's samples")
                for r in self._files]

    def _left_out(self, iv: pd.DataFrame) -> pd.DataFrame:
        """``iv`` with its implausible rows left out of every sum unless they are kept."""
        return left_out(iv, _counter_columns(iv), self._keep_implausible)

    def window_metrics(self, levels: tuple[str, ...] = ("cec", "lpar", "class", "cpu_window")) -> dict[str, pd.DataFrame]:
        """Whole-window metrics of all intervals per tree level (what the tree shows); with cached intervals they
        are kept in the workspace cache beside them, so a second open does not aggregate again.  Besides the
        levels of ``compute_metrics``: ``pool`` (the CEC pools) and ``core`` (every SMT core), issue 26."""
        if not self._computed():
            self._compute()
        want = tuple(lv for lv in levels if lv not in self._wm)
        if want:
            cache, key = self._iv_cache(self.counters_needed(), derived=True)
            got = {}
            for lv in want:     # each level in its own entry: any set of levels is answered from the cache
                hit = cache.load_frames("wm", f"{key}-{lv}") if key is not None else None
                if hit is not None and set(hit) == {lv}:
                    got[lv] = hit[lv]
            missing = [lv for lv in want if lv not in got]
            if missing:
                iv = self._ensure()     # the intervals are there: the pools' and cores' calls below take no lock
                # every level on two threads, sharing the per-row arrays of the intervals (aggregate._row_arrays);
                # the pools (a frame of their own rows, the longest) first, so the other thread takes the rest
                order = sorted(missing, key=lambda lv: lv not in ("pool", "core"))
                # the pools' level frame with their window rows when it is not prepared yet, from one frame of pool
                # rows (the window's idle job prepares it next: issue 23, 0.55 instead of 0.66 CPU s on the month)
                both = "pool" in missing and len(iv) > 0 and ("pool", "None", "None") not in self._lv
                frames = parallel_map(lambda lv: self._window_frame(iv, lv, both), order)
                for lv, frame in zip(order, frames, strict=True):
                    if lv == "pool" and both:
                        frame, level = frame
                        self._keep_pools(level, cache, key)
                    got[lv] = frame
                    if key is not None:
                        cache.store_frames("wm", f"{key}-{lv}", {lv: frame}, [{"path": r.file} for r in self._files])
            self._wm.update(got)
        return {lv: self._wm[lv] for lv in levels}

    def _window_frame(self, iv: pd.DataFrame, lv: str, pool_level: bool = False) -> Any:
        """One level's whole-window rows for :meth:`window_metrics` (``pool_level``: the pools' as ``(rows, level
        frame)``, :func:`app.engine.node_rows.pool_frames`)."""
        from app.engine.metrics import compute_metrics

        if lv == "pool" and pool_level:
            from app.engine.node_rows import pool_frames
            return pool_frames(self)
        if lv in ("pool", "core"):
            from app.engine.node_rows import window_frame
            return window_frame(self, lv)
        return compute_metrics(iv, self.formula_sets, self.counters, by=lv)

    def _node_rows(self, nodes: list[NodeKey] | None) -> pd.DataFrame | None:
        """The interval rows of ``nodes`` in the intervals' order, as ``select_rows`` gives them (None: no nodes,
        or a key the index cannot answer, e.g. a node without rows); positions per node come from an index
        built once per node depth."""
        if not nodes:
            return None
        iv = self._ensure()
        parts = []
        for key in nodes:
            depth = len(key) - 1
            if not 1 <= depth <= len(_NODE_COLS):
                return None
            idx = self._rows_index.get(depth)
            if idx is None:
                cols = list(_NODE_COLS[:depth])
                if any(not isinstance(iv[c].dtype, pd.CategoricalDtype) for c in cols if c != "cpu"):
                    return None     # select_rows compares plain columns differently: leave it to select_rows
                g = iv.groupby(cols, sort=False, observed=True, dropna=True).indices
                idx = self._rows_index[depth] = {(k if isinstance(k, tuple) else (k,)): np.asarray(v, np.int64)
                                                 for k, v in g.items()}
            vals = tuple(key[1:])
            if any(not isinstance(v, str) for v in vals[:3]) or (depth == 4 and not isinstance(vals[3], int | np.integer)):
                return None
            p = idx.get(vals)
            if p is None:
                return None
            parts.append(p)
        pos = parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))
        return iv.iloc[pos] if len(pos) != len(iv) else iv

    def coverage_frames(self) -> dict[str, pd.DataFrame]:
        """``partitions.coverage`` of the CEC and LPAR levels over the whole range (the tree's coverage notes);
        with cached intervals kept in the workspace cache beside them (a groupby over every interval row).
        Without ``coverage_notes`` both frames are empty (the level's columns, no row)."""
        from app.engine.partitions import coverage

        if self._cov is None:
            from app.engine.tree import tree_ident

            if not self._computed():
                self._compute()
            if not self._coverage_notes:
                iv = self._ensure()
                self._cov = {lv: coverage(iv.iloc[:0], lv) for lv in ("cec", "lpar")}
                self._cov["ident"] = tree_ident(iv)
                return dict(self._cov)
            cache, key = self._iv_cache(self.counters_needed(), derived=True)
            key = f"{key}-coverage-cores" if key is not None else None   # the ident has core ids (issue 26)
            got = cache.load_frames("cov", key) if key is not None else None
            if got is None or set(got) != {"cec", "lpar", "ident"}:
                iv = self._ensure()
                # three grouped passes over the intervals, side by side on two threads (the first view's tree)
                got = dict(zip(("cec", "lpar", "ident"), parallel_map(lambda job: job(), [
                    lambda: coverage(iv, "cec"), lambda: coverage(iv, "lpar"), lambda: tree_ident(iv)]), strict=True))
                if key is not None:
                    cache.store_frames("cov", key, got, [{"path": r.file} for r in self._files])
            self._cov = got
        return dict(self._cov)

    def tree_ident(self) -> pd.DataFrame:
        """The identification columns of every CPU node (``tree.tree_ident``), kept with the coverage frames."""
        return self.coverage_frames()["ident"]

    def has_intervals(self) -> bool:
        """Some interval row exists (without reading cached intervals that are not read yet)."""
        if self._iv is None and self._iv_load is not None:
            return len(self.tree_ident()) > 0
        return len(self._ensure()) > 0

    def _iv_cache(self, keep: set[str] | None, derived: bool = False):
        """(cache, key) of the intervals when every file came through the workspace cache, else (None, None);
        ``derived``: the key of frames computed from them (they differ when implausible rows are kept)."""
        if derived and self._keep_implausible:
            c, k = self._iv_cache(keep)
            return c, (f"{k}-keep-implausible" if k is not None else None)
        if self.cache is False or not self._record_findings or not self._files \
                or any(not r.meta.get("cache_key") for r in self._files):
            return None, None
        from app import cache as wc

        c = self.cache if self.cache not in (None, True) else wc.default_cache()
        if c is None:
            return None, None
        sets = {g: [fs.name, fs.version, fs.generation, fs.machine_types, fs.cfvn, fs.csvn, fs.workload_hint,
                    {k: m.expr for k, m in fs.metrics.items()}] for g, fs in sorted(self.formula_sets.items())}
        return c, wc.intervals_key(self._files, [sorted(keep) if keep is not None else None, sets])

    def _ensure(self) -> pd.DataFrame:
        if self._iv is None:
            with self._iv_lock:       # a view job and the GUI thread (an export) may both ask first
                if self._iv is None and self._iv_load is not None:
                    load, self._iv_load = self._iv_load, None
                    iv = load()
                    if iv is not None:
                        self._iv = self._left_out(iv)
                    else:             # the cache entry went meanwhile: from the samples, as without a cache
                        self._compute(lazy=False)
                        why = getattr(load, "damaged", None)
                        if why:               # a damaged entry is never silent (issue 20)
                            self._engine_findings = [*self._engine_findings, *self._cache_damaged(why)]
                elif self._iv is None:    # the intervals now (a lazy compute would only open their entry)
                    self._compute(lazy=False)
        return self._iv

    @property
    def intervals(self) -> pd.DataFrame:
        """One row per logical CPU per interval with float64 counter deltas (see architecture.md)."""
        return self._ensure()

    @property
    def zones(self) -> Zones:
        """Each system's UTC offsets (from its records' local time) and the time-zone conversions."""
        iv = self._ensure()
        z = getattr(self, "_zones", None)
        if z is None or z[0] is not iv:
            z = self._zones = (iv, Zones(iv))
        return z[1]

    @property
    def counters(self) -> list[str]:
        """Counter columns of :attr:`intervals`."""
        return _counter_columns(self._ensure())

    def left_out_count(self) -> tuple[int, int]:
        """(implausible CPU-intervals, of them left out of the sums) over every file."""
        qb = self._ensure()["qbits"].to_numpy(dtype=np.int64)
        return int(((qb & IMPLAUSIBLE) != 0).sum()), int(((qb & LEFT_OUT) != 0).sum())

    @property
    def partitions(self) -> pd.DataFrame:
        """Partition rows (MONWRITE D0R16) of every file; may be empty."""
        parts = [r.partitions for r in self._files if r.partitions is not None and len(r.partitions)]
        if not parts:
            return pd.DataFrame(columns=PARTITION_COLUMNS)
        return pd.concat(parts, ignore_index=True)

    def metrics(self, by: str = "interval", start=None, end=None, nodes: list[NodeKey] | None = None,
                summary: bool = False) -> pd.DataFrame:
        """Metrics frame for a level; see :func:`app.engine.metrics.compute_metrics`.

        ``by`` is one of :data:`app.engine.aggregate.LEVELS`; ``start``/``end`` cut
        to intervals ending in ``(start, end]`` (UTC); ``nodes`` restricts to tree
        nodes; ``summary`` appends one whole-window row per node.
        """
        if by not in LEVELS:
            raise ValueError(f"by must be one of {', '.join(LEVELS)}; got {by!r}")
        if nodes and any(tuple(k)[0] in ("pool", "core") for k in nodes):   # CEC pools, SMT cores (issue 26)
            from app.engine.node_rows import extra_metrics

            return self._cached(("extra", by, str(start), str(end), _nodes_key(nodes), summary),
                                lambda: extra_metrics(self, by, start, end, list(nodes), summary))
        level = metrics_level(by)
        lkey = (level, str(start), str(end))
        if level == "cpu" and nodes and all(k[0] in ("lpar", "class", "cpu") for k in nodes) \
                and len({tuple(k[1:3]) for k in nodes}) == 1:      # CPUs of one LPAR: its prepared CPU rows
            lkey = (*lkey, *(str(v) for v in nodes[0][1:3]))
        lf = self._lv.get(lkey)
        if lf is not None:
            hit = lf.rows(nodes, summary)
            if hit is not None:
                self._lv.move_to_end(lkey)
                return hit
        if level in self._wm and start is None and end is None and nodes is None and WINDOW_OF[level] == level:
            return self._wm[level].copy()     # the tree's whole-window rows (the same computation)
        win = (str(start), str(end), _nodes_key(nodes))
        wlevel = WINDOW_OF[level] if summary and WINDOW_OF[level] != level else None

        took: list[pd.DataFrame | None] = []     # the nodes' interval rows, taken once for both passes
        def node_rows() -> pd.DataFrame | None:
            if not took:
                took.append(self._node_rows(nodes))
            return took[0]

        def rows(lv: str, is_summary: bool) -> pd.DataFrame:
            # the interval rows are shared by the table (with summary) and the timeline (without); the nodes'
            # interval rows are taken by their positions (select_rows' result without a pass over every row)
            def compute() -> pd.DataFrame:
                sub = node_rows()
                src, nds = (sub, None) if sub is not None else (self._ensure(), nodes)
                return level_metrics(src, self.formula_sets, self.counters, lv, start, end, nds, is_summary)
            return self._cached(("rows", lv, is_summary, *win), compute)

        def body_and_window() -> pd.DataFrame:
            parts = [(level, False), (wlevel, True)] if wlevel else [(level, False)]
            if len(parts) == 1 or all(("rows", lv, s, *win) in self._mcache for lv, s in parts):
                return with_summary(rows(level, False), rows(wlevel, True) if wlevel else None, level)
            node_rows()    # taken before the two threads share them (and their per-row arrays)
            # interval rows, summary rows: two grouped passes on two threads (in this context: frames_not_kept)
            ctx = [contextvars.copy_context() for _ in parts]
            body, window = parallel_map(lambda i: ctx[i].run(rows, *parts[i]), range(len(parts)))
            return with_summary(body, window, level)
        return self._cached((by, *win, summary), body_and_window)

    def smt(self, by: str = "type", start=None, end=None, nodes: list[NodeKey] | None = None) -> pd.DataFrame:
        """Multithreading metrics per core type (``by="type"``, with a mean row per LPAR and type)
        or per core (``by="core"``), as IBM's SMTMET lays them out.

        z/VM D0R2 values (``ReadResult.mt``) are shown as reported; the rest is derived from the
        MT-diagnostic counters.  See :mod:`app.engine.smt_report` for columns, units and rules.
        ``start``/``end``/``nodes`` cut and filter like :meth:`metrics`.
        """
        from app.engine.smt_report import SMT_LEVELS, smt_report

        if by not in SMT_LEVELS:
            raise ValueError(f"by must be one of {', '.join(SMT_LEVELS)}; got {by!r}")
        key = ("smt", by, str(start), str(end), _nodes_key(nodes))
        return self._cached(key, lambda: smt_report(self._ensure(), [r.mt for r in self._files if r.mt is not None],
                                                    by=by, start=start, end=end, nodes=nodes))

    def _cached(self, key: tuple, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """A copy of the cached frame for ``key``, computing and storing it (LRU, :data:`_CACHE` entries)."""
        hit = self._mcache.get(key)
        if hit is not None:
            self._mcache.move_to_end(key)
            return hit.copy()
        out = compute()
        if _NOT_KEPT.get():
            return out
        self._mcache[key] = out
        while len(self._mcache) > _CACHE:
            self._mcache.popitem(last=False)
        return out.copy()

    def tree(self, deep: bool = True, values: bool = True, levels_first: bool = False,
             partitions: bool = True) -> list:
        """CEC roots of the CEC -> LPAR -> class -> CPU tree (``deep=False``: the CEC and LPAR levels only, a
        new tree each call: what the window shows before the deeper levels are built; with ``values=False``
        also without the whole-range busy and CPI, which need a pass over every interval; ``levels_first``: every
        level, but the CEC, LPAR and pool nodes without those values, a new tree each call: build_tree;
        ``partitions=False`` with ``deep=False``: without the partition data, see build_tree)."""
        from app.engine.tree import build_tree

        if not deep or levels_first:
            return self._tree if self._tree is not None else build_tree(self, deep, values and not levels_first,
                                                                        partitions or deep)
        if self._tree is None:
            self._tree = build_tree(self)
        return self._tree

    # -- formula metadata --------------------------------------------------------------
    def formula_versions(self) -> dict[str, str]:
        """generation -> formula-set version, for the generations present in the data
        (all loaded sets when no data is loaded)."""
        iv = self._ensure()
        present = {str(g) for g in iv["generation"].unique()} if len(iv) else None   # per category, not per row
        gens = [g for g in self.formula_sets if present is None or g in present]
        return {g: self.formula_sets[g].version for g in gens}

    def statuses(self) -> dict[str, dict[str, str]]:
        """generation -> {metric id: status} for the generations in :meth:`formula_versions`."""
        return {g: self.formula_sets[g].statuses() for g in self.formula_versions()}

    def presentation_columns(self, generation: str):
        from app.engine.layout import presentation_columns
        return presentation_columns(generation, self.formula_sets)

    def metric_info(self, generation: str, metric_id: str) -> dict:
        from app.engine.layout import metric_info
        return metric_info(generation, metric_id, self.formula_sets)
