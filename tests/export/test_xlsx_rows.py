"""Whole-column cell writes (app/export/xlsx_rows.py): the same workbook as XlsxWriter's per-cell calls, read back
with openpyxl, for any numbers and texts; the workbook's optional CPU sheet and its About lines."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.export import ExportRequest, export
from app.export import xlsx_rows
from app.export.xlsx_rows import SheetColumn, fast_path_available, write_columns

AFTER = Path(__file__).resolve().parents[2] / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
OPTIONS = {"constant_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
           "strings_to_numbers": False}


def _book(path, columns, n, fast: bool, first_row: int = 1):
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    sh = wb.add_worksheet("T")
    fmt = wb.add_format({"num_format": "0.00"})
    sh.write_string(0, 0, "head")
    cols = [SheetColumn(c.col, c.kind, c.data, fmt if c.fmt == "fmt" else None) for c in columns]
    assert fast_path_available(sh)
    if fast:
        write_columns(sh, cols, first_row, n)
    else:
        xlsx_rows._write_cells(sh, cols, first_row, n)          # XlsxWriter's own per-cell calls
    wb.close()


def _read(path):
    import openpyxl

    sh = openpyxl.load_workbook(path)["T"]
    return [[(c.value, c.number_format) for c in row] for row in sh.iter_rows()]


texts = st.one_of(st.none(), st.just(float("nan")), st.booleans(),
                  st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
                  st.sampled_from(["=1+2", " lead", "trail ", "_x0000_", "a<b&c>", "\x1b[31m", "ZOSA"]))
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**15, 10**15).map(float))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(numbers, texts, numbers), min_size=1, max_size=12), block=st.sampled_from([1, 3, 50]))
@example(rows=[(1.5, "a", 2.0), (float("inf"), None, float("-inf"))], block=1)     # a last row with no value
def test_fast_path_reads_back_as_the_per_cell_writes(rows, block, tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_rows, "BLOCK_ROWS", block)             # rows across block boundaries
    n = len(rows)
    cols = [SheetColumn(0, "num", np.array([r[0] for r in rows], dtype=float), "fmt"),
            SheetColumn(1, "text", [r[1] for r in rows]),
            SheetColumn(3, "num", np.array([r[2] for r in rows], dtype=float))]
    _book(tmp_path / "fast.xlsx", cols, n, True)
    _book(tmp_path / "cells.xlsx", cols, n, False)
    fast, cells = _read(tmp_path / "fast.xlsx"), _read(tmp_path / "cells.xlsx")
    assert len(fast) == len(cells)
    for a, b in zip(fast, cells):
        for (va, fa), (vb, fb) in zip(a, b):
            if isinstance(va, float) and isinstance(vb, float):
                # XlsxWriter writes 16 digits (%.16G: 1.7976931348623155e+308 reads back as inf), here every digit
                assert va == pytest.approx(vb, rel=1e-15, abs=0) or not math.isfinite(vb)
            else:
                assert va == vb
            assert fa == fb
    # every finite number is in its cell with full precision, every non-finite one leaves the cell empty (a last
    # row with no value at all, e.g. (inf, None, inf), is no row for openpyxl: its cells read as empty)
    def cell(r: int, c: int):
        row = fast[r] if r < len(fast) else []
        return row[c] if c < len(row) else (None, "General")

    for i, (x, _, y) in enumerate(rows):
        assert cell(1 + i, 0) == ((x, "0.00") if math.isfinite(x) else (None, "General"))
        assert cell(1 + i, 3)[0] == (y if math.isfinite(y) else None)


def test_rows_already_written_are_refused(tmp_path):
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(tmp_path / "x.xlsx"), OPTIONS)
    sh = wb.add_worksheet("T")
    sh.write_number(5, 0, 1.0)
    sh.write_number(6, 0, 2.0)                # row 5 flushed
    with pytest.raises(ValueError, match="already written"):
        write_columns(sh, [SheetColumn(0, "num", np.ones(3))], 2, 3)
    wb.close()


@pytest.fixture(scope="module")
def workbooks(joint, tmp_path_factory):
    import openpyxl

    d = tmp_path_factory.mktemp("cpu")
    w0, w1 = "2026-11-02T00:00Z", "2026-11-02T06:00Z"
    out = {}
    for flag in (False, True):
        path = d / f"cpu{int(flag)}.xlsx"
        res = export(ExportRequest(joint, start=w0, end=w1, cpu_sheet=flag), str(path))
        out[flag] = res, openpyxl.load_workbook(path, read_only=False)
    return out, joint.metrics(by="cpu", start=w0, end=w1)


def _about(wb) -> list[str]:
    return [str(c.value) for row in wb["About"].iter_rows() for c in row if c.value is not None]


def test_cpu_sheet_left_out_by_default_and_said(workbooks):
    res, wb = workbooks[0][False]
    assert "CPU intervals" not in wb.sheetnames and "CPU intervals" not in res.items
    about = _about(wb)
    assert any(t.startswith("Sheet CPU intervals: left out") and "--cpu-sheet" in t for t in about)
    rows = next(t for t in about if t.startswith("Rows per sheet"))
    for name, n in res.items.items():                      # every sheet's row count is stated
        assert f"{name} {n:,}" in rows
        assert wb[name].max_row == n + 1


def test_cpu_sheet_when_asked_has_every_cpu_interval(workbooks):
    books, cpu = workbooks
    res, wb = books[True]
    # 6 hours of ZOSA z16 and z15 CPUs in the window: the engine's CPU rows, one per logical CPU and interval
    assert len(cpu) > 0 and res.items["CPU intervals"] == len(cpu)
    sh = wb["CPU intervals"]
    assert sh.max_row == len(cpu) + 1
    head = {c.value: i for i, c in enumerate(sh[1])}
    got = sorted(v for (v,) in sh.iter_rows(min_row=2, min_col=head["CPI"] + 1, max_col=head["CPI"] + 1,
                                            values_only=True) if v is not None)
    want = sorted(float(v) for v in cpu["CPI"] if math.isfinite(v))
    assert got == want                                      # full precision: the same doubles
    assert not any(t.startswith("Sheet CPU intervals: left out") for t in _about(wb))


def test_cpu_sheet_option_of_the_cli(tmp_path, capsys):
    import openpyxl

    from app.cli import main

    out = tmp_path / "m.xlsx"
    assert main(["export", str(AFTER), "--out", str(out), "--from", "2026-11-02T00:00Z", "--to",
                 "2026-11-02T02:00Z", "--cpu-sheet"]) == 0
    wb = openpyxl.load_workbook(out)
    # 2 hours = 8 quarter hours x 12 logical CPUs (8 GCP + 4 zIIP) of ZOSA
    assert wb["CPU intervals"].max_row == 8 * 12 + 1
    capsys.readouterr()
    assert main(["export", str(AFTER), "--out", str(tmp_path / "m.csv"), "--cpu-sheet"]) == 2
    assert "--cpu-sheet adds a sheet to a workbook (.xlsx)" in capsys.readouterr().err


def test_a_text_that_reads_like_another_value_keeps_its_own_cell(tmp_path):
    # a text column's cells are made once per value: the text "None" is a text cell, None no cell; the text
    # "nan" a text cell, NaN no cell; the text "True" a text cell, True the text "yes" (as the per-cell writes)
    data = ["None", None, "nan", float("nan"), "True", True, None, "None"]
    want = ["None", None, "nan", None, "True", "yes", None, "None"]
    for fast in (True, False):
        _book(tmp_path / f"t{fast}.xlsx", [SheetColumn(0, "text", data)], len(data), fast)
        got = [row[0][0] for row in _read(tmp_path / f"t{fast}.xlsx")[1:]]
        assert got + [None] * (len(want) - len(got)) == want


def _parts(path) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist() if i.filename != "docProps/core.xml"}


def _packed(path) -> int:
    """The deflated bytes of the parts (not docProps/core.xml: it holds the time the workbook was made)."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        return sum(i.compress_size for i in z.infolist() if i.filename != "docProps/core.xml")


