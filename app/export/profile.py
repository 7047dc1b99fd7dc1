"""The hour-of-day / day-of-week profile in the exports (issue 26): an XLSX "Profile" sheet (the profile table, then
one hour x day-of-week grid per node and metric with a colour scale) and PPTX slides (the table, and per node the
heat maps of CPI, RNI, L1MP and LPARCPU as one picture).

Every value is ``app.engine.views.profile``'s (counter sums per hour, then the formulas).  Cells of an hour without
intervals stay empty, never 0.  The heat-map picture is drawn with Pillow (python-pptx's own dependency); no Qt.
"""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from app.engine.layout import format_value, metric_decimals
from app.textsafe import display_text

__all__ = ["PROFILES", "HEAT_METRICS", "profile_frames", "heat_grid", "heat_png", "node_names",
           "write_profile_sheet", "profile_slides", "PROFILE_TITLES", "ZONE", "SCALE_STOPS"]

PROFILES = ("hour", "weekday", "hour-weekday")
PROFILE_TITLES = {"hour": "hour of day", "weekday": "day of week", "hour-weekday": "hour of day and day of week"}
HEAT_METRICS = ("CPI", "RNI", "L1MP", "LPARCPU")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
ZONE = "UTC"     # the name of the zone when a request does not say (:func:`zone_name`)


def zone_name(request: Any) -> str:
    """The name of the zone the request's hours are in (``UTC``, ``local, UTC+01:00``, an IANA name)."""
    tz = getattr(request, "tz", "utc") or "utc"
    zones = getattr(request.workspace, "zones", None)
    return zones.label(tz) if zones is not None else ZONE
MAX_HEAT_NODES = 12
# viridis' stops: low = dark blue, high = yellow (the window's heat map uses the same scale)
SCALE_STOPS = np.array([(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)], dtype=float)
_IDENT = {"cec": ["cec"], "lpar": ["cec", "lpar"], "class": ["cec", "lpar", "class"]}


def profile_level(by: str) -> str:
    """The profile's node level for an export level (interval and CPU exports profile their processor classes)."""
    return by if by in ("cec", "lpar") else "class" if by in ("class", "cpu", "interval") else "lpar"


def profile_frames(request: Any) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(the profile by ``request.profile``, the hour x weekday profile, the level) over the request's window,
    nodes and shift."""
    from app.engine.views import profile

    if request.profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {request.profile!r}")
    level = profile_level(request.by)
    kw = dict(level=level, start=request.start, end=request.end, shift=request.shift,
              nodes=list(request.nodes) if request.nodes is not None else None, tz=getattr(request, "tz", "utc"))
    table = profile(request.workspace, by=request.profile, **kw)
    heat = table if request.profile == "hour-weekday" else profile(request.workspace, by="hour-weekday", **kw)
    return table, heat, level


def node_names(frame: pd.DataFrame, level: str) -> pd.Series:
    """``ZOSA``, ``ZOSA zIIP`` or the CEC name of each row (the names as the data spells them)."""
    if not len(frame):
        return pd.Series([], dtype=object)
    if level == "cec":
        return frame["cec"].astype(str)
    names = frame["lpar"].astype(str)
    return names + " " + frame["class"].astype(str) if level == "class" else names


def heat_grid(frame: pd.DataFrame, metric: str) -> np.ndarray:
    """7 x 24 (Mon..Sun x hour) values of ``metric`` from one node's hour x weekday profile; NaN without a row."""
    grid = np.full((7, 24), np.nan)
    if frame is None or not len(frame) or metric not in frame.columns:
        return grid
    day = frame["weekday"].map({d: i for i, d in enumerate(DAYS)})
    hour = pd.to_numeric(frame["hour"], errors="coerce")
    vals = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
    ok = (day.notna() & hour.notna()).to_numpy()
    grid[day[ok].astype(int).to_numpy(), hour[ok].astype(int).to_numpy()] = vals[ok]
    return grid


