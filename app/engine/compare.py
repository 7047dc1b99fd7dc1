"""Before/after comparison: two selections side by side, IBM's ratio row, the CPI decomposition.

A :class:`Selection` is a set of tree nodes (NodeKeys) of a workspace with a time
window and an optional shift filter (:mod:`app.engine.shift`).  The "before" and
"after" selections may come from different files, machines and generations (a
z15 before and a z16 after of the same LPARs is the common case) and from
different workspaces.

:func:`compare` pairs the whole-window rows of both selections per LPAR
(``by="lpar"``) or per LPAR and processor class (``by="class"``) and returns a
:class:`Comparison`:

* ``table``: per pair the rows ``before``, ``after``, ``ratio`` (before / after:
  IBM's "% improvement" rows in its CPU MF presentations divide the old value by
  the new one, so CPI 8.2 before and 7.5 after give 1.09) and ``delta``
  (after - before), one column per metric id;
* ``columns``: the presentation columns (:func:`app.engine.layout.presentation_columns`);
* ``marks``: metric id -> reason, for metrics whose formula differs between the two
  generations' formula sets or is missing in one;
* ``cpi``: the CPI decomposition per pair (:func:`decompose_cpi`).

CPI decomposition (every generation with an Est Finite CPI formula)::

    CPI = Est Instr Cmplx CPI + Est Finite CPI          (ICX = CPI - F by definition)
    F   = L1MP/100 * Est SCPL1M                         (E143/B1 = (B2+B4)/B1 * E143/(B2+B4))
    dCPI = dICX + dF
    dF   = dL * (S0+S1)/2  +  dS * (L0+L1)/2            (midpoint / Shapley split, L = L1MP/100)

The two finite parts add up to ``dF`` exactly when ``F = L*S`` holds for both rows
(it does for every built-in set); otherwise the rest is reported as ``d_other``.

Pure pandas/numpy; no Qt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from app.engine.aggregate import _node_codes
from app.engine.layout import ColumnSpec, presentation_columns
from app.engine.metrics import metric_ids
from app.engine.shift import ShiftFilter, shifted_metrics

__all__ = ["Selection", "Comparison", "compare", "decompose_cpi", "waterfall", "formula_differences",
           "node_labels", "node_label", "qualify_names", "relative_axis", "RelativeAxis", "RATIO_LABEL", "DELTA_LABEL",
           "ROW_KINDS", "COMPARE_BY", "ratio_delta", "pair_keys", "TIMELINE_BY"]

ROW_KINDS = ("before", "after", "ratio", "delta")
COMPARE_BY = ("lpar", "class")
TIMELINE_BY = {"lpar": "lpar_interval", "class": "class_interval"}   # the interval level of each pairing
RATIO_LABEL = "ratio before/after"
RATIO_NOTE = ("ratio = before / after, as IBM's '% improvement' rows divide the old value by the new one "
              "(CPI 8.2 before, 7.5 after: ratio 1.09; the CPI is 8.5 % lower: (7.5 - 8.2) / 8.2)")
DELTA_LABEL = "delta after-before"
_NOT_NUMERIC = {"Workload_Hint"}
_IDENT = {"cec": ["cec"], "lpar": ["cec", "lpar", "system"], "class": ["cec", "lpar", "system", "class"],
          "cpu": ["cec", "lpar", "system", "class", "cpu"]}


# ------------------------------------------------------------------ selections
@dataclass(frozen=True)
class Selection:
    """One side of a comparison.

    ``workspace``: an :class:`app.engine.Workspace`; ``nodes``: NodeKeys such as
    ``("lpar", "8561-45A12", "ZOSA")`` (``None`` = everything in the workspace);
    ``start``/``end``: window, intervals ending in ``(start, end]`` (UTC);
    ``shift``: hours/days filter; ``name``: "before" / "after" (for texts).
    """

    workspace: Any
    nodes: tuple | None = None
    start: Any = None
    end: Any = None
    shift: ShiftFilter | None = None
    name: str = ""

    def metrics(self, by: str = "lpar", summary: bool = False) -> pd.DataFrame:
        """The selection's metrics frame at a level (see ``Workspace.metrics``), shift applied."""
        return shifted_metrics(self.workspace, by=by, start=self.start, end=self.end,
                               nodes=list(self.nodes) if self.nodes is not None else None,
                               shift=self.shift, summary=summary)

    def describe(self, tz: str = "utc") -> str:
        """One line: nodes, window, shift, e.g. ``ZOSA on 8561-45A12 (z15); 2026-10-05 00:00 .. ; 08:00-17:00``;
        the window in ``tz`` (``local``: each LPAR's own offsets; the zone named after it)."""
        m = self.metrics("lpar")
        if len(m):
            names = [f"{r['lpar']} on {r['cec']} ({r['generation']})"
                     for r in m[["lpar", "cec", "generation"]].to_dict("records")]
            what = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
            if tz in (None, "utc") or getattr(self.workspace, "zones", None) is None:
                first, last = m["interval_start"].min(), m["interval_end"].max()
                span = f"{_t(first)} .. {_t(last)} UTC"
            else:
                first, last, zone = _zoned_span(self.workspace.zones, tz, m)
                span = f"{_t(first)} .. {_t(last)} ({zone})"
        else:
            what, span = "nothing selected", "no intervals"
        text = f"{what}; {span}"
        if self.shift is not None and not self.shift.is_empty:
            text += f"; shift {self.shift.describe()}"
        return text


