"""Charts made from a light XML (:meth:`app.export.chart_data.TextXyChartData.light_xml`): python-pptx parses and
styles the chart without its point lists, which the chart part splices back in when it is serialized.  The saved
deck must hold the very bytes python-pptx makes of the whole XML."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from pptx.enum.chart import XL_CHART_TYPE

from app.export import chart_data, pptx_parts
from app.export.pptx_parts import Deck, xy_chart, xy_data

KIND = XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS


def _series():
    x = 46_000 + np.arange(300) / 96.0
    x[7] = np.nan                                            # a point without x: left out
    y = 2 + np.sin(x)
    y[[3, 50, 51]] = np.nan                                  # no value: no <c:pt> (python-pptx leaves None out)
    y[60] = np.inf
    return [("=1+2 <a> & b", x, y, {}), ("ZOSB", x[:40], 1e-7 * np.arange(40), {"color": "D62728"})]


def _whole(cd) -> bytes:
    """What python-pptx makes of the whole chart XML: parsed (blank text dropped) and serialized."""
    from pptx.opc.oxml import serialize_part_xml
    from pptx.oxml import parse_xml

    return serialize_part_xml(parse_xml(cd.xml_bytes(KIND)))


def test_the_light_xml_spliced_is_the_whole_chart_as_python_pptx_serializes_it():
    from pptx.opc.oxml import serialize_part_xml
    from pptx.oxml import parse_xml

    cd = xy_data(_series())
    xml, points = cd.light_xml(KIND)
    assert len(points) == 4                                  # x and y of each of the two series
    assert xml.count(b"<c:pt ") == 2 and xml.count(b"<!--nestscope-pts ") == 4       # the names' points only
    spliced = chart_data.splice_points(serialize_part_xml(parse_xml(xml)), points)
    assert spliced == _whole(cd)
    # the points are there: 299 x values of the first series (one without x left out), 296 y values
    assert spliced.count(b"<c:pt ") == 299 + 295 + 40 + 40
    assert b"<!--" not in spliced


def test_a_prepared_chart_keeps_its_light_xml():
    plain, ready = xy_data(_series()), xy_data(_series(), prepare=True)
    assert ready._ready is not None and ready._ready[0] == KIND
    xml, points = ready.light_xml(KIND)
    assert xml is ready._ready[1]                             # made ahead, not again
    from pptx.opc.oxml import serialize_part_xml
    from pptx.oxml import parse_xml

    assert chart_data.splice_points(serialize_part_xml(parse_xml(xml)), points) == _whole(plain)


def _saved_chart(monkeypatch, light: bool) -> tuple[bytes, object]:
    if not light:        # python-pptx's own chart of the whole XML
        monkeypatch.setattr(pptx_parts, "add_xy_chart",
                            lambda slide, kind, x, y, w, h, cd: slide.shapes.add_chart(kind, x, y, w, h, cd))
    deck = Deck("Light charts", "provenance line")
    s = deck.slide("A chart", "chart", "", "what it shows")
    series = _series()
    xy_chart(s, 0.5, 1.2, 12, 5.5, [(n, x, y, st) for n, x, y, st in series], "t", "time", "CPI", "mm-dd hh:mm")
    buf = io.BytesIO()
    deck.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        name = next(n for n in z.namelist() if n.startswith("ppt/charts/chart"))
        return z.read(name), deck


def test_a_saved_light_chart_is_the_chart_python_pptx_makes(monkeypatch):
    light, deck = _saved_chart(monkeypatch, True)
    part = deck.prs.slides[0].shapes[-1].chart_part
    assert type(part).__name__ == "LightChartPart" and len(part.nestscope_points) == 4
    with monkeypatch.context() as m:
        whole, _ = _saved_chart(m, False)
    assert light == whole                                     # styled the same, every point in place
    assert b"nestscope-pts" not in light


def test_python_pptx_s_own_save_of_a_light_chart_splices_it_too(monkeypatch):
    light, deck = _saved_chart(monkeypatch, True)
    buf = io.BytesIO()
    deck.prs.save(buf)                                        # python-pptx's save: the part's blob
    from pptx import Presentation

    prs = Presentation(buf)
    ch = prs.slides[0].shapes[-1].chart
    ser = ch.plots[0].series
    want = np.delete(1e-7 * np.arange(40), 7)                # the point without x left out
    assert len(ser) == 2 and ser[1].values == pytest.approx(want.tolist())


@pytest.mark.parametrize("unknown", ["chart part", "part made"])
def test_another_chart_part_gets_the_whole_xml(monkeypatch, unknown):
    if unknown == "chart part":        # a python-pptx whose chart part this does not know: its own chart
        monkeypatch.setattr(pptx_parts, "_LIGHT_PART", False)
    else:                              # a part of another class made: its XML made whole at once
        from pptx.parts.chart import ChartPart

        other = type("OtherChartPart", (ChartPart,), {})
        real = ChartPart.new.__func__
        monkeypatch.setattr(ChartPart, "new", classmethod(lambda cls, *a: real(other, *a)))
    light, deck = _saved_chart(monkeypatch, True)
    part = deck.prs.slides[0].shapes[-1].chart_part
    assert type(part).__name__ != "LightChartPart" and b"nestscope-pts" not in part.blob
    with monkeypatch.context() as m:
        whole, _ = _saved_chart(m, False)
    assert light == whole


def test_series_over_the_same_times_share_their_x_texts():
    x = 46_000 + np.arange(50) / 96.0
    z = x.copy()
    z[0] = -0.0                                               # == 0.0 but another text: not the same x
    zero = x.copy()
    zero[0] = 0.0
    cd = xy_data([("a", x, np.arange(50.0), {}), ("b", x.copy(), np.ones(50), {}), ("c", x[:40], np.ones(40), {}),
                  ("d", zero, np.ones(50), {}), ("e", z, np.ones(50), {})])
    a, b, c, d, e = cd
    assert b.same_x is a and c.same_x is None and d.same_x is None and e.same_x is None
    assert b.x_texts is a.x_texts and b.x_texts == [repr(v) for v in x.tolist()]
    assert d.x_texts[0] == "0.0" and e.x_texts[0] == "-0.0"
    # the chart as it was: every series' x written from its own values
    from pptx.opc.oxml import serialize_part_xml
    from pptx.oxml import parse_xml

    xml, points = cd.light_xml(KIND)
    whole = chart_data.splice_points(serialize_part_xml(parse_xml(xml)), points)
    assert whole == _whole(cd)
    ns = {"c": "http://schemas.openxmlformats.org/drawingml/2006/chart"}
    got = [[v.text for v in ser.findall("c:xVal/c:numRef/c:numCache/c:pt/c:v", ns)]
           for ser in parse_xml(whole).iterfind(".//c:ser", ns)]
    assert got == [[repr(v) for v in xs.tolist()] for xs in (x, x, x[:40], zero, z)]


def test_chart_parts_are_named_as_python_pptx_names_them():
    """The deck names its chart and workbook parts by a count: the names python-pptx's walk of the package gives
    (the first free number), with a category chart (a waterfall's) among the XY charts."""
    from pptx.chart.data import CategoryChartData
    from pptx.util import Inches

    deck = Deck("Names", "provenance line")
    pkg = deck.prs.part.package
    real = type(pkg).next_partname
    assert pkg.next_partname is not real                      # the count is in place
    for k in range(3):
        s = deck.slide(f"chart {k}", "chart", "", "")
        if k == 1:
            cd = CategoryChartData()
            cd.categories = ["a", "b"]
            cd.add_series("s", (1.0, 2.0))
            s.shapes.add_chart(XL_CHART_TYPE.COLUMN_STACKED, Inches(1), Inches(1), Inches(4), Inches(3), cd)
        else:
            xy_chart(s, 0.5, 1.2, 12, 5.5, _series()[:1], "t", "time", "CPI", "mm-dd hh:mm")
        # what python-pptx's own walk names next: the count's next name
        for tmpl in ("/ppt/charts/chart%d.xml", "/ppt/embeddings/Microsoft_Excel_Sheet%d.xlsx"):
            assert real(pkg, tmpl) == tmpl % (k + 2)
    names = sorted(str(p.partname) for p in pkg.iter_parts() if "/charts/" in str(p.partname)
                   or "/embeddings/" in str(p.partname))
    assert names == ["/ppt/charts/chart1.xml", "/ppt/charts/chart2.xml", "/ppt/charts/chart3.xml",
                     "/ppt/embeddings/Microsoft_Excel_Sheet1.xlsx", "/ppt/embeddings/Microsoft_Excel_Sheet2.xlsx",
                     "/ppt/embeddings/Microsoft_Excel_Sheet3.xlsx"]
    assert str(pkg.next_partname("/ppt/media/image%d.png")) == "/ppt/media/image1.png"   # others: python-pptx's


def test_python_pptx_s_qn_is_memoized_with_the_same_names():
    import sys

    from pptx.oxml import ns, xmlchemy

    Deck("qn", "provenance line")
    assert hasattr(ns.qn, "cache_info") and xmlchemy.qn is ns.qn          # the modules' qn: the memoized one
    plain = ns.qn.__wrapped__
    for tag in ("a:txBody", "p:cSld", "c:ser", "a:t", "r:id"):
        assert ns.qn(tag) == plain(tag) == "{%s}%s" % (ns._nsmap[tag.split(":")[0]], tag.split(":")[1])
    assert not [m for m, mod in sys.modules.items() if m.startswith("pptx.") and getattr(mod, "qn", None) is plain]
