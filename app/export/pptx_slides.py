"""The one-sided slides of a deck: the summary table of a level in the presentation's column layout and the
timeline charts (CPI with its two parts, L1MP, the sourcing mix, RNI, LPARCPU), each over the window of the
metrics it is given; and the appendix slide with the provenance.

Every function takes a ``metrics(by)`` callable (a request's or one comparison side's), so a side's slides cover
that side's window and nothing else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pandas as pd

from app.engine.compare import node_labels
from app.engine.layout import gapped
from app.export.pptx_parts import (MAX_NODE_SLIDES, MAX_SERIES, MIN_PT, PALETTE, SLIDE_H, SLIDE_W, TABLE_PT, Deck,
                                   fit_rows, head, table, widths, xl_time, xy_chart, xy_data)
from app.export.story import span_text
from app.export.tables import display, metric_specs, with_labels, zoned_times
from app.textsafe import display_text

__all__ = ["summary_slides", "chart_deck", "chart_slides", "window_text", "appendix_slide", "column_groups",
           "deck_decimals"]

Metrics = Callable[..., pd.DataFrame]
_SUMMARY_LEVEL = {"interval": "class", "cpu": "class", "class": "class", "lpar": "lpar", "cec": "cec"}
_SOURCING = ("L15P", "L2LP", "L2RP", "L2P", "L3P", "L4LP", "L4RP", "MEMP")
# IBM's CPU MF tables show Est SCPL1M in whole cycles
_DECK_DECIMALS = {"Est_SCPL1M": 0}


def deck_decimals(spec) -> int:
    """Decimals of a metric on a slide (IBM's rounding)."""
    return _DECK_DECIMALS.get(spec.id, spec.decimals)


def column_groups(header: list[str], width: list[float], keep: int, avail: float) -> list[list[int]]:
    """Column indexes per table when the columns do not fit ``avail`` inches: the first ``keep`` columns (row
    labels) are repeated in every table, the others split in order; one group when everything fits."""
    if sum(width) <= avail:
        return [list(range(len(header)))]
    groups, cur = [], list(range(keep))
    used = sum(width[:keep])
    for j in range(keep, len(header)):
        if used + width[j] > avail and len(cur) > keep:
            groups.append(cur)
            cur, used = list(range(keep)), sum(width[:keep])
        cur.append(j)
        used += width[j]
    groups.append(cur)
    return groups


def window_text(metrics: Metrics, shift, ws=None, tz: str = "utc") -> str:
    """``Intervals 5 Oct - 4 Nov 2026 (UTC); shift 08:00-17:00 UTC, Mon-Fri`` (the span in ``tz``)."""
    m = metrics(by="cec")
    if len(m) and ws is not None and tz != "utc":
        t, zone = zoned_times(ws, tz, m)
        span = span_text(pd.Series(t["interval_start"]).min(), pd.Series(t["interval_end"]).max(), zone)
    else:
        span = span_text(m["interval_start"].min(), m["interval_end"].max()) if len(m) else "no intervals"
    text = f"Intervals {span}"
    if shift is not None and not shift.is_empty:
        text += f"; shift {shift.describe()}"
    return text


def summary_slides(deck: Deck, metrics: Metrics, ws, by: str, steps, prefix: str = "", sub: str = "",
                   about: str = "") -> None:
    """The level's summary rows as native tables (split over slides by rows, and by columns before any column is
    dropped)."""
    from app.export import pptx_slides as me         # fit_rows looked up here, so tests can shrink the slides

    level = _SUMMARY_LEVEL.get(by, "lpar")
    frame = with_labels(metrics(by=level), level)
    # the CEC pools (every CPU of a type of the CEC's LPARs) after the LPARs; a pool of one LPAR would repeat that
    # LPAR's class: pools of two LPARs or more only (none, and not computed, when no CEC has two LPARs here)
    if level == "lpar" and len(frame) and frame.groupby(frame["cec"].astype(str))["lpar"].nunique().max() >= 2:
        pools = metrics(by="pool")
        pools = pools.loc[pools["n_lpars"].to_numpy() >= 2] if "n_lpars" in pools.columns else pools.iloc[:0]
        if len(pools):
            frame = pd.concat([frame, with_labels(pools, "class")], ignore_index=True)
    gens = list(dict.fromkeys(frame["generation"].astype(str))) if len(frame) else []
    specs = [s for s in metric_specs(ws, gens) if s.group in ("Main", "Hint")]
    header = ["Name"] + [head(s) for s in specs]
    rows = [[display_text(r["label"])] + [display(r.get(s.id), deck_decimals(s)) if s.id != "Workload_Hint"
                                          else display_text(r.get(s.id) or "") for s in specs]
            for r in frame.to_dict("records")]
    title = prefix + {"lpar": "Summary per LPAR", "class": "Summary per processor class",
                      "cec": "Summary per CEC"}[level]
    about = about or (f"{title}: one row per {level if level != 'class' else 'processor class'} over the whole "
                      "window" + (", then one row per CEC pool of two LPARs or more (every CPU of one processor "
                                  "type of the CEC's LPARs with counters)" if level == "lpar" else "")
                      + ", every metric computed from the summed counter deltas of its CPUs (never an average "
                      "of ratios), in the column layout of IBM's CPU MF presentations.")
    if not rows:
        s = deck.slide(title, "summary", sub, about)
        deck.text(s, 0.4, 1.4, 12, 1, ["(no intervals in the window)"])
        return
    avail_w = SLIDE_W - 0.8
    pt = TABLE_PT
    w = widths(header, rows, pt)
    while sum(w) > avail_w and pt > MIN_PT:
        pt -= 1
        w = widths(header, rows, pt)
    if sum(w) > avail_w:                   # wrap long names on two lines before splitting the table
        w[0] = max(1.3, min(w[0], w[0] / 2 + 0.3, avail_w - sum(w[1:])))
    groups = column_groups(header, w, 1, avail_w)
    per = me.fit_rows(SLIDE_H - 1.5 - 0.3, pt)
    chunks = [rows[i:i + per] for i in range(0, len(rows), per)]
    n = len(chunks) * len(groups)
    k = 0
    for chunk in chunks:
        for cols in groups:
            k += 1
            s = deck.slide(title + (f" ({k}/{n})" if n > 1 else ""), "summary", sub, about)
            table(deck, s, 1.3, [header[j] for j in cols], [[r[j] for j in cols] for r in chunk],
                  [w[j] for j in cols], pt)
    steps(None, "summary tables")


def _nodes(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    labels = node_labels(frame, "lpar_interval")
    f = frame.assign(_label=labels.to_numpy())
    return [(display_text(lab), part.sort_values("interval_end")) for lab, part in f.groupby("_label", sort=False)]


def chart_slides(frame: pd.DataFrame, sets: dict | None = None, ws=None, tz: str = "utc") -> list[dict]:
    """The timeline charts of the deck as data: ``{"title", "y", "x", "series": [(name, x, y)], "utc": [x in
    UTC per series], "key", "about"}`` per chart (x = Excel serial date of the interval end in ``tz``, the ``x``
    title naming the zone; gaps are found in the UTC times).  Used by the writer and by the tests."""
    out: list[dict] = []
    zone = "UTC"
    if len(frame):
        frame = frame.assign(_ut=xl_time(frame["interval_end"]))
        frame["_xt"] = frame["_ut"]
    if len(frame) and ws is not None and tz != "utc":     # one conversion of the whole column, then per node
        t, zone = zoned_times(ws, tz, frame, ("interval_end",))
        frame["_xt"] = xl_time(t["interval_end"])
    nodes = _nodes(frame) if len(frame) else []

    def col(part, mid):
        return pd.to_numeric(part[mid], errors="coerce").to_numpy(dtype=float) if mid in part.columns \
            else np.full(len(part), np.nan)

    def per_node(title, unit, parts, key, about):  # one chart per node (the first MAX_NODE_SLIDES)
        for lab, part in nodes[:MAX_NODE_SLIDES]:
            x, u = part["_xt"].to_numpy(dtype=float), part["_ut"].to_numpy(dtype=float)
            ser = [(name, x, col(part, mid), u) for mid, name in parts]
            add(f"{title}: {lab}", unit, [s for s in ser if np.isfinite(s[2]).any()], key, about)

    def add(title, unit, ser, key, about):
        if ser:
            out.append({"title": title, "y": unit, "series": [s[:3] for s in ser], "utc": [s[3] for s in ser],
                        "key": key, "about": about})

    per_node("CPI and its two parts", "cycles per instruction",
             (("CPI", "CPI"), ("Est_Instr_Cmplx_CPI", "Est Instr Cmplx CPI"), ("Est_Finite_CPI", "Est Finite CPI")),
             "cpi", "CPI per interval with its two parts: Est Instr Cmplx CPI (CPI minus the finite part) and Est "
             "Finite CPI (cycles spent sourcing L1 misses: L1MP x Est SCPL1M / 100), each from the LPAR's summed "
             "counter deltas of the interval.")
    def every_node(mid, title, unit, about):       # one line per node, MAX_SERIES nodes a chart
        for i in range(0, len(nodes), MAX_SERIES):
            ser = [(lab, p["_xt"].to_numpy(dtype=float), col(p, mid), p["_ut"].to_numpy(dtype=float))
                   for lab, p in nodes[i:i + MAX_SERIES]]
            add(title, unit, [s for s in ser if np.isfinite(s[2]).any()], mid, about)   # RNI only where a formula exists

    every_node("L1MP", "L1MP", "L1 misses per 100 instructions",
               "L1MP per interval: L1 cache misses (instruction and data) per 100 instructions, per LPAR.")
    per_node("Sourcing of L1 misses", "% of L1 misses", [(mid, mid) for mid in _SOURCING], "sourcing",
             "Where the L1 misses were sourced from, per interval: the share of L1 misses served by each cache "
             "level and memory (the generation's extended counters).")
    every_node("RNI", "Rel Nest Intensity", "RNI",
               "Relative Nest Intensity per interval: the weighted sourcing beyond L2 of the generation's formula set.")
    every_node("LPARCPU", "LPARCPU", "% of one engine",
               "LPARCPU per interval: busy of the LPAR's CPUs from their cycle counts, % of one CPU summed over the CPUs.")
    for c in out:
        c["x"] = f"interval end ({zone})"
    return out


# (id of a workspace, zone) -> (the workspace, a selection's lpar_interval frame, its charts)
_PREPARED: dict = {}
_PREPARED_LOCK = threading.Lock()


def _charts(frame: pd.DataFrame, ws, tz: str, prepare: bool = False) -> list[tuple[dict, list, object]]:
    """(chart, its series, their chart data) of each chart slide of ``frame`` (:func:`chart_slides`); ``prepare``:
    each chart's XML and workbook made now (plain data and bytes, no object of a deck)."""
    out = []
    for c in chart_slides(frame, ws.formula_sets, ws, tz):
        series = []
        for i, ((name, x, y), u) in enumerate(zip(c["series"], c["utc"])):
            gx, gy = gapped(x, y, ref=u)
            series.append((name, gx, gy, {"color": PALETTE[i % len(PALETTE)]}))
        out.append((c, series, xy_data(series, prepare=prepare)))
    return out


def prepare_charts(metrics: Metrics, ws, tz: str = "utc") -> None:
    """Make one selection's chart slides' data ahead (:func:`chart_deck` takes them when it is asked for the same
    workspace, zone and rows): a comparison deck's before side on its own thread while the after side is still
    read.  Plain data and bytes only (python-pptx's deck objects are made by :func:`chart_deck` on the writer's
    thread)."""
    frame = metrics(by="lpar_interval")
    charts = _charts(frame, ws, tz, prepare=True)
    with _PREPARED_LOCK:
        _PREPARED.clear()          # one selection's at a time: none left over from an export that did not use them
        _PREPARED[(id(ws), tz)] = (ws, frame, charts)


def _take_prepared(frame: pd.DataFrame, ws, tz: str):
    """The charts :func:`prepare_charts` made of ``ws`` in ``tz`` when they were made of the same rows as ``frame``
    (the workspace's frame cache hands out copies: compared by value), else None."""
    with _PREPARED_LOCK:
        got = _PREPARED.pop((id(ws), tz), None)
    if got is None or got[0] is not ws or not got[1].equals(frame) or list(got[1].columns) != list(frame.columns):
        return None
    return got[2]


def chart_deck(deck: Deck, metrics: Metrics, ws, steps, prefix: str = "", sub: str = "", tz: str = "utc") -> None:
    """The timeline chart slides of one selection, over its own window, the time axis in ``tz``."""
    frame = metrics(by="lpar_interval")
    charts = _take_prepared(frame, ws, tz)
    charts = charts if charts is not None else _charts(frame, ws, tz)
    no_rni = len(frame) and not any(c["key"] == "RNI" for c, _s, _d in charts)
    for k, (c, series, data) in enumerate(charts):
        s = deck.slide(prefix + c["title"], "chart", sub, c["about"])
        xy_chart(s, 0.4, 1.25, SLIDE_W - 0.8, SLIDE_H - 1.45, series, c["title"], c["x"], c["y"],
                 "mm-dd hh:mm", data=data)
        steps(None, f"chart {k + 1} of {len(charts)}")
    n_nodes = frame.groupby(["cec", "lpar"], observed=True).ngroups if len(frame) else 0
    if n_nodes > MAX_NODE_SLIDES:
        s = deck.slide(prefix + "More LPARs", "chart", sub, "Why some LPARs have no CPI-parts or sourcing chart.")
        deck.text(s, 0.4, 1.4, 12, 2, [f"{n_nodes} LPARs are selected: the CPI-parts and sourcing charts show the first "
                                       f"{MAX_NODE_SLIDES}; select fewer LPARs (--lpar) for the others. The L1MP, RNI "
                                       "and LPARCPU charts show every LPAR."], pt=16)
    if no_rni:
        s = deck.slide(prefix + "Rel Nest Intensity", "chart", sub, "Why there is no RNI chart.")
        deck.text(s, 0.4, 1.4, 12, 2, ["No RNI formula for the generation(s) in the data (e.g. z16/z17: IBM's "
                                       "coefficients were not reachable); configure one with --formulas to chart "
                                       "RNI and the LSPR workload hint."], pt=16)


def appendix_slide(deck: Deck, lines: list[str], max_lines: int = 30) -> None:
    """The provenance as a slide: files with size and SHA-256, windows, filters, formula sets, the app."""
    s = deck.slide("Appendix: provenance", "appendix", "",
                   "Where every number of this deck comes from; the same text is in every slide's notes.")
    body = lines[:max_lines]
    if len(lines) > max_lines:
        body.append(f"... {len(lines) - max_lines} more line(s) in this slide's notes")
    deck.text(s, 0.4, 1.0, SLIDE_W - 0.8, SLIDE_H - 1.2, body, pt=10)
