"""The before/after story of a comparison in words, for the deck's title and summary slides.

* :func:`span_text` / :func:`side_text`: a window as the site says it ("5 Oct - 4 Nov 2026"), not ISO stamps.
* :func:`default_title`: "<LPARs>: <before generation> -> <after generation>".
* :func:`change_text`: a CPI change as an analyst says it (8.2 -> 7.5 is 8.5 % fewer cycles per instruction).
* :func:`summary_points`: the executive summary of every pair: CPI before/after and the change, how much came from
  instruction complexity and how much from the finite cache part (L1MP and SCPL1M effects), LPARCPU.
* :func:`configuration` / :func:`config_changes`: processors, weights and capping of every LPAR on each side, and
  every change of weight or processor count inside a side's window.
* :func:`caveats`: what the reader of the numbers must know (formulas that differ between generations, an
  unconfirmed or missing RNI, configuration changes inside a window, intervals with data-quality findings, LPARs
  whose data covers only part of the window).

Pure pandas over :class:`app.engine.compare.Comparison`; no pptx, no Qt.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import pandas as pd

from app.engine.partitions import coverage

__all__ = ["span_text", "side_text", "default_title", "change_text", "summary_points", "configuration",
           "config_changes", "side_changes", "class_cpu_counts", "caveats", "prepare_side", "CONFIG_COLUMNS"]

CONFIG_COLUMNS = ["side", "lpar", "cec", "generation", "processors", "weights", "capped", "changes"]


def _ts(v) -> pd.Timestamp | None:
    if v is None:
        return None
    t = pd.Timestamp(v)
    if pd.isna(t):
        return None
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t


def _day(t: pd.Timestamp, year: bool) -> str:
    text = f"{t.day} {t:%b}" + (f" {t.year}" if year else "")
    return text + ("" if (t.hour, t.minute) == (0, 0) else f" {t:%H:%M}")


def span_text(first, last, zone: str = "UTC") -> str:
    """``5 Oct - 4 Nov 2026 (UTC)``; times of day only where a bound is not midnight; one year named once."""
    a, b = _ts(first), _ts(last)
    if a is None or b is None:
        return "no intervals"
    if a.year != b.year:
        return f"{_day(a, True)} - {_day(b, True)} ({zone})"
    return f"{_day(a, False)} - {_day(b, True)} ({zone})"


def _float(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def side_text(sel, max_names: int = 4, tz: str = "utc") -> str:
    """One line for a side: its LPARs with machine and generation (the first ``max_names``), its window (in
    ``tz``, by the side's own offsets) and its shift."""
    m = sel.metrics("lpar")
    name = sel.name or "selection"
    name = name[:1].upper() + name[1:]
    if not len(m):
        return f"{name}: no intervals"
    names = [f"{r['lpar']} on {r['cec']} ({r['generation']})"
             for r in m[["lpar", "cec", "generation"]].to_dict("records")]
    what = ", ".join(names[:max_names]) + (f" and {len(names) - max_names} more" if len(names) > max_names else "")
    if tz != "utc" and getattr(sel, "workspace", None) is not None:
        from app.export.tables import zoned_times

        t, zone = zoned_times(sel.workspace, tz, m)
        span = span_text(pd.Series(t["interval_start"]).min(), pd.Series(t["interval_end"]).max(), zone)
    else:
        span = span_text(m["interval_start"].min(), m["interval_end"].max())
    text = f"{name}: {what}, {span}"
    if sel.shift is not None and not sel.shift.is_empty:
        text += f", shift {sel.shift.describe()}"
    return text


def _gens(frame: pd.DataFrame) -> str:
    return "/".join(dict.fromkeys(frame["generation"].astype(str))) if len(frame) else "?"


def default_title(c) -> str:
    """``ZOSA: z15 -> z16`` (several LPARs joined by commas, at most four named)."""
    mb, ma = c.before.metrics("lpar"), c.after.metrics("lpar")
    names = list(dict.fromkeys([*(mb["lpar"].astype(str) if len(mb) else []),
                                *(ma["lpar"].astype(str) if len(ma) else [])]))
    who = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"{who or 'CPU MF'}: {_gens(mb)} -> {_gens(ma)}"


def change_text(before: float, after: float, unit: str = "cycles per instruction") -> str:
    """``8.5 % fewer cycles per instruction``: the change relative to the before value, one decimal."""
    b, a = _float(before), _float(after)
    if not (math.isfinite(b) and math.isfinite(a)) or b == 0:
        return "no change can be computed"
    pct = (a - b) / b * 100.0
    if abs(pct) < 0.05:
        return f"no change in {unit}"
    return f"{abs(pct):.1f} % {'fewer' if pct < 0 else 'more'} {unit}"


def _share(part: float, whole: float) -> str:
    if not (math.isfinite(part) and math.isfinite(whole)) or whole == 0:
        return ""
    return f" ({part / whole * 100:.0f} % of the change)"


def summary_points(c, max_pairs: int = 4) -> list[str]:
    """The executive summary, one paragraph per pair (the first ``max_pairs``), then a line on the rest."""
    out: list[str] = []
    tab = c.table
    pairs = [p for p in c.pairs]
    for pair in pairs[:max_pairs]:
        rows = tab.loc[tab["pair"] == pair].set_index("row")
        d = c.cpi.loc[c.cpi["pair"] == pair]
        if not len(d):
            side = "before" if pd.notna(rows.loc["before"].get("generation")) else "after"
            out.append(f"{pair}: only in the {side} selection; nothing to compare.")
            continue
        d = d.iloc[0].to_dict()
        b, a = _float(d["cpi_before"]), _float(d["cpi_after"])
        ratio = b / a if a else math.nan
        text = (f"{pair} ({d['generation_before']} -> {d['generation_after']}): CPI {b:.2f} -> {a:.2f}, "
                f"{change_text(b, a)} (ratio before/after {ratio:.2f}).")
        dc, di, df = _float(d["d_cpi"]), _float(d["d_instr_cmplx"]), _float(d["d_finite"])
        if math.isfinite(di) and math.isfinite(df):
            text += (f" Of the change of {dc:+.3f}: instruction complexity {di:+.3f}{_share(di, dc)}, "
                     f"finite cache {df:+.3f}{_share(df, dc)}")
            el, es = _float(d["d_l1mp_effect"]), _float(d["d_scpl1m_effect"])
            if math.isfinite(el) and math.isfinite(es):
                text += (f" (L1MP {_float(d['l1mp_before']):.2f} -> {_float(d['l1mp_after']):.2f}: {el:+.3f}; "
                         f"Est SCPL1M {_float(d['scpl1m_before']):.0f} -> {_float(d['scpl1m_after']):.0f}: "
                         f"{es:+.3f})")
            text += "."
        lb, la = _float(rows.loc["before"].get("LPARCPU")), _float(rows.loc["after"].get("LPARCPU"))
        if math.isfinite(lb) and math.isfinite(la):
            text += f" LPARCPU {lb:.1f} -> {la:.1f} (% of one CPU, summed over the CPUs)."
        out.append(text)
    if len(pairs) > max_pairs:
        out.append(f"{len(pairs) - max_pairs} more pair(s) in the before/after table.")
    return out


def _window(sel) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    m = sel.metrics("lpar")
    if not len(m):
        return None, None
    return _ts(m["interval_start"].min()), _ts(m["interval_end"].max())


def _steps(values: pd.Series, times: pd.Series) -> list[tuple[Any, Any, pd.Timestamp]]:
    """(old, new, time) at every change of a value along time."""
    v = values.to_numpy()
    t = times.to_numpy()
    return [(v[i - 1], v[i], pd.Timestamp(t[i])) for i in range(1, len(v)) if v[i] != v[i - 1]]


def _selected_rows(sel) -> pd.DataFrame:
    """The interval rows of a side's selection (window, nodes, shift in its zone)."""
    from app.engine.aggregate import selection_rows

    return selection_rows(sel.workspace, sel.start, sel.end, list(sel.nodes) if sel.nodes is not None else None,
                          sel.shift)


def _class_groups(rows: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Per group of ``rows`` by ``keys`` (in order of first appearance, as ``groupby(keys, sort=False,
    observed=True, dropna=False)``): the group's first row's key values (the key columns only: a row of every
    counter column was most of a deck's grouping time), its latest ``interval_end`` and its distinct CPUs
    (``nunique`` of ``cpu``, a missing CPU not counted), in numpy over the category codes."""
    from app.engine.aggregate import _node_codes

    codes = _node_codes(rows, keys)
    _, first = np.unique(codes, return_index=True)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(len(first)))
    end = rows["interval_end"].to_numpy(dtype="datetime64[ns]").view(np.int64)
    ends = np.maximum.reduceat(end[order], starts).view("datetime64[ns]")
    cpu, _ = pd.factorize(rows["cpu"].to_numpy(), use_na_sentinel=True)
    has = cpu >= 0
    k = np.int64(max(int(cpu.max()) + 1, 1) if len(cpu) else 1)
    n_cpus = np.bincount(np.unique(codes[has] * k + cpu[has]) // k, minlength=len(first)).astype(np.int64)
    return rows[keys].iloc[first].reset_index(drop=True), ends, n_cpus


def class_cpu_counts(sel) -> pd.DataFrame:
    """Per class row of each interval of a selection (window, nodes, shift): ``cec``, ``lpar``, ``class``,
    ``interval_end`` and ``n_cpus``, the CPUs with counters, as its ``class_interval`` metrics rows have them
    (distinct CPUs of the group's rows), without summing every counter for them."""
    rows = _selected_rows(sel)
    if not len(rows):
        return pd.DataFrame(columns=["cec", "lpar", "class", "interval_end", "n_cpus"])
    head, ends, n_cpus = _class_groups(rows, ["cec", "lpar", "system", "os", "class", "bucket"])
    return head[["cec", "lpar", "class"]].assign(interval_end=ends, n_cpus=n_cpus)


def class_cpus(sel) -> pd.DataFrame:
    """Per processor class of a selection (window, nodes, shift): ``cec``, ``lpar``, ``class`` and ``n_cpus``, the
    CPUs with counters over the whole window, in the rows and order of its ``class`` metrics frame (the distinct
    CPUs of each class's rows, sorted as the report sorts), without summing every counter for them."""
    if sel.nodes is not None and any(tuple(k)[0] in ("pool", "core") for k in sel.nodes):
        return sel.metrics("class")[["cec", "lpar", "class", "n_cpus"]]       # pool/core rows: the engine's
    rows = _selected_rows(sel)
    keys = ["cec", "lpar", "system", "os", "class"]
    if not len(rows):
        return pd.DataFrame(columns=["cec", "lpar", "class", "n_cpus"])
    head, ends, n_cpus = _class_groups(rows, keys)
    out = head[keys].astype(object).assign(interval_end=ends, n_cpus=n_cpus)
    out = out.sort_values([*keys, "interval_end"], kind="stable", ignore_index=True)
    return out[["cec", "lpar", "class", "n_cpus"]]


def config_changes(sel) -> dict[tuple[str, str], list[str]]:
    """Per (cec, lpar) of a side: the changes of weight or processor count inside its window, as text."""
    out: dict[tuple[str, str], list[str]] = {}
    lo, hi = _window(sel)
    if lo is None:
        return out
    m = sel.metrics("lpar")
    keys = {(str(r["cec"]), str(r["lpar"])) for r in m[["cec", "lpar"]].to_dict("records")}
    parts = sel.workspace.partitions
    if parts is not None and len(parts):
        p = parts.loc[(parts["time"] > lo) & (parts["time"] <= hi)]
        p = p.assign(cec=p["cec"].astype(str), lpar=p["lpar"].astype(str), cls=p["class"].astype(str))
        for (cec, lpar, cls), g in p.groupby(["cec", "lpar", "cls"], sort=True):
            if (cec, lpar) not in keys:
                continue
            g = g.sort_values("time")
            for what, col in (("weight", "weight"), ("processors", "cpus")):
                for old, new, t in _steps(g[col].astype("int64"), g["time"]):
                    out.setdefault((cec, lpar), []).append(f"{cls} {what} {old} -> {new} at {_day(t, True)} UTC")
    special = sel.nodes is not None and any(tuple(k)[0] in ("pool", "core") for k in sel.nodes)
    ci = sel.metrics("class_interval") if special else class_cpu_counts(sel)   # pool/core rows: the engine's
    if len(ci) and "n_cpus" in ci.columns:
        ci = ci.assign(cec=ci["cec"].astype(str), lpar=ci["lpar"].astype(str), cls=ci["class"].astype(str))
        for (cec, lpar, cls), g in ci.groupby(["cec", "lpar", "cls"], sort=True):
            g = g.sort_values("interval_end")
            steps = _steps(g["n_cpus"].astype("int64"), g["interval_end"])
            if steps and len(steps) <= 3:        # a CPU varied on/offline a few times, not every interval
                for old, new, t in steps:
                    out.setdefault((cec, lpar), []).append(f"{cls} CPUs with counters {old} -> {new} at "
                                                           f"{_day(t, True)} UTC")
            elif steps:
                out.setdefault((cec, lpar), []).append(
                    f"{cls} CPUs with counters vary between {int(g['n_cpus'].min())} and {int(g['n_cpus'].max())}")
    return out


def side_changes(c) -> tuple[dict, dict]:
    """:func:`config_changes` of the before and the after side (what :func:`configuration` and :func:`caveats`
    both read: a deck computes them once)."""
    return _side_changes(c.before), _side_changes(c.after)


def configuration(c, changes: tuple[dict, dict] | None = None) -> pd.DataFrame:
    """One row per side and LPAR: processors by type, weights, capping (partition data where the files carry it,
    else the CPUs with counters per class) and the changes inside the side's window (``changes``:
    :func:`side_changes`, computed here when None)."""
    rows = []
    for sel, side in zip((c.before, c.after), changes or (None, None)):
        lo, hi = _window(sel)
        changes = _side_changes(sel) if side is None else side
        cls = _taken(sel, "cpus")
        cls = class_cpus(sel) if cls is None else cls      # the CPUs per class of the class rows, without their metrics
        parts = sel.workspace.partitions
        for r in sel.metrics("lpar")[["cec", "lpar", "generation"]].to_dict("records"):
            cec, lpar = str(r["cec"]), str(r["lpar"])
            procs = weights = capped = ""
            if parts is not None and len(parts):
                p = parts.loc[(parts["cec"].astype(str) == cec) & (parts["lpar"].astype(str) == lpar)
                              & (parts["time"] > lo) & (parts["time"] <= hi)]
                if len(p):
                    last = p.loc[p["time"] == p["time"].max()]
                    procs = ", ".join(f"{k} {int(v)}" for k, v in last.groupby("class", sort=False)["cpus"].sum().items())
                    weights = ", ".join(f"{k} {int(v)}" for k, v in last.groupby("class", sort=False)["weight"].max().items())
                    capped = "yes" if bool(p["capped"].astype(bool).any()) else "no"
            if not procs and len(cls):
                mine = cls.loc[(cls["cec"].astype(str) == cec) & (cls["lpar"].astype(str) == lpar)]
                procs = ", ".join(f"{k} {int(v)}" for k, v in zip(mine["class"].astype(str), mine["n_cpus"]))
                weights = capped = "n/a (no partition data)"
            rows.append({"side": sel.name or "", "lpar": lpar, "cec": cec, "generation": str(r["generation"]),
                         "processors": procs, "weights": weights, "capped": capped,
                         "changes": "; ".join(changes.get((cec, lpar), [])) or "none"})
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def caveats(c, changes: tuple[dict, dict] | None = None) -> list[str]:
    """Every caveat that applies to the comparison, one line each (empty when none); ``changes`` as for
    :func:`configuration`."""
    out: list[str] = []
    for mid, why in c.marks.items():
        out.append(f"{mid}: {why}.")
    for sel in (c.before, c.after):
        m = sel.metrics("lpar")
        for gen in dict.fromkeys(m["generation"].astype(str)) if len(m) else []:
            fs = sel.workspace.formula_sets.get(gen)
            rni = fs.metrics.get("RNI") if fs is not None else None
            if rni is None or not rni.expr:
                out.append(f"RNI: no formula for {gen} ({sel.name}); the RNI cells stay empty.")
            elif rni.status not in ("confirmed",):
                out.append(f"RNI on {gen} ({sel.name}) uses {rni.status} coefficients ({fs.version}).")
    for sel, side in zip((c.before, c.after), changes or (None, None)):
        for (cec, lpar), ch in (_side_changes(sel) if side is None else side).items():
            out.append(f"{lpar} on {cec} ({sel.name}): the configuration changed inside the window "
                       f"({'; '.join(ch)}); its numbers mix both configurations.")
    for sel in (c.before, c.after):
        m = sel.metrics("lpar")
        n_out = int(pd.to_numeric(m["left_out"], errors="coerce").fillna(0).sum()) if "left_out" in m.columns \
            and len(m) else 0
        if n_out:
            out.append(f"{n_out} CPU-interval(s) of the {sel.name} side are left out of every sum: their counter "
                       "deltas break a physical bound (a damaged record; see Data health, or --keep-implausible).")
    tab = c.table
    if "quality" in tab.columns:
        q = tab.loc[tab["row"].isin(["before", "after"]), ["label", "row", "quality"]]
        for r in q.to_dict("records"):
            codes = [q for q in str(r["quality"] or "").split(",") if q and q not in ("implausible", "left-out")]
            if codes:
                r["quality"] = ",".join(codes)
                out.append(f"{r['label']} ({r['row']}): intervals with data-quality findings ({r['quality']}); "
                           "see Data health.")
    for sel in (c.before, c.after):
        lines = _taken(sel, "coverage")
        out += coverage_caveats(sel) if lines is None else lines
    return list(dict.fromkeys(out))


def coverage_caveats(sel) -> list[str]:
    """The caveats of a side's LPARs whose CPUs' data covers only part of the side's window (under 99 %)."""
    out: list[str] = []
    lo, hi = _window(sel)
    if lo is None:
        return out
    cov = coverage(sel.workspace.intervals, "lpar", lo, hi)
    mine = {(str(r["cec"]), str(r["lpar"])) for r in sel.metrics("lpar")[["cec", "lpar"]].to_dict("records")}
    for r in cov.to_dict("records"):
        if (str(r["cec"]), str(r["lpar"])) in mine and r["coverage_note"] and float(r["coverage_pct"]) < 99.0:
            out.append(f"{r['lpar']} on {r['cec']} ({sel.name}): its CPUs' data {r['coverage_note']}.")
    return out


# ------------------------------------------------------------------ one side's pieces made ahead
# A comparison deck's before side is read on a thread of its own; once its levels are made that thread also makes
# the side's configuration changes, CPUs per class and coverage caveats (about 70 ms of pandas on the two 30-day
# months), which the deck's writers on the main thread would otherwise compute after the after side's read.
_AHEAD: dict = {}
_AHEAD_LOCK = threading.Lock()


def prepare_side(sel) -> None:
    """Make :func:`config_changes`, :func:`class_cpus` and :func:`coverage_caveats` of the selection ``sel`` ahead;
    the deck takes each once, for the same selection (same workspace object, nodes, window, shift and name)."""
    made = {"changes": config_changes(sel), "cpus": class_cpus(sel), "coverage": coverage_caveats(sel)}
    with _AHEAD_LOCK:
        _AHEAD.clear()            # one selection's at a time: none left over from an export that did not use them
        _AHEAD[id(sel.workspace)] = (sel, made)


def _same_selection(a, b) -> bool:
    return a.workspace is b.workspace and (a.nodes, a.start, a.end, a.shift, a.name) == \
        (b.nodes, b.start, b.end, b.shift, b.name)


def _taken(sel, what: str):
    """The piece ``what`` :func:`prepare_side` made of this very selection (given once), else None."""
    with _AHEAD_LOCK:
        got = _AHEAD.get(id(sel.workspace))
        if got is None or not _same_selection(got[0], sel):
            return None
        return got[1].pop(what, None)


def _side_changes(sel) -> dict[tuple[str, str], list[str]]:
    got = _taken(sel, "changes")
    return config_changes(sel) if got is None else got
