"""CSV export and the export plumbing (atomic write, input protection, cancel, progress)."""

from __future__ import annotations

import csv
import io
import os

import pytest
from pathlib import Path

from app.engine.metrics import metric_ids
from app.export import ExportCancelled, ExportError, ExportRequest, export, format_of
from app.export.csv import cell, number_text, rows_csv, safe_text

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_number_text_has_no_float_noise():
    assert number_text(5.199999999999999) == "5.2"
    assert number_text(0.1 + 0.2) == "0.3"
    assert number_text(3.0) == "3"
    assert number_text(1634.9214213654) == "1634.92142137"      # 12 significant digits
    assert number_text(float("nan")) == ""


def test_formula_text_is_neutralised():
    for bad in ("=cmd|' /C calc'!A0", "+1", "-2+3", "@SUM(A1)"):
        assert safe_text(bad) == "'" + bad
    # tab and CR are neutralised too, and shown escaped (app.textsafe: no control character in any output)
    assert safe_text("\tx") == "'\\tx" and safe_text("\rx") == "'\\rx"
    assert safe_text("ZOSA") == "ZOSA"
    assert cell("lpar", "=HYPERLINK()") == "'=HYPERLINK()"
    assert cell("CPI", -0.38) == "-0.38"            # numbers are numbers, never quoted
    assert cell("interval_end", __import__("pandas").Timestamp("2026-11-02 08:15")) == "2026-11-02T08:15:00Z"


def test_csv_matches_the_engine_and_report_columns(joint, tmp_path):
    from app.commands.report import csv_columns

    out = tmp_path / "lpar.csv"
    seen = []
    res = export(ExportRequest(joint, by="lpar"), str(out), progress=lambda f, t: seen.append(f))
    assert res.kind == "csv" and res.items == {"rows": 2}
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    text = out.read_bytes().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == csv_columns("lpar", metric_ids(joint.formula_sets))
    m = joint.metrics(by="lpar")
    head = rows[0]
    for r, rec in zip(rows[1:], m.to_dict("records")):
        got = dict(zip(head, r))
        assert got["lpar"] == rec["lpar"] and got["cec"] == rec["cec"]
        for mid in ("CPI", "L1MP", "Est_Finite_CPI", "LPARCPU"):
            assert float(got[mid]) == pytest.approx(rec[mid], rel=1e-11)
        assert got["Eff_GHz"] == "5.2"                              # no 5.199999999999999
        assert got["RNI"] == ("" if rec["generation"] == "z16" else got["RNI"])


def test_comparison_csv(comparison, joint, tmp_path):
    out = tmp_path / "cmp.csv"
    export(ExportRequest(joint, comparison=comparison), str(out))
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["row"] for r in rows] == ["before", "after", "ratio", "delta"]
    t = comparison.table
    assert float(rows[2]["CPI"]) == pytest.approx(float(t.loc[t["row"] == "ratio", "CPI"].iloc[0]), rel=1e-11)
    assert rows[0]["label"] == "ZOSA (8561-45A12 z15)"


def test_rows_csv_neutralises_names():
    import pandas as pd

    f = pd.DataFrame({"lpar": ["=EVIL", "OK"], "CPI": [1.0 / 3.0, 2.0]})
    assert rows_csv(f, ["lpar", "CPI", "missing"]) == [["'=EVIL", "0.333333333333", ""], ["OK", "2", ""]]


def test_never_writes_over_an_input(tmp_path):
    import shutil

    from app.engine import Workspace
    from app.formats import read_file

    src = tmp_path / "smf.csv"                 # an input file that happens to have an export extension
    shutil.copy(SAMPLES / "before_z15_ZOSB_smf113.rdw.gz", src)
    data = src.read_bytes()
    ws = Workspace()
    ws.add(read_file(src))
    with pytest.raises(ExportError, match="input file"):
        export(ExportRequest(ws), str(src))
    link = tmp_path / "link.csv"               # the same file under another name
    os.link(src, link)
    with pytest.raises(ExportError, match="input file"):
        export(ExportRequest(ws), str(link))
    assert src.read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "smf.csv"]


