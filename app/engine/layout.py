"""Presentation: IBM column order, headers, rounding and tooltips per generation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.engine.catalog import GENERIC, FormulaSet, builtin_formula_sets
from app.engine.hint import HINT_STATUS, rules_text

__all__ = ["ColumnSpec", "presentation_columns", "metric_info", "MEANINGS", "HINT_ID", "main_columns", "format_value", "display", "compare_cell",
           "metric_decimals", "GAP_STEPS", "gap_cuts", "gapped"]

HINT_ID = "Workload_Hint"
_MAIN_Z10 = ["CPI", "PRBSTATE", "Est_Instr_Cmplx_CPI", "Est_Finite_CPI", "Est_SCPL1M", "L1MP", "L15P", "L2LP",
             "L2RP", "MEMP", "RNI", "LPARCPU", "Eff_GHz"]
_MAIN = ["CPI", "PRBSTATE", "Est_Instr_Cmplx_CPI", "Est_Finite_CPI", "Est_SCPL1M", "L1MP", "L2P", "L3P", "L4LP",
         "L4RP", "MEMP", "RNI", "LPARCPU", "Eff_GHz"]
_GROUPS = [("Hint", [HINT_ID]),
           ("TLB", ["TLB1_Miss_Pct_CPU", "TLB1_Cycles_per_Miss", "PTE_Pct_TLB1_Miss"]),
           ("MT", ["Thread_Density", "Core_Active_Pct", "ST_IPC", "MT_IPC_per_thread", "MT_Throughput_Gain_est"]),
           ("Other", ["SUPSTATE", "MIPS_per_CPU", "Raw_Penalty_CPI"])]

MEANINGS = {
    "CPI": "cycles per instruction",
    "PRBSTATE": "% of instructions executed in problem state",
    "SUPSTATE": "% of instructions executed in supervisor state",
    "L1MP": "L1 cache misses (I+D directory writes) per 100 instructions",
    "L15P": "% of L1 misses sourced from the core-private L1.5 cache",
    "L2LP": "% of L1 misses sourced from the local-book L2 cache",
    "L2RP": "% of L1 misses sourced from a remote-book L2 cache",
    "L2P": "% of L1 misses sourced from the core's L2 cache",
    "L3P": "% of L1 misses sourced from the chip-level L3 (z16/z17: other L2s on the chip, virtual L3)",
    "L4LP": "% of L1 misses sourced from the local L4 / node / drawer (z16/z17: virtual L4 on the drawer)",
    "L4RP": "% of L1 misses sourced from remote L4 / other drawers",
    "MEMP": "% of L1 misses sourced from memory",
    "RNI": "relative nest intensity: how far into the shared caches and memory L1 misses go (per generation)",
    "Est_Instr_Cmplx_CPI": "CPI with an infinitely large L1 (instruction complexity part): CPI - Est Finite CPI",
    "Est_Finite_CPI": "cycles per instruction spent waiting for L1 misses (finite cache part)",
    "Est_SCPL1M": "estimated sourcing cycles per L1 miss",
    "LPARCPU": "busy in % of one engine (sum over the logical CPUs of the row)",
    "Eff_GHz": "effective clock in GHz",
    "MIPS_per_CPU": "million instructions per busy CPU second",
    "TLB1_Miss_Pct_CPU": "% of CPU cycles spent on TLB misses",
    "TLB1_Cycles_per_Miss": "cycles per TLB miss",
    "PTE_Pct_TLB1_Miss": "% of TLB misses that wrote a page-table entry",
    "Raw_Penalty_CPI": "L1 penalty cycles per instruction without correction (analyzer substitute for zEC12)",
    "ST_IPC": "instructions per cycle while the CPU ran alone on its core",
    "MT_IPC_per_thread": "instructions per cycle per thread while sharing the core",
    "MT_Throughput_Gain_est": "estimated SMT throughput gain (about the maximum capacity factor)",
    "Thread_Density": "average active threads per dispatched core (MT-diagnostic counters, one CPU per core)",
    "Core_Active_Pct": "% of the interval at least one thread of the core was active (approximation of core busy)",
    HINT_ID: "LSPR workload category (LOW / AVERAGE / HIGH) from L1MP and RNI, lost-data intervals left out",
}


@dataclass(frozen=True)
class ColumnSpec:
    """One presentation column: metric id, header, decimals, group, tooltip."""

    id: str
    header: str
    decimals: int
    group: str
    tooltip: str


def _sets(sets: dict[str, FormulaSet] | None) -> dict[str, FormulaSet]:
    return sets if sets is not None else builtin_formula_sets()


def metric_info(generation: str, metric_id: str, sets: dict[str, FormulaSet] | None = None) -> dict:
    """Expression, unit, status, decimals and formula-set version of one metric (for tooltips).

    Returns an empty dict when the generation has no such metric.
    """
    fs = _sets(sets).get(generation)
    if fs is None:
        return {}
    if metric_id == HINT_ID:
        rni = fs.metrics.get("RNI")
        ok = bool(fs.workload_hint and rni is not None and rni.expr)
        return {"expr": "; ".join(rules_text()) if ok else None, "unit": "category", "status": HINT_STATUS,
                "decimals": 0, "formula_set": fs.version, "header": "Workload Hint", "group": "Hint",
                "meaning": MEANINGS[HINT_ID] + ("" if ok else " (n/a: no RNI formula for this generation)"),
                "note": ""}
    m = fs.metrics.get(metric_id)
    if m is None:
        return {}
    return {"expr": m.expr, "unit": m.unit, "status": m.status, "decimals": m.decimals,
            "formula_set": fs.version, "header": m.header, "group": m.group,
            "meaning": MEANINGS.get(metric_id, m.note or metric_id), "note": m.note}


def _tooltip(info: dict) -> str:
    expr = info["expr"] if info["expr"] else "no formula known for this generation (shown empty)"
    text = f"{info['meaning']}\nFormula: {expr}\nFormula set: {info['formula_set']} - status: {info['status']}"
    if info.get("unit"):
        text += f"\nUnit: {info['unit']}"
    return text


def main_columns(generation: str) -> list[str]:
    """The generation's main IBM presentation columns (ids)."""
    return list(_MAIN_Z10 if generation == "z10" else _MAIN)


