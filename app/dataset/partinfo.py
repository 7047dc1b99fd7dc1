"""What ``report`` adds to CEC, LPAR and class rows, for ``query`` (issue 24): coverage and partition data.

* Coverage (``coverage_pct``, ``coverage_note``): the children's spans (first interval start, last interval end,
  median interval length of each LPAR of a CEC, CPU of an LPAR or class) by one SQL group-by over the
  intervals table, then the engine's rule (:func:`app.engine.partitions.coverage_of_spans`).
* Partition data (LPAR rows: ``data``, ``partition_cpus``, ``processors``, ``weights``, ``capped``,
  ``partition_busy_sum_pct``, ``partition_busy_per_cpu_pct``; and one row per LPAR known only from the
  partition data, such as a coupling facility): the partitions table (z/VM D0R16 rows), summed up by the
  engine's :func:`app.engine.partitions.partition_summary`.

Both over the window (``--from``/``--to``), ``--where`` and the nodes of the query, as ``report`` over its
window; DuckDB runs these small statements whatever ``--engine`` computed the metrics.
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
    from app.dataset.query import DuckDBEngine, _filters, query_partitions
    from app.dataset.sql import DUCKDB

    files = ds.parts("intervals", *query_partitions(ds, spec))      # the parts the query read, no others
    if not files:
        return pd.DataFrame()
    cols = _KEYS[level] + _CHILD[level]
    where = _filters(dataclasses.replace(spec, shift=None), DUCKDB)
    eng = DuckDBEngine(files)
    try:
        q = ", ".join(DUCKDB.q(c) for c in cols)
        sp = eng.sql(f"SELECT {q}, MIN(t_start) AS first, MAX(t_end) AS last, median(interval_s) AS step FROM iv"
                     + (" WHERE " + " AND ".join(where) if where else "") + f" GROUP BY {q}")
    finally:
        eng.close()
    sp["first"] = pd.to_datetime(sp["first"].astype("int64"), unit="ns")
    sp["last"] = pd.to_datetime(sp["last"].astype("int64"), unit="ns")
    return sp.sort_values(cols, ignore_index=True)


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
    ``report`` (levels cec, lpar, class without ``--every``; other results are returned as they are)."""
    from app.engine.partitions import coverage_of_spans, enrich as engine_enrich

    if spec.by not in _KEYS or spec.every:
        return m
    sp = _spans(ds, spec, spec.by)
    cov = coverage_of_spans(sp, spec.by) if len(sp) else pd.DataFrame(columns=_KEYS[spec.by] + ["coverage_pct",
                                                                                               "coverage_note"])
    parts = _partitions(ds, spec) if spec.by == "lpar" else None
    return engine_enrich(SimpleNamespace(partitions=parts, intervals=None), m, spec.by, spec.start, spec.end, cov=cov)
