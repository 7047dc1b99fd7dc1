"""Building blocks of the PPTX decks (python-pptx, 16:9): the deck with its document properties, titled slides
on a layout with a real title placeholder and per-slide notes, native tables sized to their text, and native XY
line charts with readable time axes.  The slides themselves are in :mod:`app.export.pptx_slides` (one-sided) and
:mod:`app.export.pptx_compare` (the before/after story); :mod:`app.export.pptx` writes the file.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

from app.export.tables import SIDE_COLORS
from app.textsafe import terminal_text

SLIDE_W, SLIDE_H = 13.333, 7.5          # inches, 16:9
TABLE_PT = 11
MIN_PT = 10
MAX_SERIES = 8                          # lines per chart; more nodes -> more slides
MAX_NODE_SLIDES = 12                    # per-LPAR charts (CPI parts, sourcing) for at most this many LPARs
_EPOCH = np.datetime64("1899-12-30T00:00:00", "ns")
PALETTE = ["1F77B4", "D62728", "2CA02C", "FF7F0E", "9467BD", "8C564B", "E377C2", "7F7F7F", "BCBD22", "17BECF"]
BEFORE_COLORS, AFTER_COLORS = SIDE_COLORS["before"], SIDE_COLORS["after"]
_TITLE_LAYOUT = "Title Only"


def xl_time(values) -> np.ndarray:
    """Excel serial dates (days since 1899-12-30) of times."""
    a = pd.to_datetime(pd.Series(values)).to_numpy(dtype="datetime64[ns]")
    return (a - _EPOCH).astype("timedelta64[ns]").astype(np.int64) / 86_400e9


def user_name() -> str:
    """The user's name as the OS gives it (full name where known, else the login name); empty when unknown."""
    try:
        import pwd

        ent = pwd.getpwuid(os.getuid())
        full = (ent.pw_gecos or "").split(",")[0].strip()
        return full or ent.pw_name
    except (ImportError, KeyError, OSError, AttributeError):
        return os.environ.get("USERNAME", "") or os.environ.get("USER", "")


def _cache_qn() -> None:
    """python-pptx's ``qn("a:txBody")`` (the Clark name of a prefixed tag: a pure function of its text) makes a new
    parsing object on every call, and it is called for nearly every child lookup and new element (some 8,000 times
    a comparison deck): the ``qn`` of its modules imported so far memoized, the same names."""
    import functools
    import sys

    from pptx.oxml import ns

    cached = ns.qn if hasattr(ns.qn, "cache_info") else functools.lru_cache(maxsize=4096)(ns.qn)
    plain = cached.__wrapped__
    for name, mod in list(sys.modules.items()):
        if (name == "pptx" or name.startswith("pptx.")) and getattr(mod, "qn", None) is plain:
            mod.qn = cached


_COUNTED = ("/ppt/charts/chart%d.xml", "/ppt/embeddings/Microsoft_Excel_Sheet%d.xlsx")


def _count_partnames(package) -> None:
    """Name the deck's chart parts and their workbooks by a count: python-pptx names each new part by walking every
    part of the package for the first free number (about 1 ms a call in a comparison deck's ~90 parts, two calls a
    chart).  A new deck has none of either (python-pptx's default template), and every one is named by
    ``next_partname`` and added at once: the count gives the names python-pptx's walk would (1, 2, 3...).  Any
    other name, or a template that has some already, is python-pptx's own."""
    real = getattr(package, "next_partname", None)
    if real is None or not hasattr(package, "iter_parts"):
        return
    prefixes = [t.split("%d")[0] for t in _COUNTED]     # ("/ppt/charts/chart", "/ppt/embeddings/Microsoft_...")
    if any(str(p.partname).startswith(pre) for p in package.iter_parts() for pre in prefixes):
        return
    counts = dict.fromkeys(_COUNTED, 0)

    def next_partname(tmpl: str):
        if tmpl not in counts:
            return real(tmpl)
        from pptx.opc.packuri import PackURI

        counts[tmpl] += 1
        return PackURI(tmpl % counts[tmpl])
    package.next_partname = next_partname


