"""The deck's parts written without python-pptx's per-object API are the XML python-pptx itself writes: table
cells, column widths, notes slides, chart point texts (``bench/same_outputs.py`` compares whole decks part by part;
these tests pin each shortcut against the API it replaces, for any text)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from app.export.pptx_parts import Deck, api_cell, body_cell, table
from app.textsafe import terminal_text


def _fresh_cells(n: int):
    """``n`` fresh cells of a one-row table made by python-pptx, and that table."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    tbl = slide.shapes.add_table(1, n, Inches(0), Inches(0), Inches(n), Inches(1)).table
    return tbl


def _through_api(cell, text: str, pt: int, bold: bool, algn: str, fill: str | None) -> None:
    """What the deck wrote through python-pptx before (``table``'s cell writer and the header's second pass)."""
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Pt

    api_cell(cell, text, pt, bold, {"l": PP_ALIGN.LEFT, "r": PP_ALIGN.RIGHT, "ctr": PP_ALIGN.CENTER}[algn], fill)
    for para in cell.text_frame.paragraphs:
        for r in para.runs:
            r.font.size = Pt(pt)
            r.font.bold = bold


def _xml(el) -> bytes:
    return etree.tostring(el)


# texts as the deck's cells hold them: numbers, names, "n/a", two-line headers, empty cells; and any text at all
_TEXTS = st.one_of(st.sampled_from(["", "3.56", "n/a", "Est Instr\nCmplx CPI", "ZOSA (8561-45A12 z15)", "a&b<c>",
                                    "\n", "x\n\ny", " lead", "trail "]),
                   st.text(max_size=12))


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS, pt=st.integers(8, 24), bold=st.booleans(), algn=st.sampled_from(["l", "r", "ctr"]),
       fill=st.sampled_from([None, "EAF1FB"]))
def test_cell_xml_is_python_pptx_s(text, pt, bold, algn, fill):
    text = terminal_text(text)
    tbl = _fresh_cells(2)
    fast, slow = tbl.cell(0, 0), tbl.cell(0, 1)
    _through_api(slow, text, pt, bold, algn, fill)
    if body_cell(fast._tc, text, pt, bold, algn, fill):
        assert _xml(fast._tc) == _xml(slow._tc)
    else:       # left to python-pptx: only texts it escapes or breaks (control characters other than "\n")
        assert any(ord(ch) < 0x20 and ch != "\n" for ch in text)
        assert len(fast._tc.txBody.p_lst) == 1 and not len(fast._tc.txBody.p_lst[0])     # nothing written


def test_cell_written_once_only():
    """A cell that is not fresh (already written) is left alone: the caller goes through python-pptx."""
    tbl = _fresh_cells(1)
    tc = tbl.cell(0, 0)._tc
    assert body_cell(tc, "1.0", 10, False, "r", None)
    before = _xml(tc)
    assert not body_cell(tc, "2.0", 10, False, "r", None)
    assert _xml(tc) == before


def test_table_widths_and_frame_width():
    """Columns as given (EMU of the inches), the frame as wide as their sum (python-pptx's own rule)."""
    from pptx.util import Inches

    deck = Deck("t", "notes")
    s = deck.slide("Table", "compare")
    w = [0.55, 1.234, 0.7777]
    tbl = table(deck, s, 1.0, ["Row", "Name", "CPI"], [["before", "ZOSA", "3.56"], ["ratio", " ", "1.02"]], w, 11,
                bold_rows={1}, shade_rows={1}, n_text=2)
    assert [c.width for c in tbl.columns] == [Inches(x) for x in w]
    frame = next(sh for sh in s.shapes if sh.has_table)
    assert frame.width == sum(Inches(x) for x in w)
    assert tbl.cell(2, 2).text == "1.02" and tbl.cell(2, 2).text_frame.paragraphs[0].runs[0].font.bold
    assert not tbl.cell(1, 2).text_frame.paragraphs[0].runs[0].font.bold


def _parts(deck: Deck) -> dict[str, bytes]:
    buf = io.BytesIO()
    deck.prs.save(buf)
    with zipfile.ZipFile(buf) as z:
        return {n: z.read(n) for n in z.namelist() if n != "docProps/core.xml"}


def test_notes_slides_as_python_pptx_makes_them():
    """Slides 2.. take copies of the first notes slide and of the provenance's paragraphs: every part (notes
    slides and their text, their relationships, the slides' relationships, the content types) as python-pptx
    writes it making each notes slide itself and setting each slide's whole notes text."""
    prov = "Made with NestScope\nFile a.smf (12 bytes)\n\n  Window: x .. y \x07"
    ours = Deck("t", prov)
    theirs = Deck("t", prov)
    theirs._notes_of = lambda slide: slide.notes_slide          # python-pptx's own notes slide for every slide

    def whole_text(tf, about):                                  # and the whole text set through python-pptx
        tf.text = terminal_text(((about.strip() + "\n\n") if about else "") + theirs.notes)

    theirs._notes_text = whole_text
    abouts = ["about 0", "", "two\nlines \x1b", "  about 3\n", "about 4"]
    for d in (ours, theirs):
        for k, about in enumerate(abouts):
            d.slide(f"Slide {k}", "chart", "sub" if k % 2 else "", about)
    a, b = _parts(ours), _parts(theirs)
    assert sorted(a) == sorted(b)
    assert sum(n.startswith("ppt/notesSlides/notesSlide") and n.endswith(".xml") for n in a) == len(abouts)
    for name in a:
        assert a[name] == b[name], name
    texts = [s.notes_slide.notes_text_frame.text for s in ours.prs.slides]
    assert texts[0] == "about 0\n\n" + terminal_text(prov) and texts[1] == terminal_text(prov)
    assert texts[2].startswith("two\nlines \\x1b\n\nMade with") and texts[3].startswith("about 3\n\nMade")


