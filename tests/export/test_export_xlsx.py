"""XLSX export re-opened with openpyxl (values, formats, frozen panes, filters) and its chart XML."""

from __future__ import annotations

import hashlib
import os
import re
import zipfile

import pytest

from app.export import ExportRequest, export
from app.export.tables import SHEETS

W0, W1 = "2026-10-06T20:00Z", "2026-11-02T04:00Z"


@pytest.fixture(scope="module")
def book(joint, comparison, tmp_path_factory):
    import openpyxl

    path = tmp_path_factory.mktemp("xlsx") / "cmp.xlsx"
    # the last 4 hours of the z15 file and the first 4 of the z16 file (keeps the workbook small)
    res = export(ExportRequest(joint, start=W0, end=W1, comparison=comparison, title="test", cpu_sheet=True), str(path))
    return path, res, openpyxl.load_workbook(path)


def _header_index(sh) -> dict[str, int]:
    return {c.value: i for i, c in enumerate(sh[1]) if c.value}


def test_sheets(book):
    _, res, wb = book
    assert wb.sheetnames == ["Timeline", "Compare"] + [s[0] for s in SHEETS] + ["About"]
    assert res.items["LPAR"] == 2 and res.items["Compare"] == 4


def test_lpar_sheet_values_formats_and_layout(book, joint):
    _, _, wb = book
    sh = wb["LPAR"]
    head = _header_index(sh)
    m = joint.metrics(by="lpar", start=W0, end=W1)
    assert sh.freeze_panes == "B2"
    assert sh.auto_filter.ref.startswith("A1:")
    names = [sh.cell(row=r, column=1).value for r in (2, 3)]
    assert sorted(names) == ["ZOSA (3931-123F5 z16)", "ZOSA (8561-45A12 z15)"]     # never two "ZOSA" rows
    for r in (2, 3):
        cec = sh.cell(row=r, column=head["CEC"] + 1).value
        rec = m[m["cec"] == cec].iloc[0]
        cpi = sh.cell(row=r, column=head["CPI"] + 1)
        assert cpi.value == pytest.approx(rec["CPI"], rel=1e-12)          # full precision in the cell
        assert cpi.number_format == "0.00"                               # CPI: 2 decimals as presented
        assert sh.cell(row=r, column=head["L1MP"] + 1).number_format == "0.0"
        assert sh.cell(row=r, column=head["LPARCPU"] + 1).value == pytest.approx(rec["LPARCPU"], rel=1e-12)
        rni = sh.cell(row=r, column=head["Rel Nest Intensity"] + 1).value
        assert (rni is None) == (rec["generation"] == "z16")               # no z16 RNI formula: empty
    assert sh.column_dimensions["A"].width >= len("ZOSA (3931-123F5 z16)")


def test_cpu_sheet_rows_match_engine(book, joint):
    _, res, wb = book
    assert res.items["CPU intervals"] == len(joint.metrics(by="cpu", start=W0, end=W1)) == 2 * 16 * 12
    sh = wb["CPU intervals"]
    assert sh.max_row == res.items["CPU intervals"] + 1


def test_compare_sheet(book, comparison):
    _, _, wb = book
    sh = wb["Compare"]
    rows = {sh.cell(row=r, column=1).value: r for r in range(7, 11)}
    assert set(rows) == {"before", "after", "ratio", "delta"}
    heads = {sh.cell(row=6, column=j).value: j for j in range(1, 30) if sh.cell(row=6, column=j).value}
    t = comparison.table.set_index("row")
    assert sh.cell(row=rows["ratio"], column=heads["CPI"]).value == pytest.approx(t.loc["ratio", "CPI"])
    assert sh.cell(row=rows["ratio"], column=heads["CPI"]).number_format == "0.00"
    assert "Rel Nest Intensity *" in heads                                  # marked: no z16 formula
    assert sh.cell(row=6, column=heads["Rel Nest Intensity *"]).comment is not None
    # the decomposition block: parts as numbers
    values = [[c.value for c in row] for row in sh.iter_rows(min_row=1, max_row=sh.max_row, max_col=10)]
    dec = next(r for r in values if r[0] == "ZOSA" and isinstance(r[1], float))
    d = comparison.cpi.iloc[0]
    assert dec[3] == pytest.approx(d["d_cpi"]) and dec[4] + dec[5] == pytest.approx(d["d_cpi"], abs=1e-12)
    assert dec[6] + dec[7] == pytest.approx(d["d_finite"], abs=1e-12)


def test_about_sheet_has_hashes(book, joint):
    _, _, wb = book
    sh = wb["About"]
    text = [c.value for row in sh.iter_rows() for c in row if c.value is not None]
    for r in joint.files:
        digest = hashlib.sha256(open(r.file, "rb").read()).hexdigest()
        assert digest in text
    assert "z15 / 2026-11, z16 / 2026-11" in text
    assert any(str(t).startswith("NestScope") for t in text)


