"""The before/after story of a comparison deck, in the order an IBM CPU MF review tells it.

Executive summary (written from the numbers, with its caveats) -> the before/after table in the presentation's
column layout (split over slides before any column is dropped, one footnote per marked column, RNI with its status,
IBM's rounding) -> the CPI waterfall of every pair (value axis from zero) -> the overlays on a relative time axis
(before and after in two colour families, before dashed) -> the LPAR configuration of both sides (processors,
weights, capping, changes inside a window) -> each side's own slides over its own window -> the appendix.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from app.engine.compare import compare, node_labels
from app.engine.layout import compare_cell, gapped
from app.export.pptx_parts import (AFTER_COLORS, BEFORE_COLORS, MAX_SERIES, MIN_PT, SLIDE_H, SLIDE_W, TABLE_PT, Deck,
                                   fit_rows, head, table, widths, xy_chart)
from app.export.pptx_slides import chart_deck, column_groups, deck_decimals, summary_slides
from app.export.provenance import LEVEL_NAMES
from app.export.story import caveats, configuration, side_changes, side_text, summary_points
from app.textsafe import display_text

__all__ = ["compare_story", "footnotes", "shift_pair_slides", "MAX_WATERFALLS"]

MAX_WATERFALLS = 12
_SUPER = "¹²³⁴⁵⁶⁷⁸⁹"
_SHORT_ROWS = {"ratio before/after": "before/after", "delta after-before": "after-before"}


def _mark(i: int) -> str:
    return _SUPER[i] if i < len(_SUPER) else f"({i + 1})"


def footnotes(c) -> dict[str, str]:
    """One footnote per marked column of the comparison table: the formula differences and RNI's status."""
    notes: dict[str, str] = {}
    gens = {}
    for sel in (c.before, c.after):
        m = sel.metrics("lpar")
        gens[sel.name] = list(dict.fromkeys(m["generation"].astype(str))) if len(m) else []
    for mid, why in c.marks.items():
        if why.startswith("formula differs"):
            notes[mid] = f"{mid}: computed from other counters on {'/'.join(gens.get('before', []))} than on " \
                         f"{'/'.join(gens.get('after', []))} (cache topology differs; formulas in the notes)"
        elif why.startswith("no formula"):
            notes[mid] = f"{mid}: {why}"
        else:
            notes[mid] = f"{mid}: {why}"
    status = []
    for sel in (c.before, c.after):
        for g in gens.get(sel.name, []):
            fs = sel.workspace.formula_sets.get(g)
            rni = fs.metrics.get("RNI") if fs is not None else None
            if rni is None or not rni.expr:
                status.append(f"{g}: no formula (n/a)")
            elif rni.status != "confirmed":
                status.append(f"{g}: {rni.status} coefficients")
    if status:
        notes["RNI"] = "Rel Nest Intensity: " + "; ".join(dict.fromkeys(status)) + \
                       ("" if "RNI" not in c.marks else f" ({c.marks['RNI']})")
    return notes


def _summary_slide(deck: Deck, c, changes: tuple[dict, dict] | None = None) -> None:
    s = deck.slide("Executive summary", "executive", "",
                   "The comparison in words, computed from the before/after table and the CPI decomposition of the "
                   "next slides: CPI change = instruction complexity + finite cache (L1MP effect + SCPL1M effect, "
                   "midpoint split so the parts add up exactly); percent changes relative to the before value.")
    points = summary_points(c)
    notes = caveats(c, changes)
    grouped = _group_caveats(notes)
    lines = points + ([""] + ["Caveats"] + [f"- {x}" for x in grouped[:8]] if grouped else [])
    if len(grouped) > 8:
        lines.append(f"- {len(grouped) - 8} more in this slide's notes")
    pt = 14 if sum(len(x) for x in lines) < 1400 else 12
    box = deck.text(s, 0.4, 1.0, SLIDE_W - 0.8, SLIDE_H - 1.2, lines, pt=pt,
                    bold={len(points) + 1} if grouped else frozenset())
    box.text_frame.paragraphs[0].space_after = 0
    if notes:
        tf = s.notes_slide.notes_text_frame
        tf.text = tf.text + "\n\nCaveats in full:\n" + "\n".join(notes)


