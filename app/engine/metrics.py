"""Apply formula sets to (summed) counter deltas: the metrics frame.

Column layout (architecture.md): identity columns that apply to the level,
``interval_start``, ``interval_end``, ``n_cpus``, ``generation``,
``formula_set``, one column per metric id (:data:`METRIC_IDS` first, then any
user-defined ids), ``Workload_Hint``, ``quality``, ``left_out`` (CPU-intervals of the row left out as
implausible, :mod:`app.engine.plausibility`) and ``summary`` (True for the whole-window rows added by
``summary=True``).  A metric that does not apply is
NaN, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from app.engine.aggregate import LEVEL_KEYS, LEVELS, WINDOW_OF, aggregate, select_rows
from app.engine.catalog import METRIC_IDS, FormulaSet
from app.engine.deltas import quality_strings
from app.engine.hint import NA, classify

__all__ = ["evaluate_set", "compute_metrics", "level_metrics", "metrics_level", "with_summary", "metric_ids",
           "hint_counters"]

_IDENT = ["cec", "lpar", "system", "os", "class", "cpu"]


def metric_ids(sets: dict[str, FormulaSet]) -> list[str]:
    """Metric columns: the architected ids, then user-defined ones in first-seen order."""
    extra: list[str] = []
    for fs in sets.values():
        for mid in fs.metrics:
            if mid not in METRIC_IDS and mid not in extra:
                extra.append(mid)
    return list(METRIC_IDS) + extra


def _deps(fs: FormulaSet, targets: Iterable[str]) -> list[str]:
    need: set[str] = set()
    stack = [t for t in targets if t in fs.metrics]
    while stack:
        m = stack.pop()
        if m in need:
            continue
        need.add(m)
        c = fs.metrics[m].compiled
        if c is not None:
            stack.extend(n for n in c.names if n in fs.metrics)
    return [m for m in fs.order if m in need]


def hint_counters(sets: dict[str, FormulaSet], available: Iterable[str]) -> list[str]:
    """Counters that L1MP and RNI need in sets that compute a workload hint."""
    avail = set(available)
    out: set[str] = set()
    for fs in sets.values():
        if not _hint_applies(fs):
            continue
        for m in _deps(fs, ("L1MP", "RNI")):
            c = fs.metrics[m].compiled
            if c is not None:
                out |= c.counters & avail
    return sorted(out)


def _hint_applies(fs: FormulaSet) -> bool:
    r = fs.metrics.get("RNI")
    return bool(fs.workload_hint and r is not None and r.compiled is not None and "L1MP" in fs.metrics)


def evaluate_set(fs: FormulaSet, env: dict[str, np.ndarray], n: int,
                 only: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Evaluate the metrics of ``fs`` (dependencies first) on an environment of arrays.

    Parameters
    ----------
    fs : FormulaSet
    env : dict
        Counter tokens, ``CPSP`` and ``INTERVAL`` -> arrays of length ``n``.
    n : int
        Number of rows.
    only : iterable of str, optional
        Evaluate just these metrics (and what they depend on).

    Returns
    -------
    dict
        metric id -> float64 array (all NaN for a metric whose expr is null).
    """
    env = dict(env)
    res: dict[str, np.ndarray] = {}
    for mid in (fs.order if only is None else _deps(fs, only)):
        m = fs.metrics[mid]
        v = m.compiled.evaluate(env, n) if m.compiled is not None else np.full(n, np.nan)
        res[mid] = env[mid] = v
    return res


def _apply(agg: pd.DataFrame, sets: dict[str, FormulaSet], ids: Sequence[str], counters: Sequence[str],
           with_hint: bool, hint_prefix: str = "_h_") -> pd.DataFrame:
    n = len(agg)
    # the metrics' values in one block, a row each (the frame made of it below takes it without a copy; a dict of
    # arrays was stacked into a new block: both at once at the peak of the month's interval level)
    block = np.full((len(ids), n), np.nan)
    vals = dict(zip(ids, block))
    hint = np.full(n, None if not with_hint else NA, dtype=object)
    gen = agg["generation"].astype(object).to_numpy()
    for g in pd.unique(gen):
        fs = sets.get(g)
        if fs is None:
            continue
        idx = np.flatnonzero(gen == g)
        sub = agg if len(idx) == n else agg.iloc[idx]      # one generation: its rows are all (no copy)
        have = set(sub.columns)
        env = _floats(sub, [c for c in fs.counters() if c in have] + ["CPSP", "INTERVAL"])
        for mid, v in evaluate_set(fs, env, len(idx)).items():
            if mid in vals:
                vals[mid][idx] = v
        if with_hint and _hint_applies(fs):
            hcols = [hint_prefix + c for c in fs.counters() if hint_prefix + c in have]
            henv = dict(zip((c[len(hint_prefix):] for c in hcols), _floats(sub, hcols).values()))
            henv["CPSP"], henv["INTERVAL"] = env["CPSP"], env["INTERVAL"]
            hv = evaluate_set(fs, henv, len(idx), only=("L1MP", "RNI"))
            hint[idx] = classify(hv["L1MP"], hv["RNI"])
    del vals
    out = pd.DataFrame(block.T, index=agg.index, columns=list(ids), copy=False)
    out["Workload_Hint"] = hint
    return out