def presentation_columns(generation: str, sets: dict[str, FormulaSet] | None = None) -> list[ColumnSpec]:
    """Columns in IBM's CPU MF presentation order for a generation.

    z10: CPI, Prb State, Est Instr Cmplx CPI, Est Finite CPI, Est SCPL1M, L1MP,
    L15P, L2LP, L2RP, MEMP, Rel Nest Intensity, LPARCPU, Eff GHz; z196 and later:
    ... L1MP, L2P, L3P, L4LP, L4RP, MEMP, ...; then the groups Hint, TLB, MT,
    Other (and any user-defined metrics).  Only metrics the generation's formula
    set defines are listed (``generic``: CPI, Prb State, L1MP, LPARCPU, Eff GHz, MIPS).
    """
    ss = _sets(sets)
    fs = ss.get(generation) or ss.get(GENERIC)
    if fs is None:
        return []
    gen = fs.generation
    cols: list[ColumnSpec] = []
    seen: set[str] = set()

    def add(mid: str, group: str) -> None:
        if mid in seen or (mid != HINT_ID and mid not in fs.metrics):
            return
        info = metric_info(gen, mid, ss)
        seen.add(mid)
        cols.append(ColumnSpec(mid, info["header"], int(info["decimals"]), group, _tooltip(info)))

    for mid in main_columns(gen):
        add(mid, "Main")
    for group, ids in _GROUPS:
        for mid in ids:
            if mid == HINT_ID and gen == GENERIC:
                continue
            add(mid, group)
    for mid in fs.metrics:
        add(mid, fs.metrics[mid].group or "Other")
    return cols