def test_formats_and_images():
    assert format_of("a.CSV") == "csv" and format_of("b.xlsx") == "xlsx" and format_of("c.pptx") == "pptx"
    with pytest.raises(ExportError, match="window"):
        format_of("plot.png")
    with pytest.raises(ExportError, match="unknown export format"):
        format_of("x.docx")


def test_cancel_leaves_nothing_and_keeps_the_old_file(joint, tmp_path):
    out = tmp_path / "deck.csv"
    out.write_text("old content", encoding="utf-8")
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2          # cancel in the middle of the export

    with pytest.raises(ExportCancelled):
        export(ExportRequest(joint, by="interval"), str(out), cancel=cancel)
    assert out.read_text(encoding="utf-8") == "old content"
    assert os.listdir(tmp_path) == ["deck.csv"]          # no temporary file left behind


def test_missing_folder_is_an_error(joint, tmp_path):
    with pytest.raises(ExportError, match="does not exist"):
        export(ExportRequest(joint), str(tmp_path / "nope" / "x.csv"))


def test_same_rows_and_columns_as_report_csv(tmp_path, capsys):
    # z/VM sample: LPAR rows carry coverage and partition data, plus partition-only LPARs (report's enrich)
    from app.cli import main

    src = str(SAMPLES / "after_VMSYS1_monwrite.mondata.gz")
    out = tmp_path / "vm.csv"
    assert main(["report", src, "--by", "lpar", "--format", "csv"]) == 0
    rep = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert main(["export", src, "--by", "lpar", "--out", str(out)]) == 0
    exp = list(csv.reader(out.open(encoding="utf-8")))
    assert exp[0] == rep[0] and len(exp) == len(rep) > 2
    for a, b in zip(exp[1:], rep[1:]):
        for x, y in zip(a, b):
            try:
                assert float(x) == pytest.approx(float(y), rel=1e-11)     # same number, without float noise
            except ValueError:
                assert x == y


def test_unknown_level_is_an_error(joint, tmp_path):
    with pytest.raises(ExportError, match="level"):
        export(ExportRequest(joint, by="lpar_interval"), str(tmp_path / "x.csv"))


def test_export_table_csv_and_xlsx(tmp_path):
    import openpyxl
    import pandas as pd

    from app.export import export_table

    f = pd.DataFrame({"lpar": ["=X", "ZOSA"], "CPI": [5.199999999999999, 2.0],
                      "interval_end": pd.to_datetime(["2026-11-02 08:15", "2026-11-02 08:30"])})
    export_table(f, str(tmp_path / "t.csv"), headers=["LPAR", "CPI", "End"])
    assert (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines() == [
        "LPAR,CPI,End", "\"'=X\",5.2,2026-11-02T08:15:00Z", "ZOSA,2,2026-11-02T08:30:00Z"]   # neutralised, quoted
    export_table(f, str(tmp_path / "t.xlsx"))
    sh = openpyxl.load_workbook(tmp_path / "t.xlsx")["Table"]
    assert [c.value for c in sh[2]][:2] == ["=X", 5.199999999999999]       # text stays text in Excel
    assert sh.cell(row=2, column=1).data_type == "s"
    assert sh.cell(row=3, column=3).value == pd.Timestamp("2026-11-02 08:30").to_pydatetime()
    assert sh.freeze_panes == "A2"
    with pytest.raises(ExportError):
        export_table(f, str(tmp_path / "t.pptx"))


def test_export_and_compare_are_qt_free():
    import subprocess
    import sys

    code = ("import sys, app.export, app.export.csv, app.export.xlsx, app.export.pptx, app.engine.compare, "
            "app.engine.shift; print('PySide6' in sys.modules or 'pyqtgraph' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(SAMPLES.parents[1]))
    assert out.stdout.strip() == "False"
