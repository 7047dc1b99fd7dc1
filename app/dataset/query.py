"""The engine's aggregation rule as SQL group-bys over the intervals table of a dataset.

Same rule as :mod:`app.engine.aggregate` and :mod:`app.engine.metrics` (``report``): sum the interval
deltas of the CPUs of a node (and time bucket), then apply the generation's formulas to the sums.

* Time buckets (a system's usual interval length and phase; the CEC's common bucket) depend on all the
  data of a system, as ``report`` computes them over all its files: two small histogram queries give
  them, the exact rule of :func:`app.engine.aggregate.add_buckets` runs in Python on the histograms, and
  the result joins the main query as a small table.
* ``CPSP`` of a sum is sum(B0)/sum(B0/CPSP); ``INTERVAL`` is sum(busy)/sum(busy fraction) for a
  system interval and (number of buckets x bucket length) for a CEC or a whole window.
* Formulas: the statement returns the sums (and ``CPSP``, ``INTERVAL``; DuckDB's one-SELECT statement leaves those
  two and the rows' order to Python, :func:`derived_columns`) of each row; the engine's own evaluator
  (:func:`app.engine.metrics._apply`, as ``report``) applies the generation's formulas to them; the workload hint
  is the engine's :func:`app.engine.hint.classify` applied to the L1MP and RNI of sums over intervals without
  lost data (summed in SQL too).
* ``--every`` rolls the whole-window levels up per hour, day, week (Monday) or month: each row is what
  ``report --from <period start> --to <period end>`` gives for the node.  An interval belongs to the
  period (hour, weekday) its end falls in, as the window ``(start, end]`` of ``report``.
* ``--hours``/``--days`` are the engine's shift (:class:`app.engine.shift.ShiftFilter`, parsed by
  :func:`app.engine.shift.make_shift`) with the engine's rule written in SQL (:func:`shift_sql`): an interval
  belongs to the shift when its midpoint ``t_start + (t_end - t_start) / 2`` (integer nanoseconds) lies in
  ``[start, end)`` minutes of the day (wrapping midnight when end < start) on one of the days, exactly as
  :func:`app.engine.shift.shift_mask` selects for ``report --hours/--days``.
  With ``query --tz ZONE`` the midpoint and the periods are the wall-clock times of that IANA zone (:func:`wall_sql`);
  with ``--tz local`` each system's own: the interval's time plus the offset in force during it (the
  ``utc_offset_s`` its start states, the CPU's previous interval's), as the engine reads a shift in local time.

Runs on DuckDB (in-process, default) or Spark (``local[2]`` unless ``SPARK_MASTER``/``spark.master`` say
otherwise, :mod:`app.dataset.spark_engine`); both get the same statement apart from the
:class:`app.dataset.sql.Dialect` details.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from app.dataset.sql import Dialect, lit_str, parse_where
from app.dataset.sql import local_offsets_sql, local_shown_sql, missing_counters, missing_counters_message, wall_sql
from app.dataset.plan import data_profile, generation_map, pushdown_window
from app.dataset.stats import RUN_START, bucket_params, odd_sql, stored_odd_sql, usual_sql
from app.dataset.store import Dataset
from app.dataset.duckdb_engine import DuckDBEngine, connect_aside
from app.engine.expr import is_counter_token
from app.engine.shift import ShiftFilter

__all__ = ["QuerySpec", "run_query", "open_engine", "QueryError", "BY_CHOICES", "EVERY_CHOICES", "shift_sql",
           "IDENT_OF", "bucket_params", "generation_map", "data_profile"]

BY_CHOICES = ("cec", "lpar", "class", "cpu", "interval")
EVERY_CHOICES = ("hour", "day", "week", "month")
IDENT_OF = {"cpu": ["cec", "lpar", "system", "os", "class", "cpu"], "interval": ["cec", "lpar", "system", "os", "class"],
            "class": ["cec", "lpar", "system", "os", "class"], "lpar": ["cec", "lpar", "system", "os"],
            "cec": ["cec"]}
_NS = 1_000_000_000
_HOUR = 3600 * _NS
_DAY = 24 * _HOUR
_MIN = 60 * _NS


class QueryError(ValueError):
    """A query that cannot run as asked (the message says why)."""


@dataclass
class QuerySpec:
    """What to compute.

    ``nodes`` are engine NodeKeys (``("cec", cec)``, ``("lpar", cec, lpar)``...) as the window's tree uses.
    ``shift`` is the engine's shift filter (``make_shift(hours, days)``, as ``report --hours/--days``).
    """

    by: str = "lpar"
    every: str | None = None
    start: Any = None
    end: Any = None
    shift: ShiftFilter | None = None
    where: str | None = None
    nodes: list[tuple] | None = None
    formula_sets: dict | None = field(default=None, repr=False)
    keep_implausible: bool = False    # rows marked implausible at extract time stay in the sums (issue 20)
    tz: str = "utc"                   # the zone of --every's periods (utc, local or an IANA name; sql.wall_sql)


def shift_sql(shift: ShiftFilter | None, d: Dialect) -> list[str]:
    """SQL conditions (to AND) selecting the rows whose interval lies in ``shift`` by the engine's rule.

    The midpoint is ``t_start + (t_end - t_start) / 2`` in integer nanoseconds (a missing start: the end), as
    :func:`app.engine.shift.shift_mask`; its minute of the day must lie in ``[start_min, end_min)`` (or outside
    ``[end_min, start_min)`` when the range wraps midnight), or in one of the further ranges of a comma list
    (``ShiftFilter.hour_ranges``), and its weekday, counted from 1970-01-01, a
    Thursday (3, Monday = 0), in ``days``.  No condition for ``None`` or an empty filter.
    """
    if shift is None or shift.is_empty:
        return []
    start = "(CASE WHEN t_start IS NULL OR t_start < -9223372036854775807 THEN t_end ELSE t_start END)"
    mid = wall_sql(f"({start} + {d.idiv(f't_end - {start}', '2')})", shift.tz, d)   # in the shift's zone
    out = []
    if shift.start_min is not None:
        minute = f"({d.idiv(mid, str(_MIN))} % 1440)"
        ors = [f"({minute} >= {int(a)} AND {minute} < {int(b)})" if a < b
               else f"({minute} >= {int(a)} OR {minute} < {int(b)})" for a, b in shift.hour_ranges]
        out.append(ors[0] if len(ors) == 1 else "(" + " OR ".join(ors) + ")")
    if shift.days is not None:
        days = sorted(int(x) for x in shift.days)
        out.append(f"(({d.idiv(mid, str(_DAY))} + 3) % 7) IN ({', '.join(str(x) for x in days)})"
                   if days else "FALSE")
    return out


# ----------------------------------------------------------------------------- engines
def open_engine(name: str, files: Sequence[str], window: tuple[int | None, int | None] = (None, None)):
    """The engine over view ``iv`` of ``files`` (DuckDB: only their rows ending in ``window``'s (lo, hi] ns,
    :meth:`DuckDBEngine.window_view`)."""
    if name == "duckdb":
        return DuckDBEngine(files, window)
    if name == "spark":
        from app.dataset.spark_engine import SparkEngine        # PySpark (optional) only when asked for

        return SparkEngine(files, window)
    raise QueryError(f"unknown engine {name!r} (duckdb or spark)")


# ----------------------------------------------------------------------------- buckets
def _params_sql(params, d: Dialect) -> str:
    def n(v):
        return "CAST(NULL AS BIGINT)" if v is None else f"CAST({int(v)} AS BIGINT)"
    rows = [f"SELECT {lit_str(c)} AS p_cec, {lit_str(s)} AS p_sys, {n(L)} AS p_l, {n(o)} AS p_off, {n(cl)} AS p_cl, "
            f"{n(co)} AS p_coff" for c, s, L, o, cl, co in params]
    if not rows:
        rows = ["SELECT 'x' AS p_cec, 'x' AS p_sys, CAST(NULL AS BIGINT) AS p_l, CAST(NULL AS BIGINT) AS p_off, "
                "CAST(NULL AS BIGINT) AS p_cl, CAST(NULL AS BIGINT) AS p_coff"]
    return " UNION ALL ".join(rows)


# ----------------------------------------------------------------------------- the statement
def _filters(spec: QuerySpec, d: Dialect) -> list[str]:
    out = []
    if spec.start is not None:
        out.append(f"t_end > {int(pd.Timestamp(spec.start).value)}")
    if spec.end is not None:
        out.append(f"t_end <= {int(pd.Timestamp(spec.end).value)}")
    out += shift_sql(spec.shift, d)
    if spec.where:
        out.append(parse_where(spec.where, d))
    if spec.nodes is not None:
        cols = ["cec", "lpar", "class", "cpu"]
        ors = []
        for key in spec.nodes:
            conds = []
            for c, v in zip(cols, key[1:]):
                conds.append(f"{d.q(c)} = {int(v)}" if c == "cpu" else f"{d.q(c)} = {lit_str(v)}")
            ors.append("(" + " AND ".join(conds) + ")" if conds else "TRUE")
        out.append("(" + " OR ".join(ors) + ")" if ors else "FALSE")
    return out


def _period_sql(every: str | None, d: Dialect, tz: str = "utc") -> str | None:
    t = wall_sql("(t_end - 1)", tz, d)
    if every is None:
        return None
    if every == "hour":
        return d.idiv(t, str(_HOUR))
    if every == "day":
        return d.idiv(t, str(_DAY))
    if every == "week":            # weeks start on Monday; the epoch's Monday is 1969-12-29 (-3 days)
        return d.idiv(f"({t} + {3 * _DAY})", str(7 * _DAY))
    ts = d.ts_micros(d.idiv(t, "1000"))
    return f"(year({ts}) * 12 + month({ts}) - 1)"


def _period_start(every: str, key: np.ndarray) -> pd.DatetimeIndex:
    k = np.asarray(key, dtype=np.int64)
    if every == "hour":
        return pd.to_datetime(k * _HOUR, unit="ns")
    if every == "day":
        return pd.to_datetime(k * _DAY, unit="ns")
    if every == "week":
        return pd.to_datetime(k * 7 * _DAY - 3 * _DAY, unit="ns")
    return pd.to_datetime({"year": k // 12, "month": k % 12 + 1, "day": np.ones(len(k), dtype=np.int64)})


_BUCKET_BITS = 1 << 16      # the widest bucket bit string (8 KiB a group)


def _bucket_count(spec: QuerySpec, bcol: str, same: set, bits: bool, d: Dialect, number: str | None = None) -> str:
    """The number of distinct buckets of a group: with ``bits`` (DuckDB, not ``--by interval``, whose groups are
    buckets), every system's buckets the same constants and a window (--from and --to) without --every spanning
    at most :data:`_BUCKET_BITS` buckets, the bits set in a bit string of the buckets' numbers
    ``(bucket - offset) / length`` (a bucket is a whole number of lengths from its offset; no distinct
    aggregate, which DuckDB plans as a second pass over the rows); else ``COUNT(DISTINCT)``.  ``number``: the row's
    ``k`` of ``bucket = k x length + offset``, that same integer without the arithmetic per row (offset known)."""
    if bits and len(same) == 1 and spec.every is None and spec.start is not None and spec.end is not None:
        L, off, cl, coff = next(iter(same))
        step, at = (cl, coff) if bcol == "cec_bucket" else (L, off)
        if step:
            step, at_ = int(step), int(at or 0)
            lo = (int(pd.Timestamp(spec.start).value) - at_) // step - 2
            hi = (int(pd.Timestamp(spec.end).value) - at_) // step + 2
            if hi - lo < _BUCKET_BITS:
                k = number if number is not None and at is not None else f"({bcol} - {at_}) // {step}"
                return f"bit_count(bitstring_agg({k}, {lo}, {hi}))"
    return d.count_distinct(bcol)


def _gen_cases(gmap) -> tuple[str, str]:
    """Per-row generation and formula-set version: the pair's (machine type, CSVN) from ``gmap``, else the
    stored ones."""
    if not gmap:
        return "generation", "formula_set"
    when = [f"WHEN machine_type = {lit_str(mt)} AND csvn = {int(cv)} THEN " for mt, cv, _g, _v in gmap]
    return ("CASE " + " ".join(w + lit_str(g) for w, (_m, _c, g, _v) in zip(when, gmap)) + " ELSE generation END",
            "CASE " + " ".join(w + lit_str(v) for w, (_m, _c, _g, v) in zip(when, gmap)) + " ELSE formula_set END")


def build_sql(spec: QuerySpec, d: Dialect, params, sets: dict, counters: Sequence[str], have: set[str],
              steps: bool = False, generations: list | None = None, src: str = "iv", only: set | None = None,
              implausible: bool = True, lost: bool = True, cpu_bits: bool = False, typed: bool = False,
              flat: bool = False, whole: frozenset = frozenset(), usual: list | None = None):
    """The whole statement for ``spec`` (see the module docstring); with ``steps`` the list of
    (view name, SELECT) steps it is made of, the last one (name '') giving the result.  ``only``: the
    generations the rows read can have (the formulas of the others are left out of the statement: their
    metrics are NULL for every row anyway, and a smaller statement is planned faster).  ``implausible=False``:
    no row read is marked implausible, so the per-row test is left out of every sum (the same result); likewise
    ``lost=False``: no row read has lost data, so the workload hint's sums are the sums themselves.
    ``cpu_bits`` (DuckDB, a level keyed by system): CPU numbers counted as the bits set in a 256-bit string (DuckDB
    refuses the statement, ``OutOfRangeException``, for a CPU number outside 0-255; no distinct aggregate per row).
    ``typed``: every row read states its machine type and CSVN (:func:`profile_of`), so with one pair in
    ``generations`` the generation and formula set are constants, not a per-row ``CASE``.  ``whole``: counters
    every row read holds, or none does (:func:`profile_of`): no quality count of them (0: all or nothing).  ``flat``
    (DuckDB): when every system read has the same buckets, no ``--tz local`` and not per CPU and interval, the
    aggregation is one ``SELECT ... GROUP BY`` over ``src`` with the per-row columns written into it (not views
    over views of every column): the same values, a statement DuckDB plans in about half the time.  ``usual``:
    (cec, lpar, system, usual length) of the LPARs read when their stored odd-length marks are not all the
    dataset's own (:func:`app.dataset.stats.odd_length_of`): each row's mark is made again against its LPAR's
    usual length (None: the stored marks)."""
    from app.dataset.plan import hint_counters_of, set_counters

    q = d.q
    # generation and formula-set version per (machine type, CSVN) from the sets of this query (``--formulas``
    # may add a set or rename a version): the engine's select_generation; rows of other pairs keep theirs
    gmap = generations or []
    if typed and len(gmap) == 1:       # every row read is of the one pair: no per-row look-up
        gen_case, fset_case = lit_str(gmap[0][2]), lit_str(gmap[0][3])
    else:
        gen_case, fset_case = _gen_cases(gmap)
    by = spec.by
    every = spec.every
    per_cpu_interval = by == "cpu" and every is None
    bits = False
    per_interval = by == "interval"
    cec_level = by == "cec"
    keys = IDENT_OF[by]
    counters = [c for c in counters if c in have]
    used = {g: fs for g, fs in sets.items() if only is None or g in only}
    if only is not None:     # the counters the formulas of those generations read (and one of each set: quality)
        need = {"B0"}.union(*(set_counters(fs) for fs in used.values()))
        firsts = {next((c for c in counters if c[0] == x), None) for x in "PE"}
        counters = [c for c in counters if c in need or c in firsts]
    # summed: the counters the formulas read (the first P and E counters are read for quality only, counted)
    summed = [c for c in counters if only is None or c in need]
    bcol = "cec_bucket" if cec_level else "bucket"
    where = _filters(spec, d)
    period = _period_sql(every, d, spec.tz)
    # implausible CPU-intervals (qbits 128, app.engine.plausibility) add nothing to any sum unless kept: their
    # counters are NULL, their rows counted in _lo and marked left-out (256), as the workspace does
    plain = spec.keep_implausible or not implausible
    lo = "0" if plain else "CASE WHEN qbits % 256 >= 128 THEN 1 ELSE 0 END"

    def val(c: str) -> str:
        return q(c) if plain else f"CASE WHEN qbits % 256 >= 128 THEN NULL ELSE {q(c)} END"

    b0 = val("B0") if "B0" in have else "CAST(NULL AS DOUBLE)"
    busy = f"CASE WHEN cpu_speed > 0 THEN {b0} / cpu_speed END"
    numbers = {    # a row's bucket number k (its bucket is k x length + offset)
        "bucket": "CAST(FLOOR(CAST(t_end - p_off AS DOUBLE) / CAST(p_l AS DOUBLE) + 0.5) AS BIGINT)",
        "cec_bucket": "CAST(CEIL((CAST(t_end - p_coff AS DOUBLE) - COALESCE(CAST(p_l AS DOUBLE) / 1000000000.0 * "
                      "1000000000.0 / 2.0, CAST(p_cl AS DOUBLE) / 2.0)) / CAST(p_cl AS DOUBLE)) AS BIGINT)"}
    row_cols = {   # the per-row columns of the aggregation's input (base, then r)
        "bucket": f"CASE WHEN p_l IS NULL THEN t_end ELSE {numbers['bucket']} * p_l + p_off END",
        "bucket_s": "CAST(p_l AS DOUBLE) / 1000000000.0",
        "cec_bucket": f"CASE WHEN p_cl IS NULL THEN t_end ELSE {numbers['cec_bucket']} * p_cl + p_coff END",
        "cec_bucket_s": "CAST(p_cl AS DOUBLE) / 1000000000.0"}
    local = local_offsets_sql(src, d) if "local" in (spec.tz, spec.shift and spec.shift.tz) else ""
    same = {tuple(p[2:]) for p in params}
    flat = flat and len(same) == 1 and not local and not per_cpu_interval
    if len(same) == 1:      # every system of the CECs read has the same buckets: constants, no join per row
        lits = dict(zip(("p_l", "p_off", "p_cl", "p_coff"), next(iter(same))))
        def const(text: str) -> str:
            return re.sub(r"\bp_(l|off|cl|coff)\b", lambda m: "CAST(NULL AS BIGINT)" if lits[m.group(0)] is None
                          else f"CAST({int(lits[m.group(0)])} AS BIGINT)", text)
        row_cols = {k: const(v) for k, v in row_cols.items()}
        numbers = {k: const(v) for k, v in numbers.items()}
    bucket_names = set(row_cols)
    buckets = ", ".join(f"{v} AS {k}" for k, v in row_cols.items()) + " "
    if len(same) == 1:
        ctes = [f"base AS (SELECT {src}.*, {local}{buckets}FROM {src})"]
    else:
        ctes = [f"p AS ({_params_sql(params, d)})",
                f"base AS (SELECT {src}.*, {local}{buckets}"
                f"FROM {src} LEFT JOIN p ON {src}.{q('cec')} = p.p_cec AND {src}.{q('system')} = p.p_sys)"]
    row_cols.update({"_busy_us": busy, "_bf": f"CASE WHEN interval_s > 0 THEN ({busy}) / (1000000.0 * interval_s) END",
                     "_uid": f"concat({q('system')}, '/', CAST({q('cpu')} AS STRING))"})
    row_cols.update({"_period": period} if period else {})
    row_cols.update({"_gen": gen_case, "_fset": fset_case})
    qv = "qbits"
    if usual is not None:        # the odd-length bit made again, by the dataset's usual lengths
        row_cols["_qx"] = (f"qbits - {stored_odd_sql('qbits')} + "
                           f"{odd_sql('interval_s', usual_sql(usual, d))}")
        qv = "_qx"
    ctes.append("r AS (SELECT *, " + ", ".join(f"{v} AS {k}" for k, v in row_cols.items() if k not in bucket_names)
                + " FROM base" + (" WHERE " + " AND ".join(where) if where else "") + ")")
    gen_sel = [q(k) for k in keys] + ["_gen AS generation", "_fset AS formula_set"]
    gen_keys = [q(k) for k in keys] + ["generation", "formula_set"]
    with_hint = not (by == "cpu")
    local_sel = local_shown_sql(d, per_cpu_interval, cec_level) if spec.tz == "local" else []
    hc = hint_counters_of(sets, counters) if with_hint else []
    if per_cpu_interval:
        sel = gen_sel + local_sel + ["t_start AS _start", "t_end AS _end", "1 AS n_cpus", f"{qv} + 256 * {lo} AS _q",
                         "1 AS _size", f"{lo} AS _lo", "0 AS _cntP", "0 AS _cntE", "CAST(cpu_speed AS DOUBLE) AS _CPSP",
                         "interval_s AS _INTERVAL"]
        sel += [f"{val(c)} AS {q(c)}" for c in summed]
        ctes.append(f"a2 AS (SELECT {', '.join(sel)} FROM r)")
        out_keys = gen_keys
    else:
        extra = (["bucket"] if per_interval else []) + (["_period"] if period else [])
        group = [q(k) for k in keys] + ["_gen", "_fset"] + extra
        # CPUs: (system, cpu) pairs; a level keyed by system counts its CPU numbers (no string per row)
        cpus = q("cpu") if "system" in keys else "_uid"
        bits = cpu_bits and "system" in keys
        n_cpus = f"bit_count(bitstring_agg({q('cpu')}, 0, 255))" if bits else d.count_distinct(cpus)
        # the median interval length stands in for a group without bucket length (below): only per interval,
        # or when a system of the CECs read has no usual interval length (none: no holistic aggregate)
        median = per_interval or not params or any(p[4 if cec_level else 2] is None for p in params)
        firstP = next((c for c in counters if c[0] == "P"), None)
        firstE = next((c for c in counters if c[0] == "E"), None)
        sel = gen_sel + extra + local_sel + [
            "MIN(t_start) AS _start", "MAX(t_end) AS _end", f"{n_cpus} AS n_cpus",
            "SUM(_busy_us) AS _sb", *(["SUM(_bf) AS _sf"] if per_interval else []), "MAX(cpu_speed) AS _cpsp_max",
            f"{d.median('interval_s') if median else 'CAST(NULL AS DOUBLE)'} AS _ivs",
            # the bucket length: one constant when every system has the same buckets (no MAX over the rows)
            f"{row_cols[bcol + '_s']} AS _blen" if len(same) == 1 else f"MAX({bcol}_s) AS _blen",
            f"{_bucket_count(spec, bcol, same, cpu_bits and not per_interval, d, numbers[bcol])} AS _nb",
            f"BIT_OR({qv}) AS _q" if plain else f"BIT_OR({qv} + 256 * {lo}) AS _q",
            "COUNT(*) AS _size" if plain else f"SUM(1 - {lo}) AS _size", "0 AS _lo" if plain else f"SUM({lo}) AS _lo",
            (f"COUNT({val(firstP)})" if firstP and firstP not in whole else "0") + " AS _cntP",
            (f"COUNT({val(firstE)})" if firstE and firstE not in whole else "0") + " AS _cntE"]
        sel += [f"SUM({val(c)}) AS {q(c)}" for c in summed]
        if lost:         # the hint's sums leave out intervals with lost data (none read: the sums themselves)
            sel += [f"SUM(CASE WHEN qbits % 2 = 0 THEN {val(c)} END) AS {q('_h_' + c)}" for c in hc]
        if flat:        # one SELECT over src: the per-row columns written where they are used (not after AS)
            inline = re.compile(r"(?<!AS )\b(" + "|".join(sorted(row_cols, key=len, reverse=True)) + r")\b")

            def put(text: str) -> str:
                return inline.sub(lambda m: "(" + row_cols[m.group(1)] + ")", text)
            fixed = [g for g in group if not row_cols.get(g, "").startswith("'")]     # a constant: no key
            ctes = [f"agg AS (SELECT {put(', '.join(f'{x} AS {x}' if x in extra else x for x in sel))} FROM {src}"
                    + (" WHERE " + " AND ".join(where) if where else "") + f" GROUP BY {put(', '.join(fixed))})"]
        else:
            ctes.append(f"agg AS (SELECT {', '.join(sel)} FROM r GROUP BY {', '.join(group)})")
        if per_interval:
            interval = "CASE WHEN _sf > 0 THEN _sb / (1000000.0 * _sf) ELSE _ivs END"
        else:
            interval = "CAST(_nb AS DOUBLE) * COALESCE(_blen, _ivs)"
        cpsp = (f"CASE WHEN _sb > 0 THEN {q('B0') if 'B0' in counters else 'NULL'} / _sb "
                "ELSE CAST(_cpsp_max AS DOUBLE) END")
        if not flat:        # (the flat statement's are computed the same way by derived_columns)
            ctes.append(f"a2 AS (SELECT *, {cpsp} AS _CPSP, {interval} AS _INTERVAL FROM agg)")
        out_keys = gen_keys + extra
    # the formulas are applied to the aggregated rows by the engine's own evaluator (app.engine.metrics, as
    # report does): the statement returns the sums, CPSP and INTERVAL (written as SQL, a metric layer per
    # dependency depth took DuckDB longer to plan than the scan to run)
    hsums = [q("_h_" + c) for c in hc] if with_hint and lost else []
    tail = ["_start", "_end", "n_cpus", "_q", "_size", "_lo", "_cntP", "_cntE"] + [
        a.rsplit(" AS ", 1)[1] for a in local_sel]
    out_cols = [c for c in out_keys] + tail + ["_CPSP", "_INTERVAL"] + [q(c) for c in summed] + hsums
    order = [q(k) for k in keys] + (["_period"] if period else []) + ["_end"]
    if flat:        # the aggregation alone: CPSP and INTERVAL from its sums and the rows' order in Python
        body = ctes[0].split(" AS (", 1)[1][:-1]     # (derived_columns, _frame), which DuckDB plans faster
        return [("", body)] if steps else body
    final = f"SELECT {', '.join(out_cols)} FROM a2 ORDER BY {', '.join(order)}"
    if steps:
        return [(c.split(" AS (", 1)[0], c.split(" AS (", 1)[1][:-1]) for c in ctes] + [("", final)]
    return "WITH " + ",\n".join(ctes) + "\n" + final


def run_query(ds: Dataset, spec: QuerySpec, engine: str = "duckdb", eng=None) -> pd.DataFrame:
    """Metric rows for ``spec`` over ``ds``, in the column layout of ``report`` (plus ``period`` with
    ``--every``).  ``eng`` reuses an open engine (the window keeps one).  A part an earlier process checked
    and that has not changed since is not read for its CRC-32 again (:func:`app.dataset.integrity.stamped_checks`)."""
    from app.dataset.integrity import stamped_checks

    with stamped_checks():
        return _run_query(ds, spec, engine, eng)


def _run_query(ds: Dataset, spec: QuerySpec, engine: str, eng) -> pd.DataFrame:
    from duckdb import OutOfRangeException

    from app.engine.catalog import load_formula_sets
    from app.engine.deltas import quality_strings
    from app.engine.metrics import _apply, metric_ids

    if spec.by not in BY_CHOICES:
        raise QueryError(f"--by must be one of {', '.join(BY_CHOICES)}")
    if spec.every is not None and spec.every not in EVERY_CHOICES:
        raise QueryError(f"--every must be one of {', '.join(EVERY_CHOICES)}")
    if spec.every is not None and spec.by == "interval":
        raise QueryError("--every rolls whole-window levels up (cec, lpar, class, cpu); --by interval rows are "
                         "intervals already")
    aside = connect_aside() if engine == "duckdb" and eng is None else None   # (the first run: connect meanwhile)
    try:
        sets = spec.formula_sets or load_formula_sets()
    finally:
        if aside is not None:
            aside.join()
    ids = metric_ids(sets)
    keys = IDENT_OF[spec.by]
    if not ds.has_parts("intervals"):
        return pd.DataFrame(columns=keys + (["period"] if spec.every else []) + ["interval_start", "interval_end",
                                                                              "n_cpus", "generation", "formula_set"]
                            + ids + ["Workload_Hint", "quality", "left_out", "summary"])
    from app.dataset.plan import profile_of
    from app.dataset.stats import query_stats

    # partition pruning: only the parts of the CECs and months the query can touch are listed, checked and read
    # (an interval is stored in the month of its end); the filters still run in SQL on the rows of those parts
    cecs, months = query_partitions(ds, spec)
    sel = ds.parts("intervals", cecs=cecs, months=months)
    if not sel:          # nothing can match: one part keeps the statement valid (its filters return no row)
        c0 = ds.cecs()[0]
        sel = ds.parts("intervals", cecs=[c0], months=ds.months([c0])[:1])[:1] or ds.parts("intervals")[:1]
    own = eng is None
    lo, hi = pushdown_window(spec)
    eng = eng or open_engine(engine, sel, (lo, hi))      # a window: its view is defined once, over the window
    try:
        src = "iv" if own else "iv_sel"     # iv_sel: a view over the selected parts of the window's engine
        if not own and (lo is not None or hi is not None):
            eng.window_view(src, sel, lo, hi)
        elif not own:
            eng.view(src, sel)
        have = set(eng.columns())
        if "local" in (spec.tz, spec.shift and spec.shift.tz) and "utc_offset_s" not in have:
            raise QueryError(f"{ds.root}: its intervals keep no UTC offsets (dataset format version "
                             f"{getattr(ds, 'version', '?')}), so --tz local cannot read the systems' wall clocks; "
                             "use --tz utc or an IANA zone, or re-extract the source files into a new dataset")
        missing = missing_counters(sets, have)
        if missing:      # a formula over counters the dataset does not keep: no silent NULL (issue 24)
            raise QueryError(missing_counters_message(missing))
        counters = [c for c in ds.counters() if c in have]
        # time buckets come from all the data of each CEC (as report over all its files): kept per CEC between
        # commands (app.dataset.stats), recomputed from that CEC's parts only when they changed
        sel_cecs = cecs if cecs is not None else set(ds.cecs())
        params, rows, usual = query_stats(ds, eng, sel_cecs, months,
                                          profile=not (ds._pending and ds._pending_visible))
        gmap, stored, marks = profile_of(rows, sets) if rows is not None else data_profile(eng, sets, src)
        args = (spec, eng.dialect, params, sets, counters, have)
        kw = dict(steps=True, generations=gmap, src=src, only={g for _m, _c, g, _v in gmap} | stored, usual=usual,
                  **marks)
        duck = eng.dialect.name == "duckdb"
        if duck:        # the result's columns as arrays (fetchnumpy): no frame of ~75 columns for a few rows
            eng.arrays = True
        try:        # DuckDB refuses the statement for a CPU number outside 0-255 (cpu_bits): counted distinct
            raw = eng.run(build_sql(*args, cpu_bits=duck, flat=duck, **kw))
        except OutOfRangeException:
            raw = eng.run(build_sql(*args, **kw))
    finally:
        if own:
            eng.close()
    return _frame(_columns(raw), spec, sets, ids, keys, _apply, quality_strings)


def _columns(raw) -> dict[str, Any]:
    """The statement's columns, name -> array, each holding the values of that column of the statement's ``.df()``:
    from a frame (Spark, the layered statement) its columns' arrays; from DuckDB's ``fetchnumpy()`` (the flat
    statement, :attr:`DuckDBEngine.arrays`: no frame of ~75 columns made for a few rows) each array as it came
    where no value is NULL, else NaN in a float or string column, a nullable pandas array in an integer or boolean
    one (as ``.df()`` makes them)."""
    if isinstance(raw, pd.DataFrame):
        return {c: raw[c].array if not isinstance(raw[c].dtype, np.dtype) else raw[c].to_numpy() for c in raw.columns}
    out: dict[str, Any] = {}
    for c, a in raw.items():
        if isinstance(a, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(a)
            if not mask.any():
                a = np.ma.getdata(a)
            elif a.dtype.kind == "f":
                a = np.where(mask, np.nan, np.ma.getdata(a))
            elif a.dtype.kind == "O":
                a = np.where(mask, np.nan, np.ma.getdata(a)).astype(object)
            elif a.dtype.kind in "iub":
                kind = {"i": "Int", "u": "UInt"}.get(a.dtype.kind)
                a = pd.array(np.ma.getdata(a), dtype=f"{kind}{8 * a.dtype.itemsize}" if kind else "boolean")
                a[mask] = pd.NA
            else:       # (no other type in the statements NestScope writes)
                raise TypeError(f"column {c} of type {a.dtype} with NULLs")
        out[c] = a
    return out


def _obj(a) -> np.ndarray:
    """A column as ``Series.to_numpy(dtype=object)`` gives it."""
    return a.astype(object, copy=False) if isinstance(a, np.ndarray) else a.to_numpy(dtype=object)


def _i64(a, fill: bool = False) -> np.ndarray:
    """A column as ``Series.to_numpy(dtype=np.int64)`` gives it (``fill``: after ``fillna(0)``)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "iub":
        return a.astype(np.int64, copy=False)
    if fill:
        return pd.Series(a, copy=False).fillna(0).to_numpy(dtype=np.int64)
    return np.asarray(a, dtype=np.int64) if isinstance(a, np.ndarray) else a.to_numpy(dtype=np.int64)


