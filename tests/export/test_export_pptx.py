"""PPTX export re-opened with python-pptx: slides, native tables, native chart series, notes."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from app.export import ExportRequest, export
from app.export import pptx as P
from app.export import pptx_slides as PS
from app.export.tables import display


@pytest.fixture(scope="module")
def deck(joint, comparison, tmp_path_factory):
    from pptx import Presentation

    path = tmp_path_factory.mktemp("pptx") / "deck.pptx"
    res = export(ExportRequest(joint, comparison=comparison, title="z15 to z16"), str(path))
    return res, Presentation(str(path))


def _title(slide) -> str:
    return slide.shapes[0].text_frame.text


def _tables(slide):
    return [s.table for s in slide.shapes if s.has_table]


def _charts(slide):
    return [s.chart for s in slide.shapes if s.has_chart]


def test_slides_16_9_and_kinds(deck):
    res, prs = deck
    assert prs.slide_width / prs.slide_height == pytest.approx(16 / 9, rel=1e-3)
    # a comparison deck: one summary table per side (each over its own window), one waterfall per pair
    assert res.items["title"] == 1 and res.items["summary"] == 2 and res.items["waterfall"] == 1
    assert res.items["executive"] == 1 and res.items["config"] == 1 and res.items["appendix"] == 1
    assert _title(prs.slides[0]) == "z15 to z16"
    assert len(prs.slides) == sum(res.items.values())


def test_provenance_in_every_slides_notes(deck, joint):
    _, prs = deck
    digests = [hashlib.sha256(open(r.file, "rb").read()).hexdigest() for r in joint.files]
    for slide in prs.slides:
        notes = slide.notes_slide.notes_text_frame.text
        assert all(d in notes for d in digests)
        assert "z15 / 2026-11" in notes and "z16 / 2026-11" in notes and "NestScope" in notes


def test_summary_table_in_presentation_layout(deck, comparison):
    _, prs = deck
    for side in (comparison.before, comparison.after):
        slide = next(s for s in prs.slides if _title(s) == f"{side.name.capitalize()}: Summary per LPAR")
        (tbl,) = _tables(slide)
        head = [tbl.cell(0, j).text.replace("\n", " ") for j in range(len(tbl.columns))]
        assert head[:7] == ["Name", "CPI", "Prb State", "Est Instr Cmplx CPI", "Est Finite CPI", "Est SCPL1M", "L1MP"]
        m = side.metrics("lpar").iloc[0]
        assert len(tbl.rows) == 2 and tbl.cell(1, 0).text == "ZOSA"
        assert tbl.cell(1, 1).text == display(m["CPI"], 2)
        assert tbl.cell(1, head.index("L1MP")).text == display(m["L1MP"], 1)
        assert tbl.cell(1, head.index("Est SCPL1M")).text == display(m["Est_SCPL1M"], 0)   # IBM: whole cycles
        sizes = {r.font.size.pt for row in tbl.rows for c in row.cells for p in c.text_frame.paragraphs
                 for r in p.runs}
        assert min(sizes) >= P.MIN_PT


def test_native_charts_carry_each_sides_own_window(deck, comparison):
    from pptx.enum.chart import XL_CHART_TYPE

    _, prs = deck
    z16 = comparison.after.metrics("lpar_interval").sort_values("interval_end")
    slide = next(s for s in prs.slides if _title(s) == "After: CPI and its two parts: ZOSA")
    (ch,) = _charts(slide)
    assert ch.chart_type == XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS
    series = {s.name: s for s in ch.plots[0].series}
    assert set(series) == {"CPI", "Est Instr Cmplx CPI", "Est Finite CPI"}
    got = [v for v in series["CPI"].values if v is not None]
    assert got == pytest.approx(z16["CPI"].tolist(), rel=1e-12)
    # the x values stay inside the after side's window (no union of both windows)
    xs = [float(x) for x in ch.plots[0].series[0]._element.xpath(".//c:xVal//c:v/text()")]
    first = (z16["interval_end"].min() - pd.Timestamp("1899-12-30")).total_seconds() / 86400
    assert min(xs) == pytest.approx(first, abs=1e-9)
    titles = [_title(s) for s in prs.slides]
    assert {"Before: L1MP", "After: L1MP", "Before: LPARCPU", "After: LPARCPU"} <= set(titles)
    # RNI: only the z15 side has a formula: a chart there, a note on the after side
    rni = next(s for s in prs.slides if _title(s) == "Before: Rel Nest Intensity")
    assert [s.name for s in _charts(rni)[0].plots[0].series] == ["ZOSA"]
    assert not _charts(next(s for s in prs.slides if _title(s) == "After: Rel Nest Intensity"))


def test_comparison_table_and_waterfall(deck, comparison):
    _, prs = deck
    slide = next(s for s in prs.slides if _title(s).startswith("Before and after per LPAR"))
    tbl = _tables(slide)[0]          # the first of the column groups stacked on the slide
    kinds = [tbl.cell(i, 0).text for i in range(1, len(tbl.rows))]
    assert kinds == ["before", "after", "ratio", "delta"]
    t = comparison.table.set_index("row")
    assert tbl.cell(3, 2).text == f"{t.loc['ratio', 'CPI']:.2f}"
    wf_slide = next(s for s in prs.slides if _title(s).startswith("CPI change ZOSA"))
    (ch,) = _charts(wf_slide)
    ser = {s.name: list(s.values) for s in ch.plots[0].series}
    assert list(ser) == ["base", "CPI", "increase", "decrease"]
    wf = comparison.waterfall("ZOSA")
    # the visible bars are the steps' sizes; the signed steps add up to the CPI change
    heights = [next(v for v in (ser["CPI"][i], ser["increase"][i], ser["decrease"][i]) if v is not None)
               for i in range(len(wf))]
    assert heights == pytest.approx(wf["height"].tolist(), abs=1e-12)
    d = comparison.cpi.iloc[0]
    assert wf.loc[wf["kind"] == "delta", "value"].sum() == pytest.approx(d["cpi_after"] - d["cpi_before"],
                                                                         abs=1e-12)
    text = " ".join(s.text_frame.text for s in wf_slide.shapes if s.has_text_frame)
    assert f"{d['d_l1mp_effect']:+.3f}" in text and f"{d['d_scpl1m_effect']:+.3f}" in text


def test_long_tables_split_over_slides(joint, tmp_path, monkeypatch):
    from pptx import Presentation

    monkeypatch.setattr(PS, "fit_rows", lambda h, pt: 3)        # 3 body rows per slide
    path = tmp_path / "split.pptx"
    res = export(ExportRequest(joint, by="class"), str(path))       # 4 class rows -> 2 slides
    assert res.items["summary"] == 2
    prs = Presentation(str(path))
    titles = [_title(s) for s in prs.slides]
    assert "Summary per processor class (1/2)" in titles and "Summary per processor class (2/2)" in titles


def test_relative_overlays(deck, comparison):
    _, prs = deck
    ax = comparison.timelines("lpar_interval")
    for head in ("CPI", "LPARCPU"):
        slide = next(s for s in prs.slides if _title(s) == f"{head} before (dashed) and after")
        (ch,) = _charts(slide)
        ser = {s.name: s for s in ch.plots[0].series}
        assert list(ser) == ["before: ZOSA (8561-45A12 z15)", "after: ZOSA (3931-123F5 z16)"]
        # y values are the engine's interval values; x is hours from each selection's start (0.25 = first end)
        got = [v for v in ser["after: ZOSA (3931-123F5 z16)"].values if v is not None]
        assert got == pytest.approx(ax.after.sort_values("x")[head].tolist(), rel=1e-12)
        xml = ser["before: ZOSA (8561-45A12 z15)"]._element.xml
        assert 'prstDash val="dash"' in xml
    assert ax.unit == "hours" and ax.before["x"].min() == 0.25