def test_native_charts(book):
    path, _, _ = book
    with zipfile.ZipFile(path) as z:
        charts = sorted(n for n in z.namelist() if n.startswith("xl/charts/chart"))
        xml = {n: z.read(n).decode() for n in charts}
    # Timeline: relative before/after CPI and LPARCPU + absolute CPI and LPARCPU; Compare: one waterfall
    assert len(charts) == 5
    scatter = [x for x in xml.values() if "<c:scatterChart>" in x]
    bars = [x for x in xml.values() if "<c:barChart>" in x]
    assert len(scatter) == 4 and len(bars) == 1
    absolute = [x for x in scatter if "interval end (UTC)" in x]
    assert len(absolute) == 2
    names = re.findall(r"<c:v>([^<]+)</c:v>", absolute[0])
    assert "ZOSA (8561-45A12 z15)" in names and "ZOSA (3931-123F5 z16)" in names
    assert '<c:grouping val="stacked"/>' in bars[0]
    assert bars[0].count("<c:ser>") == 4                   # base (invisible), CPI, increase, decrease


def test_same_export_same_bytes(joint, tmp_path):
    req = ExportRequest(joint, start="2026-11-02T00:00Z", end="2026-11-02T02:00Z")
    export(req, str(tmp_path / "a.xlsx"))
    export(req, str(tmp_path / "b.xlsx"))
    assert (tmp_path / "a.xlsx").read_bytes() == (tmp_path / "b.xlsx").read_bytes()


def test_every_sheet_prints_one_page_wide_in_landscape(book):
    _, _, wb = book
    for sh in wb.worksheets:
        assert sh.page_setup.orientation == "landscape", sh.title
        assert sh.sheet_properties.pageSetUpPr.fitToPage and (sh.page_setup.fitToWidth or 1) == 1, sh.title   # OOXML default: 1
        assert sh.page_setup.fitToHeight == 0, sh.title          # as many pages down as the rows need
    for name, _, _ in SHEETS:                                     # level sheets repeat their header row
        assert wb[name].print_title_rows == "$1:$1", name


def test_headers_wrap_whole_words(book):
    from app.export.xlsx import header_lines

    # "Est Instr Cmplx CPI" in a column 11 characters wide: "Est Instr" / "Cmplx CPI" (hand count)
    assert header_lines("Est Instr Cmplx CPI", 11) == 2
    assert header_lines("Instr complexity", 12) == 2 and header_lines("CPI", 6) == 1
    _, _, wb = book
    sh = wb["LPAR"]
    for j, c in enumerate(sh[1]):
        if not c.value:
            continue
        letter = c.column_letter
        width = sh.column_dimensions[letter].width
        assert max(len(w) for w in str(c.value).split()) <= width, c.value        # no word is cut
        lines = header_lines(str(c.value), width)
        assert sh.row_dimensions[1].height >= 15 * lines, c.value


def test_compare_waterfall_starts_at_zero_and_sides_differ_by_colour(book):
    path, _, _ = book
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    bars = [x for x in charts if "<c:barChart>" in x]
    assert bars and all('<c:min val="0"/>' in x for x in bars)
    overlay = next(x for x in charts if "before (dashed) and after" in x)
    colours = re.findall(r'<c:spPr><a:ln w="\d+"><a:solidFill><a:srgbClr val="([0-9A-F]{6})"', overlay)
    assert len(colours) >= 2 and len(set(colours)) == len(colours)


def test_about_sheet_shows_file_names_in_full(book, joint):
    _, _, wb = book
    sh = wb["About"]
    names = [os.path.basename(r.file) for r in joint.files]
    col_a = sh.column_dimensions["A"].width
    assert all(len(n) <= col_a for n in names)


def test_lpar_sheet_carries_the_partition_data(tmp_path, sample_result):
    """ZOSB with the z16 CEC's partition data (VMSYS1's D0R16): processors, weights and capping as `report --by
    lpar` shows them, and the partition-only LPARs (CF01, ZOSD) as rows of their own."""
    import openpyxl

    from app.engine import Workspace
    from app.engine.partitions import enrich

    ws = Workspace()
    ws.add_all([sample_result("after_z16_ZOSB_smf113.vbs.gz"), sample_result("after_VMSYS1_monwrite.mondata.gz")])
    path = tmp_path / "p.xlsx"
    export(ExportRequest(ws), str(path))
    # read-only: only the LPAR sheet is parsed (loading the whole book parsed the day's CPU and interval sheets too)
    book = openpyxl.load_workbook(path, read_only=True)
    values = list(book["LPAR"].iter_rows(values_only=True))
    book.close()
    head = {v: i for i, v in enumerate(values[0]) if v}
    for col in ("Processors", "Weights", "Capped", "Data"):
        assert col in head
    rows = {row[head["LPAR"]]: row for row in values[1:]}
    want = enrich(ws, ws.metrics(by="lpar"), "lpar").set_index("lpar")
    for lpar in ("ZOSB", "VMPROD", "CF01", "ZOSD"):
        row = rows[lpar]
        assert row[head["Processors"]] == want.loc[lpar, "processors"]
        assert row[head["Weights"]] == want.loc[lpar, "weights"]
        assert row[head["Capped"]] == ("yes" if want.loc[lpar, "capped"] else "no")
    assert rows["CF01"][head["Data"]] == "partition data only"
