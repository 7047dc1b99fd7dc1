"""The profile in the exports (issue 26): the XLSX Profile sheet and the PPTX profile slides, read back with
openpyxl / python-pptx, hold engine.views.profile's values; hours without intervals stay empty; the heat-map
pictures are PNGs; ``nestscope export --profile``."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli import main
from app.engine import Workspace
from app.engine.layout import format_value
from app.engine.views import profile
from app.export import ExportError, ExportRequest, export
from app.export.profile import DAYS, heat_grid, heat_png
from app.formats import read_file

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


@pytest.fixture(scope="module")
def ws():
    w = Workspace()
    w.add_all([read_file(A)])
    return w


def _rows(sh):
    return [list(r) for r in sh.iter_rows(values_only=True)]


def test_xlsx_profile_sheet_round_trips(ws, tmp_path):
    import openpyxl

    out = tmp_path / "p.xlsx"
    res = export(ExportRequest(ws, by="lpar", profile="hour"), str(out))
    want = profile(ws, by="hour", level="lpar")
    assert res.items["Profile"] == len(want) == 24
    sh = openpyxl.load_workbook(out)["Profile"]
    rows = _rows(sh)
    head = rows[2]
    assert head[:3] == ["Node", "Hour (UTC)", "CPI"]
    body = rows[3:3 + len(want)]
    for got, (_, exp) in zip(body, want.iterrows()):
        assert got[0] == "ZOSA" and got[1] == exp["hour"]
        assert got[2] == pytest.approx(exp["CPI"], rel=1e-12)
        assert got[head.index("LPARCPU")] == pytest.approx(exp["LPARCPU"], rel=1e-12)
    # the heat grid of CPI: Monday and Tuesday filled with the hour x weekday profile, Wednesday..Sunday empty
    hw = profile(ws, by="hour-weekday", level="lpar")
    start = next(i for i, r in enumerate(rows) if isinstance(r[0], str) and r[0].startswith("CPI of ZOSA"))
    assert rows[start + 1][:3] == ["Day", 0, 1]
    grid = rows[start + 2:start + 9]
    assert [g[0] for g in grid] == list(DAYS)
    for _, exp in hw.iterrows():
        assert grid[DAYS.index(exp["weekday"])][int(exp["hour"]) + 1] == pytest.approx(exp["CPI"], rel=1e-12)
    assert all(v is None for g in grid[2:] for v in g[1:25])       # empty, not 0
    assert sh.conditional_formatting                                 # the colour scale


def test_pptx_profile_slides(ws, tmp_path):
    from PIL import Image
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    out = tmp_path / "p.pptx"
    res = export(ExportRequest(ws, by="lpar", profile="weekday"), str(out))
    assert res.items["profile"] == 1 and res.items["profile_heat"] == 1
    slides = list(Presentation(str(out)).slides)
    tables = [s for s in slides if s.shapes.title.text.startswith("Profile by day of week")]
    assert len(tables) == 1
    tbl = next(sh for sh in tables[0].shapes if sh.has_table).table
    header = [tbl.cell(0, j).text for j in range(len(tbl.columns))]
    assert header[:3] == ["Node", "Day", "CPI"]
    want = profile(ws, by="weekday", level="lpar")
    assert len(tbl.rows) == 1 + len(want) == 3          # Monday and Tuesday
    for i, (_, exp) in enumerate(want.iterrows(), start=1):
        assert tbl.cell(i, 1).text == exp["weekday"]
        assert tbl.cell(i, 2).text == format_value(exp["CPI"], 2)
    heat = next(s for s in slides if "hour of day x day of week" in s.shapes.title.text)
    pics = [sh for sh in heat.shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert sorted(p.name for p in pics) == ["Heat map CPI", "Heat map L1MP", "Heat map LPARCPU"]  # z16: no RNI
    img = Image.open(io.BytesIO(pics[0].image.blob))
    assert img.format == "PNG" and img.size == (1200, 560)


def test_profile_is_not_a_csv(ws, tmp_path):
    with pytest.raises(ExportError, match="report --by hour"):
        export(ExportRequest(ws, profile="hour"), str(tmp_path / "p.csv"))
    with pytest.raises(ExportError, match="none of"):
        export(ExportRequest(ws, profile="month"), str(tmp_path / "p.xlsx"))
    assert not list(tmp_path.iterdir())


def test_cli_export_profile(tmp_path, capsys):
    out = tmp_path / "cli.xlsx"
    assert main(["export", A, "--out", str(out), "--profile", "hour-weekday", "--by", "class"]) == 0
    import openpyxl

    rows = _rows(openpyxl.load_workbook(out)["Profile"])
    assert rows[2][:3] == ["Node", "Day", "Hour (UTC)"]
    assert {r[0] for r in rows[3:99]} == {"ZOSA GCP", "ZOSA zIIP"}     # class level: 2 classes x 2 days x 24 h
    assert main(["export", A, "--out", str(tmp_path / "x.csv"), "--profile", "hour"]) == 2
    assert "--profile adds a sheet" in capsys.readouterr().err


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DAYS), st.integers(0, 23),
                          st.floats(0.01, 1e4, allow_nan=False)), max_size=40))
def test_heat_grid_places_every_row_and_leaves_the_rest_empty(cells):
    import pandas as pd

    frame = pd.DataFrame(cells, columns=["weekday", "hour", "CPI"]).drop_duplicates(["weekday", "hour"], keep="last")
    grid = heat_grid(frame, "CPI")
    assert grid.shape == (7, 24)
    assert int(np.isfinite(grid).sum()) == len(frame)
    for d, h, v in frame.itertuples(index=False):
        assert grid[DAYS.index(d), h] == v
    png = heat_png(grid, "CPI", 2, width=600, height=280)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
