"""The views analysts ask for, computed the one way every level is: counter deltas summed, then the formulas.

* :func:`profile`: hour-of-day, day-of-week or hour x day-of-week profiles of a level's nodes -- the counters of
  every interval whose midpoint falls in an hour (of any day in the window) summed, then the metrics: the CPI of
  08:00 is the CPI of all the 08:00-09:00 work, never a mean of per-interval CPIs.  LPARCPU is the mean busy of
  that hour (busy time over the hour's time).
* :func:`pools`: one row per CEC and processor type (all GCP, all zIIP, all IFL, all ICF of every LPAR with
  counters) from the sums of all their CPUs; z/VM's general-purpose ``CP`` is the same pool as z/OS's ``GCP``.
* :func:`peaks`: the top N intervals of a level by one metric, with the hour they fall in.
* :func:`ranking`: the children of a CEC (its LPARs) or of an LPAR (its classes) sorted by a metric, with their
  share of the parent's busy.

Hours and weekdays are those of the interval midpoint (as the shift filter uses) in the zone ``tz``: ``utc``,
``local`` (each system's own offset at that time, from its records: :mod:`app.engine.timezone`) or an IANA name;
a daylight-saving day has its 23 or 25 hours.  Pandas/numpy; no Qt.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.engine.aggregate import selection_rows, share_rows
from app.engine.metrics import level_metrics
from app.engine.shift import ShiftFilter

__all__ = ["profile", "pools", "pool_levels", "peaks", "ranking", "PROFILES", "WEEKDAYS", "POOL_OF"]

PROFILES = ("hour", "weekday", "hour-weekday")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# the processor type of a class, for CEC pools: z/VM calls the general-purpose CPs "CP", z/OS "GCP"
POOL_OF = {"CP": "GCP"}
_WINDOW_LEVEL = {"cec": "cec", "lpar": "lpar", "class": "class"}
_IDENT = ["cec", "lpar", "system", "os", "class"]
_KEY = "_profile_bucket"     # the hour / weekday / weekday x 24 + hour of a row, grouped by in one pass


def _rows(ws, start, end, nodes, shift: ShiftFilter | None) -> pd.DataFrame:
    return selection_rows(ws, start, end, nodes, shift)


def _midpoints(rows: pd.DataFrame, ws=None, tz: str = "utc") -> pd.DatetimeIndex:
    """The interval midpoints as wall-clock times in ``tz`` (UTC without a workspace)."""
    a = rows["interval_start"].to_numpy(dtype="datetime64[ns]")
    b = rows["interval_end"].to_numpy(dtype="datetime64[ns]")
    mid = a + (b - a) // 2
    if ws is not None and tz != "utc" and len(rows):
        off = ws.zones.midpoint_offsets(tz, rows)
        mid = mid + (np.asarray(off, dtype=np.float64) * 1e9).astype(np.int64).astype("timedelta64[ns]")
    return pd.DatetimeIndex(mid)


def profile(ws, by: str = "hour", level: str = "lpar", start=None, end=None, nodes=None,
            shift: ShiftFilter | None = None, tz: str = "utc") -> pd.DataFrame:
    """Metrics per node of ``level`` (cec, lpar or class) and hour of day (in ``tz``) (``by="hour"``, column ``hour`` 0..23),
    day of week (``"weekday"``, column ``weekday`` Mon..Sun) or both (``"hour-weekday"``).  Only hours (days)
    with intervals give rows.  ``interval_start``/``interval_end`` are the first and last interval of the
    bucket; ``n_intervals`` counts the node's summed intervals (one per bucket step, whatever its CPUs)."""
    if by not in PROFILES:
        raise ValueError(f"by must be one of {', '.join(PROFILES)}; got {by!r}")
    if level not in _WINDOW_LEVEL:
        raise ValueError(f"level must be cec, lpar or class; got {level!r}")
    rows = _rows(ws, start, end, nodes, shift)
    cols = ["weekday"] * (by != "hour") + ["hour"] * (by != "weekday")
    if not len(rows):
        base = level_metrics(rows, ws.formula_sets, ws.counters, _WINDOW_LEVEL[level])
        return base.assign(**{c: pd.Series(dtype=object) for c in cols})
    mid = _midpoints(rows, ws, tz)
    hour = mid.hour.to_numpy()
    day = mid.day_of_week.to_numpy()
    key = hour if by == "hour" else day if by == "weekday" else day * 24 + hour
    # every bucket in one pass: the bucket is one more grouping column, so each (node, bucket) group sums the
    # rows the bucket's own aggregation would (LPARCPU: the bucket's busy over the bucket's time)
    keyed = rows.copy(deep=False)
    keyed[_KEY] = key.astype(np.int64)
    out = level_metrics(keyed, ws.formula_sets, ws.counters, _WINDOW_LEVEL[level], by_cols=(_KEY,))
    out = out.drop(columns=["summary"], errors="ignore")
    k = out.pop(_KEY).to_numpy(dtype=np.int64)
    if by != "weekday":
        out.insert(0, "hour", k % 24 if by == "hour-weekday" else k)
    if by != "hour":
        out.insert(0, "weekday", np.array(WEEKDAYS, dtype=object)[k // 24 if by == "hour-weekday" else k])
    ident = [c for c in _IDENT if c in out.columns]
    order = {d: i for i, d in enumerate(WEEKDAYS)}
    sort = out.assign(_d=out["weekday"].map(order) if "weekday" in out.columns else 0)
    sort = sort.sort_values(ident + ["_d"] + (["hour"] if "hour" in out.columns else []), kind="stable")
    return sort.drop(columns="_d").reset_index(drop=True)[[*cols, *[c for c in out.columns if c not in cols]]]


def pools(ws, start=None, end=None, nodes=None, shift: ShiftFilter | None = None,
          per_interval: bool = False) -> pd.DataFrame:
    """One row per CEC and processor type over the window (``per_interval``: per CEC, type and interval) from the
    summed counters of every CPU of that type in every LPAR with counters.  Columns as a class row, with ``lpar``
    and ``system`` set to ``(pool)``, ``class`` the type and ``n_lpars`` the LPARs in the pool."""
    return pool_levels(ws, ("class_interval" if per_interval else "class",), start, end, nodes, shift)[0]


def pool_levels(ws, levels: tuple[str, ...], start=None, end=None, nodes=None,
                shift: ShiftFilter | None = None) -> list[pd.DataFrame]:
    """:func:`pools` of several levels (``class_interval``, ``class``) from one frame of pool rows, so the levels
    share its per-row arrays (``aggregate._row_arrays``): a pool's interval rows and its window row in one go."""
    rows = _rows(ws, start, end, nodes, shift)
    if not len(rows):
        return [level_metrics(rows, ws.formula_sets, ws.counters, lv).assign(n_lpars=pd.Series(dtype=int))
                for lv in levels]
    cls = _pool_classes(rows["class"])
    lpars = _pool_lpars(rows, cls)
    # one CPU number per LPAR and CPU (CPU 0 of ZOSA and CPU 0 of ZOSB are two CPUs of the pool); any distinct
    # number per LPAR gives the same CPU numbers (in order of first appearance): the category codes when there
    col = rows["lpar"]
    lp = (col.cat.codes.to_numpy(np.int64) if isinstance(col.dtype, pd.CategoricalDtype)
          else pd.factorize(col.to_numpy())[0].astype(np.int64))
    c = rows["cpu"].to_numpy(dtype=np.int64)
    cpu = pd.factorize(lp * (int(c.max()) + 1) + c)[0]
    # the rows as pool rows, without copying the counters (issue 26: a selected pool's rows in the window)
    one = np.zeros(len(rows), np.int8)
    pooled = rows.copy(deep=False)
    for col, text in (("lpar", "(pool)"), ("system", "(pool)"), ("os", "")):
        pooled[col] = pd.Categorical.from_codes(one, categories=[text])
    pooled["cpu"] = cpu
    pooled["class"] = cls
    share_rows(pooled, rows)      # the buckets, busy and aux arrays of the rows: the tree's levels' (if computed)
    out = []
    for lv in levels:
        m = level_metrics(pooled, ws.formula_sets, ws.counters, lv).drop(columns=["summary"], errors="ignore")
        m = m.merge(lpars, on=["cec", "class"], how="left")
        out.append(m.sort_values(["cec", "class"] + (["interval_end"] if lv == "class_interval" else []),
                                 ignore_index=True, kind="stable"))
    return out


def _pool_lpars(rows: pd.DataFrame, cls: pd.Categorical) -> pd.DataFrame:
    """``n_lpars`` per CEC and pool type (distinct LPARs; rows without a CEC or type left out), from the category
    codes where the columns are categorical (no text per row)."""
    cec, lpar = rows["cec"], rows["lpar"]
    if not (isinstance(cec.dtype, pd.CategoricalDtype) and isinstance(lpar.dtype, pd.CategoricalDtype)):
        return (pd.DataFrame({"cec": cec.to_numpy(), "class": cls, "lpar": lpar.to_numpy()})
                .groupby(["cec", "class"], observed=True)["lpar"].nunique().rename("n_lpars").reset_index()
                .astype({"cec": object, "class": object}))
    cc, tc, lc = (cec.cat.codes.to_numpy(np.int64), np.asarray(cls.codes, np.int64),
                  lpar.cat.codes.to_numpy(np.int64))
    keep = (cc >= 0) & (tc >= 0)
    nt, nl = len(cls.categories), len(lpar.cat.categories) + 1
    pair = cc[keep] * nt + tc[keep]
    groups, inv = np.unique(pair, return_inverse=True)        # (cec, type) in the codes' order: groupby's
    lp = lc[keep]
    seen = np.unique(inv.ravel()[lp >= 0] * nl + lp[lp >= 0])   # distinct (group, LPAR), NaN LPARs not counted
    n = np.bincount(seen // nl, minlength=len(groups)).astype(np.int64)
    return pd.DataFrame({"cec": cec.cat.categories.astype(object).to_numpy()[groups // nt],
                         "class": np.asarray(cls.categories, dtype=object)[groups % nt], "n_lpars": n}
                        ).astype({"cec": object, "class": object})


def _pool_classes(col: pd.Series) -> pd.Categorical:
    """The pool type of every row's class (``POOL_OF``), mapped once per category."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        mapped = [POOL_OF.get(str(c), str(c)) for c in col.cat.categories]
        cats = list(dict.fromkeys(mapped))
        lut = np.array([cats.index(m) for m in mapped] + [-1], dtype=np.int64)
        return pd.Categorical.from_codes(lut[col.cat.codes.to_numpy()], categories=cats)
    return pd.Categorical(col.astype(str).map(lambda c: POOL_OF.get(c, c)))


def peaks(ws, metric: str, level: str = "lpar", top: int = 10, start=None, end=None, nodes=None,
          shift: ShiftFilter | None = None, tz: str = "utc") -> pd.DataFrame:
    """The ``top`` intervals of ``level`` (cec, lpar, class or cpu) with the largest ``metric``, largest first, with
    ``rank`` and ``hour`` (the hour of the interval's midpoint in ``tz``)."""
    by = {"cec": "cec_interval", "lpar": "lpar_interval", "class": "class_interval", "cpu": "cpu"}.get(level)
    if by is None:
        raise ValueError(f"level must be cec, lpar, class or cpu; got {level!r}")
    from app.engine.shift import shifted_metrics

    m = shifted_metrics(ws, by=by, start=start, end=end, nodes=nodes, shift=shift)
    if metric not in m.columns:
        raise KeyError(metric)
    v = pd.to_numeric(m[metric], errors="coerce")
    m = m.loc[v.notna()].assign(_v=v[v.notna()])
    m = m.sort_values(["_v", "interval_end"], ascending=[False, True], kind="stable").head(max(int(top), 0))
    m = m.drop(columns="_v").reset_index(drop=True)
    m.insert(0, "rank", np.arange(1, len(m) + 1))
    m.insert(1, "hour", _midpoints(m, ws, tz).hour.to_numpy() if len(m) else np.array([], dtype=int))
    return m


def ranking(ws, parent: tuple, metric: str, start=None, end=None, shift: ShiftFilter | None = None,
            descending: bool = True) -> pd.DataFrame:
    """The children of ``parent`` (a CEC or LPAR NodeKey) over the window sorted by ``metric`` (largest first),
    with ``busy_share_pct``: the child's share of the parent's busy CPU time (sum over its intervals and CPUs of
    cycles / CPU speed, the time LPARCPU counts), so the shares of all children add up to 100."""
    from app.engine.shift import shifted_metrics

    kind = parent[0]
    if kind not in ("cec", "lpar"):
        raise ValueError("a ranking is of a CEC's LPARs or an LPAR's classes")
    child = "lpar" if kind == "cec" else "class"
    m = shifted_metrics(ws, by=child, start=start, end=end, nodes=[tuple(parent)], shift=shift)
    if metric not in m.columns:
        raise KeyError(metric)
    rows = _rows(ws, start, end, [tuple(parent)], shift)
    keys = ["cec", "lpar", "system"] + (["class"] if child == "class" else [])
    busy = rows["B0"].to_numpy(dtype=np.float64) / rows["cpu_speed"].to_numpy(dtype=np.float64)
    per = (rows[keys].assign(_busy=busy).astype({k: str for k in keys})
           .groupby(keys, sort=False)["_busy"].sum())
    total = float(np.nansum(per.to_numpy()))
    share = (per / total * 100.0).rename("busy_share_pct").reset_index() if total > 0 else \
        per.rename("busy_share_pct").reset_index().assign(busy_share_pct=np.nan)
    m = m.astype({k: str for k in keys}).merge(share, on=keys, how="left")
    v = pd.to_numeric(m[metric], errors="coerce")
    m = m.assign(_v=v).sort_values("_v", ascending=not descending, na_position="last", kind="stable")
    return m.drop(columns="_v").reset_index(drop=True)
