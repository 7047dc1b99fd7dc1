"""PPTX export (python-pptx, 16:9).

Slides: a title slide; the summary of the chosen level as native tables in the presentation's
column layout (split over as many slides as needed, 11 pt, never below :data:`MIN_PT`); native,
editable charts (python-pptx chart objects: XY lines over the interval end, UTC) of CPI with its
two parts, L1MP, the sourcing mix, RNI (only where a formula exists) and LPARCPU; with a
comparison: the comparison table (before / after / ratio / delta), a before/after CPI overlay on
a relative time axis and a stacked-column CPI waterfall per pair with its numbers beside it.
Every slide's notes carry the provenance (files with SHA-256, window, shift, formula sets, app).
Names from the data are shown by :func:`app.textsafe.display_text` (``\x1b``) and every text that
reaches a slide passes :func:`app.textsafe.terminal_text` (no control character reaches the XML); the
charts' embedded workbooks hold names as text, never formulas (:mod:`app.export.chart_data`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from app.engine.compare import node_labels
from app.engine.layout import gapped as _gapped
from app.export.provenance import LEVEL_NAMES, provenance, provenance_lines
from app.export.tables import display, metric_specs, with_labels
from app.textsafe import display_text, terminal_text

__all__ = ["write_pptx", "MIN_PT", "TABLE_PT", "SLIDE_W", "SLIDE_H", "chart_slides"]

SLIDE_W, SLIDE_H = 13.333, 7.5          # inches, 16:9
TABLE_PT = 11
MIN_PT = 10
MAX_SERIES = 8                          # lines per chart; more nodes -> more slides
MAX_NODE_SLIDES = 12                    # per-LPAR charts (CPI parts, sourcing) for at most this many LPARs
_EPOCH = np.datetime64("1899-12-30T00:00:00", "ns")
_SUMMARY_LEVEL = {"interval": "class", "cpu": "class", "class": "class", "lpar": "lpar", "cec": "cec"}
_IDENT = {"cec": ["cec"], "lpar": ["cec", "lpar", "system"], "class": ["cec", "lpar", "system", "class"]}
_SOURCING = ("L15P", "L2LP", "L2RP", "L2P", "L3P", "L4LP", "L4RP", "MEMP")
PALETTE = ["1F77B4", "D62728", "2CA02C", "FF7F0E", "9467BD", "8C564B", "E377C2", "7F7F7F", "BCBD22", "17BECF"]


def _xl_time(values) -> np.ndarray:
    a = pd.to_datetime(pd.Series(values)).to_numpy(dtype="datetime64[ns]")
    return (a - _EPOCH).astype("timedelta64[ns]").astype(np.int64) / 86_400e9


class _Deck:
    def __init__(self, title: str, notes: str):
        from pptx import Presentation
        from pptx.util import Inches

        self.prs = Presentation()
        self.prs.slide_width = Inches(SLIDE_W)
        self.prs.slide_height = Inches(SLIDE_H)
        self.blank = self.prs.slide_layouts[6]
        self.notes = notes
        self.title = title
        self.count: dict[str, int] = {}

    def slide(self, title: str, kind: str, subtitle: str = ""):
        from pptx.util import Inches, Pt

        s = self.prs.slides.add_slide(self.blank)
        box = s.shapes.add_textbox(Inches(0.4), Inches(0.2), Inches(SLIDE_W - 0.8), Inches(0.7))
        tf = box.text_frame
        tf.word_wrap = True
        tf.text = terminal_text(title)
        p = tf.paragraphs[0]
        p.runs[0].font.size = Pt(24)
        p.runs[0].font.bold = True
        if subtitle:
            sub = s.shapes.add_textbox(Inches(0.4), Inches(0.78), Inches(SLIDE_W - 0.8), Inches(0.4))
            sub.text_frame.word_wrap = True
            sub.text_frame.text = terminal_text(subtitle)
            sub.text_frame.paragraphs[0].runs[0].font.size = Pt(12)
        s.notes_slide.notes_text_frame.text = terminal_text(self.notes)
        self.count[kind] = self.count.get(kind, 0) + 1
        return s

    def text(self, slide, x, y, w, h, lines: list[str], pt: int = 12, bold_first: bool = False):
        from pptx.util import Inches, Pt

        box = slide.shapes.add_textbox(Inches(x), Inches(y), Inches(w), Inches(h))
        tf = box.text_frame
        tf.word_wrap = True
        for i, line in enumerate(lines):
            p = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
            r = p.add_run()
            r.text = terminal_text(line)
            r.font.size = Pt(pt)
            r.font.bold = bold_first and i == 0
        return box


# ------------------------------------------------------------------ tables
def _fit_rows(n_rows_avail_in: float, pt: int) -> int:
    """Body rows that fit into a height (inches) at a font size (row = 2.1 x the font height)."""
    row_h = pt * 2.1 / 72
    return max(1, int((n_rows_avail_in - 2 * row_h) / row_h))


def _table(deck: _Deck, slide, top: float, header: list[str], rows: list[list[str]], widths: list[float],
           pt: int, bold_rows: set[int] = frozenset(), shade_rows: set[int] = frozenset(), n_text: int = 1):
    from pptx.dml.color import RGBColor
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Inches, Pt

    n_r, n_c = len(rows) + 1, len(header)
    row_h = pt * 2.1 / 72
    total_w = sum(widths)
    shape = slide.shapes.add_table(n_r, n_c, Inches(0.4), Inches(top), Inches(total_w), Inches(row_h * n_r))
    tbl = shape.table
    for j, w in enumerate(widths):
        tbl.columns[j].width = Inches(w)
    tbl.rows[0].height = Inches(row_h * (2 if any("\n" in h for h in header) else 1))
    for i in range(1, n_r):
        tbl.rows[i].height = Inches(row_h)

    def put(cell, text, bold=False, align=None, fill=None):
        cell.text = terminal_text(text)
        cell.margin_left = cell.margin_right = Inches(0.04)
        cell.margin_top = cell.margin_bottom = Inches(0.02)
        p = cell.text_frame.paragraphs[0]
        if align is not None:
            p.alignment = align
        for r in p.runs:
            r.font.size = Pt(pt)
            r.font.bold = bold
        if fill is not None:
            cell.fill.solid()
            cell.fill.fore_color.rgb = RGBColor.from_string(fill)

    for j, h in enumerate(header):
        put(tbl.cell(0, j), h, bold=True, align=PP_ALIGN.CENTER if j >= n_text else PP_ALIGN.LEFT)
        for para in tbl.cell(0, j).text_frame.paragraphs:
            for r in para.runs:
                r.font.size = Pt(pt)
                r.font.bold = True
    for i, row in enumerate(rows, start=1):
        for j, v in enumerate(row):
            put(tbl.cell(i, j), v, bold=(i - 1) in bold_rows, align=PP_ALIGN.RIGHT if j >= n_text else PP_ALIGN.LEFT,
                fill="EAF1FB" if (i - 1) in shade_rows else None)
    return tbl


def _widths(header: list[str], rows: list[list[str]], pt: int, first_min: float = 1.2,
            avail: float = SLIDE_W - 0.8) -> list[float]:
    """Column widths (inches) from the longest text at ``pt`` (header lines as given, in bold), stretched
    by up to 25% when the table is narrower than ``avail``."""
    body = pt * 0.58 / 72                              # average character width (wide fonts: DejaVu)

    def bold(line: str) -> float:                      # capitals and digits of a bold header are wider
        return sum(0.78 if ch.isupper() or ch.isdigit() else 0.62 for ch in line) * pt / 72
    out = []
    for j, h in enumerate(header):
        cells = max([len(r[j]) for r in rows] + [0]) * body
        head = max(bold(line) for line in h.split("\n"))
        out.append(max(first_min if j == 0 else 0.58, cells + 0.15, head + 0.15))
    total = sum(out)
    if total < avail:
        out = [w * min(1.25, avail / total) for w in out]
    return out


def _scale_to_fit(widths: list[float], avail: float) -> list[float] | None:
    total = sum(widths)
    if total <= avail:
        return widths
    return None


def _head(spec) -> str:
    """Header on at most two lines, split where the longer line is shortest ("Est Instr" / "Cmplx CPI")."""
    words = spec.header.split()
    if len(words) <= 1:
        return spec.header
    best = min(range(1, len(words)), key=lambda k: max(len(" ".join(words[:k])), len(" ".join(words[k:]))))
    return " ".join(words[:best]) + "\n" + " ".join(words[best:])


def _summary_slides(deck: _Deck, request, steps) -> None:
    level = _SUMMARY_LEVEL.get(request.by, "lpar")
    frame = with_labels(request.metrics(by=level), level)
    gens = list(dict.fromkeys(frame["generation"].astype(str))) if len(frame) else []
    specs = [s for s in metric_specs(request.workspace, gens) if s.group in ("Main", "Hint")]
    header = ["Name"] + [_head(s) for s in specs]
    rows = [[display_text(r["label"])] + [display(r.get(s.id), s.decimals) if s.id != "Workload_Hint"
                                          else display_text(r.get(s.id) or "") for s in specs]
            for r in frame.to_dict("records")]
    title = {"lpar": "Summary per LPAR", "class": "Summary per processor class", "cec": "Summary per CEC"}[level]
    sub = _window_text(request)
    if not rows:
        s = deck.slide(title, "summary", sub)
        deck.text(s, 0.4, 1.4, 12, 1, ["(no intervals in the window)"])
        return
    avail_w = SLIDE_W - 0.8
    pt = TABLE_PT
    widths = _widths(header, rows, pt)
    while sum(widths) > avail_w and pt > MIN_PT:
        pt -= 1
        widths = _widths(header, rows, pt)
    if sum(widths) > avail_w:                   # wrap long names on two lines before splitting the table
        widths[0] = max(1.3, min(widths[0], widths[0] / 2 + 0.3, avail_w - sum(widths[1:])))
    # still too wide at MIN_PT: split the metric columns over two tables (Name repeated)
    col_groups = [list(range(len(header)))]
    if sum(widths) > avail_w:
        col_groups, cur, used = [], [0], widths[0]
        for j in range(1, len(header)):
            if used + widths[j] > avail_w:
                col_groups.append(cur)
                cur, used = [0], widths[0]
            cur.append(j)
            used += widths[j]
        col_groups.append(cur)
    per = _fit_rows(SLIDE_H - 1.5 - 0.3, pt)
    chunks = [rows[i:i + per] for i in range(0, len(rows), per)]
    n = len(chunks) * len(col_groups)
    k = 0
    for chunk in chunks:
        for cols in col_groups:
            k += 1
            s = deck.slide(title + (f" ({k}/{n})" if n > 1 else ""), "summary", sub)
            _table(deck, s, 1.3, [header[j] for j in cols], [[r[j] for j in cols] for r in chunk],
                   [widths[j] for j in cols], pt)
    steps(0.3, "summary tables")


def _window_text(request) -> str:
    from app.export.provenance import iso

    m = request.metrics(by="cec")
    if len(m):
        first, last = iso(m["interval_start"].min()), iso(m["interval_end"].max())
        span = f"{first} .. {last}"
    else:
        span = "no intervals"
    shift = request.shift.describe() if request.shift is not None and not request.shift.is_empty else ""
    return f"Intervals {span} (UTC)" + (f"; shift {shift}" if shift else "")


# ------------------------------------------------------------------ charts
def _xy_chart(slide, x, y, w, h, series: list[tuple[str, np.ndarray, np.ndarray, dict]], title: str,
              x_title: str, y_title: str, x_format: str | None, legend: bool = True):
    from pptx.dml.color import RGBColor
    from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
    from pptx.util import Inches, Pt

    from app.export.chart_data import TextXyChartData

    cd = TextXyChartData()
    for name, xs, ys, _ in series:
        s = cd.add_series(name)
        for a, b in zip(xs, ys):
            if math.isfinite(a):
                s.add_data_point(float(a), float(b) if math.isfinite(b) else None)
    gf = slide.shapes.add_chart(XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS, Inches(x), Inches(y), Inches(w),
                                Inches(h), cd)
    ch = gf.chart
    ch.has_title = False                 # the slide title names the chart
    ch.font.size = Pt(11)
    ch.has_legend = legend
    if legend:
        ch.legend.position = XL_LEGEND_POSITION.BOTTOM
        ch.legend.include_in_layout = False
        ch.legend.font.size = Pt(11)
    xa, ya = ch.category_axis, ch.value_axis
    if x_format:
        xs = np.concatenate([np.asarray(sx, dtype=float) for _, sx, _, _ in series]) if series else np.array([])
        xs = xs[np.isfinite(xs)]
        if len(xs):
            lo, hi, unit, fmt = _time_ticks(float(xs.min()), float(xs.max()))
            xa.minimum_scale, xa.maximum_scale, xa.major_unit = lo, hi, unit
            x_format = fmt
        xa.tick_labels.number_format = x_format
        xa.tick_labels.number_format_is_linked = False
    else:                                  # relative axis (hours or days): whole steps, no empty tail
        xs = np.concatenate([np.asarray(sx, dtype=float) for _, sx, _, _ in series]) if series else np.array([])
        xs = xs[np.isfinite(xs)]
        if len(xs):
            lo, hi = float(xs.min()), float(xs.max())
            span = max(hi - min(lo, 0.0), 1e-9)
            step = next((u for u in (0.25, 0.5, 1, 2, 3, 6, 12, 24, 48, 168) if span / u <= 10), 336)
            xa.minimum_scale = math.floor(min(lo, 0.0) / step) * step
            xa.maximum_scale = math.ceil(hi / step) * step
            xa.major_unit = step
    xa.has_title = True
    xa.axis_title.text_frame.text = x_title
    ya.has_title = True
    ya.axis_title.text_frame.text = y_title
    ya.has_major_gridlines = True
    ya.major_gridlines.format.line.color.rgb = RGBColor(0xD9, 0xD9, 0xD9)
    for plot in ch.plots:
        for ser, (_, _, _, style) in zip(plot.series, series):
            ser.smooth = False
            line = ser.format.line
            line.width = Pt(style.get("width", 1.75))
            if style.get("color"):
                line.color.rgb = RGBColor.from_string(style["color"])
            if style.get("dash"):
                from pptx.enum.dml import MSO_LINE_DASH_STYLE
                line.dash_style = MSO_LINE_DASH_STYLE.DASH
    for ax in (xa, ya):
        ax.tick_labels.font.size = Pt(11)
        ax.axis_title.text_frame.paragraphs[0].runs[0].font.size = Pt(11)
    return ch


_TICKS = [1 / 24, 2 / 24, 3 / 24, 6 / 24, 12 / 24, 1, 2, 7, 14, 28]


def _time_ticks(lo: float, hi: float) -> tuple[float, float, float, str]:
    """Axis bounds, major unit (days) and number format for Excel serial times lo..hi: at most ~8 ticks on
    whole hours / days."""
    span = max(hi - lo, 1 / 24)
    unit = next((u for u in _TICKS if span / u <= 8), _TICKS[-1])
    a, b = math.floor(lo / unit + 1e-9) * unit, math.ceil(hi / unit - 1e-9) * unit
    return a, max(b, a + unit), unit, ("mm-dd hh:mm" if unit < 1 else "yyyy-mm-dd")


def _nodes(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    labels = node_labels(frame, "lpar_interval")
    f = frame.assign(_label=labels.to_numpy())
    return [(display_text(lab), part.sort_values("interval_end")) for lab, part in f.groupby("_label", sort=False)]


def chart_slides(frame: pd.DataFrame, sets: dict) -> list[dict]:
    """The timeline charts of the deck as data: ``{"title", "y", "series": [(name, x, y)]}`` per chart
    (x = Excel serial date of the interval end).  Used by the writer and by the tests."""
    out: list[dict] = []
    nodes = _nodes(frame) if len(frame) else []

    def col(part, mid):
        return pd.to_numeric(part[mid], errors="coerce").to_numpy(dtype=float) if mid in part.columns \
            else np.full(len(part), np.nan)

    for lab, part in nodes[:MAX_NODE_SLIDES]:      # CPI with its two parts, one chart per node
        x = _xl_time(part["interval_end"])
        ser = [(name, x, col(part, mid)) for mid, name in (("CPI", "CPI"), ("Est_Instr_Cmplx_CPI",
                                                                            "Est Instr Cmplx CPI"),
                                                            ("Est_Finite_CPI", "Est Finite CPI"))]
        ser = [s for s in ser if np.isfinite(s[2]).any()]
        if ser:
            out.append({"title": f"CPI and its two parts: {lab}", "y": "cycles per instruction", "series": ser,
                        "key": "cpi"})
    for mid, title, unit in (("L1MP", "L1MP", "L1 misses per 100 instructions"),):
        for i in range(0, len(nodes), MAX_SERIES):
            ser = [(lab, _xl_time(p["interval_end"]), col(p, mid)) for lab, p in nodes[i:i + MAX_SERIES]]
            ser = [s for s in ser if np.isfinite(s[2]).any()]
            if ser:
                out.append({"title": title, "y": unit, "series": ser, "key": mid})
    for lab, part in nodes[:MAX_NODE_SLIDES]:      # sourcing mix, one chart per node
        x = _xl_time(part["interval_end"])
        ser = [(mid, x, col(part, mid)) for mid in _SOURCING]
        ser = [s for s in ser if np.isfinite(s[2]).any()]
        if ser:
            out.append({"title": f"Sourcing of L1 misses: {lab}", "y": "% of L1 misses", "series": ser,
                        "key": "sourcing"})
    for mid, title, unit in (("RNI", "Rel Nest Intensity", "RNI"), ("LPARCPU", "LPARCPU", "% of one engine")):
        for i in range(0, len(nodes), MAX_SERIES):
            ser = [(lab, _xl_time(p["interval_end"]), col(p, mid)) for lab, p in nodes[i:i + MAX_SERIES]]
            ser = [s for s in ser if np.isfinite(s[2]).any()]     # RNI only where a formula exists
            if ser:
                out.append({"title": title, "y": unit, "series": ser, "key": mid})
    return out


def _chart_deck(deck: _Deck, request, steps) -> None:
    frame = request.metrics(by="lpar_interval")
    charts = chart_slides(frame, request.workspace.formula_sets)
    sub = _window_text(request)
    no_rni = len(frame) and not any(c["key"] == "RNI" for c in charts)
    for k, c in enumerate(charts):
        s = deck.slide(c["title"], "chart", sub)
        series = []
        for i, (name, x, y) in enumerate(c["series"]):
            gx, gy = _gapped(x, y)
            series.append((name, gx, gy, {"color": PALETTE[i % len(PALETTE)]}))
        _xy_chart(s, 0.4, 1.25, SLIDE_W - 0.8, SLIDE_H - 1.45, series, c["title"], "interval end (UTC)", c["y"],
                  "mm-dd hh:mm")
        steps(0.3 + 0.4 * (k + 1) / max(len(charts), 1), f"chart {k + 1} of {len(charts)}")
    n_nodes = frame.groupby(["cec", "lpar"], observed=True).ngroups if len(frame) else 0
    if n_nodes > MAX_NODE_SLIDES:
        s = deck.slide("More LPARs", "chart", sub)
        deck.text(s, 0.4, 1.4, 12, 2, [f"{n_nodes} LPARs are selected: the CPI-parts and sourcing charts show the first "
                                       f"{MAX_NODE_SLIDES}; select fewer LPARs (--lpar) for the others. The L1MP, RNI "
                                       "and LPARCPU charts show every LPAR."], pt=16)
    if no_rni:
        s = deck.slide("Rel Nest Intensity", "chart", sub)
        deck.text(s, 0.4, 1.4, 12, 2, ["No RNI formula for the generation(s) in the data (e.g. z16/z17: IBM's "
                                       "coefficients were not reachable); configure one with --formulas to chart "
                                       "RNI and the LSPR workload hint."], pt=16)


# ------------------------------------------------------------------ comparison
def _compare_slides(deck: _Deck, request, steps) -> None:
    from app.commands.compare import cell_text

    c = request.comparison
    specs = c.main_columns()
    header = ["Row", "Name"] + [_head(s) + (" *" if s.id in c.marks else "") for s in specs]
    recs = c.table.to_dict("records")
    rows = [[r["row"], display_text(r["label"])] + [cell_text(r["row"], s.id, r.get(s.id), s.decimals) for s in specs]
            for r in recs]
    avail_w = SLIDE_W - 0.8
    pt = TABLE_PT
    widths = _widths(header, rows, pt, first_min=0.55)
    while sum(widths) > avail_w and pt > MIN_PT:
        pt -= 1
        widths = _widths(header, rows, pt, first_min=0.55)
    if sum(widths) > avail_w:                   # labels of ratio/delta rows are long: shorten them
        for r in rows:
            r[1] = {"ratio before/after": "before/after", "delta after-before": "after-before"}.get(r[1], r[1])
        widths = _widths(header, rows, pt, first_min=0.55)
    if sum(widths) > avail_w:                     # names too long: wrap the Name column, keep the font
        widths[1] = max(1.4, avail_w - (sum(widths) - widths[1]))
    dropped = []
    for mid in ("Workload_Hint", "Eff_GHz", "PRBSTATE"):   # still too wide: leave out the least telling columns
        if sum(widths) <= avail_w:
            break
        j = next((k for k, sp in enumerate(specs) if sp.id == mid), None)
        if j is not None:
            dropped.append(specs[j].header)
            del specs[j], header[j + 2], widths[j + 2]
            for r in rows:
                del r[j + 2]
    foot = []
    if c.marks:
        foot.append("* formula differs between the two generations: " + "; ".join(
            f"{k}: {'no formula in one set' if v.startswith('no formula') else 'different counters/expression'}"
            for k, v in c.marks.items()))
    foot.append(c.ratio_note + (f"; not shown for lack of room: {', '.join(dropped)} (see the summary slides)"
                                if dropped else ""))
    pairs = c.pairs
    per_pair = 4
    per = max(1, _fit_rows(SLIDE_H - 1.5 - 0.9, pt) // per_pair)
    chunks = [pairs[i:i + per] for i in range(0, len(pairs), per)] or [[]]
    sub = _sides_text(c)
    for k, chunk in enumerate(chunks):
        idx = [i for i, r in enumerate(recs) if r["pair"] in chunk]
        s = deck.slide(f"Before and after per {LEVEL_NAMES.get(c.by, c.by)}" + (f" ({k + 1}/{len(chunks)})" if len(chunks) > 1 else ""),
                       "compare", "")
        deck.text(s, 0.4, 0.75, SLIDE_W - 0.8, 0.6, sub, pt=11)
        body = [rows[i] for i in idx]
        bold = {j for j, i in enumerate(idx) if recs[i]["row"] == "ratio"}
        shade = {j for j, i in enumerate(idx) if recs[i]["row"] in ("ratio", "delta")}
        _table(deck, s, 1.45, header, body, widths, pt, bold, shade, n_text=2)
        deck.text(s, 0.4, SLIDE_H - 0.85, SLIDE_W - 0.8, 0.7, foot, pt=10)
    steps(0.75, "comparison table")
    # relative overlays: CPI and LPARCPU, before dashed, the same colour per LPAR
    ax = c.timelines("lpar_interval")
    for mid, head, unit in (("CPI", "CPI", "cycles per instruction"), ("LPARCPU", "LPARCPU", "% of one engine")):
        series = []
        colors: dict[str, str] = {}
        for side, frame in (("before", ax.before), ("after", ax.after)):
            if not len(frame) or mid not in frame.columns:
                continue
            labels = node_labels(frame, "lpar", [ax.after if side == "before" else ax.before])
            for lab, part in frame.assign(_l=labels.to_numpy()).groupby("_l", sort=False):
                part = part.sort_values("x")
                x = part["x"].to_numpy(dtype=float)
                y = pd.to_numeric(part[mid], errors="coerce").to_numpy(dtype=float)
                gx, gy = _gapped(x, y)
                color = colors.setdefault(str(lab).split(" (")[0], PALETTE[len(colors) % len(PALETTE)])
                series.append((f"{side}: {display_text(lab)}", gx, gy, {"color": color, "dash": side == "before"}))
        if series:
            s = deck.slide(f"{head} before (dashed) and after", "compare", ax.label)
            _xy_chart(s, 0.4, 1.25, SLIDE_W - 0.8, SLIDE_H - 1.45, series[:2 * MAX_SERIES], head, ax.label,
                      unit, None)
    for k, p in enumerate(list(c.cpi["pair"])[:12] if len(c.cpi) else []):
        _waterfall_slide(deck, c, p)
        steps(0.8 + 0.15 * (k + 1) / max(len(c.cpi), 1), "waterfalls")


def _sides_text(c) -> list[str]:
    """One short line per side: window of the intervals and shift."""
    from app.export.provenance import iso

    out = []
    for sel in (c.before, c.after):
        m = sel.metrics("cec")
        span = f"{iso(m['interval_start'].min())} .. {iso(m['interval_end'].max())}" if len(m) else "no intervals"
        gens = ", ".join(f"{r['cec']} ({r['generation']})" for r in m.to_dict("records")) if len(m) else ""
        shift = f"; shift {sel.shift.describe()}" if sel.shift is not None and not sel.shift.is_empty else ""
        out.append(f"{sel.name or 'selection'}: {gens}, intervals {span}{shift}")
    return out


def _waterfall_slide(deck: _Deck, c, pair: str) -> None:
    from pptx.dml.color import RGBColor
    from pptx.enum.chart import XL_CHART_TYPE, XL_LABEL_POSITION
    from pptx.util import Inches, Pt

    from app.export.chart_data import TextCategoryChartData

    wf = c.waterfall(pair)
    rec = c.cpi.loc[c.cpi["pair"] == pair].iloc[0].to_dict()
    s = deck.slide(f"CPI change {pair}: what moved it", "waterfall",
                   f"{rec['generation_before']} -> {rec['generation_after']}; instruction complexity + finite cache "
                   "(L1MP effect + SCPL1M effect, midpoint split: the parts add up to the change)")
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
    # signed value labels on the visible bars
    for i, srec in enumerate(wf.to_dict("records")):
        name = "CPI" if srec["kind"] == "total" else ("increase" if srec["value"] > 0 else "decrease")
        ser = next(x for x in plot.series if x.name == name)
        dl = ser.points[i].data_label
        dl.has_text_frame = True
        dl.text_frame.text = f"{srec['value']:.3f}" if srec["kind"] == "total" else f"{srec['value']:+.3f}"
        dl.position = XL_LABEL_POSITION.INSIDE_END if srec["kind"] == "total" else XL_LABEL_POSITION.CENTER
        dl.text_frame.paragraphs[0].runs[0].font.size = Pt(12)
        dl.text_frame.paragraphs[0].runs[0].font.bold = True
    ends = [float(v) for v in wf["end"]] + [float(v) for v in wf["start"] if v]
    lo, hi = min(ends), max(ends)
    va = ch.value_axis
    va.minimum_scale = max(0.0, math.floor((lo - 1.5 * (hi - lo) - 1e-9) * 10) / 10)
    va.has_major_gridlines = True
    va.major_gridlines.format.line.color.rgb = RGBColor(0xD9, 0xD9, 0xD9)
    va.has_title = True
    va.axis_title.text_frame.text = "cycles per instruction"
    ch.category_axis.tick_labels.font.size = Pt(12)
    lines = [f"CPI before  {rec['cpi_before']:.3f}", f"CPI after   {rec['cpi_after']:.3f}",
             f"Change      {rec['d_cpi']:+.3f}"]
    for key, label in (("d_instr_cmplx", "Instr complexity"), ("d_finite", "Finite cache"),
                       ("d_l1mp_effect", "  L1MP effect"), ("d_scpl1m_effect", "  SCPL1M effect"),
                       ("d_other", "  other")):
        v = rec.get(key)
        if v is not None and math.isfinite(float(v)) and not (key == "d_other" and float(v) == 0.0):
            lines.append(f"{label}  {float(v):+.3f}")
    lines += ["", f"L1MP {rec['l1mp_before']:.2f} -> {rec['l1mp_after']:.2f}",
              f"Est SCPL1M {rec['scpl1m_before']:.1f} -> {rec['scpl1m_after']:.1f}",
              f"Ratio CPI before/after {rec['cpi_before'] / rec['cpi_after']:.2f}"
              if rec["cpi_after"] else ""]
    if rec.get("note"):
        lines += ["", str(rec["note"])]
    deck.text(s, 9.0, 1.5, SLIDE_W - 9.4, 5.5, ["The numbers"] + lines, pt=14, bold_first=True)


# ------------------------------------------------------------------ writer
def write_pptx(request, path: str, steps) -> dict[str, int]:
    """Write the deck; returns the number of slides per kind (title, summary, chart, compare, waterfall)."""
    doc = provenance(request)
    notes = "\n".join(provenance_lines(doc))
    deck = _Deck(request.title, notes)
    s = deck.slide(request.title, "title")
    lines = [request.subtitle] if request.subtitle else []
    lines += [_window_text(request), "Formula sets: " + (", ".join(doc["formula_sets"].values()) or "-"),
              f"{len(doc['files'])} file(s): " + ", ".join(f["name"] for f in doc["files"][:6])
              + (" ..." if len(doc["files"]) > 6 else "")]
    if request.comparison is not None:
        lines += [f"Before: {request.comparison.before.describe()}", f"After: {request.comparison.after.describe()}"]
    lines.append(doc["app"] + "; provenance (files, SHA-256, window, filters, formula versions) in every slide's "
                              "notes")
    deck.text(s, 0.6, 2.2, SLIDE_W - 1.2, 4.5, lines, pt=16)
    steps(0.05, "title")
    _summary_slides(deck, request, steps)
    _chart_deck(deck, request, steps)
    if request.comparison is not None:
        _compare_slides(deck, request, steps)
    steps(0.97, "saving")
    deck.prs.save(path)
    return dict(deck.count)
