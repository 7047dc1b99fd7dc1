"""Shared shapes of the XLSX and PPTX exports: which columns a level shows, in which order,
with which header and rounding (the presentation layout of :mod:`app.engine.layout`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from app.engine.compare import node_labels
from app.engine.layout import ColumnSpec, display, presentation_columns

__all__ = ["Column", "level_columns", "metric_specs", "SHEETS", "excel_format", "display", "zone_offsets", "zoned_times",
           "comparison_offsets"]

# sheet title, level (Workspace.metrics by=), identity columns shown
SHEETS = [("CEC", "cec", ["cec"]), ("LPAR", "lpar", ["cec", "lpar", "system"]),
          ("Class", "class", ["cec", "lpar", "system", "class"]),
          ("Pools", "pool", ["cec", "class"]),
          ("LPAR intervals", "lpar_interval", ["cec", "lpar", "system"]),
          ("Intervals", "interval", ["cec", "lpar", "system", "class"]),
          ("CPU intervals", "cpu", ["cec", "lpar", "system", "class", "cpu"])]
_HEAD = {"cec": "CEC", "lpar": "LPAR", "system": "System", "class": "Class", "cpu": "CPU", "label": "Name",
         "interval_start": "Interval start (UTC)", "interval_end": "Interval end (UTC)", "n_cpus": "CPUs",
         "generation": "Generation", "formula_set": "Formula set", "quality": "Quality"}


@dataclass(frozen=True)
class Column:
    """One exported column: frame column ``key``, ``header``, ``kind`` (text, int, time, metric),
    ``decimals`` (metrics) and ``tooltip``."""

    key: str
    header: str
    kind: str
    decimals: int = 0
    tooltip: str = ""


# before/after overlays of every export: two colour families (hex RGB), so the sides differ by colour as well as by
# the dash of the before lines
SIDE_COLORS = {"before": ["1F77B4", "17BECF", "08519C", "6BAED6", "3182BD", "9ECAE1", "2171B5", "4292C6"],
               "after": ["FF7F0E", "D62728", "A63603", "FDAE6B", "E6550D", "B2182B", "F16913", "CB181D"]}

def metric_specs(ws, generations: list[str]) -> list[ColumnSpec]:
    """Presentation columns of the generations present (first generation's order, then the others' extras)."""
    out: list[ColumnSpec] = []
    seen: set[str] = set()
    for g in generations or ["z16"]:
        for c in presentation_columns(g, ws.formula_sets):
            if c.id not in seen:
                seen.add(c.id)
                out.append(c)
    return out


def level_columns(ws, frame: pd.DataFrame, ident: list[str], main_only: bool = False,
                  zone: str = "UTC") -> list[Column]:
    """Columns of a level sheet/table: Name, identity, times, presentation metrics, then bookkeeping;
    ``zone``: the name of the zone the times are in (:meth:`app.engine.timezone.Zones.label`), in their headers."""
    gens = list(dict.fromkeys(frame["generation"].astype(str))) if len(frame) else []
    specs = metric_specs(ws, gens)
    if main_only:
        specs = [s for s in specs if s.group in ("Main", "Hint")]
    cols = [Column("label", _HEAD["label"], "text")]
    cols += [Column(c, _HEAD[c], "int" if c == "cpu" else "text") for c in ident]
    cols += [Column(t, _HEAD[t].replace("(UTC)", f"({zone})"), "time") for t in ("interval_start", "interval_end")]
    for s in specs:
        kind = "text" if s.id == "Workload_Hint" else "metric"
        cols.append(Column(s.id, s.header, kind, s.decimals, s.tooltip))
    cols += [Column("n_cpus", _HEAD["n_cpus"], "int"), Column("generation", _HEAD["generation"], "text"),
             Column("formula_set", _HEAD["formula_set"], "text"), Column("quality", _HEAD["quality"], "text")]
    # what `report` adds to a row (engine.partitions.enrich): the partition data of an LPAR and the coverage
    cols += [Column(k, h, kind, dec, tip) for k, h, kind, dec, tip in _EXTRA if k in frame.columns]
    return cols


_EXTRA = [("n_lpars", "LPARs", "int", 0, "LPARs with counters whose CPUs of the type make up the CEC pool"),
          ("data", "Data", "text", 0, "counters, or partition data only (an LPAR known only from z/VM's D0R16)"),
          ("processors", "Processors", "text", 0, "logical processors by type, from the partition data"),
          ("weights", "Weights", "text", 0, "LPAR weight by processor type, from the partition data"),
          ("capped", "Capped", "text", 0, "capping from the partition data"),
          ("partition_busy_sum_pct", "Partition busy % (sum)", "metric", 1,
           "busy from the partition data, % of one CPU summed over the LPAR's CPUs (as LPARCPU)"),
          ("coverage_pct", "Coverage %", "metric", 0, "share of the row's time its parts cover"),
          ("coverage_note", "Coverage note", "text", 0, "which part covers less of the time")]


def with_labels(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """The frame with an unambiguous ``label`` column (CEC and generation added where names repeat); the other
    columns are shared with ``frame`` (pandas copies on write), not copied: a workbook's level sheet held its
    level twice."""
    out = frame.copy(deep=False)
    out["label"] = node_labels(frame, "class" if by == "pool" else by) if len(frame) else pd.Series(dtype=object)
    return out


def excel_format(decimals: int) -> str:
    """Excel number format with ``decimals`` places."""
    return "0" if decimals <= 0 else "0." + "0" * decimals



# identity columns of `report --format csv` per level, and the extra columns after quality: the coverage of
# CEC/LPAR/class rows by their children and, for LPAR rows, the machine's partition data
REPORT_IDENT = {"pool": ["cec", "lpar", "system", "class"], "cpu": ["cec", "lpar", "system", "class", "cpu"], "interval": ["cec", "lpar", "system", "class"],
                "class": ["cec", "lpar", "system", "class"], "lpar": ["cec", "lpar", "system"], "cec": ["cec"]}


def csv_columns(by: str, ids: list[str]) -> list[str]:
    """The columns of ``report --format csv --by <by>`` (and of every CSV export of that level)."""
    from app.engine.partitions import COVERAGE_COLUMNS, REPORT_PARTITION_COLUMNS

    extra = (REPORT_PARTITION_COLUMNS if by == "lpar" else []) + (["n_lpars"] if by == "pool" else []) + (COVERAGE_COLUMNS if by in ("cec", "lpar", "class") else [])
    return REPORT_IDENT[by] + ["interval_start", "interval_end"] + ids + ["Workload_Hint", "n_cpus", "generation",
                                                                          "formula_set", "quality", "left_out"] + extra


def zone_offsets(ws, tz: str, frame: pd.DataFrame, col: str) -> np.ndarray:
    """Seconds east of UTC of each time of ``frame[col]`` in ``tz`` (each row its own system's offset for
    ``local``; a CEC pool row its CEC's, when the CEC's systems share their offsets); zeros for ``utc``."""
    if tz in (None, "utc") or not len(frame) or col not in frame.columns:
        return np.zeros(len(frame))
    z = ws.zones
    off = z.offsets(tz, frame[col], frame)
    if tz == "local" and "lpar" in frame.columns:
        pool = frame["lpar"].astype(str).to_numpy() == "(pool)"
        if pool.any():
            off[pool] = z.offsets(tz, frame[col].to_numpy()[pool], frame.loc[pool, ["cec"]])
    return off


def zoned_times(ws, tz: str, frame: pd.DataFrame, cols=("interval_start", "interval_end")
                ) -> tuple[dict[str, np.ndarray], str]:
    """The wall-clock times (naive datetime64) of ``frame``'s time columns in ``tz``, one vectorized conversion
    per column, and the zone's name for headers and axes (``UTC``, ``local, UTC+01:00/UTC+02:00``, an IANA
    name): the offsets the shown times carry."""
    out: dict[str, np.ndarray] = {}
    used = []
    for c in cols:
        if c not in frame.columns:
            continue
        t = pd.to_datetime(pd.Series(frame[c].to_numpy())).to_numpy("datetime64[ns]")
        if tz in (None, "utc"):
            out[c] = t
            continue
        off = zone_offsets(ws, tz, frame, c)
        out[c] = t + (off * 1_000_000_000).astype(np.int64).astype("timedelta64[ns]")
        used.append(off[~np.isnat(t)])
    if tz in (None, "utc"):
        return out, "UTC"
    return out, ws.zones.label(tz, np.concatenate(used) if used else None)


def comparison_offsets(c, tz: str, cols=("interval_start", "interval_end")) -> dict[str, np.ndarray]:
    """Seconds east of UTC of each time of the comparison table ``c.table`` in ``tz``: a ``before`` row by the
    before side's workspace (its own system's offsets for ``local``), an ``after`` row by the after side's; ratio
    and delta rows hold no times (0).  Empty for ``utc``: the times stay UTC."""
    t = c.table
    if tz in (None, "utc") or not len(t):
        return {}
    out = {col: np.zeros(len(t)) for col in cols if col in t.columns}
    kinds = t["row"].astype(str).to_numpy()
    for side, sel in (("before", c.before), ("after", c.after)):
        rows = np.flatnonzero(kinds == side)
        if not len(rows):
            continue
        part = t.iloc[rows]
        for col in out:
            out[col][rows] = zone_offsets(sel.workspace, tz, part, col)
    return out


def comparison_zone(c, tz: str) -> str:
    """The name of the zone a comparison's times are shown in: ``UTC``, an IANA name, or ``local, ...`` with the
    offsets of both sides' systems (:meth:`app.engine.timezone.Zones.label`)."""
    if tz in (None, "utc"):
        return "UTC"
    if tz != "local":
        return tz
    offs = comparison_offsets(c, tz)
    kinds = c.table["row"].astype(str).to_numpy()
    has = np.isin(kinds, ("before", "after"))
    for col, o in offs.items():
        has &= c.table[col].notna().to_numpy()
    used = np.concatenate([o[has] for o in offs.values()]) if offs else np.zeros(0)
    return c.after.workspace.zones.label(tz, used if len(used) else None)