def test_zip_level_packs_the_same_parts_at_that_level_on_this_thread_only(tmp_path):
    import threading

    n = 20_000
    cols = [SheetColumn(0, "num", np.arange(n) / 7.0), SheetColumn(1, "text", [f"LPAR{i % 9}" for i in range(n)])]
    _book(tmp_path / "default.xlsx", cols, n, True)                 # zipfile's default: zlib's level 6
    for level in (1, 9):
        with xlsx_rows.zip_level(level) as ok:
            assert ok
            _book(tmp_path / f"l{level}.xlsx", cols, n, True)
            # another thread closing a workbook meanwhile packs it at the default level
            other = threading.Thread(target=_book, args=(tmp_path / f"other{level}.xlsx", cols, n, True))
            other.start()
            other.join()
    parts = _parts(tmp_path / "default.xlsx")
    assert all(_parts(tmp_path / f"{k}.xlsx") == parts for k in ("l1", "l9", "other1", "other9"))
    size = _packed(tmp_path / "default.xlsx")
    # 20,000 rows of XML: the fast level leaves the file larger than level 6, the best level no larger
    assert _packed(tmp_path / "l1.xlsx") > size >= _packed(tmp_path / "l9.xlsx")
    assert _packed(tmp_path / "other1.xlsx") == _packed(tmp_path / "other9.xlsx") == size


