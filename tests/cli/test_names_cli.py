"""Names from the data through ``nestscope extract``/``query`` and ``compare`` (CSV, table, JSON) and the
PNG/SVG pictures of ``nestscope export`` (issue 20): nothing from the data acts on a terminal or a spreadsheet,
and a picture of names holding control characters is still written (the SVG stays well-formed XML)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for names_builders

from names_builders import NASTY, csv_safely, json_safely, shown_safely, smf_file  # noqa: E402

from app.cli import main  # noqa: E402
from app.textsafe import FORMULA_START, display_text  # noqa: E402

SIDS = [n[:4] for n in NASTY]        # z/OS system ids are 4 bytes: one LPAR each, all in one file
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def nasty(tmp_path_factory):
    return smf_file(tmp_path_factory.mktemp("names"), SIDS, "00000000000123F5", "A01")


def test_query_csv_table_json(nasty, tmp_path, capsys):
    ds = tmp_path / "ds"
    assert main(["extract", str(nasty), "--to", str(ds), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", str(ds), "--by", "lpar", "--format", "json"]) == 0
    doc = json_safely(capsys.readouterr().out)
    assert sorted(r["lpar"] for r in doc["rows"]) == sorted(SIDS)          # the exact names, in JSON
    assert main(["query", str(ds), "--by", "lpar", "--format", "csv"]) == 0
    rows = csv_safely(capsys.readouterr().out, len(SIDS))
    col = rows[0].index("lpar")
    # every name shown escaped; the ones that start like a formula neutralised ('=1+2), none left raw
    expect = {("'" if s.startswith(FORMULA_START) else "") + display_text(s) for s in SIDS}
    assert {r[col] for r in rows[1:]} == expect
    assert main(["query", str(ds), "--by", "lpar"]) == 0
    table = capsys.readouterr().out
    shown_safely(table)
    assert all(display_text(s) in table for s in SIDS)


@pytest.mark.parametrize("ext", ["svg", "png"])
def test_pictures_of_names_with_control_characters(qapp, nasty, tmp_path, monkeypatch, capsys, ext):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "settings.ini"))
    out = tmp_path / f"names.{ext}"
    assert main(["export", str(nasty), "--out", str(out), "--size", "1000x700"]) == 0
    shown_safely(capsys.readouterr().err)       # the "wrote ..." line names the LPARs
    assert out.stat().st_size > 1000
    if ext == "svg":
        root = ET.parse(out).getroot()           # well-formed: no control character in the XML
        assert root.tag == f"{SVG}svg"


@pytest.mark.parametrize("name", ["&lt;", "<b>X", "\x1b[2J"])
def test_picture_legend_shows_the_name_as_written(qapp, nasty, tmp_path, monkeypatch, name):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "settings.ini"))
    out = tmp_path / "one.svg"
    assert main(["export", str(nasty), "--lpar", name, "--out", str(out), "--size", "900x600"]) == 0
    texts = ["".join(e.itertext()) for e in ET.parse(out).getroot().iter(f"{SVG}text")]
    # the node's swatch label: the name as it is (escaped control characters), not read as markup
    assert any(t.strip("\xa0 ") == display_text(name) for t in texts), texts


def test_compare_table_csv_json(nasty, capsys):
    # the same file on both sides: one pair per LPAR, each labelled with its name
    assert main(["compare", "--before", str(nasty), "--after", str(nasty), "--format", "table"]) == 0
    table = capsys.readouterr().out
    shown_safely(table)
    assert all(display_text(s) in table for s in SIDS)
    assert main(["compare", "--before", str(nasty), "--after", str(nasty), "--format", "json"]) == 0
    json_safely(capsys.readouterr().out)
    assert main(["compare", "--before", str(nasty), "--after", str(nasty), "--format", "csv"]) == 0
    rows = csv_safely(capsys.readouterr().out, 4 * len(SIDS))          # before, after, ratio, delta per pair
    col = rows[0].index("lpar")
    assert {r[col] for r in rows[1:] if r[col]} <= {("'" if s.startswith(FORMULA_START) else "") + display_text(s)
                                                    for s in SIDS}