MISSING = "n/a"     # a value that does not apply or cannot be computed, written the same way in CLI tables and exports


def format_value(value: object, decimals: int | None, missing: str = "", sign: bool = False) -> str:
    """The one display form of a metric value (window, readout, CLI, exports): ``decimals`` places (the
    presentation's rounding of the metric, 2 when None); ``missing`` for None/NaN/inf/empty text; other text stays
    as it is; a value that rounds to zero is "0.0", never "-0.0"; ``sign`` puts "+" on positive values (deltas)."""
    if value is None or (isinstance(value, str) and not value):
        return missing
    if isinstance(value, str):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    if f != f or f in (float("inf"), float("-inf")):
        return missing
    d = 2 if decimals is None else decimals
    if round(f, d) == 0:
        return f"{0.0:.{d}f}"
    return f"{f:+.{d}f}" if sign else f"{f:.{d}f}"


def display(value: object, decimals: int | None, sign: bool = False) -> str:
    """A value in a text table (CLI tables, slides, the comparison's numbers): :func:`format_value` with
    :data:`MISSING` ("n/a") for a value that does not apply."""
    return format_value(value, decimals, MISSING, sign=sign)


def compare_cell(row_kind: str, mid: str, value: object, decimals: int) -> str:
    """A comparison cell as every output shows it: before/after rows with the metric's rounding, the ratio row with
    2 decimals, the delta row signed; the workload hint only on before/after rows."""
    if mid == "Workload_Hint":
        return "" if row_kind in ("ratio", "delta") else format_value(value, 0, MISSING)
    if row_kind == "ratio":
        return format_value(value, 2, MISSING)
    if row_kind == "delta":
        return format_value(value, decimals, MISSING, sign=True)
    return format_value(value, decimals, MISSING)


_DECIMALS: dict[str, int] = {}


def metric_decimals(metric_id: str) -> int | None:
    """The presentation rounding of a metric id (the same in every generation's set), None when unknown."""
    if not _DECIMALS:
        for gen in builtin_formula_sets():
            for spec in presentation_columns(gen):
                _DECIMALS.setdefault(spec.id, spec.decimals)
    return _DECIMALS.get(metric_id)


GAP_STEPS = 1.5   # a time step longer than this many usual (median) steps is a gap in the data: lines break there


def gap_cuts(x) -> np.ndarray:
    """Positions ``i`` where the step ``x[i] - x[i-1]`` is a gap (more than :data:`GAP_STEPS` times the median
    step; none with fewer than two points or when the median step is not positive).  ``x``
    rises (interval ends, or hours from a selection's start); the charts of every view and export break there,
    e.g. between the days of a shift-filtered selection."""
    x = np.asarray(x, dtype=float)
    d = np.diff(x)
    if not len(d):
        return np.array([], dtype=int)
    usual = float(np.median(d))
    if not usual > 0:
        return np.array([], dtype=int)
    return np.flatnonzero(d > GAP_STEPS * usual) + 1


def gapped(x, *ys, ref=None) -> tuple[np.ndarray, ...]:
    """``(x, *ys)`` with one NaN point inserted in every gap (:func:`gap_cuts`), at the gap's middle x: a line
    drawn through the finite points only (pyqtgraph ``connect="finite"``, chart gaps) breaks there.  ``ref``: the
    same points in UTC when ``x`` is wall-clock time (the gaps are found there: a daylight-saving switch is no
    gap)."""
    x = np.asarray(x, dtype=float)
    ys = tuple(np.asarray(y, dtype=float) for y in ys)
    cut = gap_cuts(x if ref is None else ref)
    if not len(cut):
        return (x, *ys)
    xs = np.insert(x, cut, (x[cut - 1] + x[cut]) / 2)
    return (xs, *(np.insert(y, cut, np.nan) for y in ys))