def _group_caveats(lines: list[str]) -> list[str]:
    """Formula differences of several columns in one line; the rest as they are."""
    diff = [ln.split(":", 1)[0] for ln in lines if ": formula differs" in ln]
    rest = [ln for ln in lines if ": formula differs" not in ln
            and not (ln.startswith("RNI: no formula for") and "only" in ln)]
    out = []
    if diff:
        out.append(f"{', '.join(diff)}: computed from other counters on the two generations (their cache levels "
                   "differ); read their before/after values as different measures.")
    return out + rest


def _table_slides(deck: Deck, c, title: str | None = None, kind: str = "compare", about: str = "",
                  row_names: dict[str, str] | None = None, tz: str = "utc") -> None:
    specs = c.main_columns()
    notes = footnotes(c)
    order = [s.id for s in specs if s.id in notes]
    sup = {mid: _mark(i) for i, mid in enumerate(order)}
    header = ["Row", "Name"] + [head(s) + (f" {sup[s.id]}" if s.id in sup else "") for s in specs]
    recs = c.table.to_dict("records")
    names = row_names or {}
    labels = {"ratio": " ", "delta": " "} if names else {}      # the Row column and the ratio note say which
    rows = [[names.get(r["row"], r["row"]),
             labels.get(r["row"]) or _SHORT_ROWS.get(str(r["label"]), display_text(r["label"]))]
            + [compare_cell(r["row"], s.id, r.get(s.id), deck_decimals(s)) for s in specs] for r in recs]
    avail_w = SLIDE_W - 0.8
    pt = TABLE_PT
    w = widths(header, rows, pt, first_min=0.55)
    while sum(w) > avail_w and pt > MIN_PT:
        pt -= 1
        w = widths(header, rows, pt, first_min=0.55)
    if sum(w) > avail_w:                     # names too long: wrap the Name column, keep the font
        w[1] = max(1.4, min(w[1], avail_w - (sum(w) - w[1])))
    groups = column_groups(header, w, 2, avail_w)
    foot = [f"{sup[mid]} {notes[mid]}" for mid in order]
    foot.append(c.ratio_note)
    foot_h = 0.2 * len(foot) + 0.1
    row_h = pt * 2.1 / 72
    per_pair = 4
    # the column groups of a chunk of pairs stack on one slide while they fit (header of two lines + rows + gap)
    avail_h = SLIDE_H - 1.5 - foot_h - 0.1
    per = max(1, int((avail_h / len(groups) - 3 * row_h) / (per_pair * row_h)))
    stacked = per >= 1 and len(groups) * (3 + per_pair) * row_h <= avail_h
    pairs = c.pairs
    if not stacked:
        per = max(1, fit_rows(avail_h, pt) // per_pair)
    chunks = [pairs[i:i + per] for i in range(0, len(pairs), per)] or [[]]
    sub = [side_text(c.before, 2, tz), side_text(c.after, 2, tz)]      # two short lines above the table
    title = title or f"Before and after per {LEVEL_NAMES.get(c.by, c.by)}"
    layout = [(chunk, groups) for chunk in chunks] if stacked else [(chunk, [g]) for chunk in chunks for g in groups]
    n = len(layout)
    about = about or ("Before and after per pair in the column layout of IBM's CPU MF presentations: each side's row from "
             "its summed counter deltas over its window and shift; ratio = before/after (IBM's '% improvement' "
             "rows), delta = after - before. Footnotes:\n" + "\n".join(foot) +
             ("\nFormulas that differ:\n" + "\n".join(f"{k}: {v}" for k, v in c.marks.items()) if c.marks else ""))
    for k, (chunk, tables) in enumerate(layout, start=1):
        idx = [i for i, r in enumerate(recs) if r["pair"] in chunk]
        s = deck.slide(title + (f" ({k}/{n})" if n > 1 else ""), kind, "", about)
        deck.text(s, 0.4, 0.75, SLIDE_W - 0.8, 0.6, sub, pt=11)
        bold = {j for j, i in enumerate(idx) if recs[i]["row"] == "ratio"}
        shade = {j for j, i in enumerate(idx) if recs[i]["row"] in ("ratio", "delta")}
        top = 1.45
        for cols in tables:
            body = [[rows[i][j] for j in cols] for i in idx]
            table(deck, s, top, [header[j] for j in cols], body, [w[j] for j in cols], pt, bold, shade, n_text=2)
            top += (len(body) + 2) * row_h + 0.3
        deck.text(s, 0.4, SLIDE_H - foot_h - 0.1, SLIDE_W - 0.8, foot_h, foot, pt=9)


def _overlay_slides(deck: Deck, c) -> None:
    ax = c.timelines("lpar_interval")
    for mid, name, unit in (("CPI", "CPI", "cycles per instruction"), ("LPARCPU", "LPARCPU", "% of one engine")):
        series = []
        index: dict[str, int] = {}
        for side, frame, palette in (("before", ax.before, BEFORE_COLORS), ("after", ax.after, AFTER_COLORS)):
            if not len(frame) or mid not in frame.columns:
                continue
            labels = node_labels(frame, "lpar", [ax.after if side == "before" else ax.before])
            for lab, part in frame.assign(_l=labels.to_numpy()).groupby("_l", sort=False):
                part = part.sort_values("x")
                x = part["x"].to_numpy(dtype=float)
                y = pd.to_numeric(part[mid], errors="coerce").to_numpy(dtype=float)
                gx, gy = gapped(x, y)
                i = index.setdefault(str(lab).split(" (")[0], len(index))
                series.append((f"{side}: {display_text(lab)}", gx, gy, {"color": palette[i % len(palette)],
                                                          "dash": side == "before"}))
        if series:
            s = deck.slide(f"{name} before (dashed) and after", "compare", ax.label,
                           f"{name} per interval of both sides on one relative time axis ({ax.label}): before in "
                           "blues, dashed; after in oranges and reds, solid; one line per LPAR and side.")
            xy_chart(s, 0.4, 1.25, SLIDE_W - 0.8, SLIDE_H - 1.45, series[:2 * MAX_SERIES], name, ax.label,
                     unit, None)


def _config_slide(deck: Deck, c, changes: tuple[dict, dict] | None = None) -> None:
    cfg = configuration(c, changes)
    if not len(cfg):
        return
    header = ["Side", "LPAR", "CEC", "Gen", "Processors", "Weights", "Capped", "Changes inside the window"]
    rows = [[display_text(r[k]) for k in ("side", "lpar", "cec", "generation", "processors", "weights", "capped",
                                          "changes")] for r in cfg.to_dict("records")]
    s = deck.slide("LPAR configuration before and after", "config", "",
                   "Processors by type, weights and capping of every compared LPAR at the end of each side's window, "
                   "from the partition data the files carry (z/VM D0R16); without partition data the CPUs with "
                   "counters per class. A change inside a window means that side's numbers mix two configurations.")
    pt = 11
    w = widths(header, rows, pt, first_min=0.7)
    avail = SLIDE_W - 0.8
    if sum(w) > avail:
        w[-1] = max(2.5, avail - sum(w[:-1]))
    per = fit_rows(SLIDE_H - 1.6, pt) // 2
    table(deck, s, 1.1, header, rows[:per], w, pt, n_text=len(header))
    changed = [r for r in cfg.to_dict("records") if r["changes"] != "none"]
    if changed:
        deck.text(s, 0.4, SLIDE_H - 0.9, avail, 0.7,
                  [f"{r['lpar']} ({r['side']}): {r['changes']}: its CPI and ratio mix the migration with this change."
                   for r in changed[:3]], pt=11)


def _waterfall_slide(deck: Deck, c, pair: str) -> None:
    from pptx.dml.color import RGBColor
    from pptx.enum.chart import XL_CHART_TYPE, XL_LABEL_POSITION
    from pptx.util import Inches, Pt

    wf = c.waterfall(pair)
    rec = c.cpi.loc[c.cpi["pair"] == pair].iloc[0].to_dict()
    s = deck.slide(f"CPI change {pair}: what moved it", "waterfall",
                   f"{rec['generation_before']} -> {rec['generation_after']}; instruction complexity + finite cache "
                   "(L1MP effect + SCPL1M effect, midpoint split: the parts add up to the change)",
                   "The CPI change of the pair split exactly: instruction complexity (Est Instr Cmplx CPI after - "
                   "before) and the finite cache part, itself split into the L1MP effect (change of L1MP at the mean "
                   "SCPL1M) and the SCPL1M effect (change of SCPL1M at the mean L1MP), /100. The value axis starts "
                   "at zero so bar lengths compare.")
    from app.export.chart_data import TextCategoryChartData   # names as text in the chart's workbook

    cd = TextCategoryChartData()
    cd.categories = [display_text(x) for x in wf["label"]]
    is_total = wf["kind"] == "total"
    up = (wf["kind"] == "delta") & (wf["value"] > 0)
    down = (wf["kind"] == "delta") & (wf["value"] <= 0)
    cd.add_series("base", [float(b) if k == "delta" else 0.0 for b, k in zip(wf["base"], wf["kind"])])
    cd.add_series("CPI", [float(h) if t else None for h, t in zip(wf["height"], is_total)])
    cd.add_series("increase", [float(h) if u else None for h, u in zip(wf["height"], up)])
    cd.add_series("decrease", [float(h) if d else None for h, d in zip(wf["height"], down)])
    gf = s.shapes.add_chart(XL_CHART_TYPE.COLUMN_STACKED, Inches(0.4), Inches(1.35), Inches(8.4), Inches(5.8), cd)
    ch = gf.chart
    ch.has_legend = False
    ch.font.size = Pt(12)
    plot = ch.plots[0]
    plot.gap_width = 60
    plot.overlap = 100
    colors = {"CPI": "4F81BD", "increase": "C0504D", "decrease": "9BBB59"}
    for ser in plot.series:
        if ser.name == "base":
            ser.format.fill.background()
            ser.format.line.fill.background()
            continue
        ser.format.fill.solid()
        ser.format.fill.fore_color.rgb = RGBColor.from_string(colors[ser.name])
    for i, srec in enumerate(wf.to_dict("records")):       # signed value labels on the visible bars
        name = "CPI" if srec["kind"] == "total" else ("increase" if srec["value"] > 0 else "decrease")
        ser = next(x for x in plot.series if x.name == name)
        dl = ser.points[i].data_label
        dl.has_text_frame = True
        dl.text_frame.text = f"{srec['value']:.3f}" if srec["kind"] == "total" else f"{srec['value']:+.3f}"
        dl.position = XL_LABEL_POSITION.INSIDE_END if srec["kind"] == "total" else XL_LABEL_POSITION.CENTER
        dl.text_frame.paragraphs[0].runs[0].font.size = Pt(12)
        dl.text_frame.paragraphs[0].runs[0].font.bold = True
    va = ch.value_axis
    va.minimum_scale = 0.0                                    # from zero: a 12 % change looks like 12 %
    va.has_major_gridlines = True
    va.major_gridlines.format.line.color.rgb = RGBColor(0xD9, 0xD9, 0xD9)
    va.has_title = True
    va.axis_title.text_frame.text = "cycles per instruction"
    ch.category_axis.tick_labels.font.size = Pt(12)
    b, a = float(rec["cpi_before"]), float(rec["cpi_after"])
    lines = [f"CPI before  {b:.3f}", f"CPI after   {a:.3f}", f"Change      {rec['d_cpi']:+.3f}"
             + (f" ({(a - b) / b * 100:+.1f} %)" if b else "")]
    for key, label in (("d_instr_cmplx", "Instr complexity"), ("d_finite", "Finite cache"),
                       ("d_l1mp_effect", "  L1MP effect"), ("d_scpl1m_effect", "  SCPL1M effect"),
                       ("d_other", "  other")):
        v = rec.get(key)
        if v is not None and math.isfinite(float(v)) and not (key == "d_other" and float(v) == 0.0):
            lines.append(f"{label}  {float(v):+.3f}")
    lines += ["", f"L1MP {rec['l1mp_before']:.2f} -> {rec['l1mp_after']:.2f}",
              f"Est SCPL1M {rec['scpl1m_before']:.0f} -> {rec['scpl1m_after']:.0f}",
              f"Ratio CPI before/after {b / a:.2f}" if a else ""]
    if rec.get("note"):
        lines += ["", str(rec["note"])]
    deck.text(s, 9.0, 1.5, SLIDE_W - 9.4, 5.5, ["The numbers"] + lines, pt=14, bold_first=True)


def shift_pair_slides(deck: Deck, sides, alt_hours, by: str = "lpar") -> None:
    """For each side (a :class:`Selection`), its own shift against another one (``alt_hours``: a shift filter of
    hours; the side's days apply to both), e.g. prime shift against the night: one table slide per side, rows of
    the side's shift first, ratio = shift / other shift."""
    for sel in sides:
        main = sel.shift
        alt = replace(alt_hours, days=main.days if main is not None else None)
        a_name = main.describe() if main is not None and not main.is_empty else "all hours"
        b_name = alt.describe()
        first = replace(sel, name=a_name)
        second = replace(sel, shift=alt, name=b_name)
        zone = (main if main is not None and not main.is_empty else alt).zone_name     # the hours' zone
        short = {"before": a_name.split(",")[0].replace(f" {zone}", ""),
                 "after": b_name.split(",")[0].replace(f" {zone}", "")}
        c2 = replace(compare(first, second, by=by if by in ("lpar", "class") else "lpar"),
                     ratio_note=f"ratio = {short['before']} / {short['after']}; delta = {short['after']} - "
                                f"{short['before']}")
        if not len(c2.table):
            continue
        side = f"{sel.name.capitalize()}: " if sel.name else ""
        days = a_name.split(", ", 1)[1] if ", " in a_name else "all days"
        _table_slides(deck, c2, title=f"{side}{short['before']} against {short['after']} ({zone}, {days})",
                      kind="shifts", row_names=short,
                      about=f"The same LPARs and window in two shifts of the day: {a_name} (rows 'before') against "
                            f"{b_name} (rows 'after'); each row from its shift's summed counter deltas; ratio = "
                            f"{a_name} / {b_name}, delta = {b_name} - {a_name}.")


def compare_story(deck: Deck, request, steps) -> None:
    """Every slide of the comparison after the title, in the story's order."""
    c = request.comparison
    tz = getattr(request, "tz", "utc") or "utc"
    changes = side_changes(c)          # read by the summary's caveats and the configuration slide
    _summary_slide(deck, c, changes)
    steps(None, "executive summary")
    _table_slides(deck, c, tz=tz)
    steps(None, "comparison table")
    for p in (list(c.cpi["pair"])[:MAX_WATERFALLS] if len(c.cpi) else []):
        _waterfall_slide(deck, c, p)
        steps(None, "waterfalls")
    _overlay_slides(deck, c)
    steps(None, "overlays")
    _config_slide(deck, c, changes)
    if getattr(request, "also_shift", None) is not None:
        shift_pair_slides(deck, (c.before, c.after), request.also_shift, c.by)
        steps(None, "shift against shift")
    for sel in (c.before, c.after):      # each side's own slides: its window and time axis in the request's zone
        prefix = f"{(sel.name or 'side').capitalize()}: "
        sub = side_text(sel, tz=tz)
        summary_slides(deck, sel.metrics, sel.workspace, request.by, steps, prefix, sub)
        chart_deck(deck, sel.metrics, sel.workspace, steps, prefix, sub, tz)
