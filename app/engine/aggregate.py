"""Levels and time: sum counter deltas per node (and interval), never average ratios.

Tree levels are CEC (``cec``) -> LPAR (``lpar``) -> processor class (``class``)
-> logical CPU (``cpu``).  Every level sums the interval deltas of its CPUs and
the formulas are applied to the sums (ratio of sums).

``CPSP`` of a summed row is sum(B0) / sum(B0/CPSP_i) (cycle-weighted speed: the
clock when uniform), so ``Eff_GHz`` stays the clock and ``MIPS_per_CPU`` =
sum(B1) / sum(B0_i/CPSP_i).  ``INTERVAL`` is chosen so that the per-CPU formula
``LPARCPU = B0/(CPSP*1e6*INTERVAL)*100`` gives

* LPAR / class interval rows: the sum over CPUs of each CPU's busy (% of one engine);
* CEC interval rows and whole-window rows: busy time / time covered, i.e.
  sum(B0_i/CPSP_i) / (n_buckets * bucket length) -- the time-weighted average of
  the per-interval sums (a CEC bucket may hold several short z/VM intervals).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["LEVELS", "LEVEL_KEYS", "add_buckets", "select_rows", "selection_rows", "window_mask", "aggregate",
           "NodeKey"]

NodeKey = tuple
LEVELS = ("interval", "cpu", "class", "lpar", "cec", "class_interval", "lpar_interval", "cec_interval")
_CLS = ["cec", "lpar", "system", "os", "class"]
_LPAR = ["cec", "lpar", "system", "os"]
# level -> (node key columns, per interval?)
LEVEL_KEYS: dict[str, tuple[list[str], bool]] = {
    "cpu": (_CLS + ["cpu"], True),
    "interval": (_CLS, True),
    "class_interval": (_CLS, True),
    "lpar_interval": (_LPAR, True),
    "cec_interval": (["cec"], True),
    "class": (_CLS, False),
    "lpar": (_LPAR, False),
    "cec": (["cec"], False),
    "cpu_window": (_CLS + ["cpu"], False),
}
WINDOW_OF = {"cpu": "cpu_window", "interval": "class", "class_interval": "class", "lpar_interval": "lpar",
             "cec_interval": "cec", "class": "class", "lpar": "lpar", "cec": "cec", "cpu_window": "cpu_window"}
_NS = 1_000_000_000
LEFT_OUT_BIT = 256         # deltas.QUALITY_BITS["left-out"] (deltas imports this module): an implausible row left out


def _mode_len(s: np.ndarray) -> int:
    ss = np.round(s[np.isfinite(s)])
    ss = ss[ss > 0]
    if not len(ss):
        return 0
    vals, cnt = np.unique(ss, return_counts=True)
    return int(vals[np.argmax(cnt)]) * _NS


def _phase(t: np.ndarray, L: int) -> int:
    off = int(np.median(t % L))
    if L >= 60 * _NS:          # SMF/monitor intervals are synchronised to whole minutes: keep the phase, drop jitter
        off = int(round(off / (60 * _NS))) * 60 * _NS % L
    return off


def bucket_arrays(t: np.ndarray, s: np.ndarray, sys_rows: dict[int, np.ndarray],
                  cec_systems: list[tuple[np.ndarray, list[int]]]) -> tuple[np.ndarray, ...]:
    """The bucket rule on arrays: ``t`` interval ends (int64 ns), ``s`` interval lengths (s); ``sys_rows``: row
    positions of each system (by any key); ``cec_systems``: per CEC its row positions and its systems' keys.
    Returns (bucket, bucket_s, cec_bucket, cec_bucket_s), as :func:`add_buckets` describes them."""
    b, cb = t.copy(), t.copy()
    bl = np.full(len(t), np.nan)
    cbl = np.full(len(t), np.nan)
    sys_L: dict[int, tuple[int, int]] = {}
    for k, idx in sys_rows.items():
        L = _mode_len(s[idx])
        if L <= 0:
            continue
        off = _phase(t[idx], L)
        sys_L[k] = (L, off)
        b[idx] = np.floor((t[idx] - off) / L + 0.5).astype(np.int64) * L + off
        bl[idx] = L / _NS
    for idx, systems in cec_systems:
        syss = [sys_L[c] for c in systems if c in sys_L]
        if not syss:
            continue
        L = max(x[0] for x in syss)
        off = int(np.median([x[1] for x in syss if x[0] == L])) % L
        own = bl[idx] * _NS / 2                       # tolerance: half the row's own usual length
        own = np.where(np.isfinite(own), own, L / 2)
        cb[idx] = np.ceil((t[idx] - off - own) / L).astype(np.int64) * L + off
        cbl[idx] = L / _NS
    return b, bl, cb, cbl


def add_buckets(iv: pd.DataFrame) -> pd.DataFrame:
    """Add the time buckets the levels group by.

    ``bucket`` / ``bucket_s``: interval end rounded to the system's usual interval
    length (mode of interval_s); ``cec_bucket`` / ``cec_bucket_s``: the end of the
    CEC bucket (length = the longest usual interval of the CEC's systems) holding
    the interval, so 1-minute z/VM intervals and 15-minute SMF intervals of one
    CEC fall into common 15-minute buckets.
    """
    t = iv["interval_end"].to_numpy(dtype="datetime64[ns]").view(np.int64)
    s = iv["interval_s"].to_numpy(dtype=np.float64)
    sys_codes, sys_u = pd.factorize(iv["cec"].astype(str) + "\x00" + iv["system"].astype(str))
    sys_rows = {k: np.flatnonzero(sys_codes == k) for k in range(len(sys_u))}
    cec_codes, cec_u = pd.factorize(iv["cec"].astype(str))
    cecs = []
    for k in range(len(cec_u)):
        idx = np.flatnonzero(cec_codes == k)
        cecs.append((idx, [int(c) for c in np.unique(sys_codes[idx])]))
    b, bl, cb, cbl = bucket_arrays(t, s, sys_rows, cecs)
    iv["bucket"] = b.view("datetime64[ns]")
    iv["bucket_s"] = bl
    iv["cec_bucket"] = cb.view("datetime64[ns]")
    iv["cec_bucket_s"] = cbl
    return iv


def _ts(v) -> pd.Timestamp | None:
    if v is None:
        return None
    ts = pd.Timestamp(v)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts


def window_mask(ends: pd.Series, start=None, end=None) -> np.ndarray:
    """True where an interval end lies in ``(start, end]`` (UTC; ``None`` = open)."""
    m = np.ones(len(ends), dtype=bool)
    s, e = _ts(start), _ts(end)
    if s is not None:
        m &= (ends > s).to_numpy()
    if e is not None:
        m &= (ends <= e).to_numpy()
    return m


def select_rows(iv: pd.DataFrame, start=None, end=None, nodes: Iterable[NodeKey] | None = None) -> pd.DataFrame:
    """Rows whose interval ends in ``(start, end]`` and that belong to one of ``nodes``.

    ``nodes`` are NodeKeys: ``("cec", cec)``, ``("lpar", cec, lpar)``,
    ``("class", cec, lpar, cls)``, ``("cpu", cec, lpar, cls, cpu)``, and the pool and core nodes
    ``("pool", cec, type)``, ``("core", cec, lpar, cls, core)`` (:mod:`app.engine.node_rows`).
    """
    m = window_mask(iv["interval_end"], start, end)
    if nodes is not None:
        nm = np.zeros(len(iv), dtype=bool)
        cols = ["cec", "lpar", "class", "cpu"]
        for key in nodes:
            if key[0] in ("pool", "core"):          # a CEC pool or an SMT core (app.engine.node_rows)
                from app.engine.node_rows import node_mask
                nm |= node_mask(iv, tuple(key))
                continue
            vals = key[1:]
            k = np.ones(len(iv), dtype=bool)
            for c, v in zip(cols, vals):
                col = iv[c]
                if isinstance(col.dtype, pd.CategoricalDtype):     # compare codes, not 368,640 strings
                    code = col.cat.categories.get_indexer([v])[0] if isinstance(v, str) else -1
                    if code < 0 and not isinstance(v, str):
                        k &= (col.to_numpy() == v)
                    else:
                        k &= (col.cat.codes.to_numpy() == code) if code >= 0 else False
                else:
                    k &= (col.to_numpy() == (int(v) if c == "cpu" else v))
            nm |= k
        m &= nm
    return iv.loc[m] if not m.all() else iv


def selection_rows(ws, start=None, end=None, nodes: Iterable[NodeKey] | None = None, shift=None) -> pd.DataFrame:
    """The interval rows of a workspace's selection: those in ``shift`` (read in its zone by the workspace's own
    offsets), then :func:`select_rows` of the window and ``nodes``."""
    from app.engine.shift import apply_shift

    iv = ws.intervals
    zoned = shift is not None and not shift.is_empty and shift.tz != "utc"
    return select_rows(apply_shift(iv, shift, ws.zones if zoned else None), start, end, nodes)


def _qbits_or(qbits: np.ndarray, by) -> np.ndarray | None:
    """Bitwise OR of ``qbits`` per group (groups ordered as ``groupby(by, sort=True)``)."""
    present = int(np.bitwise_or.reduce(np.unique(qbits))) if len(qbits) else 0
    res = None
    b = 1
    while b <= present:
        if present & b:
            has = pd.Series((qbits & b) != 0).groupby(by, sort=True).any().to_numpy()
            res = np.where(has, b, 0) if res is None else res | np.where(has, b, 0)
        b <<= 1
    return res


def _node_codes(iv: pd.DataFrame, base: list[str]) -> np.ndarray:
    """Group number per row for the ``base`` columns, numbered in first-appearance order (as
    ``groupby(base, sort=False, observed=True, dropna=False).ngroup()``), from the category codes.  The columns'
    codes are combined into one number per row (mixed radix, compressed only if it would overflow) and sorted
    once: its first occurrences give the order of appearance."""
    key = np.zeros(len(iv), np.int64)
    span = 1
    for c in base:
        col = iv[c]
        if isinstance(col.dtype, pd.CategoricalDtype):
            codes = col.cat.codes.to_numpy(dtype=np.int64) + 1          # -1 (NaN) -> 0: its own group
            k = len(col.cat.categories) + 1
        else:
            codes, uniq = pd.factorize(col.to_numpy(), use_na_sentinel=False)
            codes, k = codes.astype(np.int64), len(uniq)
        k = max(int(k), 1)
        if span * k >= 1 << 62:                                        # keep the number in int64
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * np.int64(k) + codes
        span *= k
    if not len(key):
        return key
    _, first, key = np.unique(key, return_index=True, return_inverse=True)
    key = key.ravel().astype(np.int64)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[key]


class _RowArrays:
    """Per-row arrays of one intervals frame that the aggregation of every level computes alike (node codes,
    CPU ids, buckets, busy fractions): kept while the frame lives, so the tree's levels and the prepared level
    frames of one workspace compute them once (and threads computing several levels share them)."""

    def __init__(self) -> None:
        self._items: dict[Any, Any] = {}
        self._locks: dict[Any, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, name: Any, compute: Callable[[], Any]) -> Any:
        hit = self._items.get(name)
        if hit is None:               # computed once: a second thread asking meanwhile waits for it
            with self._lock:
                lock = self._locks.setdefault(name, threading.Lock())
            with lock:
                hit = self._items.get(name)
                if hit is None:
                    hit = self._items[name] = compute()
        return hit


_ROWS: dict[int, tuple[weakref.ref, _RowArrays]] = {}
_ROWS_LOCK = threading.Lock()
_SUM_COLS = 16             # counter columns summed per groupby (the copy of a block of columns, not of all)
_ROWS_MIN = 20_000         # frames below this (a node's rows) are aggregated once: nothing kept for them


def forget_rows(iv: pd.DataFrame) -> None:
    """Drop the per-row arrays kept for ``iv`` (the levels that share them are computed; memory back)."""
    with _ROWS_LOCK:
        got = _ROWS.get(id(iv))
        if got is not None and got[0]() is iv:
            _ROWS.pop(id(iv), None)


class _SharedRows(_RowArrays):
    """The per-row arrays of a frame holding another frame's rows with other node columns (the CEC pools'
    rows): the arrays of the unchanged columns (buckets, busy, lost data, the aux and extra frames) are the other
    frame's, the node codes and CPU ids its own."""

    def __init__(self, base: _RowArrays) -> None:
        super().__init__()
        self._base = base

    def get(self, name: Any, compute: Callable[[], Any]) -> Any:
        own = name == "cpu_uid" or (isinstance(name, tuple) and name[0] == "node")
        return super().get(name, compute) if own else self._base.get(name, compute)