def _f64(a, default: float = np.nan) -> np.ndarray:
    """A column as float64, NULL (and text that is no number) ``default``: ``Series.to_numpy(np.float64,
    na_value=default)`` of the column, or of ``pd.to_numeric(errors="coerce")`` of one that is not numeric."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "fiu":
        a = a.astype(np.float64, copy=False)
        return a if default != default or not np.isnan(a).any() else np.where(np.isnan(a), default, a)
    s = pd.Series(a, copy=False)
    if s.dtype.kind not in "fiu":
        s = pd.to_numeric(s, errors="coerce")
    return s.to_numpy(np.float64, na_value=default)


def _derived(cols: dict[str, Any], n: int, per_interval: bool) -> tuple[np.ndarray, np.ndarray]:
    """(CPSP, INTERVAL) of the flat statement's rows (:func:`derived_columns`)."""
    def col(name: str) -> np.ndarray:
        return _f64(cols[name]) if name in cols else np.full(n, np.nan)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # inf as SQL's double division gives
        sb, b0 = col("_sb"), col("B0")
        cpsp = np.where(sb > 0, b0 / np.where(sb > 0, sb, 1.0), col("_cpsp_max"))
        if per_interval:
            sf = col("_sf")
            interval = np.where(sf > 0, sb / (1000000.0 * np.where(sf > 0, sf, 1.0)), col("_ivs"))
        else:
            blen = col("_blen")
            interval = col("_nb") * np.where(np.isnan(blen), col("_ivs"), blen)
    return cpsp, interval


