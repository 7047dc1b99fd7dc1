"""Multithreading (SMT) reports per core type and per core, laid out like IBM's SMTMET.

Two shapes (see :func:`smt_report`):

* ``by="type"`` (SMTMET "by core type"): one row per LPAR, core type and interval,
  then one ``mean`` row per (cec, lpar, system, core type) over the window.
  Columns :data:`TYPE_COLUMNS`.
* ``by="core"`` (SMTMET "by core"): one row per core and interval.
  Columns :data:`CORE_COLUMNS`.

Units: productivity, capacity factor, maximum capacity factor, MT utilization and
core busy in percent (CF 113.0 = 1.13); thread density as a number 1.0 .. 2.0.
A value that is not known is NaN, never 0.

Sources (``source`` column)
---------------------------
* ``reported`` -- every value of the row is a value z/VM reports in D0R2
  (``ReadResult.mt``), shown as reported.
* ``derived`` -- every value is computed by NestScope:

  - thread density ``TD = (M448 + 2*M449) / (M448 + M449)`` from the
    MT-diagnostic counter deltas of the core (thread-0 rows only: the readers
    keep the M counters on thread 0 of each core);
  - core busy ``~ Core_Active_Pct = (M448 + M449) / (CPSP*1e6*INTERVAL) * 100``.
    **UNCONFIRMED approximation**: M448/M449 count cycles with one / two threads
    *active*; a core dispatched with all threads waiting is not counted, so this
    can be lower than the core-busy time the hypervisor reports;
  - productivity ``= CF / mCF`` when both factors are known;
  - MT utilization ``= core busy x productivity``.

  CF, mCF and productivity cannot be computed from counters (IBM takes them from
  a firmware service); for z/OS they are in SMF 70, which NestScope does not
  read, so z/OS rows carry NaN there (never 0).
* ``reported+derived`` -- some values reported, the gaps filled by derivation.

Reported values win over derived ones, value by value.

Aggregation rule (per core type and for the mean rows)
------------------------------------------------------
Counter-derived values are ratios of sums: the deltas of the cores (and, for the
mean row, of the intervals) are summed first, then TD and core busy are computed
from the sums.  Reported per-core values are averaged weighted by each core's
busy time (core busy % x seconds): productivity, CF, mCF and per-core thread
density.  The per-type thread density z/VM reports (``SYTPRP_CAL_AVGTDBYTYPE``)
is used for type rows when present (busy-time weighted over intervals for the
mean row); per-core rows show the per-core value (``SYTPRP_CAL_AVGTDBYCORE``).
Per core, z/VM repeats the per-core values on every thread's D0R2: the first
non-missing value (lowest CPU address) is taken.  D0R2 times are matched to the
nearest counter interval end of the same system (within half an interval).
Intervals flagged ``mt-lost-data`` give no derived values.
MT utilization of a type is the average over its cores
(sum of core busy x productivity / core-seconds) = average core busy x
productivity of the type.  ``cores`` counts distinct cores; ``seconds`` is the
interval length (the sum of the interval lengths for the mean row).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from app.engine.aggregate import NodeKey, window_mask

__all__ = ["smt_report", "core_samples", "TYPE_COLUMNS", "CORE_COLUMNS", "SMT_LEVELS"]

SMT_LEVELS = ("type", "core")
TYPE_COLUMNS = ["cec", "lpar", "system", "interval_end", "core_type", "seconds", "cores", "productivity",
                "capacity_factor", "max_capacity_factor", "mt_utilization", "thread_density", "source", "mean"]
CORE_COLUMNS = ["cec", "lpar", "system", "interval_end", "core_id", "core_type", "seconds", "productivity",
                "mt_utilization", "thread_density", "core_busy", "source"]
_MT_LOST = 2          # deltas.QUALITY_BITS["mt-lost-data"]
# reported column of ReadResult.mt -> internal name
_REP = {"core_busy_pct": "r_busy", "thread_density": "r_td", "productivity": "r_prod", "mt_util_pct": "r_mtu",
        "capacity_factor": "r_cf", "max_capacity_factor": "r_mcf", "thread_density_type": "r_tdt"}
_KEY = ["cec", "lpar", "system", "interval_end", "core_id"]


def _empty(cols: list[str]) -> pd.DataFrame:
    out = pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    out["interval_end"] = pd.Series(dtype="datetime64[ns]")
    for c in cols:
        if c in ("seconds", "productivity", "capacity_factor", "max_capacity_factor", "mt_utilization",
                 "thread_density", "core_busy"):
            out[c] = pd.Series(dtype="float64")
    if "cores" in cols:
        out["cores"] = pd.Series(dtype="int64")
    if "core_id" in cols:
        out["core_id"] = pd.Series(dtype="int64")
    if "mean" in cols:
        out["mean"] = pd.Series(dtype="bool")
    return out[cols]


# ------------------------------------------------------------------ core-interval samples
def _counter_rows(iv: pd.DataFrame) -> pd.DataFrame:
    """Thread-0 interval rows with MT-diagnostic deltas -> one row per core and interval."""
    if iv is None or not len(iv) or "M448" not in iv.columns or "M449" not in iv.columns:
        return pd.DataFrame(columns=_KEY + ["core_type", "seconds", "M448", "M449", "cpsp", "cpu"])
    m448 = iv["M448"].to_numpy(dtype=np.float64)
    m449 = iv["M449"].to_numpy(dtype=np.float64)
    ok = np.isfinite(m448) & np.isfinite(m449)
    if "qbits" in iv.columns:
        ok &= (iv["qbits"].to_numpy(dtype=np.int64) & _MT_LOST) == 0
    sub = iv.loc[ok, ["cec", "lpar", "system", "interval_end", "core", "cpu", "class", "interval_s", "cpu_speed"]]
    core = sub["core"].to_numpy(dtype=np.int64)
    cpu = sub["cpu"].to_numpy(dtype=np.int64)
    out = pd.DataFrame({
        "cec": sub["cec"].astype(str).to_numpy(), "lpar": sub["lpar"].astype(str).to_numpy(),
        "system": sub["system"].astype(str).to_numpy(),
        "interval_end": sub["interval_end"].to_numpy(dtype="datetime64[ns]"),
        "core_id": np.where(core >= 0, core, cpu),          # core id unknown: the thread-0 CPU address
        "core_type": sub["class"].astype(str).to_numpy(),
        "seconds": sub["interval_s"].to_numpy(dtype=np.float64),
        "M448": m448[ok], "M449": m449[ok],
        "cpsp": sub["cpu_speed"].to_numpy(dtype=np.float64), "cpu": cpu})
    # one row per core: thread 0 (lowest CPU address) if a reader ever kept more threads
    out = out.sort_values(_KEY + ["cpu"], kind="stable").drop_duplicates(_KEY, keep="first")
    return out.reset_index(drop=True)


def _snap(times: np.ndarray, ends: np.ndarray, tol_ns: float) -> np.ndarray:
    """Move each time to the nearest of ``ends`` (sorted) when within ``tol_ns``."""
    if not len(ends) or not len(times):
        return times
    t = times.view(np.int64)
    e = ends.view(np.int64)
    i = np.clip(np.searchsorted(e, t), 1, len(e) - 1) if len(e) > 1 else np.zeros(len(t), dtype=np.int64)
    cand = np.stack([e[np.maximum(i - 1, 0)], e[i]])
    best = cand[np.argmin(np.abs(cand - t), axis=0), np.arange(len(t))]
    return np.where(np.abs(best - t) <= tol_ns, best, t).view("datetime64[ns]")


def _reported_rows(mts: Iterable[pd.DataFrame], iv: pd.DataFrame | None) -> pd.DataFrame:
    """``ReadResult.mt`` frames (per thread) -> one row per core and interval, times snapped to interval ends."""
    frames = [m for m in mts if m is not None and len(m)]
    cols = _KEY + ["core_type", "seconds"] + list(_REP.values()) + ["cpus"]
    if not frames:
        return pd.DataFrame(columns=cols)
    mt = pd.concat(frames, ignore_index=True)
    vals = mt[list(_REP)].to_numpy(dtype=np.float64)
    mt = mt.loc[np.isfinite(vals).any(axis=1)]
    if not len(mt):
        return pd.DataFrame(columns=cols)
    core = mt["core"].to_numpy(dtype=np.int64)
    cpu = mt["cpu"].to_numpy(dtype=np.int64)
    df = pd.DataFrame({"cec": mt["cec"].astype(str).to_numpy(), "lpar": mt["lpar"].astype(str).to_numpy(),
                       "system": mt["system"].astype(str).to_numpy(),
                       "interval_end": mt["time"].to_numpy(dtype="datetime64[ns]"),
                       "core_id": np.where(core >= 0, core, cpu), "core_type": mt["class"].astype(str).to_numpy(),
                       "cpu": cpu})
    for src, dst in _REP.items():
        df[dst] = mt[src].to_numpy(dtype=np.float64)
    df["seconds"] = np.nan
    # align the D0R2 time with the interval ends of the counter data of the same system
    if iv is not None and len(iv):
        ends = iv[["interval_end", "interval_s"]]
        ecec = iv["cec"].astype(str).to_numpy()
        esys = iv["system"].astype(str).to_numpy()
        for (cec, system), idx in df.groupby(["cec", "system"], sort=False).groups.items():
            e = ends[(ecec == cec) & (esys == system)]
            if not len(e):
                continue
            u = np.unique(e["interval_end"].to_numpy(dtype="datetime64[ns]"))
            tol = float(np.nanmedian(e["interval_s"].to_numpy(dtype=np.float64))) * 0.5e9
            snapped = _snap(df.loc[idx, "interval_end"].to_numpy(dtype="datetime64[ns]"), u, tol)
            df.loc[idx, "interval_end"] = snapped
            secs = e.groupby("interval_end")["interval_s"].median()
            df.loc[idx, "seconds"] = pd.Series(snapped).map(secs).to_numpy(dtype=np.float64)
    # reported rows without counter intervals: the spacing of the D0R2 samples
    miss = ~np.isfinite(df["seconds"].to_numpy(dtype=np.float64))
    if miss.any():
        for _k, idx in df.loc[miss].groupby(["cec", "system"], sort=False).groups.items():
            u = np.unique(df.loc[idx, "interval_end"].to_numpy(dtype="datetime64[ns]")).view(np.int64)
            step = float(np.median(np.diff(u))) / 1e9 if len(u) > 1 else np.nan
            df.loc[idx, "seconds"] = step
    g = df.sort_values(_KEY + ["cpu"], kind="stable").groupby(_KEY, sort=False)
    first = g.first()                      # per-core values are repeated on every thread: first non-NaN
    first["cpus"] = g["cpu"].agg(tuple)
    return first.reset_index()[cols]


def core_samples(iv: pd.DataFrame | None, mts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One row per core and interval with the counter deltas and the reported values side by side.

    Columns: cec, lpar, system, interval_end, core_id, core_type, seconds, cpus (tuple of the CPU
    addresses of the core), M448, M449, cpsp (NaN without counters), r_busy, r_td, r_prod, r_mtu,
    r_cf, r_mcf, r_tdt (NaN where not reported).
    """
    c = _counter_rows(iv)
    r = _reported_rows(mts, iv)
    if len(c):
        threads = (iv[["cec", "system", "cpu"]]
                   .assign(core_id=np.where(iv["core"].to_numpy() >= 0, iv["core"].to_numpy(),
                                            iv["cpu"].to_numpy()))
                   .astype({"cec": str, "system": str})
                   .groupby(["cec", "system", "core_id"], sort=False)["cpu"]
                   .agg(lambda s: tuple(sorted(set(int(x) for x in s)))))
        c["cpus"] = [threads.get((a, b, int(k)), (int(cp),))
                     for a, b, k, cp in zip(c["cec"], c["system"], c["core_id"], c["cpu"])]
    c = c.drop(columns=["cpu"], errors="ignore")
    if not len(c) and not len(r):
        return pd.DataFrame(columns=_KEY + ["core_type", "seconds", "cpus", "M448", "M449", "cpsp"]
                            + list(_REP.values()))
    if not len(r):
        out = c
        for v in _REP.values():
            out[v] = np.nan
    elif not len(c):
        out = r
        for v in ("M448", "M449", "cpsp"):
            out[v] = np.nan
    else:
        out = c.merge(r, on=_KEY, how="outer", suffixes=("", "_r"))
        for col in ("core_type", "seconds", "cpus"):
            rep = out[col + "_r"]
            out[col] = rep.where(rep.notna(), out[col]) if col == "core_type" else out[col].where(
                out[col].notna(), rep)
            out = out.drop(columns=[col + "_r"])
    out["core_id"] = out["core_id"].astype(np.int64)
    out["interval_end"] = out["interval_end"].astype("datetime64[ns]")
    for v in ["seconds", "M448", "M449", "cpsp", *_REP.values()]:
        out[v] = out[v].astype(np.float64)
    return out.sort_values(["cec", "lpar", "system", "core_type", "interval_end", "core_id"],
                           kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------ selection
def _select(cs: pd.DataFrame, start=None, end=None, nodes: Iterable[NodeKey] | None = None) -> pd.DataFrame:
    m = window_mask(cs["interval_end"], start, end)
    if nodes is not None:
        nm = np.zeros(len(cs), dtype=bool)
        cec, lpar, cls = (cs[c].astype(str).to_numpy() for c in ("cec", "lpar", "core_type"))
        cpus = cs["cpus"].tolist()
        for key in nodes:
            vals = list(key[1:])
            k = np.ones(len(cs), dtype=bool)
            if key[0] == "pool":            # a CEC pool: its type's cores of every LPAR (app.engine.node_rows)
                from app.engine.node_rows import pool_of
                nm |= (cec == str(vals[0])) & (pool_of(cs["core_type"]) == str(vals[1]))
                continue
            if key[0] == "core":
                k &= cs["core_id"].to_numpy() == int(vals[3])
                vals = vals[:3]
            for arr, v in zip((cec, lpar, cls), vals[:3]):
                k &= arr == str(v)
            if len(vals) >= 4:
                cpu = int(vals[3])
                k &= np.array([isinstance(t, tuple) and cpu in t for t in cpus], dtype=bool)
            nm |= k
        m &= nm
    return cs.loc[m]


# ------------------------------------------------------------------ values
def _wmean(v: np.ndarray, w: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """Weighted mean of ``v`` per group over the rows where both are finite; NaN when no weight."""
    ok = np.isfinite(v) & np.isfinite(w)
    num = np.bincount(groups[ok], weights=v[ok] * w[ok], minlength=n)
    den = np.bincount(groups[ok], weights=w[ok], minlength=n)
    with np.errstate(all="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _sum(v: np.ndarray, groups: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(v)
    return (np.bincount(groups[ok], weights=v[ok], minlength=n),
            np.bincount(groups[ok], minlength=n) > 0)


def _values(cs: pd.DataFrame, groups: np.ndarray, n: int, per_core: bool = False) -> dict[str, np.ndarray]:
    """SMT values per group of core-interval rows (the rule of the module docstring).

    ``per_core``: the groups are single cores -- the per-core reported thread density
    (``SYTPRP_CAL_AVGTDBYCORE``) goes before the per-type one.

    Returns arrays: core_busy, thread_density, productivity, capacity_factor, max_capacity_factor,
    mt_utilization and for each a ``<name>_rep`` bool array (True = from reported values).
    """
    f = {c: cs[c].to_numpy(dtype=np.float64) for c in ["seconds", "M448", "M449", "cpsp", *_REP.values()]}
    # weights: interval seconds; a reported-only row of unknown length (a single D0R2 sample) weighs 1 s
    sec = np.where(np.isfinite(f["seconds"]), f["seconds"], 1.0)
    with np.errstate(all="ignore"):
        act = f["M448"] + f["M449"]                                     # cycles with >= 1 thread active
        d_busy_s = np.where(f["cpsp"] > 0, act / (f["cpsp"] * 1e6), np.nan)   # core-active seconds
        r_busy_s = f["r_busy"] / 100.0 * sec
    busy_s = np.where(np.isfinite(r_busy_s), r_busy_s, d_busy_s)        # per row: reported first
    out: dict[str, np.ndarray] = {}

    # core busy: busy seconds / core-seconds of the rows that have a busy value
    bs, has_b = _sum(busy_s, groups, n)
    cover = np.bincount(groups[np.isfinite(busy_s) & np.isfinite(sec)],
                        weights=sec[np.isfinite(busy_s) & np.isfinite(sec)], minlength=n)
    with np.errstate(all="ignore"):
        out["core_busy"] = np.where(has_b & (cover > 0), bs / cover * 100, np.nan)
    _rb, has_rb = _sum(r_busy_s, groups, n)
    out["core_busy_rep"] = has_rb

    # thread density: reported per type > reported per core (busy weighted) > counters (ratio of sums);
    # for single cores the per-core value goes first
    tdt = _wmean(f["r_tdt"], busy_s, groups, n)
    tdc = _wmean(f["r_td"], busy_s, groups, n)
    if per_core:
        tdt, tdc = tdc, tdt
    a, has_a = _sum(f["M448"], groups, n)
    b, _ = _sum(f["M449"], groups, n)
    with np.errstate(all="ignore"):
        tdd = np.where(has_a & (a + b > 0), (a + 2 * b) / (a + b), np.nan)
    rep_td = np.where(np.isfinite(tdt), tdt, tdc)
    out["thread_density"] = np.where(np.isfinite(rep_td), rep_td, tdd)
    out["thread_density_rep"] = np.isfinite(rep_td)

    for name, col in (("capacity_factor", "r_cf"), ("max_capacity_factor", "r_mcf")):
        out[name] = _wmean(f[col], busy_s, groups, n)
        out[name + "_rep"] = np.isfinite(out[name])

    rp = _wmean(f["r_prod"], busy_s, groups, n)
    with np.errstate(all="ignore"):
        dp = np.where(out["max_capacity_factor"] > 0,
                      out["capacity_factor"] / out["max_capacity_factor"] * 100, np.nan)
    out["productivity"] = np.where(np.isfinite(rp), rp, dp)
    out["productivity_rep"] = np.isfinite(rp)

    # MT utilization: average over the cores of (core busy x productivity)
    ru = _wmean(f["r_mtu"], sec, groups, n)
    du = out["core_busy"] * out["productivity"] / 100.0
    out["mt_utilization"] = np.where(np.isfinite(ru), ru, du)
    out["mt_utilization_rep"] = np.isfinite(ru)
    return out


def _source(vals: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    n = len(vals[names[0]])
    rep = np.zeros(n, dtype=bool)
    der = np.zeros(n, dtype=bool)
    for c in names:
        fin = np.isfinite(vals[c])
        rep |= fin & vals[c + "_rep"]
        der |= fin & ~vals[c + "_rep"]
    return np.where(rep & der, "reported+derived", np.where(rep, "reported", np.where(der, "derived", "")))


# ------------------------------------------------------------------ reports
def _by_core(cs: pd.DataFrame) -> pd.DataFrame:
    if not len(cs):
        return _empty(CORE_COLUMNS)
    n = len(cs)
    v = _values(cs, np.arange(n), n, per_core=True)
    out = cs[["cec", "lpar", "system", "interval_end", "core_id", "core_type", "seconds"]].copy()
    for c in ("productivity", "mt_utilization", "thread_density", "core_busy"):
        out[c] = v[c]
    out["source"] = _source(v, ["productivity", "mt_utilization", "thread_density", "core_busy"])
    return out[CORE_COLUMNS].reset_index(drop=True)


_TVALS = ["productivity", "capacity_factor", "max_capacity_factor", "mt_utilization", "thread_density"]


def _by_type(cs: pd.DataFrame) -> pd.DataFrame:
    if not len(cs):
        return _empty(TYPE_COLUMNS)
    node = ["cec", "lpar", "system", "core_type"]
    # interval rows
    gi = cs.groupby(node + ["interval_end"], sort=True)
    codes = gi.ngroup().to_numpy()
    n = int(codes.max()) + 1
    v = _values(cs, codes, n)
    rows = gi.agg(seconds=("seconds", "median"), cores=("core_id", "nunique")).reset_index()
    for c in _TVALS:
        rows[c] = v[c]
    rows["source"] = _source(v, _TVALS)
    rows["mean"] = False
    # mean rows: one per node over the window
    gm = cs.groupby(node, sort=True)
    mcodes = gm.ngroup().to_numpy()
    nm = int(mcodes.max()) + 1
    mv = _values(cs, mcodes, nm)
    secs = rows.groupby(node, sort=True)["seconds"].sum(min_count=1)
    means = gm.agg(cores=("core_id", "nunique")).reset_index()
    means["seconds"] = secs.to_numpy(dtype=np.float64)
    means["interval_end"] = pd.NaT
    for c in _TVALS:
        means[c] = mv[c]
    means["source"] = _source(mv, _TVALS)
    means["mean"] = True
    rows["_order"] = 0
    means["_order"] = 1
    both = pd.concat([rows, means], ignore_index=True)
    both["interval_end"] = both["interval_end"].astype("datetime64[ns]")
    out = both.sort_values(node + ["_order", "interval_end"], kind="stable").reset_index(drop=True)
    out["cores"] = out["cores"].astype(np.int64)
    out["mean"] = out["mean"].astype(bool)
    return out[TYPE_COLUMNS].reset_index(drop=True)


def smt_report(iv: pd.DataFrame | None, mts: Iterable[pd.DataFrame], by: str = "type", start=None, end=None,
               nodes: Iterable[NodeKey] | None = None) -> pd.DataFrame:
    """SMT metrics per core type (``by="type"``) or per core (``by="core"``).

    Parameters
    ----------
    iv : DataFrame
        Interval deltas (:attr:`app.engine.Workspace.intervals`); MT-diagnostic counters
        ``M448``/``M449`` on the thread-0 row of each core.
    mts : iterable of DataFrame
        ``ReadResult.mt`` frames (z/VM D0R2 values as reported, per thread).
    by : {"type", "core"}
    start, end : Timestamp or str, optional
        Keep intervals ending in ``(start, end]`` (UTC).
    nodes : list of NodeKey, optional
        Tree nodes to restrict to (``("cec", c)``, ``("lpar", c, l)``, ``("class", c, l, type)``,
        ``("cpu", c, l, type, cpu)`` -- a CPU selects its core).

    Returns
    -------
    DataFrame
        :data:`TYPE_COLUMNS` or :data:`CORE_COLUMNS`; see the module docstring for units,
        sources and the aggregation rule.  Cores without any MT data do not appear.
    """
    if by not in SMT_LEVELS:
        raise ValueError(f"by must be one of {', '.join(SMT_LEVELS)}; got {by!r}")
    cs = _select(core_samples(iv, mts), start, end, nodes)
    return _by_core(cs) if by == "core" else _by_type(cs)
