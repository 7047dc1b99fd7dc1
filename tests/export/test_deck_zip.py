"""The deck's zip (:mod:`app.export.pptx_zip`) and its charts' embedded workbooks are deflated at
:data:`DECK_ZIP_LEVEL` by the deck's deflater (ISA-L, else zlib-ng, else zlib), their parts the bytes python-pptx
and XlsxWriter write at zlib's default level."""

from __future__ import annotations

import io
import zipfile
import zlib

import numpy as np
import pytest

from app.export import pptx_zip, xlsx_rows
from app.export.pptx_parts import Deck, xy_chart


def _deflated_size(data: bytes, level: int) -> int:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)          # zipfile's raw deflate stream
    return len(c.compress(data) + c.flush())


def _deck_size(data: bytes, level: int = 1) -> int:
    c = pptx_zip.deck_deflater(level)
    return len(c.compress(data) + c.flush())


def _members(data: bytes) -> list[tuple[str, bytes, int, int]]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None                            # every member's CRC-32 checked
        return [(i.filename, z.read(i), i.compress_size, i.compress_type) for i in z.infolist()]


def _deck(tmp_path, monkeypatch):
    """A deck of one slide with a 2 x 400-point XY chart (its workbook streamed: > STREAM_POINTS points)."""
    def no_pieces(*a, **k):                     # the chart workbooks' parts are small: deflated in line
        raise AssertionError("a chart workbook deflated in pieces on threads")
    monkeypatch.setattr(xlsx_rows._PieceDeflate, "_deflate", no_pieces)
    deck = Deck("Zip level", "provenance line")
    s = deck.slide("A chart", "chart", "", "what it shows")
    x = 46_000 + np.arange(400) / 96.0
    xy_chart(s, 0.5, 1.2, 12, 5.5, [("CPI ZOSA", x, 2 + np.sin(x), {}), ("CPI ZOSB", x, 3 + np.cos(x), {})],
             "t", "time", "CPI", "mm-dd hh:mm")
    return deck


def test_the_deck_is_python_pptx_s_parts_deflated_at_level_1(tmp_path, monkeypatch):
    assert pptx_zip.DECK_ZIP_LEVEL == 1
    deck = _deck(tmp_path, monkeypatch)
    deck.save(str(tmp_path / "d.pptx"))
    plain = io.BytesIO()
    deck.prs.save(plain)                                      # python-pptx's own save, zlib's level 6
    ours, theirs = _members((tmp_path / "d.pptx").read_bytes()), _members(plain.getvalue())
    # the same parts in the same order, byte for byte (the embedded workbook is the one blob both write)
    assert [(n, b) for n, b, _, _ in ours] == [(n, b) for n, b, _, _ in theirs]
    assert all(t == zipfile.ZIP_DEFLATED for _, _, _, t in ours)
    # each part's deflate stream is the deck deflater's at level 1 in ours, zlib's at level 6 in python-pptx's
    # (the check tells the two apart: the chart's XML deflates to other sizes)
    assert all(size == _deck_size(b, 1) for _, b, size, _ in ours)
    assert all(size == _deflated_size(b, 6) for _, b, size, _ in theirs)
    chart = next(b for n, b, _, _ in ours if n.startswith("ppt/charts/chart"))
    assert _deck_size(chart, 1) != _deflated_size(chart, 6)