def _zoned_span(zones, tz: str, m: pd.DataFrame) -> tuple[Any, Any, str]:
    """The first start and last end of ``m``'s rows on the wall clock of ``tz`` (each row its own system's
    offsets for ``local``) and the zone's name (:meth:`app.engine.timezone.Zones.label`)."""
    ends = {}
    used = []
    for col in ("interval_start", "interval_end"):
        t = pd.to_datetime(pd.Series(m[col].to_numpy())).to_numpy("datetime64[ns]")
        off = zones.offsets(tz, t, m)
        ends[col] = t + (off * 1_000_000_000).astype(np.int64).astype("timedelta64[ns]")
        used.append(off[~np.isnat(t)])
    first = pd.Series(ends["interval_start"]).min()
    last = pd.Series(ends["interval_end"]).max()
    return first, last, zones.label(tz, np.concatenate(used))


def _t(v) -> str:
    ts = pd.Timestamp(v)
    return "?" if pd.isna(ts) else ts.strftime("%Y-%m-%d %H:%M")


# ------------------------------------------------------------------ labels
def node_label(rec: dict, by: str, qualified: bool = False) -> str:
    """Label of one metrics row: ``ZOSA``, ``ZOSA zIIP``, ``ZOSA GCP 3``; with ``qualified`` the CEC
    (type-serial) and generation are added: ``ZOSA (8561-45A12 z15)``."""
    if by == "cec":
        return f"{rec['cec']} ({rec.get('generation', '')})".replace(" ()", "")
    parts = [str(rec["lpar"])]
    if parts[0] == "(pool)" and rec.get("class") is not None:     # a CEC pool row (views.pools): "zIIP pool"
        parts = [f"{rec['class']} pool"]
    elif by in ("class", "cpu", "interval", "class_interval") and rec.get("class") is not None:
        parts.append(str(rec["class"]))
    if by == "cpu" and rec.get("cpu") is not None:
        parts.append(str(int(rec["cpu"])))
    text = " ".join(parts)
    if qualified:
        gen = rec.get("generation")
        text += f" ({rec['cec']}{' ' + str(gen) if gen else ''})"
    return text


def _level_of(by: str) -> str:
    return {"interval": "class", "class_interval": "class", "lpar_interval": "lpar", "cec_interval": "cec"}.get(by, by)


def node_labels(frame: pd.DataFrame, by: str, context: list[pd.DataFrame] | None = None) -> pd.Series:
    """Unambiguous labels for the rows of a metrics frame.

    A row is labelled by its LPAR (and class / CPU) name; where the same name
    belongs to more than one CEC in ``frame`` and the ``context`` frames (e.g. the
    other side of a comparison), the CEC (type-serial) and generation are added:
    ``ZOSA (8561-45A12 z15)`` and ``ZOSA (3931-123F5 z16)``.
    """
    level = _level_of(by)
    if not len(frame):
        return pd.Series([], dtype=object, index=frame.index)
    codes, recs = _distinct(frame)           # one label per distinct node, not per row (a month has 368,640)
    base = [node_label(r, level) for r in recs]
    if level != "cec":
        gens = [str(r.get("generation")) if r.get("generation") else "" for r in recs]
        ctx = [(node_label(r, level), str(r["cec"])) for c in context or [] if len(c) for r in _distinct(c)[1]]
        base = qualify_names(base, [str(r["cec"]) for r in recs], gens, ctx)
    return pd.Series(np.asarray(base, dtype=object)[codes], index=frame.index, dtype=object)