class Deck:
    """A 16:9 presentation whose slides have a real title placeholder and notes (what the slide shows, then the
    common provenance); core and app properties are the deck's own (title, author, now, NestScope)."""

    def __init__(self, title: str, notes: str, app: str = "NestScope"):
        from pptx import Presentation
        from pptx.util import Inches

        _cache_qn()
        self.prs = Presentation()
        _count_partnames(self.prs.part.package)
        self.prs.slide_width = Inches(SLIDE_W)
        self.prs.slide_height = Inches(SLIDE_H)
        self.layout = next(lay for lay in self.prs.slide_layouts if lay.name == _TITLE_LAYOUT)
        self.notes = notes
        self.title = title
        self.app = app
        self.count: dict[str, int] = {}
        self._notes_xml = None            # the first notes slide's XML before its text: the others copy it
        self._notes_made = 0
        self._notes_ps = None             # the provenance's paragraphs of the notes, copied into every slide's
        self._layout_shapes = None        # the placeholders python-pptx cloned from the layout into the first slide
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
        cp = self.prs.core_properties
        who = user_name()
        cp.title = terminal_text(title)[:255]
        cp.author = who
        cp.last_modified_by = who
        cp.created = now
        cp.modified = now
        cp.last_printed = now
        cp.revision = 1
        cp.subject = "IBM Z CPU MF counters"
        cp.keywords = "CPU MF; SMF 113; HIS; CPI; RNI"
        cp.comments = f"Written by {app}"
        cp.category = ""
        cp.content_status = ""

    def slide(self, title: str, kind: str, subtitle: str = "", about: str = ""):
        """A slide with ``title`` in its title placeholder, an optional subtitle line and notes: ``about`` (what the
        slide shows and how it was computed) first, then the provenance."""
        from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
        from pptx.util import Inches, Pt

        s = self._add_slide()
        head = s.shapes.title
        head.left, head.top, head.width, head.height = Inches(0.4), Inches(0.15), Inches(SLIDE_W - 0.8), Inches(0.65)
        tf = head.text_frame
        tf.word_wrap = True
        tf.vertical_anchor = MSO_ANCHOR.TOP
        tf.text = terminal_text(title)
        p = tf.paragraphs[0]
        p.alignment = PP_ALIGN.LEFT
        p.runs[0].font.size = Pt(24)
        p.runs[0].font.bold = True
        if subtitle:
            sub = s.shapes.add_textbox(Inches(0.4), Inches(0.78), Inches(SLIDE_W - 0.8), Inches(0.4))
            sub.text_frame.word_wrap = True
            sub.text_frame.text = terminal_text(subtitle)
            sub.text_frame.paragraphs[0].runs[0].font.size = Pt(12)
        self._notes_text(self._notes_of(s).notes_text_frame, about)
        self.count[kind] = self.count.get(kind, 0) + 1
        return s

    def _add_slide(self):
        """A new slide on the deck's layout: python-pptx makes the first one (the layout's placeholders cloned into
        it: a search of the layout's and the slide's shapes, about 2 ms a slide); the others get copies of the
        first one's placeholders as they were cloned, before any edit (the same XML: the same layout, the same
        shape ids in a fresh slide).  With another python-pptx (these internals renamed) python-pptx makes each."""
        import copy

        slides = self.prs.slides
        part, ids = getattr(slides, "part", None), getattr(slides, "_sldIdLst", None)
        if self._layout_shapes is None or self._layout_shapes is False:
            s = slides.add_slide(self.layout)
            if self._layout_shapes is None:
                tree = getattr(s.shapes, "_spTree", None)
                known = tree is not None and hasattr(tree, "iter_shape_elms") and part is not None \
                    and hasattr(part, "add_slide") and hasattr(ids, "add_sldId")
                self._layout_shapes = [copy.deepcopy(e) for e in tree.iter_shape_elms()] if known else False
            return s
        rid, s = part.add_slide(self.layout)
        tree = s.shapes._spTree
        for e in self._layout_shapes:
            tree.append(copy.deepcopy(e))
        ids.add_sldId(rid)
        return s

    def _notes_of(self, slide):
        """The slide's notes slide: python-pptx makes the first one (the notes master and its placeholders cloned);
        the others are copies of that first one's XML, before its text, in parts named and related as python-pptx
        names and relates them (it clones the master's placeholders and searches every part name for each slide:
        about 4 ms a slide)."""
        import copy

        if self._notes_xml is None:
            notes = slide.notes_slide
            self._notes_xml = copy.deepcopy(notes.part._element)
            self._notes_made = 1
            return notes
        try:
            from pptx.opc.constants import CONTENT_TYPE as CT
            from pptx.opc.constants import RELATIONSHIP_TYPE as RT
            from pptx.opc.packuri import PackURI
            from pptx.parts.slide import NotesSlidePart

            sp = slide.part
            master = self.prs.part.notes_master_part
            self._notes_made += 1
            part = NotesSlidePart(PackURI(f"/ppt/notesSlides/notesSlide{self._notes_made}.xml"), CT.PML_NOTES_SLIDE,
                                  sp.package, copy.deepcopy(self._notes_xml))
            part.relate_to(master, RT.NOTES_MASTER)
            part.relate_to(sp, RT.SLIDE)
            sp.relate_to(part, RT.NOTES_SLIDE)
        except (ImportError, AttributeError, TypeError):      # another python-pptx: its own notes slide
            pass
        return slide.notes_slide

    def _notes_text(self, tf, about: str) -> None:
        """The notes' text: ``about``, a blank line, the provenance (``tf.text`` of it all); the provenance's
        paragraphs, the same on every slide, are made once and copied (a paragraph per line: about 1.5 ms a slide)."""
        import copy

        if not about or self._notes_ps is None:
            tf.text = terminal_text(((about.strip() + "\n\n") if about else "") + self.notes)
            if about:       # the last paragraphs are the provenance's (terminal_text works line by line)
                ps = tf._txBody.p_lst
                self._notes_ps = [copy.deepcopy(p) for p in ps[len(ps) - self.notes.count("\n") - 1:]]
            return
        tf.text = terminal_text(about.strip() + "\n")          # its lines and the blank line
        body = tf._txBody
        for p in self._notes_ps:
            body.append(copy.deepcopy(p))

    def text(self, slide, x, y, w, h, lines: list[str], pt: int = 12, bold_first: bool = False,
             bold: set[int] = frozenset()):
        from pptx.util import Inches, Pt

        box = slide.shapes.add_textbox(Inches(x), Inches(y), Inches(w), Inches(h))
        tf = box.text_frame
        tf.word_wrap = True
        for i, line in enumerate(lines):
            p = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
            r = p.add_run()
            r.text = terminal_text(line)
            r.font.size = Pt(pt)
            r.font.bold = (bold_first and i == 0) or i in bold
        return box

    def save(self, path: str) -> None:
        """Write the file, with app properties that name NestScope and count the slides."""
        n = len(self.prs.slides)
        xml = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
               '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" '
               'xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">'
               f"<Application>{escape(self.app)}</Application><PresentationFormat>Widescreen</PresentationFormat>"
               f"<Slides>{n}</Slides><Notes>{n}</Notes><HiddenSlides>0</HiddenSlides></Properties>")
        for part in self.prs.part.package.iter_parts():
            if str(part.partname) == "/docProps/app.xml":
                part._blob = xml.encode("utf-8")
        from app.export.pptx_zip import save_package

        save_package(self.prs, path)