def derived_columns(raw: pd.DataFrame, per_interval: bool) -> pd.DataFrame:
    """``_CPSP`` and ``_INTERVAL`` of the flat statement's rows, as the layered statement computes them in SQL
    (``build_sql``): CPSP is sum(B0) / sum(busy) when that is above 0, else the highest CPU speed; INTERVAL is
    sum(busy) / (10^6 x sum(busy fraction)) per interval (that above 0, else the median interval length), else
    the number of buckets x the bucket length (the median interval length without one).  NULL is NaN; the same
    IEEE operations on the same doubles."""
    cpsp, interval = _derived(_columns(raw), len(raw), per_interval)
    return raw.assign(_CPSP=cpsp, _INTERVAL=interval)


def query_partitions(ds: Dataset, spec: QuerySpec, table: str = "intervals"
                     ) -> tuple[set[str] | None, set[str] | None]:
    """(CECs, months) whose parts of ``table`` ``spec`` can touch (None: all): from the nodes, ``--where``'s
    top-level ``cec``/``month`` terms and the window (``--from``/``--to``)."""
    from app.dataset.sql import where_partitions

    cecs = _node_cecs(spec.nodes)
    pinned = where_partitions(spec.where)
    if "cec" in pinned:
        cecs = pinned["cec"] if cecs is None else cecs & pinned["cec"]
    have = {m for c, m in ds.index.keys(table) if cecs is None or c in cecs}
    months = _months_between(spec.start, spec.end, have)
    if "month" in pinned:
        months = pinned["month"] if months is None else months & pinned["month"]
    return cecs, months


