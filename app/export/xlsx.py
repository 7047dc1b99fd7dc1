"""XLSX export (XlsxWriter).

Sheets: ``Timeline`` (native scatter-with-lines charts of CPI and LPARCPU per LPAR over time,
from the ``LPAR intervals`` sheet), ``Compare`` (when a comparison is set: before / after /
ratio / delta rows in the presentation layout, the marked metrics with their reasons, the CPI
decomposition and a stacked-column waterfall chart per pair), one sheet per level (``CEC``,
``LPAR``, ``Class``, ``LPAR intervals``, ``Intervals``, and ``CPU intervals`` when the request asks for it:
``cpu_sheet``) and ``About`` (source files with size and SHA-256, window, shift filter, formula-set versions,
app version, the rows of each sheet and the sheets left out).  The cells of the level sheets are written as whole
columns (:mod:`app.export.xlsx_rows`), in XlsxWriter's constant-memory mode.

Level sheets: frozen header row and name column, number formats with the presentation's
rounding (the cells hold full precision), fitted column widths, an autofilter; times are Excel
date-times (UTC).  Strings are never turned into formulas: every text is written as a text cell
(``write_string``; the charts name their series by a cell reference, never by a literal that could start
with ``=``), and names from the data are shown by :func:`app.textsafe.display_text` (``\x1b``).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np
import pandas as pd

from app.engine.compare import node_labels
from app.engine.layout import gap_cuts
from app.export.provenance import LEVEL_NAMES, provenance, provenance_lines, window_texts
from app.export.tables import (SHEETS, SIDE_COLORS, comparison_zone, excel_format, level_columns, with_labels,
                               zoned_times)
from app.export.xlsx_rows import SheetColumn, write_columns, zip_level
from app.textsafe import display_text

__all__ = ["write_xlsx", "MAX_ROWS", "excel_time"]

MAX_ROWS = 1_048_575           # Excel's sheet size minus the header row
_EPOCH = np.datetime64("1899-12-30T00:00:00", "ns")
_WF = 20                       # first column of the waterfall data on the Compare sheet
# the deflate level of the workbook's parts (zlib's default, 6, took 3-4 s of the month's workbook's 104 MB of XML;
# level 1 a third of that, the file 17 % larger: 24.6 MB instead of 21.0)
ZIP_LEVEL = 1


def excel_time(values) -> np.ndarray:
    """Excel serial date-times (days since 1899-12-30) of datetime64 values; NaN for NaT."""
    a = pd.to_datetime(pd.Series(values)).to_numpy(dtype="datetime64[ns]")
    out = (a - _EPOCH).astype("timedelta64[ns]").astype(np.int64) / 86_400e9
    out[np.isnat(a)] = np.nan
    return out


class _Formats:
    def __init__(self, wb):
        self.wb = wb
        self.head = wb.add_format({"bold": True, "text_wrap": True, "valign": "top", "bg_color": "#DCE6F1",
                                   "bottom": 1})
        self.time = wb.add_format({"num_format": "yyyy-mm-dd hh:mm"})
        self.bold = wb.add_format({"bold": True})
        self.title = wb.add_format({"bold": True, "font_size": 14})
        self.wrap = wb.add_format({"text_wrap": True, "valign": "top"})
        self._num: dict[str, Any] = {}

    def num(self, fmt: str, bold: bool = False):
        key = fmt + ("b" if bold else "")
        if key not in self._num:
            self._num[key] = self.wb.add_format({"num_format": fmt, "bold": bold})
        return self._num[key]


def header_lines(text: str, width: float) -> int:
    """Lines a wrapped header takes in a column ``width`` characters wide (words never broken: the column is at
    least as wide as the longest word)."""
    lines, used = 1, 0
    for word in text.split():
        need = len(word) + (1 if used else 0)
        if used and used + need > width - 1:
            lines, used = lines + 1, len(word)
        else:
            used += need
    return lines


def print_setup(sh, repeat_rows: int = 0) -> None:
    """Landscape, one page wide, the header row(s) on every page, the sheet's name and page numbers."""
    sh.set_landscape()
    sh.fit_to_pages(1, 0)
    if repeat_rows:
        sh.repeat_rows(0, repeat_rows - 1)
    sh.set_header("&L&A&RNestScope")
    sh.set_footer("&CPage &P of &N")