def fit_rows(n_rows_avail_in: float, pt: int) -> int:
    """Body rows that fit into a height (inches) at a font size (row = 2.1 x the font height)."""
    row_h = pt * 2.1 / 72
    return max(1, int((n_rows_avail_in - 2 * row_h) / row_h))


def table(deck, slide, top: float, header: list[str], rows: list[list[str]], widths: list[float],
           pt: int, bold_rows: set[int] = frozenset(), shade_rows: set[int] = frozenset(), n_text: int = 1):
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Emu, Inches, Pt

    n_r, n_c = len(rows) + 1, len(header)
    row_h = pt * 2.1 / 72
    total_w = sum(widths)
    shape = slide.shapes.add_table(n_r, n_c, Inches(0.4), Inches(top), Inches(total_w), Inches(row_h * n_r))
    tbl = shape.table
    # the column widths in the grid, then the frame's width once as their sum (what python-pptx's column width
    # setter does after every column: it sums every column again and resizes the frame each time)
    grid = tbl._tbl.tblGrid.gridCol_lst
    for gc, w in zip(grid, widths):
        gc.w = Inches(w)
    shape.width = Emu(sum(gc.w for gc in grid))
    tbl.rows[0].height = Inches(row_h * (2 if any("\n" in h for h in header) else 1))
    for i in range(1, n_r):
        tbl.rows[i].height = Inches(row_h)

    heads = tbl._tbl.tr_lst[0].tc_lst
    for j, h in enumerate(header):
        if body_cell(heads[j], terminal_text(h), pt, True, "ctr" if j >= n_text else "l", None):
            continue
        api_cell(tbl.cell(0, j), h, pt, True, PP_ALIGN.CENTER if j >= n_text else PP_ALIGN.LEFT)
        for para in tbl.cell(0, j).text_frame.paragraphs:
            for r in para.runs:
                r.font.size = Pt(pt)
                r.font.bold = True
    trs = tbl._tbl.tr_lst
    for i, row in enumerate(rows, start=1):
        tcs = trs[i].tc_lst
        for j, v in enumerate(row):
            bold, fill = (i - 1) in bold_rows, "EAF1FB" if (i - 1) in shade_rows else None
            text = terminal_text(v)
            if not body_cell(tcs[j], text, pt, bold, "r" if j >= n_text else "l", fill):
                api_cell(tbl.cell(i, j), v, pt, bold, PP_ALIGN.RIGHT if j >= n_text else PP_ALIGN.LEFT, fill)
    return tbl