def share_rows(frame: pd.DataFrame, of: pd.DataFrame) -> None:
    """Let ``frame`` (``of``'s rows in ``of``'s order, with other node columns: cec/lpar/system/os/class/cpu,
    every other column unchanged) share ``of``'s per-row arrays while both live."""
    if len(frame) != len(of) or len(frame) < _ROWS_MIN:
        return
    base = _row_arrays(of)
    k = id(frame)
    with _ROWS_LOCK:
        def gone(ref: weakref.ref, k: int = k) -> None:
            if _ROWS.get(k, (None,))[0] is ref:
                _ROWS.pop(k, None)
        try:
            _ROWS[k] = (weakref.ref(frame, gone), _SharedRows(base))
        except TypeError:
            pass


def _row_arrays(iv: pd.DataFrame) -> _RowArrays:
    """The :class:`_RowArrays` of ``iv`` (a new, unkept one for small frames)."""
    if len(iv) < _ROWS_MIN:
        return _RowArrays()
    k = id(iv)
    with _ROWS_LOCK:
        got = _ROWS.get(k)
        if got is not None and got[0]() is iv:
            return got[1]
        arrays = _RowArrays()

        def gone(ref: weakref.ref, k: int = k) -> None:     # the frame is freed: its arrays go with it
            if _ROWS.get(k, (None,))[0] is ref:
                _ROWS.pop(k, None)
        try:
            _ROWS[k] = (weakref.ref(iv, gone), arrays)
        except TypeError:
            pass
        return arrays