def test_a_chart_workbook_is_its_parts_deflated_at_the_deck_s_level(tmp_path, monkeypatch):
    deck = _deck(tmp_path, monkeypatch)
    buf = io.BytesIO()
    deck.save(buf)
    blob = next(b for n, b, _, _ in _members(buf.getvalue()) if n.endswith(".xlsx"))
    book = _members(blob)
    assert "xl/worksheets/sheet1.xml" in [n for n, _, _, _ in book]
    assert all(size == _deck_size(b, 1) for _, b, size, _ in book)
    # the same chart's workbook at the deflater's level for 6 (ISA-L's best, 3; zlib-ng's or zlib's 6): the same
    # parts but the run's time in docProps/core.xml, each deflated at that level
    monkeypatch.setattr(pptx_zip, "DECK_ZIP_LEVEL", 6)
    six = _members(_deck(tmp_path, monkeypatch).prs.slides[0].shapes[-1].chart_part.chart_workbook.xlsx_part.blob)
    assert [n for n, _, _, _ in six] == [n for n, _, _, _ in book]
    assert [b for n, b, _, _ in six if n != "docProps/core.xml"] == [b for n, b, _, _ in book
                                                                      if n != "docProps/core.xml"]
    assert all(size == _deck_size(b, 6) for _, b, size, _ in six)
    sheet = dict((n, s) for n, _, s, _ in book)["xl/worksheets/sheet1.xml"]
    assert sheet > dict((n, s) for n, _, s, _ in six)["xl/worksheets/sheet1.xml"]


def test_in_memory_workbook_parts_take_the_level_outside_it_zlib_s_default(tmp_path):
    from xlsxwriter import Workbook

    def book(path):
        wb = Workbook(str(path), {"in_memory": True})
        sh = wb.add_worksheet()
        for i in range(300):
            sh.write_number(i, 0, i / 7.0)
        wb.close()
        return _members(path.read_bytes())

    with xlsx_rows.zip_level(1, pieces=False) as ok:
        assert ok
        low = book(tmp_path / "l.xlsx")
    default = book(tmp_path / "d.xlsx")                      # outside: zipfile's default level, as before
    assert all(size == _deflated_size(b, 1) for _, b, size, _ in low)
    assert all(size == _deflated_size(b, 6) for _, b, size, _ in default)


@pytest.mark.parametrize("target", ["file", "stream"])
def test_save_package_writes_a_file_or_a_stream(tmp_path, monkeypatch, target):
    deck = _deck(tmp_path, monkeypatch)
    if target == "file":
        deck.save(str(tmp_path / "f.pptx"))
        data = (tmp_path / "f.pptx").read_bytes()
    else:
        buf = io.BytesIO()
        deck.save(buf)
        data = buf.getvalue()
    from pptx import Presentation

    prs = Presentation(io.BytesIO(data))                      # python-pptx reads it back
    assert len(prs.slides) == 1 and prs.slides[0].shapes.title.text == "A chart"
    assert prs.slides[0].has_notes_slide


@pytest.mark.parametrize("have", ["isal", "zlib_ng", "zlib"])
def test_the_deck_deflater_is_the_fastest_at_hand_and_any_unzip_reads_it(tmp_path, monkeypatch, have):
    import builtins
    import sys

    real_import = builtins.__import__
    missing = {"isal": (), "zlib_ng": ("isal",), "zlib": ("isal", "zlib_ng")}[have]

    def no_such(name, *a, **k):                     # the packages named missing cannot be imported
        if name.split(".")[0] in missing:
            raise ImportError(name)
        return real_import(name, *a, **k)
    if have != "zlib":
        pytest.importorskip(have)
    monkeypatch.setattr(builtins, "__import__", no_such)
    monkeypatch.setattr(pptx_zip, "_DEFLATE", [])
    for name in missing:
        monkeypatch.delitem(sys.modules, name, raising=False)
    mod = pptx_zip.deflate_module()
    assert mod.__name__ == {"isal": "isal.isal_zlib", "zlib_ng": "zlib_ng.zlib_ng", "zlib": "zlib"}[have]
    deck = _deck(tmp_path, monkeypatch)
    deck.save(str(tmp_path / "d.pptx"))
    plain = io.BytesIO()
    deck.prs.save(plain)
    ours = _members((tmp_path / "d.pptx").read_bytes())      # read back by zipfile's zlib, CRC-32 checked
    assert [(n, b) for n, b, _, _ in ours] == [(n, b) for n, b, _, _ in _members(plain.getvalue())]
    assert all(size == _deck_size(b) for _, b, size, _ in ours)
    if have == "zlib":                                       # no faster deflate: zlib's level 1, as before
        assert all(size == _deflated_size(b, 1) for _, b, size, _ in ours)
