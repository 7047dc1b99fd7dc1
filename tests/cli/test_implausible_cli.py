"""Implausible CPU-intervals through the commands (issue 20): ``report``, ``compare``, ``export`` and ``info`` say how
many were left out and why; ``--keep-implausible`` keeps them.  The damaged file is made by the project's writer
with one flipped counter byte (tests/engine/damaged.py)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests" / "engine")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from damaged import samples, write  # noqa: E402

from app.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("implausible")
    s = samples(intervals=4)
    clean, _ = write(d, s)
    bad, _ = write(d, s, (5, "E149"))
    return clean, bad


def _lpar_csv(capsys, *argv: str) -> dict:
    assert main(["report", *argv, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1
    return rows[0]


def test_report_leaves_out_and_keeps(files, capsys):
    clean, bad = files
    c = _lpar_csv(capsys, clean)
    left = _lpar_csv(capsys, bad)
    kept = _lpar_csv(capsys, bad, "--keep-implausible")
    assert c["left_out"] == "0" and left["left_out"] == "1" and kept["left_out"] == "0"
    assert "implausible" in left["quality"] and "left-out" in left["quality"]
    assert "left-out" not in kept["quality"] and "implausible" in kept["quality"]
    # left out: within 1 % of the clean L3P (1 of 12 CPU-intervals gone); kept: the damaged counter is back in
    assert float(left["L3P"]) == pytest.approx(float(c["L3P"]), rel=0.01)
    assert float(kept["L3P"]) > float(c["L3P"]) + 1
    assert main(["report", bad]) == 0
    out = capsys.readouterr().out
    assert "left out: 1 CPU-interval(s)" in out and "--keep-implausible" in out
    assert main(["report", bad, "--keep-implausible"]) == 0
    assert "kept: 1 implausible CPU-interval(s)" in capsys.readouterr().out
    assert main(["report", clean]) == 0
    out = capsys.readouterr().out
    assert "left out" not in out and "implausible" not in out


def test_report_json_and_info_name_the_record(files, capsys):
    _, bad = files
    assert main(["report", bad, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["left_out"] == 1 and doc["meta"]["keep_implausible"] is False
    f = [x for x in doc["findings"] if x["code"] == "implausible"]
    assert len(f) == 1 and f[0]["file"] == bad and f[0]["offset"] > 0
    assert f[0]["key"]["value"] > f[0]["key"]["bound"]
    assert main(["info", bad]) == 0
    out = capsys.readouterr().out
    assert f"offset {f[0]['offset']}" in out and "breaks the physical bound" in out


def test_compare_and_export(files, capsys, tmp_path):
    clean, bad = files
    assert main(["compare", "--before", clean, "--after", bad]) == 0
    assert "after: left out: 1 CPU-interval(s)" in capsys.readouterr().out
    assert main(["compare", "--before", clean, "--after", bad, "--keep-implausible"]) == 0
    assert "after: kept: 1 implausible" in capsys.readouterr().out
    out = tmp_path / "t.csv"
    assert main(["export", bad, "--out", str(out)]) == 0
    assert "left out: 1 CPU-interval(s)" in capsys.readouterr().err
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["left_out"] for r in rows] == ["1"]
    book = tmp_path / "b.xlsx"
    assert main(["export", bad, "--out", str(book), "--keep-implausible"]) == 0
    from openpyxl import load_workbook

    about = load_workbook(book)["About"]
    text = "\n".join(str(c.value) for row in about.iter_rows() for c in row if c.value is not None)
    assert "Implausible CPU-intervals" in text and "1, kept in the sums (--keep-implausible)" in text
    assert main(["export", bad, "--out", str(book)]) == 0
    about = load_workbook(book)["About"]
    text = "\n".join(str(c.value) for row in about.iter_rows() for c in row if c.value is not None)
    assert "1, 1 left out of every sum" in text