def _nunique(gid: np.ndarray, vals: np.ndarray, ngroups: int) -> np.ndarray:
    """Distinct ``vals`` per group (``vals`` integer codes >= 0)."""
    vals = np.asarray(vals, dtype=np.int64)
    k = int(vals.max()) + 1 if len(vals) else 1
    pairs = np.sort(gid.astype(np.int64) * k + vals)      # sort-based: numpy's hash unique is slow here
    if len(pairs):
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]]
    return np.bincount(pairs // k, minlength=ngroups)


def _bucket_codes(bucket: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniq = pd.factorize(bucket, sort=True)
    return codes.astype(np.int64), len(uniq)


def _busy(iv: pd.DataFrame, cpsp: np.ndarray, ivs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: busy microseconds (B0 / CPSP) and the busy fraction of the interval."""
    b0 = iv["B0"].to_numpy(dtype=np.float64) if "B0" in iv.columns else np.full(len(iv), np.nan)
    with np.errstate(all="ignore"):
        busy_us = np.where(cpsp > 0, b0 / cpsp, np.nan)
        bf = np.where(ivs > 0, busy_us / (1e6 * ivs), np.nan)
    return busy_us, bf


def aggregate(iv: pd.DataFrame, level: str, counters: Sequence[str],
              hint_counters: Sequence[str] = (), by_cols: Sequence[str] = ()) -> pd.DataFrame:
    """Sum counter deltas per node (and bucket) of ``level``; ``by_cols``: more columns of ``iv`` to group by
    (after the node's: e.g. the hour of a profile, so every hour's rows are one pass), kept in the result.

    Returns
    -------
    DataFrame
        Node key columns, ``interval_start``, ``interval_end``, ``generation``,
        ``formula_set``, ``n_cpus``, ``CPSP``, ``INTERVAL``, summed counters and
        ``qbits`` (OR of the rows' quality bits; bit 64 = partial sets); for
        ``hint_counters`` also ``_h_<counter>``: sums over rows without lost data.
    """
    keys, per_interval = LEVEL_KEYS[level]
    keys = list(keys) + [c for c in by_cols if c not in keys]
    counters = list(counters)
    base = keys + ["generation", "formula_set"]
    if level == "cpu":
        out = iv[base + ["interval_start", "interval_end", "qbits"] + counters].copy()
        out["n_cpus"] = 1
        out["CPSP"] = iv["cpu_speed"].to_numpy(dtype=np.float64)
        out["INTERVAL"] = iv["interval_s"].to_numpy(dtype=np.float64)
        out["left_out"] = ((iv["qbits"].to_numpy(dtype=np.int64) & LEFT_OUT_BIT) != 0).astype(np.int64)
        return out.reset_index(drop=True)
    if not len(iv):
        return pd.DataFrame(columns=base + ["interval_start", "interval_end", "n_cpus", "CPSP", "INTERVAL",
                                            "qbits"] + counters + ["_h_" + c for c in hint_counters] + ["left_out"])
    rows = _row_arrays(iv)      # what every level computes alike, once per frame
    node = rows.get(("node", tuple(base)), lambda: _node_codes(iv, base))
    cec_level = level in ("cec", "cec_interval")
    bcol = "cec_bucket" if cec_level else "bucket"
    bucket = iv[bcol].to_numpy(dtype="datetime64[ns]").view(np.int64)
    blen = iv[bcol + "_s"].to_numpy(dtype=np.float64)
    # the buckets numbered in time order (their codes count the distinct buckets of a group, _nb)
    b_codes, n_buckets = rows.get(("bucket", bcol), lambda: _bucket_codes(bucket))
    # one integer group id per row, groups numbered in the order of groupby([node, bucket], sort=True)
    if per_interval:
        gid = np.unique(node * np.int64(n_buckets) + b_codes, return_inverse=True)[1].ravel()
    else:       # the node codes are the groups' numbers already (0 .. k-1, each used: _node_codes' ranks)
        gid = node.astype(np.intp, copy=False)
    by = gid
    ngroups = int(gid.max()) + 1
    cpsp = iv["cpu_speed"].to_numpy(dtype=np.float64)
    ivs = iv["interval_s"].to_numpy(dtype=np.float64)
    busy_us, bf = rows.get("busy", lambda: _busy(iv, cpsp, ivs))
    cpu_uid = rows.get("cpu_uid", lambda: _node_codes(iv, ["cec", "system", "cpu"]))
    extra = {"_busy_us": busy_us}
    hcols, same = [], []
    if hint_counters:
        lost = rows.get("lost", lambda: (iv["qbits"].to_numpy(dtype=np.int64) & 1) != 0)
        any_lost = rows.get("any_lost", lambda: bool(lost.any()))
        for c in hint_counters:
            if not any_lost and c in counters:      # no row lost data: the hint sums are the counter sums
                same.append(c)
            else:
                extra["_h_" + c] = rows.get(("hint", c), lambda c=c: np.where(lost, np.nan,
                                                                              iv[c].to_numpy(dtype=np.float64)))
            hcols.append("_h_" + c)
    extra["_bf"] = bf
    # the columns as they are (not a block copied out of them): the interval times and lengths are the frame's own
    # arrays, the speeds and row numbers one array for both bucket columns (two 17 MB copies kept on the month)
    aux = rows.get(("aux", bcol), lambda: pd.DataFrame({
        "_cpsp_max": rows.get("cpsp", lambda: cpsp), "_ivs": ivs, "_blen": blen,
        "_start": iv["interval_start"].to_numpy(), "_end": iv["interval_end"].to_numpy(),
        "_row": rows.get("row", lambda: np.arange(len(iv)))}, copy=False))
    # the groups' other aggregates first: their groupby's working memory is not added to the sums' below
    ga = aux.groupby(gid, sort=True)
    agg = ga.agg(_cpsp_max=("_cpsp_max", "max"), _ivs=("_ivs", "median"), _blen=("_blen", "max"),
                 _start=("_start", "min"), _end=("_end", "max"), _row=("_row", "first"))
    agg["_n"] = _nunique(gid, cpu_uid, ngroups)
    agg["_nb"] = _nunique(gid, b_codes, ngroups)
    # the frames of the per-row extras are the same for every level of this frame: built once (no copies per level)
    extra_frame = rows.get(("extra", tuple(k for k in extra if k.startswith("_h_"))),
                           lambda: pd.DataFrame(extra, copy=False))     # the kept arrays themselves, no copy
    esums = extra_frame.groupby(gid, sort=True).sum(min_count=1)
    # sums per column (each column on its own, as one frame would), the counters a block of columns at a time (a
    # month's 368,640 rows x 69 counters are 200 MB, a copy of all of them at once would be the export's peak), each
    # block's sums put in place in one array of the level's values (its interval level: 46,080 groups x 80 columns,
    # 30 MB; the blocks concatenated and consolidated were three such copies at once)
    first = counters + hcols
    if all(iv[c].dtype == np.float64 for c in counters):
        sums = np.empty((len(first), ngroups))        # a column per row: the layout of a frame's block
        grouped = iv.groupby(gid, sort=True)          # one grouping for every block (the ids factorized once)
        for i in range(0, len(counters), _SUM_COLS):
            cols = counters[i:i + _SUM_COLS]
            sums[i:i + len(cols)] = grouped[cols].sum(min_count=1).to_numpy().T
        for j, h in enumerate(hcols, start=len(counters)):
            sums[j] = sums[counters.index(h[3:])] if h[3:] in same else esums[h].to_numpy(dtype=np.float64)
        vals = pd.DataFrame(sums.T, columns=first, copy=False)    # the frame's one block, no copy
    else:                                 # counters of other types: summed as they come
        sums = pd.concat([*(iv[counters[i:i + _SUM_COLS]].groupby(gid, sort=True).sum(min_count=1)
                            for i in range(0, len(counters), _SUM_COLS)), esums], axis=1)
        if same:
            sums = pd.concat([sums, sums[same].set_axis(["_h_" + c for c in same], axis=1)], axis=1)
        vals = sums[first].reset_index(drop=True)
    del sums
    out = iv.iloc[agg["_row"].to_numpy(), [iv.columns.get_loc(c) for c in base]].reset_index(drop=True)
    if per_interval and level == "cec_interval":
        endb = pd.to_datetime(bucket[agg["_row"].to_numpy()].astype("datetime64[ns]"))
        out["interval_end"] = endb
        out["interval_start"] = endb - pd.to_timedelta(agg["_blen"].to_numpy(), unit="s")
    else:
        out["interval_start"] = agg["_start"].to_numpy()
        out["interval_end"] = agg["_end"].to_numpy()
    out["n_cpus"] = agg["_n"].to_numpy()
    sb = esums["_busy_us"].to_numpy(dtype=np.float64)
    sf = esums["_bf"].to_numpy(dtype=np.float64)
    sb0 = vals["B0"].to_numpy(dtype=np.float64) if "B0" in counters else np.full(len(vals), np.nan)
    blen = agg["_blen"].to_numpy(dtype=np.float64)
    blen = np.where(np.isfinite(blen), blen, agg["_ivs"].to_numpy(dtype=np.float64))
    with np.errstate(all="ignore"):
        out["CPSP"] = np.where(sb > 0, sb0 / sb, agg["_cpsp_max"].to_numpy())
        if per_interval and not cec_level:
            # one system interval: LPARCPU = sum of the per-CPU busy percentages
            out["INTERVAL"] = np.where(sf > 0, sb / (1e6 * sf), agg["_ivs"].to_numpy())
        else:
            # busy time over the time covered: CEC buckets hold several short intervals; a whole window
            # covers n buckets -> LPARCPU = sum(B0/CPSP) / (n_buckets * bucket length)
            nb = agg["_nb"].to_numpy(dtype=np.float64) if not per_interval else np.ones(len(agg))
            out["INTERVAL"] = nb * blen
    out = pd.concat([out, vals], axis=1)
    del vals
    qb = iv["qbits"].to_numpy(dtype=np.int64)
    q = _qbits_or(qb, by)
    q = np.zeros(len(out), dtype=np.int64) if q is None else q.astype(np.int64)
    gone = (qb & LEFT_OUT_BIT) != 0           # implausible rows left out (plausibility.py): counters all NaN
    size = np.bincount(gid, weights=~gone, minlength=ngroups).astype(np.int64)
    for letter in ("P", "E"):
        cols = [c for c in counters if c[0] == letter]
        if cols:
            cnt = np.bincount(gid, weights=iv[cols[0]].notna().to_numpy(), minlength=ngroups).astype(np.int64)
            q |= np.where((cnt > 0) & (cnt < size), 64, 0)
    out["qbits"] = q
    out["left_out"] = np.bincount(gid, weights=gone, minlength=ngroups).astype(np.int64)
    return out