def test_chart_point_texts_shared():
    """An array series' texts are the float texts python-pptx would write (repr), in the chart XML and the
    workbook; a point without y is in neither."""
    from app.export.chart_data import TextXyChartData

    from pptx.enum.chart import XL_CHART_TYPE

    from app.export.chart_data import STREAM_POINTS, TextXyChartData

    pad = STREAM_POINTS + 10                         # enough points for the streamed workbook (whole columns)
    cd = TextXyChartData()
    ser = cd.add_array_series("s", np.r_[[0.1, 1 / 3, 2.0, np.inf], np.arange(pad) + 10.0],
                              np.r_[[1e-7, np.nan, 12345.678, 1.0], np.full(pad, 0.5)])
    assert ser.x_texts[:4] == ["0.1", "0.3333333333333333", "2.0", "10.0"]       # the inf x is left out
    assert ser.y_texts[:4] == ["1e-07", "nan", "12345.678", "0.5"]
    text = cd.xml_bytes(XL_CHART_TYPE.XY_SCATTER_LINES).decode()
    assert '<c:pt idx="1">\n                  <c:v>0.3333333333333333</c:v>' in text
    assert '<c:pt idx="0">\n                  <c:v>1e-07</c:v>' in text and "nan" not in text
    assert '<c:pt idx="1">' not in text.split("<c:yVal>")[1]            # the point without y: no y point
    with zipfile.ZipFile(io.BytesIO(cd.xlsx_blob)) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
    assert '<c r="A3" s="1"><v>0.3333333333333333</v></c></row>' in sheet      # no B3: the point without y
    assert '<c r="B2" s="1"><v>1e-07</v></c>' in sheet and '<c r="B4" s="1"><v>12345.678</v></c>' in sheet
    assert "nan" not in sheet and '<c r="B3"' not in sheet


# -- provenance: a UTC shift's rows from the rows the export shares ---------------------------------------------

@settings(max_examples=25, deadline=None)
@given(a=st.floats(0, 1), b=st.floats(0, 1), hours=st.sampled_from(["08-17", "22-06", "00-24", "13-14"]),
       days=st.sampled_from([None, "mon-fri", "sat,sun", "wed"]), lpar=st.booleans())
def test_provenance_of_a_utc_shift_from_the_shared_rows(joint, a, b, hours, days, lpar):
    """Shift first (the shared rows), then window and nodes: the same rows in the same order as window and nodes
    first, then the shift; so the provenance inside the export's shared rows is the one computed without them,
    for any window, nodes and UTC shift."""
    import pandas as pd

    from app.engine.aggregate import select_rows
    from app.engine.shift import apply_shift, make_shift, shared_shift_rows
    from app.export import ExportRequest
    from app.export.provenance import provenance

    iv = joint.intervals
    t = pd.to_datetime(iv["interval_end"])
    lo, hi = t.min(), t.max()
    start, end = lo + (hi - lo) * min(a, b), lo + (hi - lo) * max(a, b)
    nodes = [("lpar", str(iv["cec"].iloc[0]), str(iv["lpar"].iloc[0]))] if lpar else None
    shift = make_shift(hours, days)
    pd.testing.assert_frame_equal(select_rows(apply_shift(iv, shift), start, end, nodes),
                                  apply_shift(select_rows(iv, start, end, nodes), shift))
    req = ExportRequest(joint, start=start, end=end, nodes=nodes, shift=shift)
    alone = provenance(req)
    with shared_shift_rows():
        apply_shift(iv, shift)                 # the rows a level of the export shifted first
        shared = provenance(req)
    assert shared == alone
    last = alone["window"]["last"]          # the rows' latest end inside the window (ISO texts of one format)
    assert last is None or last <= alone["window"]["to"]


def test_slides_after_the_first_are_the_slides_python_pptx_adds():
    """Deck's slides after the first take copies of the first one's cloned placeholders: each slide's XML, its
    part name and relationships, and the presentation's slide list are what python-pptx's add_slide makes."""
    from pptx import Presentation

    deck = Deck("t", "p")
    mine = [deck._add_slide() for _ in range(4)]
    prs = Presentation()
    layout = next(lay for lay in prs.slide_layouts if lay.name == deck.layout.name)
    theirs = [prs.slides.add_slide(layout) for _ in range(4)]
    assert len(list(mine[1].shapes)) == 1 and mine[1].shapes.title is not None      # the title placeholder
    for a, b in zip(mine, theirs):
        assert etree.tostring(a._element) == etree.tostring(b._element)
        assert str(a.part.partname) == str(b.part.partname)
        assert a.slide_layout.name == b.slide_layout.name
        assert [(r.reltype, str(r.target_part.partname)) for r in a.part.rels.values()] == \
            [(r.reltype, str(r.target_part.partname)) for r in b.part.rels.values()]
    assert etree.tostring(deck.prs.slides._sldIdLst) == etree.tostring(prs.slides._sldIdLst)
    # an edit of one slide's title is not seen in the next one's copy
    mine[1].shapes.title.text = "edited"
    assert deck._add_slide().shapes.title.text == ""
