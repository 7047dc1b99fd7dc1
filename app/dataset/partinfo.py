"""What ``report`` adds to CEC, LPAR and class rows, for ``query`` (issue 24): coverage and partition data.

* Coverage (``coverage_pct``, ``coverage_note``): the children's spans (first interval start, last interval end,
  median interval length of each LPAR of a CEC, CPU of an LPAR or class) by one SQL group-by over the
  intervals table, then the engine's rule (:func:`app.engine.partitions.coverage_of_spans`).
* Partition data (LPAR rows: ``data``, ``partition_cpus``, ``processors``, ``weights``, ``capped``,
  ``partition_busy_sum_pct``, ``partition_busy_per_cpu_pct``; and one row per LPAR known only from the
  partition data, such as a coupling facility): the partitions table (z/VM D0R16 rows), summed up by the
  engine's :func:`app.engine.partitions.partition_summary`.

Both over the window (``--from``/``--to``), ``--where`` and the nodes of the query, as ``report`` over its
window; with ``--every`` per period, as ``report --from <period start> --to <period end>`` (the periods of the
query's own SQL, :func:`app.dataset.query._period_sql`, in ``--tz``'s wall clock).  DuckDB runs these small
statements whatever ``--engine`` computed the metrics.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pandas as pd

from app.dataset import tables

__all__ = ["enrich"]

_KEYS = {"cec": ["cec"], "lpar": ["cec", "lpar", "system"], "class": ["cec", "lpar", "system", "class"]}
_CHILD = {"cec": ["lpar", "system"], "lpar": ["class", "cpu"], "class": ["cpu"]}


def _spans(ds, spec, level: str) -> pd.DataFrame:
    """The children's spans of each node (and, with ``--every``, of each node and period: ``_period``, the key
    of :func:`app.dataset.query._period_sql`, the query's own definition, in ``--tz``'s wall clock)."""
    from app.dataset.query import DuckDBEngine, _filters, _period_sql, query_partitions
    from app.dataset.sql import DUCKDB, local_offsets_sql

    files = ds.parts("intervals", *query_partitions(ds, spec))      # the parts the query read, no others
    if not files:
        return pd.DataFrame()
    cols = _KEYS[level] + _CHILD[level]
    where = _filters(dataclasses.replace(spec, shift=None), DUCKDB)
    period = _period_sql(spec.every, DUCKDB, spec.tz) if spec.every else None
    src = "iv"
    if period and spec.tz == "local":     # the offset in force during each interval, as the query computes it
        src = f"(SELECT iv.*, {local_offsets_sql('iv', DUCKDB).rstrip().rstrip(',')} FROM iv)"
    eng = DuckDBEngine(files)
    try:
        q = ", ".join(DUCKDB.q(c) for c in cols)
        inner = (f"SELECT *{f', {period} AS _period' if period else ''} FROM {src}"
                 + (" WHERE " + " AND ".join(where) if where else ""))
        grp = q + (", _period" if period else "")
        sp = eng.sql(f"SELECT {grp}, MIN(t_start) AS first, MAX(t_end) AS last, median(interval_s) AS step "
                     f"FROM ({inner}) GROUP BY {grp}")
    finally:
        eng.close()
    sp["first"] = pd.to_datetime(sp["first"].astype("int64"), unit="ns")
    sp["last"] = pd.to_datetime(sp["last"].astype("int64"), unit="ns")
    return sp.sort_values(cols + (["_period"] if period else []), ignore_index=True)


def _partitions(ds, spec) -> pd.DataFrame | None:
    import duckdb

    from app.dataset.sql import DUCKDB, WHERE_NUMBER_COLUMNS, WHERE_STRING_COLUMNS, lit_str, parse_where

    from app.dataset.query import query_partitions

    files = ds.parts("partitions", *query_partitions(ds, spec, "partitions"))
    if not files:
        return None

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        lst = "[" + ", ".join(lit_str(f) for f in files) + "]"
        df = con.execute(f"SELECT * FROM {tables.duckdb_source(lst)}").df()
    finally:
        con.close()
    df["time"] = tables.from_ns(tables.ns_of(df["time"]))
    if spec.where or spec.nodes is not None:      # the same LPARs as the query's rows
        conds = []
        if spec.where:
            have = {c: "string" for c in WHERE_STRING_COLUMNS if c in df.columns}
            have.update({c: "number" for c in WHERE_NUMBER_COLUMNS if c in df.columns})
            try:
                conds.append(parse_where(spec.where, DUCKDB, have))
            except ValueError:
                return None      # a condition on columns partition data has not (class names differ): none
        if spec.nodes is not None:
            ors = [f"(cec = {lit_str(n[1])}" + (f" AND lpar = {lit_str(n[2])}" if len(n) > 2 else "") + ")"
                   for n in spec.nodes if len(n) > 1]
            conds.append("(" + (" OR ".join(ors) or "FALSE") + ")")
        con = duckdb.connect()
        try:
            con.register("p", df)
            df = con.execute("SELECT * FROM p WHERE " + " AND ".join(conds)).df()
        finally:
            con.close()
    return df


def enrich(ds, spec, m: pd.DataFrame) -> pd.DataFrame:
    """``m`` (:func:`app.dataset.query.run_query`'s rows) with the coverage and partition columns of
    ``report`` (levels cec, lpar, class; other results are returned as they are).  With ``--every``, each
    period's as ``report --from <period start> --to <period end>`` gives them (:func:`_enrich_periods`)."""
    from app.engine.partitions import coverage_of_spans, enrich as engine_enrich

    if spec.by not in _KEYS:
        return m
    sp = _spans(ds, spec, spec.by)
    parts = _partitions(ds, spec) if spec.by == "lpar" else None
    if spec.every:
        return _enrich_periods(spec, m, sp, parts)
    cov = coverage_of_spans(sp, spec.by) if len(sp) else pd.DataFrame(columns=_KEYS[spec.by] + ["coverage_pct",
                                                                                               "coverage_note"])
    return engine_enrich(SimpleNamespace(partitions=parts, intervals=None), m, spec.by, spec.start, spec.end, cov=cov)


def period_bounds(every: str, starts: pd.Series, tz: str, offset_s: float = 0.0) -> tuple[pd.Series, pd.Series]:
    """The UTC window ``(start, end]`` of each ``--every`` period given by its wall-clock start in ``tz`` (the
    query's ``period`` before it is shown): ``offset_s`` seconds east of UTC for ``--tz local`` (a system's)."""
    import numpy as np

    s = pd.DatetimeIndex(pd.to_datetime(starts))
    step = {"hour": pd.Timedelta(hours=1), "day": pd.Timedelta(days=1), "week": pd.Timedelta(days=7)}.get(every)
    e = s + step if step is not None else s + pd.offsets.MonthBegin(1)
    if tz == "local":
        return (pd.Series(s - pd.Timedelta(seconds=offset_s)), pd.Series(e - pd.Timedelta(seconds=offset_s)))
    if tz not in (None, "utc"):     # the first of a repeated hour, a skipped one moved on (as the shown period)
        def utc(x):
            return x.tz_localize(tz, ambiguous=np.ones(len(x), dtype=bool), nonexistent="shift_forward") \
                .tz_convert("UTC").tz_localize(None)
        s, e = utc(s), utc(e)
    return pd.Series(s), pd.Series(e)


_SEP = "\x1f"      # joins a CEC and a period key into one key of the engine's coverage rule


def _enrich_periods(spec, m: pd.DataFrame, sp: pd.DataFrame, parts) -> pd.DataFrame:
    """``--every``: coverage from each period's spans (one pass of the engine's rule, the period folded into the
    CEC key: the notes name LPARs and CPUs only), partition data (``--by lpar``) from the partition rows in each
    period's UTC window; a partition known only from partition data gets a row in every period that has rows.
    Under ``--tz local`` a period's window is taken at the offset of its first row's system."""
    import numpy as np

    from app.dataset.query import _period_start
    from app.engine.partitions import coverage_of_spans, enrich as engine_enrich

    keys = _KEYS[spec.by]
    if not len(m):
        return m
    if len(sp):
        folded = sp.assign(cec=sp["cec"].astype(str) + _SEP + sp["_period"].astype("int64").astype(str))
        cov = coverage_of_spans(folded.drop(columns=["_period"]), spec.by)
        cec, key = cov["cec"].str.split(_SEP, n=1, expand=True)[0], cov["cec"].str.split(_SEP, n=1, expand=True)[1]
        cov = cov.assign(cec=cec, period=np.asarray(_period_start(spec.every, key.astype("int64").to_numpy()),
                                                    dtype="datetime64[ns]"))
    else:
        cov = pd.DataFrame(columns=keys + ["coverage_pct", "coverage_note", "period"])
    if spec.by != "lpar" or parts is None or not len(parts):       # coverage only: one merge
        cov = cov[["period"] + [c for c in cov.columns if c != "period"]]
        out = engine_enrich(SimpleNamespace(partitions=None, intervals=None), m, spec.by, cov=cov)
        return out.assign(period=m["period"].to_numpy())       # (the merge made the keys text)
    m = m.assign(_row=np.arange(len(m)))       # the query's order, partition-only rows after its rows
    parts = parts.sort_values("time", kind="stable", ignore_index=True)
    ptime = pd.to_datetime(parts["time"]).to_numpy()
    cov_of = {p: g.drop(columns=["period"]) for p, g in cov.groupby("period", sort=False)}
    empty = pd.DataFrame(columns=keys + ["coverage_pct", "coverage_note"])
    out = []
    for per, rows in m.groupby(pd.to_datetime(m["period"]).to_numpy(), sort=True):
        off = float(pd.to_numeric(rows["_off_start"], errors="coerce").fillna(0).iloc[0]) \
            if spec.tz == "local" and "_off_start" in rows.columns else 0.0
        lo, hi = period_bounds(spec.every, pd.Series([per]), spec.tz, off)
        lo, hi = max(lo[0], spec.start) if spec.start is not None else lo[0], \
            min(hi[0], spec.end) if spec.end is not None else hi[0]
        a, b = np.searchsorted(ptime, np.datetime64(lo), "right"), np.searchsorted(ptime, np.datetime64(hi), "right")
        e = engine_enrich(SimpleNamespace(partitions=parts.iloc[a:b], intervals=None), rows.drop(columns=["period"]),
                          spec.by, lo, hi, cov=cov_of.get(per, empty))
        out.append(e.assign(period=per)[["period"] + [c for c in e.columns]] if len(e) else e)
    res = pd.concat(out, ignore_index=True).sort_values("_row", kind="stable", na_position="last")
    res = res[list(m.columns) + [c for c in res.columns if c not in m.columns]]
    return res.drop(columns=["_row"]).reset_index(drop=True)