def _node_cecs(nodes) -> set[str] | None:
    if nodes is None:
        return None
    return {str(n[1]) for n in nodes if len(n) > 1}


def _months_between(start, end, months: Iterable[str]) -> set[str] | None:
    """Months (YYYY-MM) that can hold an interval ending in (start, end]."""
    if start is None and end is None:
        return None
    lo = pd.Timestamp(start).strftime("%Y-%m") if start is not None else ""
    hi = pd.Timestamp(end).strftime("%Y-%m") if end is not None else "9999-99"
    return {m for m in months if lo <= m <= hi}


def _frame(raw: dict[str, Any], spec: QuerySpec, sets, ids, keys, apply_formulas, quality_strings) -> pd.DataFrame:
    """The result frame of the statement's columns (:func:`_columns`): built as arrays, ordered by the identity
    columns, period and interval end (:func:`_order`), then made one frame (no per-row Python, no pandas insert per
    column, one frame made of all the columns: the frames of the keys, the metrics and the tail concatenated cost
    more than the formulas on a narrow query's few rows)."""
    n = len(next(iter(raw.values()))) if raw else 0
    cols: dict[str, Any] = {k: _obj(raw[k]) if k != "cpu" else _i64(raw[k]) for k in keys}
    if spec.every:
        cols["period"] = np.asarray(_period_start(spec.every, np.asarray(raw["_period"])), dtype="datetime64[ns]") \
            if n else np.zeros(0, "datetime64[ns]")
    cols["interval_start"] = _i64(raw["_start"]).view("datetime64[ns]")     # (ns since the epoch)
    cols["interval_end"] = _i64(raw["_end"]).view("datetime64[ns]")
    cols["n_cpus"] = _i64(raw["n_cpus"])
    cols["generation"] = _obj(raw["generation"])
    cols["formula_set"] = _obj(raw["formula_set"])
    order = _order([cols[c] for c in keys + (["period"] if spec.every else []) + ["interval_end"]], n)
    # the formulas on the sums, by the engine's own evaluator (report's rule: a division by zero is NaN), given a
    # frame of the float columns it reads (one block) and the generation; the workload hint from the sums over
    # intervals without lost data (the sums themselves when none was read)
    if "_CPSP" in raw:
        cpsp, interval = _f64(raw["_CPSP"]), _f64(raw["_INTERVAL"])
    else:
        cpsp, interval = _derived(raw, n, spec.by == "interval")
    hint_from = "_h_" if any(c.startswith("_h_") for c in raw) else ""
    names = [c for c in raw if is_counter_token(c) or (hint_from and c.startswith("_h_"))]   # (what it may read)
    block = np.empty((len(names) + 2, n))
    for i, c in enumerate(names):
        block[i] = np.asarray(raw[c], dtype=np.float64)       # (as the evaluator converts a column that is not float)
    block[-2], block[-1] = cpsp, interval
    sums = pd.DataFrame(block.T, columns=names + ["CPSP", "INTERVAL"], copy=False)
    sums["generation"] = cols["generation"]
    mets = apply_formulas(sums, sets, ids, (), spec.by != "cpu", hint_prefix=hint_from)
    qb = _i64(raw["_q"], fill=True) & ~RUN_START     # (the dataset's own bit, not a quality code)
    if spec.by != "cpu" or spec.every:
        size = _i64(raw["_size"])
        for c in ("_cntP", "_cntE"):
            cnt = _i64(raw[c])
            qb = qb | np.where((cnt > 0) & (cnt < size), 64, 0)
    values = mets.iloc[:, :len(ids)].to_numpy(dtype=np.float64) if len(ids) else np.zeros((n, 0))
    cols.update(zip(ids, values.T))
    cols["Workload_Hint"] = mets["Workload_Hint"].array
    cols["quality"] = np.asarray(quality_strings(qb) if n else [], dtype=object)
    cols["left_out"] = _i64(raw["_lo"], fill=True) if n else np.zeros(0, np.int64)
    cols["summary"] = np.zeros(n, dtype=bool)
    if "_off_s" in raw:        # --tz local: the offsets of the shown start and end (app.commands.query)
        cols["_off_start"] = _f64(raw["_off_s"], 0.0)
        cols["_off_end"] = _f64(raw["_off_e"], 0.0)
    if order is not None:
        cols = {c: v[order] if isinstance(v, np.ndarray) else v.take(order) for c, v in cols.items()}
    return pd.DataFrame(cols)


