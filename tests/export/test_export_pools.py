"""CEC pools in the exports (issue 26): CSV rows (``--by pool``), the XLSX Pools sheet and the deck's summary, read
back and checked against the hand sums of the built file of tests/engine/test_node_rows.py."""

from __future__ import annotations

import csv

import pytest

from app.engine import Workspace
from app.export import ExportRequest, export
from app.formats import read_file
from app.formats.smf113_writer import encode_samples, write_smf_file
from tests.engine.test_node_rows import built_samples

# hand sums (tests/engine/test_node_rows.py): GCP pool B0 30000 / B1 10500, zIIP pool B0 9000 / B1 4200
GCP_CPI, ZIIP_CPI = 30000 / 10500, 9000 / 4200


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    path = tmp_path_factory.mktemp("pools_in") / "pools.smf"
    write_smf_file(path, encode_samples(built_samples(), 1), framing="rdw")
    w = Workspace(cache=False)
    w.add(read_file(path))
    return w


def test_csv_pool_rows(ws, tmp_path):
    out = tmp_path / "pools.csv"
    res = export(ExportRequest(ws, by="pool"), str(out))
    assert res.items == {"rows": 2}
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_type = {r["class"]: r for r in rows}
    assert set(by_type) == {"GCP", "zIIP"}
    assert float(by_type["GCP"]["CPI"]) == pytest.approx(GCP_CPI, rel=1e-11)     # 12 significant digits
    assert float(by_type["zIIP"]["CPI"]) == pytest.approx(ZIIP_CPI, rel=1e-11)
    assert by_type["GCP"]["lpar"] == "(pool)" and by_type["GCP"]["n_cpus"] == "3"
    assert by_type["GCP"]["n_lpars"] == "2"


def test_xlsx_pools_sheet(ws, tmp_path):
    import openpyxl

    out = tmp_path / "pools.xlsx"
    res = export(ExportRequest(ws), str(out))
    assert res.items["Pools"] == 2
    sh = openpyxl.load_workbook(out)["Pools"]
    head = {c.value: i for i, c in enumerate(sh[1]) if c.value}
    rows = {r[head["Class"]]: r for r in sh.iter_rows(min_row=2, values_only=True)}
    assert rows["GCP"][head["Name"]] == "GCP pool"
    assert rows["GCP"][head["CPI"]] == pytest.approx(GCP_CPI, rel=1e-12)
    assert rows["zIIP"][head["CPI"]] == pytest.approx(ZIIP_CPI, rel=1e-12)
    assert rows["zIIP"][head["LPARs"]] == 2 and rows["zIIP"][head["CPUs"]] == 3


def test_deck_summary_lists_pools_after_the_lpars(ws, tmp_path):
    from pptx import Presentation

    out = tmp_path / "pools.pptx"
    export(ExportRequest(ws, by="lpar"), str(out))
    tables = [sh.table for s in Presentation(str(out)).slides for sh in s.shapes
              if sh.has_table and s.shapes.title is not None and s.shapes.title.text.startswith("Summary per LPAR")]
    assert tables
    names = [r.cells[0].text for t in tables for r in list(t.rows)[1:]]
    assert names == ["SYSA", "SYSB", "GCP pool", "zIIP pool"]
    head = [c.text for c in tables[0].rows[0].cells]
    cpi = head.index("CPI")
    row = next(r for r in list(tables[0].rows)[1:] if r.cells[0].text == "GCP pool")
    assert row.cells[cpi].text == f"{GCP_CPI:.2f}"            # 2.86


def test_deck_of_one_lpar_per_cec_computes_no_pools(ws, tmp_path, monkeypatch):
    """A pool of one LPAR would repeat that LPAR's class, so a deck whose selection holds one LPAR of the CEC has no
    pool rows, and the pools are not computed at all."""
    from pptx import Presentation

    from app.engine import views

    def no_pools(*a, **k):
        raise AssertionError("pools computed for a selection of one LPAR")

    monkeypatch.setattr(views, "pools", no_pools)
    cec = str(ws.metrics(by="lpar")["cec"].iloc[0])
    out = tmp_path / "one.pptx"
    export(ExportRequest(ws, by="lpar", nodes=(("lpar", cec, "SYSA"),)), str(out))
    tables = [sh.table for s in Presentation(str(out)).slides for sh in s.shapes
              if sh.has_table and s.shapes.title is not None and s.shapes.title.text.startswith("Summary per LPAR")]
    assert [r.cells[0].text for t in tables for r in list(t.rows)[1:]] == ["SYSA"]