def _floats(df: pd.DataFrame, names: list[str]) -> dict[str, np.ndarray]:
    """The columns ``names`` of ``df`` (unique names) as float64 arrays: each float64 column its own array (a view
    of the frame's block, never written: the formulas make new arrays), others converted.  Not a block of all of
    them (``df[names].to_numpy()``): on the month's interval level (46,080 rows x 74 counters) that took the columns
    and interleaved them, two 27 MB copies at the export's peak, and cost more than these look-ups (a pandas
    ``df[c]`` per column cost more than the formulas on a few aggregated rows: the frame's own column arrays)."""
    if not names:
        return {}
    get = getattr(df, "_get_column_array", None)
    pos = df.columns.get_indexer(names) if get is not None and df.columns.is_unique else None
    if pos is None or (pos < 0).any():        # another pandas, a name twice or missing: the public look-up
        return {c: df[c].to_numpy(dtype=np.float64) for c in names}
    out = {}
    for c, i in zip(names, pos):
        a = get(int(i))
        out[c] = a if isinstance(a, np.ndarray) and a.dtype == np.float64 else np.asarray(a, dtype=np.float64)
    return out


def metrics_level(by: str) -> str:
    """The aggregation level behind a ``by`` name (``interval`` is ``class_interval``)."""
    if by not in LEVELS and by != "cpu_window":
        raise ValueError(f"by must be one of {', '.join(LEVELS)}; got {by!r}")
    return "class_interval" if by == "interval" else by


def level_metrics(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str], level: str,
                  start=None, end=None, nodes=None, is_summary: bool = False,
                  by_cols: Sequence[str] = ()) -> pd.DataFrame:
    """Unsorted metric rows of one aggregation level (``is_summary`` flags them as summary rows); ``by_cols``:
    more columns of ``iv`` to group by (``aggregate``), kept after the identity columns."""
    rows = select_rows(iv, start, end, nodes)
    return _level_frame(rows, level, sets, metric_ids(sets), counters, is_summary, by_cols)


def with_summary(body: pd.DataFrame, window: pd.DataFrame | None, level: str) -> pd.DataFrame:
    """Interval rows plus (optionally) their whole-window summary rows, in the report order."""
    out = pd.concat([body, window], ignore_index=True) if window is not None else body
    keys = LEVEL_KEYS[level][0]
    ident = [c for c in _IDENT if c in keys]
    sort = ident + ["summary", "interval_end"]
    return out.sort_values(sort, kind="stable", ignore_index=True) if len(out) else out


def compute_metrics(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str], by: str = "interval",
                    start=None, end=None, nodes=None, summary: bool = False) -> pd.DataFrame:
    """The metrics frame for one level (see module docstring and ``Workspace.metrics``)."""
    level = metrics_level(by)
    body = level_metrics(iv, sets, counters, level, start, end, nodes)
    window = (level_metrics(iv, sets, counters, WINDOW_OF[level], start, end, nodes, True)
              if summary and WINDOW_OF[level] != level else None)
    return with_summary(body, window, level)


def _level_frame(rows: pd.DataFrame, level: str, sets: dict[str, FormulaSet], ids: Sequence[str],
                 counters: Sequence[str], is_summary: bool, by_cols: Sequence[str] = ()) -> pd.DataFrame:
    keys = LEVEL_KEYS[level][0]
    with_hint = level not in ("cpu", "cpu_window")
    hc = hint_counters(sets, counters) if with_hint else []
    agg = aggregate(rows, level, counters, hc, by_cols)
    mets = _apply(agg, sets, ids, counters, with_hint)
    ident = [c for c in _IDENT if c in keys]
    extra = [c for c in by_cols if c not in ident]
    out = agg[ident + extra + ["interval_start", "interval_end", "n_cpus", "generation", "formula_set"]].copy()
    for c in ident:
        if c != "cpu":
            out[c] = out[c].astype(object)
    out["generation"] = out["generation"].astype(object)
    out["formula_set"] = out["formula_set"].astype(object)
    out = pd.concat([out, mets], axis=1)
    out["quality"] = quality_strings(agg["qbits"].to_numpy(dtype=np.int64)) if len(agg) else []
    out["left_out"] = agg["left_out"].to_numpy(dtype=np.int64) if len(agg) else np.zeros(0, np.int64)
    out["summary"] = is_summary
    return out