def _finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _col_letter(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def _write_level(wb, fm: _Formats, name: str, ws_, frame: pd.DataFrame, ident: list[str], level: str,
                 steps, frac: tuple[float, float], tz: str = "utc") -> dict[str, Any]:
    """One level sheet, its times in ``tz``; returns layout info (column index by key, rows written, rows left
    out, the zone's name)."""
    sh = wb.add_worksheet(name)
    frame = with_labels(frame, level)
    n = min(len(frame), MAX_ROWS)
    truncated = len(frame) - n
    frame = frame.iloc[:n]
    times, zone = zoned_times(ws_, tz, frame)
    cols = level_columns(ws_, frame, ident, zone=zone)
    data: dict[str, Any] = {}
    widths = []
    sample = frame.iloc[:: max(1, n // 2000)] if n else frame
    for j, c in enumerate(cols):
        if c.key not in frame.columns:
            data[c.key] = None
        elif c.kind == "time":
            data[c.key] = excel_time(times[c.key])
        elif c.kind in ("metric", "int"):
            data[c.key] = pd.to_numeric(frame[c.key], errors="coerce").to_numpy(dtype=np.float64)
        else:
            data[c.key] = frame[c.key].tolist()
        if c.kind == "time":
            w = 16
        elif c.kind in ("metric", "int") and c.key in frame.columns and len(sample):
            vals = pd.to_numeric(sample[c.key], errors="coerce").abs()
            mx = float(vals.max()) if vals.notna().any() else 0.0
            w = len(f"{mx:.{c.decimals}f}") + 2
        elif c.key in frame.columns and len(sample):
            w = max((len(str(x)) for x in sample[c.key].tolist() if x is not None), default=4) + 2
        else:
            w = 6
        head_w = max(len(part) for part in c.header.split()) + 2 if c.header else 6
        w = max(w, head_w, 6 if c.kind != "text" else 4)
        widths.append(min(w, 40))
    for j, (c, w) in enumerate(zip(cols, widths)):
        fmt = fm.time if c.kind == "time" else (fm.num(excel_format(c.decimals)) if c.kind == "metric" else None)
        sh.set_column(j, j, w, fmt)
    sh.set_row(0, 15 * max([header_lines(c.header, w) for c, w in zip(cols, widths)] + [2]))
    for j, c in enumerate(cols):
        sh.write_string(0, j, c.header, fm.head)
        if c.tooltip:
            sh.write_comment(0, j, f"{c.key}\n{c.tooltip}", {"x_scale": 2.5, "y_scale": 1.6})
    fmts = [fm.time if c.kind == "time" else (fm.num(excel_format(c.decimals)) if c.kind == "metric" else None)
            for c in cols]
    # whole columns, one block of rows at a time (app.export.xlsx_rows): no per-cell call
    columns = [SheetColumn(j, "num" if c.kind in ("metric", "int", "time") else "text", data[c.key], fmts[j])
               for j, c in enumerate(cols) if data[c.key] is not None]
    write_columns(sh, columns, 1, n, lambda done: steps(frac[0] + (frac[1] - frac[0]) * done / max(n, 1),
                                                        f"sheet {name}: row {done:,} of {n:,}"))
    sh.freeze_panes(1, 1)
    sh.autofilter(0, 0, max(n, 1), len(cols) - 1)
    print_setup(sh, repeat_rows=1)
    return {"sheet": name, "col": {c.key: j for j, c in enumerate(cols)}, "rows": n, "truncated": truncated,
            "zone": zone}


def _chart_axes(ch, x_name: str, y_name: str, x_fmt: str | None = None, x_min=None, x_max=None) -> None:
    grid = {"visible": True, "line": {"color": "#E0E0E0"}}
    x = {"name": x_name, "major_gridlines": grid}
    if x_fmt:
        x.update(num_format=x_fmt, num_font={"rotation": -45})
    if x_min is not None:
        x.update(min=x_min, max=x_max)
    ch.set_x_axis(x)
    ch.set_y_axis({"name": y_name, "major_gridlines": grid})
    ch.set_legend({"position": "bottom"})
    ch.set_size({"width": 960, "height": 360})


PALETTE = ["#1F77B4", "#D62728", "#2CA02C", "#FF7F0E", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22",
           "#17BECF"]
BEFORE_COLORS = ["#" + c for c in SIDE_COLORS["before"]]
AFTER_COLORS = ["#" + c for c in SIDE_COLORS["after"]]
_TIMELINE_METRICS = (("CPI", "CPI", "cycles per instruction"), ("LPARCPU", "LPARCPU", "% of one engine"))


def _blocks(parts: list[tuple[str, str, pd.DataFrame]], xcol: str,
            ref: str | None = None) -> list[tuple[str, str, list[np.ndarray]]]:
    """(name, side, [x, metric...]) per series, with a NaN row where the data has a gap (the chart shows it);
    ``ref``: the column of the same times in UTC when ``xcol`` is wall-clock time (a daylight-saving switch is
    no gap)."""
    out = []
    for name, side, part in parts:
        x = part[xcol].to_numpy(dtype=float)
        arrays = [x] + [pd.to_numeric(part[mid], errors="coerce").to_numpy(dtype=float) if mid in part.columns
                        else np.full(len(x), np.nan) for mid, _, _ in _TIMELINE_METRICS]
        cut = gap_cuts(x if ref is None else part[ref].to_numpy(dtype=float))   # the one gap rule of every chart
        if len(cut):
            arrays = [np.insert(a, cut, np.nan) for a in arrays]
        out.append((name, side, arrays))
    return out


def _write_blocks(sh, c0: int, blocks, x_label: str) -> list[tuple[str, str, int, int, int]]:
    """Write the blocks side by side from column ``c0`` (whole columns, row blocks: constant-memory mode);
    returns (name, side, column, first row, last row) per series."""
    width = 1 + len(_TIMELINE_METRICS) + 1
    series = []
    for k, (name, side, arrays) in enumerate(blocks):
        cc = c0 + k * width
        sh.write_string(1, cc, display_text(name))       # the series name: charts refer to this cell
        sh.write_string(2, cc, x_label)
        for m, (_, head, _) in enumerate(_TIMELINE_METRICS):
            sh.write_string(2, cc + 1 + m, head)
        series.append((name, side, cc, 3, 3 + len(arrays[0]) - 1))
    longest = max((len(b[2][0]) for b in blocks), default=0)
    columns = []
    for k, (_, _, arrays) in enumerate(blocks):
        for m, a in enumerate(arrays):           # shorter series padded with empty cells
            columns.append(SheetColumn(c0 + k * width + m, "num",
                                       np.concatenate([a, np.full(longest - len(a), np.nan)]) if len(a) < longest
                                       else a))
    write_columns(sh, columns, 3, longest)
    return series


def _charts(wb, sh, series, row: int, title: str, x_label: str, x_fmt: str | None = None, x_min=None,
            x_max=None) -> int:
    for k, (mid, head, unit) in enumerate(_TIMELINE_METRICS):
        ch = wb.add_chart({"type": "scatter", "subtype": "straight"})
        index: dict[str, int] = {}
        for name, side, cc, r0, r1 in series[:16]:
            base = name.split(": ", 1)[-1].split(" (")[0]            # same LPAR: same shade before and after
            i = index.setdefault(base if side else name, len(index))
            # before in blues, after in oranges/reds (as the deck): the sides differ by colour, not only by dash
            palette = {"before": BEFORE_COLORS, "after": AFTER_COLORS}.get(side, PALETTE)
            color = palette[i % len(palette)]
            # the name by reference to its text cell (with that text as the cached value): a literal name is
            # parsed by XlsxWriter as a formula when it looks like one ("=...", "X!A1")
            ch.add_series({"name": [sh.name, r0 - 2, cc], "name_data": [display_text(name)],
                           "categories": [sh.name, r0, cc, r1, cc],
                           "values": [sh.name, r0, cc + 1 + k, r1, cc + 1 + k],
                           "line": {"width": 1.5, "color": color,
                                    "dash_type": "dash" if side == "before" else "solid"}})
        ch.set_title({"name": f"{head}{title}", "name_font": {"size": 12}})
        _chart_axes(ch, x_label, unit, x_fmt, x_min, x_max)
        sh.insert_chart(row, 0, ch)
        row += 19
    return row


def _timeline(wb, sh, frame: pd.DataFrame, comparison=None, ws_=None, tz: str = "utc") -> None:
    """Scatter-with-lines charts of CPI and LPARCPU per LPAR over the interval end in ``tz`` (and, with a
    comparison, both selections overlaid on a relative time axis first).  The charts' data sits to the right of
    the charts (from column Z), with a blank row where the data has a gap."""
    ends, zone = zoned_times(ws_, tz, frame, ("interval_end",)) if ws_ is not None and len(frame) else \
        ({"interval_end": frame["interval_end"]}, "UTC")
    print_setup(sh)
    sh.set_column(0, 0, 12)
    row, c0 = 2, 25
    blocks = []
    if comparison is not None:
        sh.write_string(0, 0, "Before and after on a relative time axis, then the main timeline on the time axis")
        ax = comparison.timelines("lpar_interval")
        parts = []
        for side, f in (("before", ax.before), ("after", ax.after)):
            if len(f):
                labels = node_labels(f, "lpar", [ax.after if side == "before" else ax.before])
                for label, part in f.assign(_label=labels.to_numpy()).groupby("_label", sort=False):
                    parts.append((f"{side}: {label}", side, part.sort_values("interval_end")))
        rel = _blocks(parts, "x")
        blocks += rel
    else:
        sh.write_string(0, 0, f"Main timeline: CPI and LPARCPU per LPAR (interval end, {zone})")
    parts = []
    if len(frame):
        f = frame.assign(_t=excel_time(ends["interval_end"]), _u=excel_time(frame["interval_end"]),
                         _label=node_labels(frame, "lpar").to_numpy())
        for label, part in f.groupby("_label", sort=False):
            parts.append((str(label), "", part.sort_values("interval_end")))
    absolute = _blocks(parts, "_t", "_u")
    sh.write_string(0, c0, "Chart data; a blank row marks a gap in the data")
    series = _write_blocks(sh, c0, blocks + absolute, "x")
    if comparison is not None:
        row = _charts(wb, sh, series[:len(blocks)], row, f": before (dashed) and after, {ax.label}", ax.label)
    if not len(frame):
        sh.write_string(row, 0, "(no intervals in the window)")
        return
    t = f["_t"].to_numpy(dtype=float)
    lo, hi = math.floor(float(np.nanmin(t)) * 4) / 4, math.ceil(float(np.nanmax(t)) * 4) / 4
    row = _charts(wb, sh, series[len(blocks):], row, " per LPAR", f"interval end ({zone})", "mm-dd hh:mm", lo, hi)
    sh.print_area(0, 0, row, 15)


def _compare(wb, fm: _Formats, sh, c, tz: str = "utc") -> None:
    """The Compare sheet: table, marks, CPI decomposition, waterfall chart per pair; the heading names the zone
    ``tz`` and each side's window is in that zone's wall-clock time (by the side's own offsets)."""

    print_setup(sh)
    zone = comparison_zone(c, tz)
    sh.write_string(0, 0, f"Comparison per {LEVEL_NAMES.get(c.by, c.by)}" + (f", times {zone}" if zone != "UTC"
                                                                              else ""), fm.title)
    sh.write_string(1, 0, c.ratio_note)
    sh.write_string(2, 0, display_text(f"Before: {c.before.describe(tz)}"))
    sh.write_string(3, 0, display_text(f"After: {c.after.describe(tz)}"))
    cols = c.main_columns()
    r0 = 5
    sh.set_row(r0, 46)
    sh.write_string(r0, 0, "Row", fm.head)
    sh.write_string(r0, 1, "Name", fm.head)
    sh.set_column(0, 0, 8)
    sh.set_column(1, 1, max([24] + [len(display_text(x)) + 2 for x in c.table["label"]]))
    for j, s in enumerate(cols):
        head = s.header + (" *" if s.id in c.marks else "")
        sh.write_string(r0, 2 + j, head, fm.head)
        sh.set_column(2 + j, 2 + j, max(9, max(len(p) for p in head.split()) + 3))
        if s.id in c.marks:
            sh.write_comment(r0, 2 + j, c.marks[s.id], {"x_scale": 3, "y_scale": 1.5})
    r = r0 + 1
    for rec in c.table.to_dict("records"):
        kind = rec["row"]
        sh.write_string(r, 0, kind, fm.bold if kind in ("ratio", "delta") else None)
        sh.write_string(r, 1, display_text(rec["label"]))
        for j, s in enumerate(cols):
            v = rec.get(s.id)
            if s.id == "Workload_Hint":
                if kind in ("before", "after") and v is not None:
                    sh.write_string(r, 2 + j, display_text(v))
                continue
            if not _finite(v):
                continue
            if kind == "ratio":
                fmt = fm.num("0.00", bold=True)
            elif kind == "delta":
                d = excel_format(s.decimals)
                # a delta that rounds to zero reads "0.0", not "+0.0" / "-0.0"
                fmt = fm.num(d if round(float(v), s.decimals) == 0 else f"+{d};-{d};{d}")
            else:
                fmt = fm.num(excel_format(s.decimals))
            sh.write_number(r, 2 + j, float(v), fmt)
        r += 1
    r += 1
    if c.marks:
        sh.write_string(r, 0, "* formulas differ between the two generations:", fm.bold)
        r += 1
        for mid, why in c.marks.items():
            sh.write_string(r, 1, mid)
            sh.write_string(r, 2, why)
            r += 1
        r += 1
    sh.write_string(r, 0, "CPI change split: instruction complexity + finite cache (L1MP effect + SCPL1M effect, "
                          "midpoint split; the parts add up to the change)", fm.bold)
    r += 1
    heads = [("pair", "Pair"), ("cpi_before", "CPI before"), ("cpi_after", "CPI after"), ("d_cpi", "CPI change"),
             ("d_instr_cmplx", "Instr complexity"), ("d_finite", "Finite cache"), ("d_l1mp_effect", "L1MP effect"),
             ("d_scpl1m_effect", "SCPL1M effect"), ("d_other", "Other finite"), ("note", "Note")]
    sh.set_row(r, 32)
    for j, (_, h) in enumerate(heads):
        sh.write_string(r, j, h, fm.head)
    r += 1
    for rec in c.cpi.to_dict("records"):
        for j, (k, _) in enumerate(heads):
            v = rec.get(k)
            if k in ("pair", "note"):
                sh.write_string(r, j, display_text(v or ""))
            elif _finite(v):
                sh.write_number(r, j, float(v), fm.num("0.000" if k.startswith("cpi") else "+0.000;-0.000;0.000"))
        r += 1
    r += 1
    # waterfall data and charts, one per pair (max 8)
    for p in list(c.cpi["pair"])[:8] if len(c.cpi) else []:
        wf = c.waterfall(p)
        sh.write_string(r, 0, display_text(f"Waterfall {p}"), fm.bold)
        hdr = ["Step", "Base", "Total", "Increase", "Decrease", "Value"]
        for j, h in enumerate(hdr):
            sh.write_string(r + 1, _WF + j, h, fm.head)
        top = r + 2
        for i, s in enumerate(wf.to_dict("records")):
            rr = top + i
            sh.write_string(rr, _WF, display_text(s["label"]))
            sh.write_number(rr, _WF + 1, float(s["base"]) if s["kind"] == "delta" else 0.0, fm.num("0.000"))
            for j, ok in ((_WF + 2, s["kind"] == "total"), (_WF + 3, s["kind"] == "delta" and s["value"] > 0),
                          (_WF + 4, s["kind"] == "delta" and s["value"] <= 0)):
                if ok:
                    sh.write_number(rr, j, float(s["height"]), fm.num("0.000"))
            sh.write_number(rr, _WF + 5, float(s["value"]), fm.num("+0.000;-0.000;0.000" if s["kind"] == "delta"
                                                               else "0.000"))
        last = top + len(wf) - 1
        ch = wb.add_chart({"type": "column", "subtype": "stacked"})
        labels = [{"value": f"{v:.3f}" if k == "total" else f"{v:+.3f}"} for v, k in zip(wf["value"], wf["kind"])]
        ch.add_series({"name": "base", "categories": [sh.name, top, _WF, last, _WF],
                       "values": [sh.name, top, _WF + 1, last, _WF + 1], "fill": {"none": True}, "border": {"none": True}})
        for j, nm, color in ((_WF + 2, "CPI", "#4F81BD"), (_WF + 3, "increase", "#C0504D"),
                             (_WF + 4, "decrease", "#9BBB59")):
            custom = [lab if ((j == _WF + 2 and k == "total") or (j == _WF + 3 and k == "delta" and v > 0)
                              or (j == _WF + 4 and k == "delta" and v <= 0)) else {"delete": True}
                      for lab, v, k in zip(labels, wf["value"], wf["kind"])]
            ch.add_series({"name": nm, "categories": [sh.name, top, _WF, last, _WF],
                           "values": [sh.name, top, j, last, j], "fill": {"color": color}, "gap": 60,
                           "data_labels": {"value": True, "custom": custom, "position": "inside_end"}})
        ch.set_title({"name": display_text(f"CPI change {p}: waterfall"), "name_font": {"size": 12}})
        ch.set_legend({"none": True})
        ch.set_y_axis({"name": "cycles per instruction", "min": 0,      # from zero: bar lengths compare
                       "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
        ch.set_size({"width": 620, "height": 320})
        sh.insert_chart(r + 1, 0, ch)
        r = max(last, r + 17) + 2
    sh.set_column(_WF, _WF + 5, 14)
    sh.print_area(0, 0, r, 1 + len(cols))          # the table and charts; the waterfall data stays off the page


def _about(fm: _Formats, sh, doc: dict[str, Any], notes: list[str], zone: str = "UTC") -> None:
    files = _about_files(doc)
    print_setup(sh)
    sh.set_column(0, 0, max([16] + [len(f["name"]) + 2 for f in files]))     # file names in full
    sh.set_column(1, 1, min(120, max([44] + [len(f["path"]) + 2 for f in files])))
    sh.set_column(2, 2, 14)
    sh.set_column(3, 3, 70)
    sh.write_string(0, 0, "About this workbook", fm.title)
    r = 2
    window, intervals, in_zone = window_texts(doc, doc.get("shown"))      # in the request's zone (UTC: as ever)
    for k, v in (("Made with", doc["app"]), ("Level", doc["level"]),
                 ("Window", window), ("Intervals", f"{intervals} ({in_zone})"),
                 *([("Times", f"{zone}: the sheets' date-times and chart axes are wall-clock times"
                     + (" (each system's own offset, from its records)" if zone.startswith("local") else ""))]
                   if zone != "UTC" else []),
                 ("Shift filter", doc["shift"]["text"] if doc["shift"] else "none (all hours, all days)"),
                 ("Formula sets", ", ".join(doc["formula_sets"].values()) or "-"),
                 ("Formula file", doc.get("formulas_file") or "built-in sets")):
        sh.write_string(r, 0, k, fm.bold)
        sh.write_string(r, 1, display_text(v))
        r += 1
    r += 1
    for j, h in enumerate(("File", "Path", "Size (bytes)", "SHA-256")):
        sh.write_string(r, j, h, fm.head)
    r += 1
    for f in files:
        sh.write_string(r, 0, display_text(f["name"]))
        sh.write_string(r, 1, display_text(f["path"]))
        if f["size"] is not None:
            sh.write_number(r, 2, f["size"], fm.num("#,##0"))
        sh.write_string(r, 3, f["sha256"] or "unknown")
        r += 1
    r += 1
    sh.write_string(r, 0, "Provenance (as in the slide notes)", fm.bold)
    r += 1
    for line in provenance_lines(doc) + notes:
        sh.write_string(r, 0, display_text(line))
        r += 1


def sheet_notes(items: dict[str, int], left_out: list[str]) -> list[str]:
    """The About sheet's lines on the sheets: rows of each, and the sheets left out (the CPU sheet unless asked)."""
    lines = ["Rows per sheet (below the header row): " + "; ".join(f"{k} {v:,}" for k, v in items.items())]
    for name in left_out:
        lines.append(f"Sheet {name}: left out (one row per logical CPU and interval; `nestscope export --cpu-sheet` "
                     "or the export dialog's 'CPU intervals sheet' box adds it)")
    return lines


def _about_files(doc: dict[str, Any]) -> list[dict[str, Any]]:
    files = list(doc["files"])
    if doc.get("comparison"):
        seen = {f["path"] for f in files}
        for side in ("before", "after"):
            files += [f for f in doc["comparison"][side]["files"] if f["path"] not in seen]
            seen |= {f["path"] for f in doc["comparison"][side]["files"]}
    return files


def write_xlsx(request, path: str, steps) -> dict[str, int]:
    """Write the workbook; returns rows written per sheet."""
    import xlsxwriter

    from app.engine.workspace import frames_not_kept
    from app.memory import release

    doc = provenance(request)
    wb = xlsxwriter.Workbook(path, {"constant_memory": True, "strings_to_formulas": False,
                                    "strings_to_urls": False, "strings_to_numbers": False})
    # the creation date is the end of the data, so the same export gives the same bytes
    last = doc["window"]["last"] or "2000-01-01T00:00:00Z"
    created = pd.Timestamp(last).tz_localize(None).to_pydatetime() if pd.Timestamp(last).tzinfo else \
        pd.Timestamp(last).to_pydatetime()
    wb.set_properties({"title": request.title, "subject": "IBM Z CPU MF metrics", "comments": doc["app"],
                       "created": created})
    fm = _Formats(wb)
    tz = getattr(request, "tz", "utc") or "utc"
    items: dict[str, int] = {}
    notes: list[str] = []
    try:
        tl = wb.add_worksheet("Timeline")
        cmp_sheet = wb.add_worksheet("Compare") if request.comparison is not None else None
        infos = {}
        sheets = [s for s in SHEETS if s[1] != "cpu" or getattr(request, "cpu_sheet", False)]
        n = len(sheets)
        for k, (name, level, ident) in enumerate(sheets):
            steps(0.05 + 0.85 * k / n, f"computing {name}")
            with frames_not_kept():        # each level computed once and let go when written (peak memory)
                frame = request.metrics(by=level)
            if level in ("cec", "lpar", "class") and request.nodes is None:
                # processors, weights, capping (and partition-only LPARs) and coverage, as `report` shows them
                from app.engine.partitions import enrich
                frame = enrich(request.workspace, frame, level, request.start, request.end)
            info = _write_level(wb, fm, name, request.workspace, frame, ident, level, steps,
                                (0.05 + 0.85 * k / n, 0.05 + 0.85 * (k + 1) / n), tz)
            infos[level] = info
            items[name] = info["rows"]
            if level == "lpar_interval":       # the timeline's data and charts from this frame, now (its sheet
                steps(0.05 + 0.85 * (k + 1) / n, "charts")       # has its own file): not held for the next levels
                _timeline(wb, tl, frame, request.comparison, request.workspace, tz)
            # written: its memory back before the next level is computed (peak); a full collection only when the
            # frame outlives its last name (held by a cycle)
            gone = weakref.ref(frame)
            del frame
            release(gone=gone)
            if info["truncated"]:
                notes.append(f"Sheet {name}: {info['truncated']:,} rows left out (Excel holds {MAX_ROWS:,} rows per "
                             "sheet); use a shorter window or the CSV export")
        steps(0.92, "comparison")
        if cmp_sheet is not None:
            _compare(wb, fm, cmp_sheet, request.comparison, tz)
            items["Compare"] = len(request.comparison.table)
        if getattr(request, "profile", None):
            from app.export.profile import write_profile_sheet
            steps(0.94, "profile")
            items["Profile"] = write_profile_sheet(wb, fm, request)
        notes[:0] = sheet_notes(items, [s[0] for s in SHEETS if s not in sheets])
        _about(fm, wb.add_worksheet("About"), doc, notes, request.workspace.zones.label(tz) if tz != "utc" else "UTC")
        steps(0.96, "saving")
    finally:
        with zip_level(ZIP_LEVEL):
            wb.close()
    return items


def write_table(frame: pd.DataFrame, path: str, columns: list[str], headers: list[str]) -> None:
    """One plain sheet ("Table"): frozen header row, autofilter, times as date-times, numbers as numbers."""
    import xlsxwriter

    wb = xlsxwriter.Workbook(path, {"constant_memory": True, "strings_to_formulas": False,
                                    "strings_to_urls": False, "strings_to_numbers": False})
    try:
        fm = _Formats(wb)
        sh = wb.add_worksheet("Table")
        for j, h in enumerate(headers):
            sh.set_column(j, j, max(8, min(40, len(str(h)) + 2)))
            sh.write_string(0, j, str(h), fm.head)
        cols = []
        for c in columns:
            s = frame[c]
            if pd.api.types.is_datetime64_any_dtype(s):
                cols.append(("time", excel_time(s)))
            elif pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
                cols.append(("num", s.to_numpy(dtype=float)))
            else:
                cols.append(("text", s.tolist()))
        for i in range(len(frame)):
            for j, (kind, d) in enumerate(cols):
                v = d[i]
                if kind == "text":
                    if v is not None and not (isinstance(v, float) and v != v):
                        sh.write_string(i + 1, j, display_text(v))
                elif v == v:
                    sh.write_number(i + 1, j, float(v), fm.time if kind == "time" else None)
        sh.freeze_panes(1, 0)
        sh.autofilter(0, 0, max(len(frame), 1), max(len(columns) - 1, 0))
    finally:
        with zip_level(ZIP_LEVEL):
            wb.close()