def _order(cols: list[np.ndarray], n: int) -> np.ndarray | None:
    """Positions ordering rows by the key columns ``cols``, as ``sort_values(kind="stable")`` orders them
    (missing values last); None when they are in order already.  A few rows (a narrow query's) are ordered by
    Python's stable sort on the same values, which costs far less than pandas' factorizing of each key."""
    if n > _FEW:
        order = pd.DataFrame(dict(enumerate(cols))).sort_values(list(range(len(cols))), kind="stable").index
        order = order.to_numpy(dtype=np.int64)
    else:
        vals = [_py_values(c) for c in cols]
        keys = [tuple((1, 0) if v is None or v != v else (0, v) for v in row) for row in zip(*vals)]  # NaN/NaT
        order = np.asarray(sorted(range(n), key=keys.__getitem__), dtype=np.int64)
    return None if np.array_equal(order, np.arange(n)) else order


def _py_values(c) -> list:
    """A key column's values as Python values that order as pandas orders the column: times as their int64
    nanoseconds (NaT: None), numbers and text as they are (``tolist``; a pandas Series' values otherwise)."""
    if isinstance(c, np.ndarray) and c.dtype.kind == "M":
        nat = np.iinfo(np.int64).min
        return [None if v == nat else v for v in c.view(np.int64).tolist()]
    if isinstance(c, np.ndarray) and c.dtype.kind in "iufbO":
        return c.tolist()
    return pd.Series(c).tolist()


def _sorted(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """``df.sort_values(by, kind="stable", ignore_index=True)`` by :func:`_order` (``df`` itself when in order)."""
    order = _order([df[c].to_numpy() for c in by], len(df))
    return df if order is None else df.take(order).reset_index(drop=True)


_FEW = 64       # rows ordered by :func:`_order`'s Python sort


def dataset_formula_versions(frame: pd.DataFrame, sets: dict) -> dict[str, str]:
    """generation -> formula-set version for the generations in a result (for headers)."""
    present = set(frame["generation"].astype(str)) if len(frame) else set()
    return {g: sets[g].version for g in sets if g in present}


def node_values(eng, column: str, where: Iterable[str] = ()) -> list:
    """Distinct values of a column (the window's tree)."""
    w = list(where)
    return eng.sql(f"SELECT DISTINCT {eng.dialect.q(column)} AS v FROM iv" + (" WHERE " + " AND ".join(w) if w else "")
                   )["v"].tolist()