def test_the_workbook_export_is_packed_at_its_level(joint, tmp_path, monkeypatch):
    from app.export import xlsx

    sizes = {}
    for level in (1, 9):
        monkeypatch.setattr(xlsx, "ZIP_LEVEL", level)
        path = tmp_path / f"w{level}.xlsx"
        export(ExportRequest(joint, start="2026-11-02T00:00Z", end="2026-11-02T06:00Z"), str(path))
        sizes[level] = _packed(path)
    assert _parts(tmp_path / "w1.xlsx") == _parts(tmp_path / "w9.xlsx")
    assert sizes[1] > sizes[9]


def test_big_parts_are_deflated_in_pieces_that_read_back_whole(tmp_path, monkeypatch):
    import os
    import zipfile

    monkeypatch.setattr(xlsx_rows, "PIECE_BYTES", 1000)
    pieces: list[tuple[int, bool]] = []
    real = xlsx_rows._PieceDeflate._deflate

    def spied(self, data, last):
        pieces.append((len(data), last))
        return real(self, data, last)
    monkeypatch.setattr(xlsx_rows._PieceDeflate, "_deflate", spied)
    big = os.urandom(5000).hex().encode() + b"<row/>" * 3000          # 28,000 bytes, some of them compressible
    parts = {"empty.xml": b"", "small.xml": b"<a/>", "big.xml": big}
    with xlsx_rows.zip_level(1):
        z = xlsx_rows._LevelZipFile(tmp_path / "p.zip", "w", zipfile.ZIP_DEFLATED)
        for name, data in parts.items():
            (tmp_path / name).write_bytes(data)
            z.write(tmp_path / name, name)               # as XlsxWriter writes its parts
        z.writestr("str.xml", big)
        z.close()
    with zipfile.ZipFile(tmp_path / "p.zip") as z:
        assert z.testzip() is None                      # every part's CRC-32 checked
        assert {n: z.read(n) for n in parts} == parts and z.read("str.xml") == big
        assert z.getinfo("big.xml").compress_size < len(big)
    # a piece is cut once 1,000 bytes are held: zipfile.write hands over a few KiB at a time (Python 3.11: 8,192
    # bytes, so 28,000 = 3 x 8,192 + 3,424 are 4 pieces), writestr the whole part (1 piece); every part ends with
    # its one finished piece, a small part is that piece alone
    cut = [n for n, last in pieces if not last]
    assert cut[-1] == len(big) and sum(cut[:-1]) == len(big) and len(cut) >= 3
    assert all(n >= 1000 for n in cut)
    assert [n for n, last in pieces if last] == [0, 4, 0, 0]
