"""The deck's charts hold the engine frame's values: every point of a timeline chart (its XML and the workbook
behind "Edit Data") is the metrics frame's value of that interval, to the last digit; array series behave as
python-pptx's point-by-point series."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from app.engine.compare import node_label, node_labels
from app.export import ExportRequest, export
from app.export.pptx_parts import xl_time

W0, W1 = "2026-11-02T06:00Z", "2026-11-02T18:00Z"       # 12 hours of the z16 file: 48 intervals, no gap


def _points(ser, tag: str) -> dict[int, float]:
    from pptx.oxml.ns import qn

    box = ser._element.find(qn(f"c:{tag}"))
    return {int(pt.get("idx")): float(pt.find(qn("c:v")).text) for pt in box.iter(qn("c:pt"))}


@pytest.fixture(scope="module")
def deck(joint, tmp_path_factory):
    from pptx import Presentation

    path = tmp_path_factory.mktemp("deck") / "d.pptx"
    export(ExportRequest(joint, start=W0, end=W1), str(path))
    return Presentation(str(path))


def _chart(deck, title: str):
    for s in deck.slides:
        if s.shapes.title is not None and s.shapes.title.text_frame.text == title:
            return next(sh.chart for sh in s.shapes if sh.has_chart)
    raise AssertionError(f"no slide {title!r}: {[s.shapes.title.text_frame.text for s in deck.slides]}")


def test_cpi_chart_points_are_the_engine_frame(deck, joint):
    import openpyxl

    m = joint.metrics(by="lpar_interval", start=W0, end=W1)
    m = m.loc[m["cec"].astype(str) == "3931-123F5"].sort_values("interval_end")   # the z16 ZOSA
    assert len(m) == 48
    label = node_labels(joint.metrics(by="lpar_interval", start=W0, end=W1), "lpar_interval")
    name = label.loc[m.index[0]]
    chart = _chart(deck, f"CPI and its two parts: {name}")
    series = {s.name: s for s in chart.plots[0].series}
    assert set(series) == {"CPI", "Est Instr Cmplx CPI", "Est Finite CPI"}
    x_want = xl_time(m["interval_end"])
    for mid, sname in (("CPI", "CPI"), ("Est_Instr_Cmplx_CPI", "Est Instr Cmplx CPI"),
                       ("Est_Finite_CPI", "Est Finite CPI")):
        ser = series[sname]
        xs, ys = _points(ser, "xVal"), _points(ser, "yVal")
        want = m[mid].to_numpy(dtype=float)
        assert sorted(xs) == list(range(48))
        assert [xs[i] for i in range(48)] == x_want.tolist()                  # every digit of the interval end
        assert [ys.get(i) for i in range(48)] == [v if math.isfinite(v) else None for v in want.tolist()]
    # the workbook behind Edit Data: x in A, y in B under the series name (a chart this small is written by
    # XlsxWriter's own cell calls, 16 significant digits: the same values to 1e-15)
    wb = openpyxl.load_workbook(io.BytesIO(chart.part.chart_workbook.xlsx_part.blob))
    rows = list(wb.active.iter_rows(values_only=True))
    assert rows[0][1] == "CPI"
    assert [r[0] for r in rows[1:49]] == pytest.approx(x_want.tolist(), rel=1e-15)
    assert [r[1] for r in rows[1:49]] == pytest.approx(m["CPI"].astype(float).tolist(), rel=1e-15)


def test_array_series_match_point_series():
    from pptx.chart.data import XyChartData

    from app.export.chart_data import TextXyChartData

    x = np.array([1.0, 2.5, np.nan, 4.0, 5.0])
    y = np.array([0.5, np.nan, 3.0, np.inf, 1e-7])
    fast = TextXyChartData()
    fast.add_array_series("=name", x, y)
    slow = XyChartData()
    s = slow.add_series("=name")
    for a, b in zip(x, y):                       # the former point-by-point loop
        if math.isfinite(a):
            s.add_data_point(float(a), float(b) if math.isfinite(b) else None)
    assert len(fast[0]) == len(slow[0]) == 4
    assert fast[0].x_values == slow[0].x_values and fast[0].y_values == slow[0].y_values
    from pptx.enum.chart import XL_CHART_TYPE

    t = XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS
    assert fast.xml_bytes(t) == slow.xml_bytes(t)                # the same chart XML


@pytest.mark.parametrize("stream", [False, True])
def test_chart_workbook_small_and_streamed(stream, monkeypatch):
    """The workbook behind Edit Data: in memory for a small chart, streamed as whole columns for a big one; the
    same cells either way (python-pptx's layout: name over B, x in A, y in B, a blank row between series)."""
    import openpyxl

    from app.export import chart_data

    monkeypatch.setattr(chart_data, "STREAM_POINTS", -1 if stream else 10**9)
    cd = chart_data.TextXyChartData()
    cd.add_array_series("=1+2", [1.0, 2.0, 3.0], [0.1, np.nan, 1 / 3])
    cd.add_array_series("b", [4.0, 5.0], [2.0, 7.25])
    rows = list(openpyxl.load_workbook(io.BytesIO(cd.xlsx_blob)).active.iter_rows(values_only=True))
    assert rows == [(None, "=1+2"), (1.0, 0.1), (2.0, None), (3.0, 1 / 3), (None, None), (None, "b"), (4.0, 2.0),
                    (5.0, 7.25)]


def test_streamed_chart_workbook_is_written_in_memory(monkeypatch):
    """A big chart's workbook is streamed without a temporary file (the rows and the package in memory) and holds
    every point: the parts are XlsxWriter's constant-memory ones (inline strings, no shared-strings part)."""
    import tempfile
    import zipfile

    import openpyxl

    from app.export import chart_data

    def no_file(*a, **k):
        raise AssertionError("a temporary file was made")

    monkeypatch.setattr(tempfile, "mkstemp", no_file)
    n = chart_data.STREAM_POINTS + 50
    x, y = np.arange(n) / 96 + 46000.0, np.where(np.arange(n) % 9 == 0, np.nan, np.arange(n) * 0.5)
    cd = chart_data.TextXyChartData()
    cd.add_array_series("=a <b>", x, y)
    blob = cd.xlsx_blob
    names = zipfile.ZipFile(io.BytesIO(blob)).namelist()
    assert "xl/sharedStrings.xml" not in names and "xl/worksheets/sheet1.xml" in names
    rows = list(openpyxl.load_workbook(io.BytesIO(blob)).active.iter_rows(values_only=True))
    assert rows[0] == (None, "=a <b>") and len(rows) == n + 1
    assert rows[1:] == [(a, None if b != b else b) for a, b in zip(x.tolist(), y.tolist())]


def test_node_labels_are_the_per_row_labels(joint, comparison):
    """Labels per distinct node broadcast to the rows: the same as labelling every row on its own."""
    from app.engine.compare import qualify_names

    for by in ("lpar_interval", "class_interval", "cpu", "lpar", "cec"):
        f = joint.metrics(by=by, start=W0, end=W1)
        ctx = [comparison.before.metrics("lpar")]
        got = node_labels(f, by, ctx)
        level = {"class_interval": "class", "lpar_interval": "lpar", "cec_interval": "cec"}.get(by, by)
        recs = f.to_dict("records")
        base = [node_label(r, level) for r in recs]
        if level != "cec":
            gens = [str(r.get("generation")) if r.get("generation") else "" for r in recs]
            pairs = [(node_label(r, level), str(r["cec"])) for c in ctx for r in c.to_dict("records")]
            base = qualify_names(base, [str(r["cec"]) for r in recs], gens, pairs)
        assert got.tolist() == base and got.index.equals(f.index)
