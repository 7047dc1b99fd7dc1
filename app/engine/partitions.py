"""What the machine's partition data says about every LPAR, and how much of a row's time its parts cover.

* :func:`partition_summary`: z/VM D0R15/D0R16 rows (one per partition, processor type and interval) summed up per
  LPAR over a time window: processor counts by type, weights, capping, and busy in the same unit as LPARCPU
  (percent of one CPU, summed over the LPAR's CPUs) with the per-CPU average beside it.  LPARs without counters
  (a coupling facility, a z/OS LPAR not sending SMF 113) are marked ``partition data only``.
* :func:`coverage`: for CEC, LPAR and class rows, the share of the row's time span that its children (LPARs,
  CPUs) actually cover, and which child is short, so a level step in a CEC timeline (one LPAR's data ending a day
  before the others') is not read as a change in the workload.

Pure pandas; no Qt, no byte layouts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.engine.aggregate import window_mask

__all__ = ["partition_summary", "coverage", "coverage_of_spans", "enrich", "PARTITION_SUMMARY_COLUMNS", "BUSY_UNIT", "COVERAGE_COLUMNS",
           "REPORT_PARTITION_COLUMNS"]

BUSY_UNIT = "% of one CPU, summed over the LPAR's CPUs (as LPARCPU)"
PARTITION_SUMMARY_COLUMNS = ["cec", "lpar", "lpar_number", "data", "n_cpus", "processors", "weights", "weight", "capped",
                             "busy_sum_pct", "busy_per_cpu_pct", "first", "last"]
# columns a report row gains: the coverage of CEC/LPAR/class rows by their children, and for LPAR rows what the
# machine's partition data says (z/VM D0R16; partition_busy in % of one CPU summed over the LPAR's CPUs)
COVERAGE_COLUMNS = ["coverage_pct", "coverage_note"]
REPORT_PARTITION_COLUMNS = ["data", "partition_cpus", "processors", "weights", "capped", "partition_busy_sum_pct",
                     "partition_busy_per_cpu_pct"]
_CHILD = {"cec": ["lpar", "system"], "lpar": ["class", "cpu"], "class": ["cpu"]}
_KEYS = {"cec": ["cec"], "lpar": ["cec", "lpar", "system"], "class": ["cec", "lpar", "system", "class"]}
_TYPE_ORDER = ["CP", "GCP", "IFL", "zIIP", "zAAP", "ICF"]


def _type_key(t: str) -> tuple[int, str]:
    return (_TYPE_ORDER.index(t) if t in _TYPE_ORDER else len(_TYPE_ORDER), t)


def partition_summary(parts: pd.DataFrame, measured: set[tuple[str, str]] | None = None,
                      start=None, end=None) -> pd.DataFrame:
    """One row per partition (CEC, LPAR) of the partition data in the window ``(start, end]``.

    Parameters
    ----------
    parts : DataFrame
        Partition rows (``Workspace.partitions``): cec, lpar, lpar_number, class, cpus, weight, capped, busy_pct
        (per-CPU average of that processor type in the interval), time.
    measured : set of (cec, lpar), optional
        LPARs that have CPU MF counters; the others are marked ``partition data only``.

    Returns
    -------
    DataFrame
        :data:`PARTITION_SUMMARY_COLUMNS`.  ``n_cpus`` is the sum over processor types of the latest interval
        (4 CPs and 2 zIIPs are 6 CPUs); ``weights`` per type as text, ``weight`` that of the first type (CP before
        zIIP); ``busy_sum_pct`` is the mean over intervals of sum(busy_pct x cpus) over
        the types (:data:`BUSY_UNIT`), ``busy_per_cpu_pct`` that divided by the CPUs; empty (NaN) when no
        interval of the partition has a busy value.
    """
    if parts is None or not len(parts):
        return pd.DataFrame(columns=PARTITION_SUMMARY_COLUMNS)
    p = parts.loc[window_mask(parts["time"], start, end)]
    if not len(p):
        return pd.DataFrame(columns=PARTITION_SUMMARY_COLUMNS)
    p = p.assign(cec=p["cec"].astype(str), lpar=p["lpar"].astype(str), cls=p["class"].astype(str),
                 cpus=p["cpus"].astype(np.int64))
    busy = p["busy_pct"].to_numpy(dtype=np.float64) * p["cpus"].to_numpy(dtype=np.float64)
    p = p.assign(busy_x=busy)
    g_t = p.groupby(["cec", "lpar", "time"], sort=False)
    per_t = pd.DataFrame({"busy": g_t["busy_x"].sum(min_count=1), "cpus": g_t["cpus"].sum()}).reset_index()
    per_t = per_t.loc[per_t["busy"].notna()]
    c = per_t["cpus"].to_numpy(dtype=np.float64)
    per_t = per_t.assign(per_cpu=per_t["busy"].to_numpy() / np.where(c > 0, c, np.nan))
    busy_of = per_t.groupby(["cec", "lpar"], sort=False)[["busy", "per_cpu"]].mean()    # one pass, every LPAR
    rows = []
    measured = measured or set()
    for (cec, lpar), g in p.groupby(["cec", "lpar"], sort=True):
        last_t = g["time"].max()
        latest = g.loc[g["time"] == last_t].sort_values("cls", key=lambda s: s.map(_type_key))
        by_type = latest.groupby("cls", sort=False).agg(cpus=("cpus", "sum"), weight=("weight", "max"))
        n = int(by_type["cpus"].sum())
        if (cec, lpar) in busy_of.index:
            busy_sum, per_cpu = (float(x) for x in busy_of.loc[(cec, lpar)])
        else:
            busy_sum = per_cpu = np.nan
        rows.append({
            "cec": cec, "lpar": lpar, "lpar_number": int(g["lpar_number"].iloc[0]),
            "data": "counters" if (cec, lpar) in measured else "partition data only",
            "n_cpus": n,
            "processors": ", ".join(f"{k} {int(v)}" for k, v in by_type["cpus"].items()),
            "weights": ", ".join(f"{k} {int(v)}" for k, v in by_type["weight"].items()),
            "weight": int(by_type["weight"].iloc[0]),          # of the first type (CP before zIIP, IFL, ICF)
            "capped": bool(g["capped"].astype(bool).any()),
            "busy_sum_pct": busy_sum, "busy_per_cpu_pct": per_cpu,
            "first": g["time"].min(), "last": last_t,
        })
    return pd.DataFrame(rows, columns=PARTITION_SUMMARY_COLUMNS)


def coverage(iv: pd.DataFrame, level: str, start=None, end=None) -> pd.DataFrame:
    """Time coverage of CEC, LPAR or class rows by their children, in the window ``(start, end]``.

    A child (an LPAR of a CEC, a CPU of an LPAR or class) covers ``[first interval start, last interval end]``.
    ``coverage_pct`` = 100 x mean over children of (child span / row span); a child is *short* when it starts or
    ends more than 1.5 of its usual interval lengths inside the row's span.  ``coverage_note`` names the short
    children with their spans ("" when every child covers the whole row).

    Returns a frame with the level's key columns, ``coverage_pct`` and ``coverage_note``; empty for other levels.
    """
    keys = _KEYS.get(level)
    cols = (keys or []) + ["coverage_pct", "coverage_note"]
    if keys is None or not len(iv):
        return pd.DataFrame(columns=cols)
    child = _CHILD[level]
    # only the columns the spans read (not a copy of every counter of the window's rows)
    need = list(dict.fromkeys([*keys, *child, "interval_start", "interval_end", "interval_s"]))
    r = iv.loc[window_mask(iv["interval_end"], start, end), need]
    if not len(r):
        return pd.DataFrame(columns=cols)
    spans = (r.groupby(keys + child, observed=True, sort=True)
             .agg(first=("interval_start", "min"), last=("interval_end", "max"), step=("interval_s", "median"))
             .reset_index())
    return coverage_of_spans(spans, level)


def coverage_of_spans(spans: pd.DataFrame, level: str) -> pd.DataFrame:
    """:func:`coverage` from the children's spans: the level's key and child columns, ``first`` (earliest
    interval start), ``last`` (latest interval end), ``step`` (median interval length, s); a fleet dataset
    computes them with SQL."""
    keys = _KEYS[level]
    cols = keys + ["coverage_pct", "coverage_note"]
    if not len(spans):
        return pd.DataFrame(columns=cols)
    # one pass over every child (a fleet query's --every gives thousands of groups): spans, fractions and the
    # short children as columns; a note's text made only for the groups that have short children
    grouped = spans.groupby(keys, observed=True, sort=True)
    code = grouped.ngroup().to_numpy()
    ok = code >= 0                                 # (a row with no key is in no group)
    sp = spans.loc[ok]
    code = code[ok].astype(np.int64)
    lo = grouped["first"].transform("min").loc[ok]
    hi = grouped["last"].transform("max").loc[ok]
    total = (hi - lo).dt.total_seconds().to_numpy()
    whole = (sp["last"] - sp["first"]).dt.total_seconds().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(whole / total, 0, 1)
    tol = pd.to_timedelta(1.5 * sp["step"].fillna(0).to_numpy(), unit="s")
    short = (((sp["first"] - lo) > tol) | ((hi - sp["last"]) > tol)).to_numpy()
    n = int(code.max()) + 1 if len(code) else 0
    valid = ~np.isnan(frac)                        # (a child without a span: left out of the mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.bincount(code, np.where(valid, frac, 0.0), n) / np.bincount(code, valid, n) * 100.0
    first_row = np.unique(code, return_index=True)[1]
    empty = (total[first_row] <= 0)                # a group of no time: fully covered
    pct[empty] = 100.0
    notes = [""] * n
    for k in np.unique(code[short & ~empty[code]]):
        rows = sp.loc[(code == k) & short]
        glo, ghi = lo.iloc[first_row[k]], hi.iloc[first_row[k]]
        texts = [f"{_child_name(level, x)} {x['first']:%Y-%m-%d %H:%M}..{x['last']:%Y-%m-%d %H:%M}"
                 for _, x in rows.iterrows()]
        notes[k] = (f"covers {glo:%Y-%m-%d %H:%M}..{ghi:%Y-%m-%d %H:%M} UTC but only partly: "
                    + "; ".join(texts[:6]) + (f"; {len(texts) - 6} more" if len(texts) > 6 else ""))
    key_rows = sp.iloc[first_row][keys]
    return pd.DataFrame(list(zip(*(key_rows[k].tolist() for k in keys), pct.tolist(), notes)), columns=cols)


def _child_name(level: str, x: pd.Series) -> str:
    if level == "cec":
        return f"LPAR {x['lpar']}"
    if level == "lpar":
        return f"{x['class']} CPU {int(x['cpu'])}"
    return f"CPU {int(x['cpu'])}"


def enrich(ws, m: pd.DataFrame, by: str, start=None, end=None, cov: pd.DataFrame | None = None) -> pd.DataFrame:
    """Add coverage (CEC, LPAR, class rows) and partition data (LPAR rows) to a metrics frame; for ``lpar`` also
    append one row per partition known only from partition data (no counters), marked in ``data``.  ``cov``:
    the coverage computed already (a fleet dataset's, :func:`coverage_of_spans`); ``ws`` then needs only
    ``partitions``."""
    if by not in ("cec", "lpar", "class"):
        return m
    cov = coverage(ws.intervals, by, start, end) if cov is None else cov
    keys = [c for c in cov.columns if c not in COVERAGE_COLUMNS]
    out = m.copy()
    if len(out):
        for c in keys:
            out[c] = out[c].astype(str) if c != "cpu" else out[c]
        cov = cov.assign(**{c: cov[c].astype(str) for c in keys})
        out = out.merge(cov, on=keys, how="left") if len(cov) else out.assign(coverage_pct=np.nan, coverage_note="")
    if by != "lpar":
        return out
    measured = {(str(a), str(b)) for a, b in zip(out["cec"], out["lpar"])} if len(out) else set()
    ps = partition_summary(ws.partitions, measured, start, end)
    if not len(ps):
        return out.assign(data="counters") if len(out) else out
    ps = ps.rename(columns={"busy_sum_pct": "partition_busy_sum_pct", "busy_per_cpu_pct": "partition_busy_per_cpu_pct"})
    ps["partition_cpus"] = ps["n_cpus"]
    pcols = ["cec", "lpar"] + [c for c in REPORT_PARTITION_COLUMNS if c != "data"]
    if len(out):
        out = out.merge(ps[pcols], on=["cec", "lpar"], how="left")
        out["data"] = "counters"
    only = ps.loc[ps["data"] == "partition data only"].assign(system="", interval_start=lambda d: d["first"],
                                                              interval_end=lambda d: d["last"])
    only = only.drop(columns=["first", "last", "lpar_number"])
    return pd.concat([out, only], ignore_index=True) if len(out) else only.reset_index(drop=True)