_LABEL_COLS = ("cec", "lpar", "class", "cpu", "generation")


def _distinct(frame: pd.DataFrame) -> tuple[np.ndarray, list[dict]]:
    """(row -> distinct-node code, the distinct nodes' records) over the columns a label reads."""
    cols = [c for c in _LABEL_COLS if c in frame.columns]
    sub = frame[cols]
    codes = _node_codes(sub, cols) if cols else np.zeros(len(frame), dtype=np.int64)    # groupby's ngroup, in numpy
    _, first = np.unique(codes, return_index=True)
    return codes, sub.iloc[first].to_dict("records")


def qualify_names(names: list[str], cecs: list[str], gens: list[str],
                  context: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Names made unambiguous: where one name belongs to more than one CEC (among these rows and the
    ``context`` (name, cec) pairs), the CEC (type-serial) and generation are added, ``ZOSA (8561-45A12 z15)``.
    The one rule for comparison rows, exports, the interval table and the timeline legends."""
    per: dict[str, set[str]] = {}
    for n, c in (*zip(names, cecs), *context):
        per.setdefault(n, set()).add(str(c))
    return [f"{n} ({c}{' ' + g if g else ''})" if len(per[n]) > 1 and n != c else n
            for n, c, g in zip(names, cecs, gens)]


# ------------------------------------------------------------------ formula differences
def _closure(fs, mid: str) -> list[str]:
    """``mid`` and the metrics it depends on, dependencies first."""
    need: list[str] = []
    stack = [mid]
    while stack:
        m = stack.pop()
        if m in need or m not in fs.metrics:
            continue
        need.append(m)
        c = fs.metrics[m].compiled
        if c is not None:
            stack.extend(n for n in c.names if n in fs.metrics)
    return need


def formula_differences(set_before, set_after, ids: list[str] | None = None) -> dict[str, str]:
    """metric id -> reason, for metrics whose formula differs between two formula sets or is missing in one.

    A metric also differs when a metric it is computed from differs (Est Instr Cmplx CPI =
    CPI - Est Finite CPI differs when Est Finite CPI does).  Same set (same version) -> ``{}``.
    """
    if set_before is None or set_after is None:
        return {}
    if set_before is set_after or (set_before.version == set_after.version
                                   and set_before.generation == set_after.generation):
        return {}
    gb, ga = set_before.generation, set_after.generation
    ids = ids if ids is not None else list(dict.fromkeys([*set_before.metrics, *set_after.metrics]))
    out: dict[str, str] = {}
    for mid in ids:
        mb, ma = set_before.metrics.get(mid), set_after.metrics.get(mid)
        eb = mb.expr if mb is not None else None
        ea = ma.expr if ma is not None else None
        if eb is None and ea is None:
            continue
        if eb is None or ea is None:
            miss, has = (gb, ga) if eb is None else (ga, gb)
            out[mid] = f"no formula for {miss} ({set_before.version if eb is None else set_after.version}); " \
                       f"only {has} has one, so ratio and delta stay empty"
            continue
        if _norm(eb) != _norm(ea):
            out[mid] = f"formula differs: {gb} {eb} vs {ga} {ea}"
            continue
        deps = [d for d in _closure(set_after, mid)[1:] if d in set_before.metrics]
        bad = [d for d in deps if _norm(set_before.metrics[d].expr) != _norm(set_after.metrics[d].expr)]
        if bad:
            out[mid] = f"same expression, but {', '.join(bad)} it is computed from differs between {gb} and {ga}"
    return out


def _norm(e: str | None) -> str | None:
    return None if e is None else "".join(e.split())


# ------------------------------------------------------------------ CPI decomposition
_DECOMP_COLS = ["cpi_before", "cpi_after", "instr_cmplx_before", "instr_cmplx_after", "finite_before",
                "finite_after", "l1mp_before", "l1mp_after", "scpl1m_before", "scpl1m_after", "d_cpi",
                "d_instr_cmplx", "d_finite", "d_l1mp_effect", "d_scpl1m_effect", "d_other", "note"]


def decompose_cpi(cpi0: float, finite0: float, l1mp0: float, scpl1m0: float,
                  cpi1: float, finite1: float, l1mp1: float, scpl1m1: float) -> dict[str, Any]:
    """Split the CPI change (after - before) into its parts.

    Parameters are the before (0) and after (1) values of CPI, Est Finite CPI, L1MP
    (misses per 100 instructions) and Est SCPL1M.  Returns a dict with the inputs
    (``cpi_before`` ...), ``d_cpi``, ``d_instr_cmplx`` (= dICX, ICX = CPI - F),
    ``d_finite``, ``d_l1mp_effect`` = dL*(S0+S1)/2, ``d_scpl1m_effect`` = dS*(L0+L1)/2
    (L = L1MP/100), ``d_other`` (dF minus the two effects: 0 up to rounding when
    F = L*S) and ``note`` (why a part is missing, else "").

    ``d_instr_cmplx + d_finite == d_cpi`` and ``d_l1mp_effect + d_scpl1m_effect + d_other
    == d_finite`` hold exactly by construction.
    """
    v = [_f(x) for x in (cpi0, finite0, l1mp0, scpl1m0, cpi1, finite1, l1mp1, scpl1m1)]
    c0, f0, l0, s0, c1, f1, l1, s1 = v
    out: dict[str, Any] = dict(zip(_DECOMP_COLS[:10], [c0, c1, c0 - f0, c1 - f1, f0, f1, l0, l1, s0, s1]))
    nan = float("nan")
    out.update(d_cpi=c1 - c0, d_instr_cmplx=nan, d_finite=nan, d_l1mp_effect=nan, d_scpl1m_effect=nan,
               d_other=nan, note="")
    if not (np.isfinite(c0) and np.isfinite(c1)):
        out["note"] = "CPI is missing on one side"
        return out
    if not (np.isfinite(f0) and np.isfinite(f1)):
        out["note"] = "no Est Finite CPI on one side (no formula for the generation): only the CPI change is known"
        return out
    d_f = f1 - f0
    # instruction-complexity part as the remainder keeps d_icx + d_f == d_cpi exact in floating point
    out.update(d_finite=d_f, d_instr_cmplx=(c1 - c0) - d_f)
    if not all(np.isfinite(x) for x in (l0, l1, s0, s1)):
        out["note"] = "no L1MP or Est SCPL1M on one side: the finite part is not split"
        out["d_other"] = d_f
        return out
    L0, L1 = l0 / 100.0, l1 / 100.0
    e_l = (L1 - L0) * (s0 + s1) / 2.0
    e_s = (s1 - s0) * (L0 + L1) / 2.0
    rest = d_f - (e_l + e_s)
    tol = 1e-9 * max(abs(f0), abs(f1), 1e-12)
    if abs(rest) <= tol:
        # F = L*S holds: put the rounding crumb into the larger effect so the two parts sum to dF exactly
        if abs(e_l) >= abs(e_s):
            e_l = d_f - e_s
        else:
            e_s = d_f - e_l
        rest = 0.0
    else:
        out["note"] = ("Est Finite CPI is not L1MP/100 x Est SCPL1M for these formula sets: the rest is shown "
                       "as 'other'")
    out.update(d_l1mp_effect=e_l, d_scpl1m_effect=e_s, d_other=rest)
    return out


def _f(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v


def waterfall(decomp: dict[str, Any] | pd.Series) -> pd.DataFrame:
    """Waterfall steps of one CPI decomposition, for a stacked-bar waterfall chart.

    Columns: ``step`` (id), ``label``, ``value`` (the bar's signed amount; the CPI of the
    before/after totals), ``kind`` ("total" / "delta"), ``start`` and ``end`` (running CPI
    before and after the step), ``base`` (= min(start, end), the invisible part of a stacked
    bar) and ``height`` (= |value|).  Missing parts are left out.
    """
    d = dict(decomp)
    rows = [("cpi_before", "CPI before", d["cpi_before"], "total")]
    for key, label in (("d_instr_cmplx", "Instr complexity"), ("d_l1mp_effect", "L1MP effect"),
                       ("d_scpl1m_effect", "SCPL1M effect"), ("d_other", "Other finite")):
        val = _f(d.get(key))
        if np.isfinite(val) and not (key == "d_other" and val == 0.0
                                     and np.isfinite(_f(d.get("d_l1mp_effect")))):
            rows.append((key, label, val, "delta"))
    if len(rows) == 1 and np.isfinite(_f(d.get("d_cpi"))):
        rows.append(("d_cpi", "CPI change", _f(d["d_cpi"]), "delta"))
    rows.append(("cpi_after", "CPI after", d["cpi_after"], "total"))
    out = []
    run = 0.0
    for step, label, val, kind in rows:
        val = _f(val)
        if kind == "total":
            start, end = 0.0, val
            run = val
        else:
            start, end = run, run + val
            run = end
        out.append({"step": step, "label": label, "value": val, "kind": kind, "start": start, "end": end,
                    "base": min(start, end), "height": abs(val)})
    return pd.DataFrame(out, columns=["step", "label", "value", "kind", "start", "end", "base", "height"])


# ------------------------------------------------------------------ comparison
@dataclass
class Comparison:
    """Result of :func:`compare` (see the module docstring)."""

    before: Selection
    after: Selection
    by: str
    table: pd.DataFrame
    columns: list[ColumnSpec]
    marks: dict[str, str]
    cpi: pd.DataFrame
    ratio_note: str = RATIO_NOTE
    findings: list = field(default_factory=list)

    @property
    def pairs(self) -> list[str]:
        """Pair keys in table order."""
        return list(dict.fromkeys(self.table["pair"])) if len(self.table) else []

    def waterfall(self, pair: str | None = None) -> pd.DataFrame:
        """Waterfall steps of one pair (the first pair with a CPI on both sides when ``pair`` is None)."""
        if not len(self.cpi):
            return waterfall(decompose_cpi(*([float("nan")] * 8)))
        rows = self.cpi
        if pair is None:
            ok = rows[np.isfinite(rows["d_cpi"].astype(float))]
            rec = (ok if len(ok) else rows).iloc[0]
        else:
            rec = rows.loc[rows["pair"] == pair].iloc[0]
        return waterfall(rec)

    def timelines(self, by: str = "lpar_interval", mode: str = "auto") -> RelativeAxis:
        """Interval metrics of both selections on a relative time axis (:func:`relative_axis`)."""
        return relative_axis(self.before.metrics(by), self.after.metrics(by), mode=mode,
                             before_start=self.before.start, after_start=self.after.start)

    def main_columns(self) -> list[ColumnSpec]:
        """The presentation's main columns (Main and Hint groups)."""
        return [c for c in self.columns if c.group in ("Main", "Hint")]


def ratio_delta(before, after) -> tuple[float, float]:
    """IBM's ratio (before / after: old divided by new, so 8.2 -> 7.5 gives 1.093) and the delta
    (after - before) of one metric; NaN where a side is missing (or the after value is 0 for the ratio)."""
    b, a = _f(before), _f(after)
    if not (np.isfinite(b) and np.isfinite(a)):
        return float("nan"), float("nan")
    return (b / a if a != 0 else float("nan")), a - b


def _pair_keys(mb: pd.DataFrame, ma: pd.DataFrame, by: str) -> tuple[list[str], list[str]]:
    def lp(frame):
        return [(str(r["cec"]), str(r["lpar"])) for r in frame[["cec", "lpar"]].to_dict("records")]

    lb, la = lp(mb), lp(ma)
    ub, ua = set(lb), set(la)
    single = len(ub) == 1 and len(ua) == 1

    def names(keys, uniq):
        count: dict[str, int] = {}
        for _, lpar in uniq:
            count[lpar] = count.get(lpar, 0) + 1
        out = []
        for cec, lpar in keys:
            out.append(lpar if count[lpar] == 1 else f"{lpar} ({cec})")
        return out

    nb, na = names(lb, ub), names(la, ua)
    if single and nb and na and nb[0] != na[0]:
        joined = f"{nb[0]} vs {na[0]}"
        nb, na = [joined] * len(nb), [joined] * len(na)
    if by == "class":
        nb = [f"{n} {c}" for n, c in zip(nb, mb["class"].astype(str))]
        na = [f"{n} {c}" for n, c in zip(na, ma["class"].astype(str))]
    return nb, na


def pair_keys(before: pd.DataFrame, after: pd.DataFrame, by: str) -> tuple[list[str], list[str]]:
    """The pair key of every row of two frames of the selections (whole-window or interval rows alike), the keys
    of :func:`compare`'s ``pair`` column, so that a pair's interval rows can be picked from its timelines."""
    if by not in COMPARE_BY:
        raise ValueError(f"by must be one of {', '.join(COMPARE_BY)}; got {by!r}")
    return _pair_keys(before, after, by)


def compare(before: Selection, after: Selection, by: str = "lpar") -> Comparison:
    """Compare two selections per LPAR (``by="lpar"``) or per LPAR and processor class (``"class"``).

    Pairs rows by LPAR name (and class); when each side holds exactly one LPAR they are
    paired whatever their names (``ZOSA vs ZOSB``).  A row without a partner keeps its
    before or after row; its ratio and delta rows are empty.
    """
    if by not in COMPARE_BY:
        raise ValueError(f"by must be one of {', '.join(COMPARE_BY)}; got {by!r}")
    mb = before.metrics(by).reset_index(drop=True)
    ma = after.metrics(by).reset_index(drop=True)
    sets_b, sets_a = before.workspace.formula_sets, after.workspace.formula_sets
    ids = list(dict.fromkeys(metric_ids(sets_b) + metric_ids(sets_a)))
    lab_b = node_labels(mb, by, [ma])
    lab_a = node_labels(ma, by, [mb])
    kb, ka = _pair_keys(mb, ma, by)
    order = list(dict.fromkeys(kb + ka))
    ident = [c for c in _IDENT[by]]
    meta = ident + ["interval_start", "interval_end", "n_cpus", "generation", "formula_set"]
    value_cols = ids + ["Workload_Hint"]
    rows: list[dict] = []
    decomp: list[dict] = []
    marks: dict[str, str] = {}
    for key in order:
        rb = mb.iloc[kb.index(key)].to_dict() if key in kb else None
        ra = ma.iloc[ka.index(key)].to_dict() if key in ka else None
        for kind, rec, lab in (("before", rb, lab_b), ("after", ra, lab_a)):
            row = {"pair": key, "row": kind}
            if rec is not None:
                idx = (kb if kind == "before" else ka).index(key)
                row["label"] = lab.iloc[idx]
                row.update({c: rec.get(c) for c in meta + value_cols + ["quality"]})
            else:
                row["label"] = "(not in the selection)"
            rows.append(row)
        ratio = {"pair": key, "row": "ratio", "label": RATIO_LABEL}
        delta = {"pair": key, "row": "delta", "label": DELTA_LABEL}
        pair_marks: dict[str, str] = {}
        if rb is not None and ra is not None:
            fsb, fsa = sets_b.get(str(rb["generation"])), sets_a.get(str(ra["generation"]))
            pair_marks = formula_differences(fsb, fsa, ids)
            for mid in ids:
                ratio[mid], delta[mid] = ratio_delta(rb.get(mid), ra.get(mid))
            d = decompose_cpi(rb.get("CPI"), rb.get("Est_Finite_CPI"), rb.get("L1MP"), rb.get("Est_SCPL1M"),
                              ra.get("CPI"), ra.get("Est_Finite_CPI"), ra.get("L1MP"), ra.get("Est_SCPL1M"))
            d["pair"] = key
            d["generation_before"], d["generation_after"] = rb["generation"], ra["generation"]
            decomp.append(d)
        for mid, why in pair_marks.items():
            marks.setdefault(mid, why)
        rows.extend([ratio, delta])
    cols = ["pair", "row", "label"] + meta + value_cols + ["quality"]
    table = pd.DataFrame(rows, columns=cols)
    for mid in ids:
        table[mid] = pd.to_numeric(table[mid], errors="coerce").astype(float)
    cpi = pd.DataFrame(decomp, columns=["pair", "generation_before", "generation_after"] + _DECOMP_COLS)
    gens_b = [g for g in dict.fromkeys(mb["generation"].astype(str))] if len(mb) else []
    gens_a = [g for g in dict.fromkeys(ma["generation"].astype(str))] if len(ma) else []
    columns = _columns(gens_a, gens_b, sets_a, sets_b)
    return Comparison(before=before, after=after, by=by, table=table, columns=columns, marks=marks, cpi=cpi)


def _columns(gens_a: list[str], gens_b: list[str], sets_a, sets_b) -> list[ColumnSpec]:
    cols: list[ColumnSpec] = []
    seen: set[str] = set()
    for gens, sets in ((gens_a, sets_a), (gens_b, sets_b)):
        for g in gens:
            for c in presentation_columns(g, sets):
                if c.id not in seen:
                    seen.add(c.id)
                    cols.append(c)
    if not cols:
        cols = presentation_columns("z16", sets_a)
    return cols


# ------------------------------------------------------------------ relative time axis
@dataclass
class RelativeAxis:
    """Two interval frames on a common relative axis.

    ``unit``: "hours" (from each selection's start), "days" (from each start) or
    "time_of_day" (hours after midnight, both selections within one day); ``label``: the
    axis title; ``before``/``after``: the frames with an added ``x`` column (float, in the
    unit) taken at the interval end; ``origin_before``/``origin_after``: the timestamps x = 0
    stands for (midnight of the day for "time_of_day").
    """

    unit: str
    label: str
    before: pd.DataFrame
    after: pd.DataFrame
    origin_before: pd.Timestamp | None
    origin_after: pd.Timestamp | None


def _origin(frame: pd.DataFrame, start) -> pd.Timestamp | None:
    if start is not None:
        ts = pd.Timestamp(start)
        if ts.tzinfo is not None:
            ts = ts.tz_convert("UTC").tz_localize(None)
        return ts
    if not len(frame):
        return None
    return pd.Timestamp(frame["interval_start"].min())


def _one_day(frame: pd.DataFrame) -> bool:
    if not len(frame):
        return True
    first = pd.Timestamp(frame["interval_start"].min())
    last = pd.Timestamp(frame["interval_end"].max()) - pd.Timedelta(microseconds=1)
    return first.normalize() == last.normalize()


def relative_axis(before: pd.DataFrame, after: pd.DataFrame, mode: str = "auto", before_start=None,
                  after_start=None) -> RelativeAxis:
    """Put two interval metrics frames on one relative time axis.

    ``mode``: "auto" (time of day when both selections lie within one calendar day, else
    hours from each selection's start when both span at most 3 days, else days),
    "time_of_day", "hours" or "days".  The start of a selection is its window start when
    given (``before_start``/``after_start``), else its first interval start.
    """
    if mode not in ("auto", "time_of_day", "hours", "days"):
        raise ValueError(f"mode must be auto, time_of_day, hours or days; got {mode!r}")
    ob, oa = _origin(before, before_start), _origin(after, after_start)
    if mode == "auto":
        if _one_day(before) and _one_day(after) and (len(before) or len(after)):
            mode = "time_of_day"
        else:
            spans = [(pd.Timestamp(f["interval_end"].max()) - o).total_seconds()
                     for f, o in ((before, ob), (after, oa)) if len(f) and o is not None]
            mode = "hours" if not spans or max(spans) <= 3 * 86400 else "days"
    if mode == "time_of_day":
        ob = pd.Timestamp(before["interval_start"].min()).normalize() if len(before) else None
        oa = pd.Timestamp(after["interval_start"].min()).normalize() if len(after) else None
    per = 86400.0 if mode == "days" else 3600.0
    label = {"time_of_day": "time of day (h, UTC)", "hours": "hours from the selection's start",
             "days": "days from the selection's start"}[mode]

    def with_x(frame: pd.DataFrame, origin) -> pd.DataFrame:
        out = frame.copy()
        if origin is None or not len(out):
            out["x"] = pd.Series(dtype=float)
            return out
        out["x"] = (pd.to_datetime(out["interval_end"]) - origin).dt.total_seconds().to_numpy() / per
        return out

    return RelativeAxis(mode, label, with_x(before, ob), with_x(after, oa), ob, oa)
