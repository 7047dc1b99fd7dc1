"""The counter columns of the sample frames, read for given sample rows without joining the frames, and the
delta step made from them (:class:`DeltaRows`: the counter columns of ``deltas.compute_intervals``' intervals,
all at once or for any rows later); moved out of ``deltas.py`` to keep that module under its size limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["SampleCounters", "ColumnGroup", "DeltaRows"]


class SampleCounters:
    """Counter columns of the sample frames, read for given rows without joining the frames.

    Columns of one reader block (one 2-D array, a row per record) are read through a 2-D view of that block,
    so a gather copies the span of each record that holds them (contiguous) instead of striding through each
    column; other columns (a pandas-made frame: each column contiguous) are gathered one by one.
    """

    def __init__(self, frames: Sequence[pd.DataFrame], counters: Sequence[str]):
        self.n = len(counters)
        self.stops = np.cumsum([len(f) for f in frames])
        self.parts = [self._part(f, counters) for f in frames]

    @staticmethod
    def _part(f: pd.DataFrame, counters: Sequence[str]):
        n = len(f)
        groups: dict[tuple[int, int], tuple[np.ndarray, list[int], list[np.ndarray]]] = {}
        alone: list[tuple[np.ndarray, list[int], list[int]]] = []
        missing = []
        own = own_arrays(f)
        for j, c in enumerate(counters):
            v = own.get(c)
            if v is None or v.dtype != np.uint64:
                if c not in f.columns:
                    missing.append(j)
                    continue
                s_ = f[c]       # a float column: NaN where a sample lacks the counter's set (read as 0; the
                # sets decide which deltas exist), not cast as it is (NaN has no uint64: a warning, any value)
                v = (s_.fillna(0) if s_.dtype.kind == "f" else s_).to_numpy(dtype=np.uint64)
            b = v
            while isinstance(b.base, np.ndarray):
                b = b.base
            s = v.strides[0] if v.ndim == 1 else 0
            if b is v or s <= 0 or s % 8 or not v.dtype.isnative:
                alone.append((np.ascontiguousarray(v)[:, None], [j], [0]))
                continue
            g = groups.setdefault((id(b), s), (b, [], []))
            g[1].append(j)
            g[2].append(v)
        out = []
        for (_, s), (b, js, cols) in groups.items():
            view, ks = _block_view(b, cols, s, n) if s != 8 else _column_view(b, cols, n)
            if view is None:
                alone.extend((np.ascontiguousarray(v)[:, None], [j], [0]) for j, v in zip(js, cols))
            else:
                out.append((view, _runs(js, ks)))
        return out + [(v, [(slice(js[0], js[0] + 1), slice(0, 1))]) for v, js, _ in alone], \
            (_positions(missing), len(missing))

    def blocks(self, rows: np.ndarray) -> list[tuple[np.ndarray | slice, np.ndarray]]:
        """The counters at global sample rows ``rows`` as (counter positions, (rows x counters) uint64) pieces."""
        m = len(rows)
        if len(self.parts) == 1 or not m:
            return self._part_blocks(0, rows, m)
        fi = np.searchsorted(self.stops, rows, side="right")
        lo, hi = int(fi.min()), int(fi.max())
        if lo == hi:
            return self._part_blocks(lo, rows - (self.stops[lo - 1] if lo else 0), m)
        out = np.zeros((m, self.n), np.uint64)
        for i in range(lo, hi + 1):
            sel = np.flatnonzero(fi == i)
            if len(sel):
                for js, M in self._part_blocks(i, rows[sel] - (self.stops[i - 1] if i else 0), len(sel)):
                    out[sel[:, None], np.arange(self.n)[js][None, :]] = M
        return [(slice(0, self.n), out)]

    def full(self, rows: np.ndarray) -> np.ndarray:
        """The counters at ``rows`` as one (rows x counters) uint64 array."""
        got = self.blocks(rows)
        if len(got) == 1 and isinstance(got[0][0], slice) and got[0][0] == slice(0, self.n):
            return got[0][1]
        out = np.empty((len(rows), self.n), np.uint64)
        for js, M in got:
            out[:, js] = M
        return out

    def column_groups(self, width: int) -> list["ColumnGroup"] | None:
        """When every counter of every frame is a column of its own (frames read from Parquet: one array a
        column), the counters cut into groups of ``width`` consecutive positions, each holding only its own
        columns, and this object lets go of the frames' columns (``full``/``blocks`` no longer work): a column
        is freed once its group is done.  None (nothing changed) when a frame holds counters as rows of one
        block (a decoder's): gathering whole rows of those is 4-6x faster than a column at a time."""
        cols: list[list] = []
        for groups_i, _missing in self.parts:
            mine: list = [None] * self.n        # position -> (n,) column of this frame (None: a missing counter)
            for view, runs in groups_i:
                if view.shape[1] != 1:
                    return None
                for js, _ks in runs:
                    for j in range(js.start, js.stop):
                        mine[j] = view[:, 0]
            cols.append(mine)
        out = [ColumnGroup(j0, [[f[j] for f in cols] for j in range(j0, min(self.n, j0 + width))], self.stops)
               for j0 in range(0, self.n, max(1, width))]
        self.parts = None
        return out

    def block_groups(self) -> list["ColumnGroup"]:
        """Every counter as a column of each frame (a view of its block's memory; a counter a frame lacks: None),
        in groups by the block of the largest frame that holds it (a decoder's block of 8 or so counters, one
        counter of a frame read from Parquet), in the order of that frame's blocks, and this object lets go of
        the frames' counters (``full``/``blocks`` no longer work): a group holds only its own columns, so each
        block of the largest frame is freed once its group is done (:meth:`ColumnGroup.done`), those of the
        other frames (the context samples: a few rows) once each group reading them is."""
        cols, owner = self._columns()
        self.parts = None
        by: dict[int, list[int]] = {}
        for j, b in enumerate(owner):
            by.setdefault(b if b >= 0 else len(owner), []).append(j)
        out = []
        for b in sorted(by):
            js = by[b]
            out.append(ColumnGroup(js[0], [[f[j] for f in cols] for j in js], self.stops, js))
            for f in cols:
                for j in js:
                    f[j] = None
        return out

    def _columns(self) -> tuple[list[list], list[int]]:
        """Per frame each counter position's column (None: the frame lacks it), and per position the block of
        the largest frame holding it (-1: none); no view of a block is left held here."""
        big = int(np.argmax(np.diff(self.stops, prepend=0))) if len(self.stops) else 0
        cols: list[list] = []
        owner = [-1] * self.n
        for i, (groups_i, _missing) in enumerate(self.parts):
            mine: list = [None] * self.n
            for b, (view, runs) in enumerate(groups_i):
                for js, ks in runs:
                    for j, k in zip(range(js.start, js.stop), range(ks.start, ks.stop)):
                        mine[j] = view[:, k]
                        if i == big:
                            owner[j] = b
            cols.append(mine)
        return cols, owner

    def _part_blocks(self, i: int, rows: np.ndarray, m: int) -> list[tuple[np.ndarray | slice, np.ndarray]]:
        groups, (missing, k) = self.parts[i]
        out = []
        for view, runs in groups:
            # the span of each record holding the counters (contiguous copies), or of a block in column order
            # each counter's values at the rows (numpy gathers them along the counters' own memory)
            b = view[rows]
            out.extend((js, b[:, ks]) for js, ks in runs)       # views: counters side by side in both
        if k:
            out.append((missing, np.zeros((m, k), np.uint64)))
        return out


class ColumnGroup:
    """Counter positions ``j0``, ``j0 + 1``... (or ``js``) of every sample frame, a column each: :meth:`column`
    reads one for global sample rows (a counter a frame lacks reads 0, as :meth:`SampleCounters.full`);
    :meth:`done` lets go."""

    def __init__(self, j0: int, columns: list[list[np.ndarray | None]], stops: np.ndarray,
                 js: list[int] | None = None) -> None:
        self.j0, self.width, self._columns, self._stops = j0, len(columns), columns, stops
        self.js = list(range(j0, j0 + len(columns))) if js is None else list(js)   # the counters' positions

    def column(self, i: int, rows: np.ndarray, fi: np.ndarray | None = None) -> np.ndarray:
        """The group's ``i``-th counter at global sample rows ``rows`` (uint64); ``fi``: each row's frame
        (:meth:`frame_of`), given when the same rows are read for several columns."""
        parts = self._columns[i]
        if len(parts) == 1:
            return parts[0][rows] if parts[0] is not None else np.zeros(len(rows), np.uint64)
        out = np.zeros(len(rows), np.uint64)
        fi = self.frame_of(rows) if fi is None else fi
        for f, col in enumerate(parts):
            if col is not None:
                sel = np.flatnonzero(fi == f)
                out[sel] = col[rows[sel] - (self._stops[f - 1] if f else 0)]
        return out

    def frame_of(self, rows: np.ndarray) -> np.ndarray | None:
        """Each global sample row's frame (None with one frame)."""
        return None if len(self._stops) < 2 else np.searchsorted(self._stops, rows, side="right")

    def done(self) -> None:
        """Let go of the columns."""
        self._columns = []


class DeltaRows:
    """The delta step of :func:`app.engine.deltas.compute_intervals`: the counter columns of its intervals frame,
    made from the samples' counters it holds, for every row at once (the eager frame) or for any rows on demand
    (``lazy``: :meth:`rows`).  One implementation of each rule: the sample's counters, minus the previous
    sample's for running totals, in uint64, then float64 (:meth:`raw`, :meth:`fill_group`); NaN where a counter
    set is absent from the row or the row before (:meth:`absent_rows`); then, once the frame's rows are known
    (:meth:`settle`), NaN for the MT-diagnostic counters of a core's other CPUs and of lost MT data, and beyond
    the sets the row's CFVN/CSVN install (:meth:`marks`).

    :meth:`raw` and :meth:`fill_group` read the rows before the both-kinds drop (``rows``: their sample rows,
    ``oa``: a running total, ``mask_bits``: the sets present in the row and the row before); :meth:`marks` and
    :meth:`rows` the frame's rows.  The samples' counters are held until :meth:`let_go` or this object goes."""

    ROWS = 2048             # rows gathered at a time by the eager fill (stays in cache)
    # rows gathered at a time by :meth:`rows` (lazy), the span of each one's record copied: about 0.6 MB of a
    # z16's records (2,048 rows held 1.7 MB more beside a row group of the extract's intervals, at its peak)
    LAZY_ROWS = 512

    def __init__(self, C: SampleCounters | None, counters: Sequence[str], rows: tuple[np.ndarray, np.ndarray],
                 oa: np.ndarray | None, mask_bits: np.ndarray, bits: np.ndarray) -> None:
        self.counters = list(counters)
        self._C, (self._cur, self._prev) = C, rows
        self._oa = oa if oa is not None and oa.any() else None          # None: no subtraction anywhere
        self._bits, self._bit_of = mask_bits, bits
        self._set_cols = [(int(bit), np.flatnonzero(bits == bit)) for bit in np.unique(bits)]
        self._absent_all: dict[int, np.ndarray] | None = None           # set bit -> rows lacking it (fill_group)
        self.n = len(rows[0])
        self._keep: np.ndarray | None = None
        self._kill: tuple[np.ndarray, np.ndarray] | None = None
        self._vers: np.ndarray | None = None                            # marks: none until settle
        self._cuts: dict[int, np.ndarray] = {}
        self.valued: np.ndarray | None = None      # kept by a writer: the counters with a value in a row written
        self._D: np.ndarray | None = None           # every row's deltas, once made (:meth:`make_all`)
        self._order: np.ndarray | None = None       # ... the frame's row of each of its rows (None: the same)
        self._inv: np.ndarray | None = None         # ... and its row of each of the frame's

    # -- the step over the rows before the drop ------------------------------------------------------------
    def raw(self, out: np.ndarray, p: np.ndarray | slice) -> None:
        """``out`` (len(p) x counters, float64) = the deltas of the rows ``p`` before the drop, NaN where a set is
        absent (no marks).  Gathers and copies release the GIL: blocks of rows may be made on several threads."""
        cur = self._cur[p]
        ra = self._oa[p] if self._oa is not None else None
        if ra is not None and ra.any():
            C = self._C
            out[:] = _minus(C.full(cur), C.full(self._prev[p]), ra[:, None])
        else:                                       # deltas as recorded (subtype 1): no subtraction
            for js, M in self._C.blocks(cur):
                out[:, js] = M
        mask = self._bits[p]
        for bit, js in self._set_cols:
            absent = np.flatnonzero((mask & bit) == 0)
            if len(absent):
                out[absent[:, None], js[None, :]] = np.nan

    def fill_group(self, D: np.ndarray, g, released: Callable[[], object] | None = None) -> None:
        """D's columns of the column group ``g`` (``SampleCounters.column_groups``) over every row before the drop,
        each counter whole (a gather from a column of its own is 5x faster than row blocks over many such
        columns), then ``g`` lets go of its columns (and ``released`` is called).  The values are :meth:`raw`'s."""
        cur, prev, oa = self._cur, self._prev, self._oa
        fc, fp = g.frame_of(cur), (g.frame_of(prev) if oa is not None else None)
        absent = self.absent_rows()
        for i in range(g.width):
            j, col = g.js[i], g.column(i, cur, fc)
            D[:, j] = col if oa is None else _minus(col, g.column(i, prev, fp), oa)
            miss = absent[int(self._bit_of[j])]
            if len(miss):
                D[miss, j] = np.nan
        g.done()
        if released is not None:
            released()

    def absent_rows(self) -> dict[int, np.ndarray]:
        """Each set bit's rows (before the drop) where it is absent from the row or the row before; made once
        (call it before :meth:`fill_group` runs on several threads)."""
        if self._absent_all is None:
            self._absent_all = {bit: np.flatnonzero((self._bits & bit) == 0) for bit, _ in self._set_cols}
        return self._absent_all

    def let_go(self) -> None:
        """Let go of the samples' counters (:meth:`raw` no longer works; :meth:`marks` does)."""
        self._C = None

    # -- the frame's rows ----------------------------------------------------------------------------------
    def settle(self, keep_rows: np.ndarray | None, mt_kill: tuple[np.ndarray, np.ndarray] | None,
               uninstalled: tuple[np.ndarray, dict[int, np.ndarray]]) -> None:
        """The frame's rows: ``keep_rows`` (rows kept by the both-kinds drop, None: all), ``mt_kill`` ((rows,
        MT counter positions) of the frame to NaN) and ``uninstalled`` (each row's version code, the counters
        each code cuts: ``deltas._uninstalled``)."""
        self._keep = keep_rows
        self.n = len(self._cur) if keep_rows is None else len(keep_rows)
        self._kill = None
        if mt_kill is not None:     # a flag a row, the positions
            self._kill = (np.zeros(self.n, bool), mt_kill[1].reshape(-1))
            self._kill[0][mt_kill[0].reshape(-1)] = True
        self._vers, self._cuts = uninstalled

    def marks(self, out: np.ndarray, at: np.ndarray | None = None) -> None:
        """NaN in ``out`` (the deltas of the frame's rows ``at``; None: every row) for the MT counters of a core's
        other CPUs and of lost MT data, and beyond the sets each row's CFVN/CSVN install."""
        if self._kill is not None:
            flag = self._kill[0] if at is None else self._kill[0][at]
            dead = np.flatnonzero(flag)
            if len(dead):
                out[dead[:, None], self._kill[1][None, :]] = np.nan
        vers = self._vers if at is None or not self._cuts else self._vers[at]
        for v, cut in self._cuts.items():
            hit = np.flatnonzero(vers == v)
            if len(hit):
                out[hit[:, None], cut[None, :]] = np.nan

    TRIM_BYTES = 1 << 20    # make_all: ``released`` called each time about this much of the counters was let go

    def make_all(self, released: Callable[[], object] | None = None, order: np.ndarray | None = None) -> None:
        """Make the deltas of every row of the frame now (after :meth:`settle`), one float64 block with each
        counter contiguous, letting go of the samples' counters a block of them at a time as their deltas are
        made (:meth:`SampleCounters.block_groups`): the samples' counters and the deltas are never both held
        whole, and :meth:`rows` then reads the block (the values of :meth:`raw` and :meth:`marks`, each
        counter's whole column made at once).  ``released``: called once the setup's row arrays are made (their
        temporaries freed), each time about :data:`TRIM_BYTES` of the counters were let go, and at the end (a
        block under the C heap's mapping threshold is freed into the heap: trimmed, its pages go back).  ``order``
        (row numbers as narrow as they fit): the frame's rows in the order the block holds them (a
        writer's: each part's rows then one range of the block, read as a view; the rows it leaves out follow,
        in order); None: the frame's order.  Nothing when made already or the counters were let go."""
        if self._D is not None or self._C is None:
            return
        n = self.n
        idx = np.int32 if n < 2**31 - 1 else np.int64     # row numbers of the setup arrays, as narrow as they fit
        if order is not None:
            order = np.asarray(order)
            if len(order) < n:                          # the rows it leaves out follow, in order
                seen = np.zeros(n, bool)
                seen[order] = True
                order = np.concatenate((order, np.flatnonzero(~seen)))
                del seen
            order = order.astype(idx, copy=False)
            self._inv = np.empty(n, idx)
            self._inv[order] = np.arange(n, dtype=idx)
        self._order = order
        keep = self._keep if order is None else (order if self._keep is None else self._keep[order])
        oa = self._oa if self._oa is None or keep is None else self._oa[keep]
        if oa is not None and not oa.any():
            oa = None                                   # no running total among the rows: no subtraction
        bits = self._bits if keep is None else self._bits[keep]
        absent = {bit: np.flatnonzero((bits & bit) == 0) for bit, _ in self._set_cols}
        del bits
        C, self._C = self._C, None
        stops = C.stops
        groups = C.block_groups() if len(self.counters) else []
        del C
        groups.reverse()                                # popped in the order of the blocks
        big = int(np.argmax(np.diff(stops, prepend=0))) if len(stops) else 0
        # each a gathered copy let go once its rows are found (the previous sample's only for running totals)
        at_cur = _Rows(self._cur if keep is None else self._cur[keep], stops, big)
        at_prev = None if oa is None else _Rows(self._prev if keep is None else self._prev[keep], stops, big)
        m = at_cur.n
        del keep
        if released is not None:
            released()          # the setup's freed temporaries (heap holes) handed back before the deltas' pages
        D = np.empty((len(self.counters), m), np.float64).T     # pages taken as each column is made
        rows_most = int(np.diff(stops, prepend=0).max()) if len(stops) else 0
        gone = 0
        while groups:
            g = groups.pop()
            gone += 8 * rows_most * len(g.js)
            for i, j in enumerate(g.js):
                col = at_cur.read(g, i)
                D[:, j] = col if oa is None else _minus(col, at_prev.read(g, i), oa)
                miss = absent[int(self._bit_of[j])]
                if len(miss):
                    D[miss, j] = np.nan
            g.done()                                    # the block's last column: the block goes
            del g
            if released is not None and (gone >= self.TRIM_BYTES or not groups):
                released()
                gone = 0
        self.marks(D, order)
        self._D = D
        # what only the rows before the drop and the marks read (raw, fill_group, marks): every row is made, so
        # :meth:`rows` reads the block alone (the row arrays of the samples were held through the parts' writing)
        self._cur = self._prev = self._bits = self._oa = self._keep = self._vers = self._kill = None
        self._absent_all, self._cuts = None, {}

    def made_rows(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``a`` to ``b`` of the block :meth:`make_all` made: their rows of the frame and their deltas (a
        view)."""
        at = np.arange(a, b) if self._order is None else self._order[a:b]
        return at, self._D[a:b]

    @property
    def made(self) -> bool:
        """Every row's deltas are made (:meth:`make_all`): a slice of rows is read without a copy."""
        return self._D is not None

    def rows(self, idx: np.ndarray | slice) -> np.ndarray:
        """The (rows x counters) float64 deltas of the frame's rows ``idx`` (each counter contiguous; a slice of
        the block :meth:`make_all` made is a view of it: not to be written to)."""
        if self._D is not None:
            if isinstance(idx, slice) and self._inv is None:
                return self._D[idx]
            pos = np.arange(self.n)[idx] if isinstance(idx, slice) else np.asarray(idx, dtype=np.int64)
            if self._inv is not None:
                pos = self._inv[pos]
            if len(pos) and pos[-1] - pos[0] == len(pos) - 1 and (len(pos) == 1 or (np.diff(pos) == 1).all()):
                return self._D[pos[0]:pos[-1] + 1]      # consecutive in the block: a view
            out = np.empty((len(self.counters), len(pos)), np.float64).T
            for j in range(len(self.counters)):
                np.take(self._D[:, j], pos, out=out[:, j])
            return out
        idx = np.arange(self.n)[idx] if isinstance(idx, slice) else np.asarray(idx, dtype=np.int64)
        k, width = len(idx), len(self.counters)
        out = np.empty((width, k), np.float64).T
        if not width:
            return out
        for r0 in range(0, k, self.LAZY_ROWS):
            at = idx[r0:r0 + self.LAZY_ROWS]
            sub = out[r0:r0 + len(at)]
            self.raw(sub, at if self._keep is None else self._keep[at])     # the row before any was dropped
            self.marks(sub, at)
        return out


class _Rows:
    """Global sample rows, read from the columns of a :class:`ColumnGroup` (its frames' columns at those rows, a
    counter a frame lacks as 0: :meth:`ColumnGroup.column`'s values), each frame's rows found once for all the
    group's columns: the largest frame's column gathered at every row (the others' rows at its first), then
    the few rows of the other frames (the context samples before a chunk) put in."""

    def __init__(self, rows: np.ndarray, stops: np.ndarray, big: int) -> None:
        self.big, self.n = big, len(rows)
        fi = np.searchsorted(stops, rows, side="right") if len(stops) > 1 else np.zeros(len(rows), np.int64)
        start = np.concatenate(([0], stops[:-1])).astype(np.int64)
        local = rows - start[fi] if len(rows) else rows
        mine = fi == big
        self.alone = bool(mine.all())
        self.at = local if self.alone else np.where(mine, local, 0)
        self.others = [(f, np.flatnonzero(fi == f), None) for f in range(len(stops)) if f != big]
        self.others = [(f, sel, local[sel]) for f, sel, _ in self.others if len(sel)]

    def read(self, g: "ColumnGroup", i: int) -> np.ndarray:
        parts = g._columns[i]
        col = parts[self.big]
        out = col[self.at] if col is not None else np.zeros(self.n, np.uint64)
        if self.alone:
            return out
        if col is not None:
            for f, sel, _ in self.others:       # rows not of the largest frame: 0 unless their frame has it
                out[sel] = 0
        for f, sel, loc in self.others:
            if parts[f] is not None:
                out[sel] = parts[f][loc]
        return out


def own_arrays(frame: pd.DataFrame, cats: dict | None = None) -> dict[str, np.ndarray]:
    """The frame's columns held as numpy arrays, by name: the frame's own arrays (views of its blocks, as
    ``frame[c].to_numpy()`` gives them, never written), taken without making a pandas Series of each (a samples
    frame has 60 or more counter columns; ``frame[c]`` took 0.1 ms each); with another pandas, or names not
    unique, by the public look-up.  ``cats``: filled with the frame's categorical columns' own arrays (with the
    public look-up: none); given, the naive times are taken too (their datetime64 values)."""
    get = getattr(frame, "_get_column_array", None)
    out = {}
    if get is None or not frame.columns.is_unique:
        for c in frame.columns:
            s = frame[c]
            if isinstance(s.dtype, np.dtype):
                out[c] = s.to_numpy()
        return out
    for i, c in enumerate(frame.columns):
        a = get(i)
        if isinstance(a, np.ndarray):
            out[c] = a
        elif cats is not None and isinstance(a, pd.Categorical):
            cats[c] = a
        elif cats is not None and a.dtype == np.dtype("datetime64[ns]"):       # a naive time: its values
            out[c] = np.asarray(a)
    return out


def _minus(now: np.ndarray, before: np.ndarray, running: np.ndarray) -> np.ndarray:
    """Deltas of counters read at a sample (``now``) and the sample before (``before``): ``now - before`` in
    uint64 where ``running`` (running totals; broadcast over the counters), else ``now`` (deltas as recorded)."""
    return now - np.where(running, before, np.uint64(0))


def _runs(js: list[int], ks: list[int]) -> list[tuple[slice, slice]]:
    """(counter positions, record words) slices where both are consecutive: copies without fancy indexing."""
    o = sorted(range(len(js)), key=lambda i: js[i])
    out: list[tuple[slice, slice]] = []
    for i in o:
        j, k = js[i], ks[i]
        if out and out[-1][0].stop == j and out[-1][1].stop == k:
            out[-1] = (slice(out[-1][0].start, j + 1), slice(out[-1][1].start, k + 1))
        else:
            out.append((slice(j, j + 1), slice(k, k + 1)))
    return out


def _positions(js: list[int]) -> np.ndarray | slice:
    """Counter positions as a slice when they are consecutive (plain strided copies), else an index array."""
    if js and js == list(range(js[0], js[0] + len(js))):
        return slice(js[0], js[0] + len(js))
    return np.array(js, np.int64)


def _column_view(b: np.ndarray, cols: list[np.ndarray], n: int) -> tuple[np.ndarray | None, list[int]]:
    """A (rows x counters) uint64 view, in column order, of the memory of ``b`` holding the contiguous counter
    columns ``cols`` as rows of one 2-D block (the SMF reader's blocks in column order, pandas' layout), and
    each column's place in it; (None, []) when they are not rows of one block at a common stride."""
    ptrs = [v.__array_interface__["data"][0] for v in cols]
    if len(set(ptrs)) < 2:
        return None, []
    p0 = min(ptrs)
    row = int(np.diff(np.unique(ptrs)).min())      # the block's row: the least step between two columns
    if row < 8 * n or any((p - p0) % row for p in ptrs):
        return None, []
    ks = [(p - p0) // row for p in ptrs]
    return _reading_columns(lambda: np.ndarray(shape=(max(ks) + 1, n), dtype=np.uint64, buffer=b,
                                               offset=p0 - b.__array_interface__["data"][0], strides=(row, 8)).T,
                            cols, ks)


def _block_view(b: np.ndarray, cols: list[np.ndarray], s: int, n: int) -> tuple[np.ndarray | None, list[int]]:
    """A (rows x words) uint64 view of the memory of ``b`` (the base of the counter columns ``cols``, row stride
    ``s``) over the span of the columns in each record, and each column's word in it; (None, []) when the
    columns do not sit in one row layout (numpy checks the view against the size of ``b``)."""
    ptrs = [v.__array_interface__["data"][0] for v in cols]
    p0 = min(ptrs)
    ks = [(p - p0) // 8 for p in ptrs]
    if any((p - p0) % 8 for p in ptrs) or (max(ptrs) - p0) + 8 > s:
        return None, []
    off = p0 - b.__array_interface__["data"][0]
    return _reading_columns(lambda: np.ndarray(shape=(n, max(ks) + 1), dtype=np.uint64, buffer=b, offset=off,
                                               strides=(s, 8)), cols, ks)


def _reading_columns(make, cols: list[np.ndarray], ks: list[int]) -> tuple[np.ndarray | None, list[int]]:
    """``(make(), ks)`` when the (rows x words) view ``make()`` builds reads the very memory of each column
    (``cols[i]`` is its column ``ks[i]``: same address and stride); (None, []) when it does not or numpy refuses
    the view (its checks against the size of the buffer)."""
    try:
        view = make()
    except (ValueError, TypeError, BufferError):
        return None, []
    if all(view[:, k].__array_interface__["data"][0] == v.__array_interface__["data"][0]
           and view[:, k].strides == v.strides for k, v in zip(ks, cols)):
        return view, ks
    return None, []