def _metrics(ws: Any, frame: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(id, header, decimals) of the main presentation metrics with a value in ``frame``."""
    from app.engine.layout import presentation_columns

    out: dict[str, tuple[str, str, int]] = {}
    gens = [g for g in dict.fromkeys(frame["generation"].astype(str))] if "generation" in frame else []
    for gen in gens or ["generic"]:
        for s in presentation_columns(gen, getattr(ws, "formula_sets", None)):
            if s.group == "Main" and s.id in frame.columns and s.id not in out and \
                    pd.to_numeric(frame[s.id], errors="coerce").notna().any():
                out[s.id] = (s.id, s.header, s.decimals)
    return list(out.values())


def _colour(t: float) -> tuple[int, int, int]:
    t = min(max(float(t), 0.0), 1.0) * (len(SCALE_STOPS) - 1)
    i = min(int(t), len(SCALE_STOPS) - 2)
    return tuple(int(round(c)) for c in SCALE_STOPS[i] + (SCALE_STOPS[i + 1] - SCALE_STOPS[i]) * (t - i))


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02X%02X%02X" % rgb


# ------------------------------------------------------------------ XLSX
def write_profile_sheet(wb, fm, request: Any, steps=None) -> int:
    """The "Profile" sheet: a title, the profile table (one row per node and hour / day), then per node (the first
    :data:`MAX_HEAT_NODES`) and metric an hour x day-of-week grid coloured by a 3-colour scale; empty where no
    interval fell.  Returns the table's rows."""
    table, heat, level = profile_frames(request)
    zone = zone_name(request)
    sh = wb.add_worksheet("Profile")
    metrics = _metrics(request.workspace, table)
    by = request.profile
    sh.write_string(0, 0, f"Profile by {PROFILE_TITLES[by]} ({zone}): the counters of every interval whose midpoint "
                          "falls in the hour (or day) summed over the window, then the formulas (never a mean of "
                          "ratios); LPARCPU is the hour's mean busy", fm.bold)
    keys = ["Node"] + (["Day"] if by != "hour" else []) + ([f"Hour ({zone})"] if by != "weekday" else [])
    header = keys + [m[1] for m in metrics]
    sh.set_column(0, 0, 18)
    sh.set_column(1, len(header) + 24, 9)
    for j, h in enumerate(header):
        sh.write_string(2, j, h, fm.head)
    names = node_names(table, level).tolist()
    r = 3
    for i, row in enumerate(table.to_dict("records")):
        sh.write_string(r, 0, display_text(names[i]))
        j = 1
        if by != "hour":
            sh.write_string(r, j, str(row["weekday"]))
            j += 1
        if by != "weekday":
            sh.write_number(r, j, int(row["hour"]))
            j += 1
        for mid, _h, dec in metrics:
            v = row.get(mid)
            if v is not None and v == v:
                sh.write_number(r, j, float(v), fm.num("0" if dec == 0 else "0." + "0" * dec))
            j += 1
        r += 1
    n_rows = r - 3
    if steps is not None:
        steps(None, "profile sheet")
    hnames = node_names(heat, level)
    for node in list(dict.fromkeys(hnames))[:MAX_HEAT_NODES]:
        part = heat[(hnames == node).to_numpy()]
        for mid in HEAT_METRICS:
            grid = heat_grid(part, mid)
            if not np.isfinite(grid).any():
                continue
            dec = metric_decimals(mid) or 2
            r += 1
            sh.write_string(r, 0, display_text(f"{mid} of {node} by hour of day ({zone}, columns) and day of week "
                                               "(rows); empty: no intervals"), fm.bold)
            r += 1
            sh.write_string(r, 0, "Day", fm.head)
            for h in range(24):
                sh.write_number(r, h + 1, h, fm.head)
            top = r + 1
            for d in range(7):
                r += 1
                sh.write_string(r, 0, DAYS[d])
                for h in range(24):
                    if np.isfinite(grid[d, h]):
                        sh.write_number(r, h + 1, float(grid[d, h]), fm.num("0." + "0" * dec if dec else "0"))
            sh.conditional_format(top, 1, r, 24, {"type": "3_color_scale", "min_color": _hex(_colour(0)),
                                                  "mid_color": _hex(_colour(0.5)), "max_color": _hex(_colour(1))})
            r += 1
    sh.freeze_panes(3, 1)
    return n_rows


# ------------------------------------------------------------------ the picture
def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:        # an old Pillow without sizes
        return ImageFont.load_default()


def _hatch(d, box, step: int = 8, colour: str = "#B8B8B8") -> None:
    """Diagonal lines (/) across ``box`` (x0, y0, x1, y1), kept inside it."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    for c in range(step, int(w + h), step):        # the line x + y = c, from the top or right edge to the left/bottom
        ax, bx = min(c, w), c - min(c, h)
        d.line((x0 + ax, y1 - (c - ax), x0 + bx, y1 - min(c, h)), fill=colour)


def heat_png(grid: np.ndarray, title: str, decimals: int | None, width: int = 1200, height: int = 560,
             zone: str = ZONE) -> bytes:
    """A PNG of one heat map: hours 00-23 across (axis named with the zone), Mon-Sun down, the values in the cells,
    hatched empty cells, and a colour-scale bar with its lowest, middle and highest value."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    f_title, f_cell, f_axis = _font(34), _font(21), _font(24)
    f_small, f_tiny = _font(17), _font(14)
    left, top, right = 150, 116, width - 16
    bar_h, bottom = 24, height - 100
    cw, ch = (right - left) / 24, (bottom - top) / 7
    finite = grid[np.isfinite(grid)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    span = hi - lo
    d.text((left, 12), title, fill="black", font=f_title)
    d.text(((left + right) / 2, top - 34), f"Hour of day ({zone})", fill="black", font=f_axis, anchor="ms")
    d.multiline_text((12, (top + bottom) / 2), "Day of\nweek", fill="black", font=f_axis, anchor="lm")
    for h in range(24):
        d.text((left + (h + 0.5) * cw, top - 2), f"{h:02d}", fill="black", font=f_cell, anchor="md")
    for dd in range(7):
        y0 = top + dd * ch
        d.text((left - 8, y0 + ch / 2), DAYS[dd], fill="black", font=f_axis, anchor="rm")
        for h in range(24):
            x0 = left + h * cw
            box = (x0, y0, x0 + cw, y0 + ch)
            v = grid[dd, h]
            if not np.isfinite(v):
                d.rectangle(box, fill="white", outline="#C0C0C0")
                _hatch(d, box)                          # no intervals: hatched, no value
                continue
            rgb = _colour(0.5 if not span > 0 else (v - lo) / span)
            d.rectangle(box, fill=rgb, outline="white")
            ink = "black" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140 else "white"
            text = format_value(v, decimals)
            font = next((f for f in (f_cell, f_small, f_tiny) if d.textlength(text, font=f) <= cw - 3), None)
            if font is not None:       # a value too wide for its cell is left out (the sheet and table have it)
                d.text((x0 + cw / 2, y0 + ch / 2), text, fill=ink, font=font, anchor="mm")
    by0 = bottom + 22
    bx0, bx1 = left, right - 220
    for x in range(int(bx0), int(bx1)):
        d.line((x, by0, x, by0 + bar_h), fill=_colour((x - bx0) / max(bx1 - bx0 - 1, 1)))
    d.rectangle((bx0, by0, bx1, by0 + bar_h), outline="black")
    if finite.size:
        for t, anchor in ((0.0, "la"), (0.5, "ma"), (1.0, "ra")):
            d.text((bx0 + t * (bx1 - bx0), by0 + bar_h + 4), format_value(lo + t * span, decimals), fill="black",
                   font=f_cell, anchor=anchor)
    sx = bx1 + 30
    d.rectangle((sx, by0, sx + 30, by0 + bar_h), outline="black", fill="white")
    _hatch(d, (sx, by0, sx + 30, by0 + bar_h))
    d.text((sx + 40, by0 + bar_h / 2), "no intervals", fill="black", font=f_cell, anchor="lm")
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()


# ------------------------------------------------------------------ PPTX
def profile_slides(deck, request: Any, ticks) -> None:
    """The profile table (split over slides by rows) and, per node (the first :data:`MAX_HEAT_NODES`), one slide
    with the heat maps of CPI, RNI, L1MP and LPARCPU (those with values) as pictures."""
    from app.export.pptx_parts import MIN_PT, SLIDE_H, SLIDE_W, TABLE_PT, fit_rows, head, table, widths
    from app.export.pptx_slides import column_groups

    table_f, heat, level = profile_frames(request)
    zone = zone_name(request)
    by = request.profile
    title = f"Profile by {PROFILE_TITLES[by]} ({zone})"
    about = (f"{title}: for each node, the counters of every interval whose midpoint falls in the hour (or day) of "
             "any day of the window summed, then the formulas -- never a mean of per-interval ratios. LPARCPU is "
             "the hour's mean busy. Hours without intervals have no row.")
    metrics = _metrics(request.workspace, table_f)
    header = ["Node"] + (["Day"] if by != "hour" else []) + ([f"Hour\n({zone})"] if by != "weekday" else []) + \
        [head(SimpleNamespace(header=m[1])) for m in metrics]
    names = node_names(table_f, level).tolist()
    rows = []
    for i, r in enumerate(table_f.to_dict("records")):
        row = [display_text(names[i])] + ([str(r["weekday"])] if by != "hour" else []) + \
              ([f"{int(r['hour']):02d}"] if by != "weekday" else [])
        rows.append(row + [format_value(r.get(m[0]), m[2]) for m in metrics])
    n_key = 1 + (by != "hour") + (by != "weekday")
    if not rows:
        s = deck.slide(title, "profile", "", about)
        deck.text(s, 0.4, 1.4, 12, 1, ["(no intervals in the window)"])
    else:
        avail, pt = SLIDE_W - 0.8, TABLE_PT
        w = widths(header, rows, pt)
        while sum(w) > avail and pt > MIN_PT:
            pt -= 1
            w = widths(header, rows, pt)
        groups = column_groups(header, w, n_key, avail)
        per = fit_rows(SLIDE_H - 1.5 - 0.3, pt)
        chunks = [rows[i:i + per] for i in range(0, len(rows), per)]
        n, k = len(chunks) * len(groups), 0
        for chunk in chunks:
            for cols in groups:
                k += 1
                s = deck.slide(title + (f" ({k}/{n})" if n > 1 else ""), "profile", "", about)
                table(deck, s, 1.3, [header[j] for j in cols], [[r[j] for j in cols] for r in chunk],
                      [w[j] for j in cols], pt, n_text=n_key)
    ticks(None, "profile table")
    hnames = node_names(heat, level)
    for node in list(dict.fromkeys(hnames))[:MAX_HEAT_NODES]:
        part = heat[(hnames == node).to_numpy()]
        grids = [(mid, heat_grid(part, mid)) for mid in HEAT_METRICS]
        grids = [(mid, g) for mid, g in grids if np.isfinite(g).any()]
        if not grids:
            continue
        s = deck.slide(display_text(f"{node}: hour of day x day of week"), "profile_heat",
                       f"Heat maps over the window ({zone}); hatched cells: no intervals in that hour",
                       "Each cell: the metric of all the intervals of that weekday's hour (counter sums, then the "
                       "formula); the colour scale runs from the map's lowest to its highest value.")
        _place_heat_maps(s, grids, node, zone)
        ticks(None, f"heat maps of {node}")


def _place_heat_maps(slide, grids: list[tuple[str, np.ndarray]], node: str, zone: str = ZONE) -> None:
    from pptx.util import Inches

    from app.export.pptx_parts import SLIDE_H, SLIDE_W

    n = len(grids)
    cols = 1 if n == 1 else 2
    rows = (n + cols - 1) // cols
    x0, y0 = 0.4, 1.25
    w = (SLIDE_W - 0.8 - 0.2 * (cols - 1)) / cols
    h = (SLIDE_H - y0 - 0.2 - 0.15 * (rows - 1)) / rows
    w = min(w, h * 1200 / 560)       # keep the picture's aspect
    h = w * 560 / 1200
    for k, (mid, grid) in enumerate(grids):
        png = heat_png(grid, display_text(f"{mid} of {node}"), metric_decimals(mid) or 2, zone=zone)
        x = x0 + (k % cols) * (w + 0.2)
        y = y0 + (k // cols) * (h + 0.15)
        pic = slide.shapes.add_picture(io.BytesIO(png), Inches(x), Inches(y), Inches(w), Inches(h))
        pic.name = f"Heat map {mid}"