def api_cell(cell, text: str, pt: int, bold: bool = False, align=None, fill: str | None = None) -> None:
    """One table cell through python-pptx's API: text, margins, alignment, the first paragraph's runs' size and
    bold, a solid fill (what :func:`body_cell` writes into the XML directly, for the texts it leaves to this)."""
    from pptx.dml.color import RGBColor
    from pptx.util import Inches, Pt

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


_CTRL = re.compile("[\x00-\x09\x0b-\x1f]")
_MARGIN_LR, _MARGIN_TB = str(914400 * 4 // 100), str(914400 * 2 // 100)      # 0.04 and 0.02 inches in EMU


def body_cell(tc, text: str, pt: int, bold: bool, algn: str, fill: str | None) -> bool:
    """Write one cell of a fresh table into its XML: the elements and attributes python-pptx writes for
    ``cell.text`` (a paragraph per line), the margins, the first paragraph's alignment, each run's size and bold
    and a solid fill (about 0.45 ms a cell through its API).  False (nothing written) for a text with a control
    character other than a line feed, which python-pptx escapes or breaks: the caller writes those through
    python-pptx."""
    from pptx.oxml.ns import qn

    if _CTRL.search(text):
        return False
    body = tc.find(qn("a:txBody"))
    tcpr = tc.find(qn("a:tcPr"))
    paras = body.findall(qn("a:p")) if body is not None else []
    if tcpr is None or len(paras) != 1 or len(paras[0]) or len(tcpr) or len(tcpr.attrib):
        return False                                   # not the fresh cell python-pptx's add_table makes
    p = paras[0]
    p.append(p.makeelement(qn("a:pPr"), {"algn": algn}))
    for k, line in enumerate(text.split("\n")):
        if k:
            p = body.makeelement(qn("a:p"), {})
            body.append(p)
        if line:
            r = p.makeelement(qn("a:r"), {})
            r.append(r.makeelement(qn("a:rPr"), {"sz": str(pt * 100), "b": "1" if bold else "0"}))
            t = r.makeelement(qn("a:t"), {})
            t.text = line
            r.append(t)
            p.append(r)
    for k, v in (("marL", _MARGIN_LR), ("marR", _MARGIN_LR), ("marT", _MARGIN_TB), ("marB", _MARGIN_TB)):
        tcpr.set(k, v)
    if fill is not None:
        solid = tcpr.makeelement(qn("a:solidFill"), {})
        solid.append(solid.makeelement(qn("a:srgbClr"), {"val": fill}))
        tcpr.append(solid)
    return True


def widths(header: list[str], rows: list[list[str]], pt: int, first_min: float = 1.2,
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


def head(spec) -> str:
    """Header on at most two lines, split where the longer line is shortest ("Est Instr" / "Cmplx CPI")."""
    words = spec.header.split()
    if len(words) <= 1:
        return spec.header
    best = min(range(1, len(words)), key=lambda k: max(len(" ".join(words[:k])), len(" ".join(words[k:]))))
    return " ".join(words[:best]) + "\n" + " ".join(words[best:])



def xy_data(series: list[tuple[str, np.ndarray, np.ndarray, dict]], prepare: bool = False):
    """The chart data of :func:`xy_chart`'s ``series``; ``prepare``: its XML and workbook made now (plain bytes, no
    python-pptx object of a deck: this may run on another thread)."""
    from pptx.enum.chart import XL_CHART_TYPE

    from app.export.chart_data import TextXyChartData   # names as text in the chart's workbook

    cd = TextXyChartData()
    for name, xs, ys, _ in series:        # whole arrays: no object per point (points without an x left out)
        cd.add_array_series(name, xs, ys)
    if prepare:
        cd.prepare(XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS)
    return cd


def xy_chart(slide, x, y, w, h, series: list[tuple[str, np.ndarray, np.ndarray, dict]], title: str,
              x_title: str, y_title: str, x_format: str | None, legend: bool = True, data=None):
    """An XY line chart of ``series`` (name, x, y, style); ``data``: their chart data made by :func:`xy_data`."""
    from pptx.dml.color import RGBColor
    from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
    from pptx.util import Inches, Pt

    cd = data if data is not None else xy_data(series)
    gf = add_xy_chart(slide, XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS, Inches(x), Inches(y), Inches(w), Inches(h), cd)
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
            lo, hi, unit, fmt = time_ticks(float(xs.min()), float(xs.max()))
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
        for ser, (_, _, _, style) in zip(plot_series(plot), series):
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


class _LightData:
    """What python-pptx's chart part takes of a chart data (``ChartPart.new``: its XML and workbook): the light XML
    of :meth:`app.export.chart_data.TextXyChartData.light_xml`."""

    def __init__(self, xml: bytes, data) -> None:
        self._xml, self._data = xml, data

    def xml_bytes(self, chart_type) -> bytes:
        return self._xml

    @property
    def xlsx_blob(self) -> bytes:
        return self._data.xlsx_blob


_LIGHT_PART = None


def _light_part_class():
    """python-pptx's chart part whose serialized XML (its ``blob``: whatever saves the deck) has its point lists
    spliced in; False when this python-pptx's chart part is not the one this knows."""
    global _LIGHT_PART
    if _LIGHT_PART is None:
        from pptx.parts.chart import ChartPart

        from app.export.chart_data import splice_points

        _LIGHT_PART = False
        if isinstance(getattr(ChartPart, "blob", None), property):
            class LightChartPart(ChartPart):
                nestscope_points: dict = {}

                @property
                def blob(self) -> bytes:
                    return splice_points(super().blob, self.nestscope_points)
            _LIGHT_PART = LightChartPart
    return _LIGHT_PART


def add_xy_chart(slide, kind, x, y, w, h, cd):
    """``slide.shapes.add_chart`` of ``cd`` from its light XML (the chart's thousands of points left out of what
    python-pptx parses, styles and serializes: about 0.1 s of a comparison deck): the chart part keeps the point
    lists and splices them into its XML whenever it is serialized (a save).  Chart data without a light XML, or
    another python-pptx: python-pptx's own chart of the whole XML."""
    light = getattr(cd, "light_xml", None)
    cls = _light_part_class() if light is not None else False
    if not cls:
        return slide.shapes.add_chart(kind, x, y, w, h, cd)
    xml, points = light(kind)
    gf = slide.shapes.add_chart(kind, x, y, w, h, _LightData(xml, cd))
    if points:
        part = gf.chart_part
        if type(part) is cls.__bases__[0]:          # exactly python-pptx's chart part
            part.__class__ = cls
            part.nestscope_points = points
        else:                                       # its XML made whole now
            from pptx.oxml import parse_xml

            from app.export.chart_data import splice_points

            part._element = parse_xml(splice_points(part.blob, points))
    return gf


def plot_series(plot) -> list:
    """The series of a chart's plot, their elements found in one search of the chart's XML (python-pptx's series
    collection searches it again for each series: a few ms each in a chart of thousands of points)."""
    try:
        from pptx.chart.series import _SeriesFactory

        return [_SeriesFactory(ser) for ser in plot._element.sers]
    except (ImportError, AttributeError):          # another python-pptx: its own collection
        return list(plot.series)


_TICKS = [1 / 24, 2 / 24, 3 / 24, 6 / 24, 12 / 24, 1, 2, 7, 14, 28]


def time_ticks(lo: float, hi: float) -> tuple[float, float, float, str]:
    """Axis bounds, major unit (days) and number format for Excel serial times lo..hi: at most ~8 ticks on
    whole hours / days."""
    span = max(hi - lo, 1 / 24)
    unit = next((u for u in _TICKS if span / u <= 8), _TICKS[-1])
    a, b = math.floor(lo / unit + 1e-9) * unit, math.ceil(hi / unit - 1e-9) * unit
    return a, max(b, a + unit), unit, ("mm-dd hh:mm" if unit < 1 else "yyyy-mm-dd")

