"""``nestscope export``: formats from the extension, comparison options, exit codes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from app.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


def test_csv_with_shift_and_window(tmp_path, capsys):
    out = tmp_path / "x.csv"
    code = main(["export", A, "--out", str(out), "--by", "interval", "--hours", "08-17",
                 "--from", "2026-11-02T00:00Z", "--to", "2026-11-03T00:00Z"])
    assert code == 0 and "wrote" in capsys.readouterr().err
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    # 08:00-17:00 of one day: 36 quarter hours x 2 classes (GCP, zIIP)
    assert len(rows) == 72
    assert {r["interval_end"][11:16] for r in rows} >= {"08:15", "17:00"}
    assert all("08:15" <= r["interval_end"][11:16] <= "17:00" for r in rows)


def test_pptx_with_comparison(tmp_path, capsys):
    from pptx import Presentation

    out = tmp_path / "deck.pptx"
    code = main(["export", "--before", B, "--after", A, "--out", str(out), "--title", "Migration"])
    assert code == 0
    prs = Presentation(str(out))
    titles = [s.shapes[0].text_frame.text for s in prs.slides]
    assert titles[0] == "Migration" and "Before and after per LPAR" in titles
    assert any(t.startswith("CPI change ZOSA") for t in titles)


@pytest.mark.parametrize("argv, text", [
    (["--out", "x.png", A, "--size", "huge"], "--size"),      # pictures: tests/cli/test_export_picture.py
    (["--out", "x.csv", A, "--metric", "CPI"], "pictures"),
    (["--out", "x.docx", A], "unknown export format"),
    (["--out", "x.csv"], "FILE"),
    (["--out", "x.csv", "--before", B], "both"),
    (["--out", "x.csv", A, "--hours", "25-26"], "hours"),
    (["--out", "x.csv", A, "--lpar", "NOPE"], "NOPE"),
])
def test_usage_errors(argv, text, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["export", *argv]) == 2
    assert text in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_overwrite_an_input(tmp_path, capsys):
    import shutil

    src = tmp_path / "data.xlsx"            # SMF data under an export name
    shutil.copy(B, src)
    data = src.read_bytes()
    assert main(["export", str(src), "--out", str(src)]) == 2
    assert "input file" in capsys.readouterr().err
    assert src.read_bytes() == data


def test_nothing_readable(tmp_path, capsys):
    assert main(["export", str(SAMPLES / "broken" / "empty.smf"), "--out", str(tmp_path / "x.csv")]) == 3
    assert not (tmp_path / "x.csv").exists()
