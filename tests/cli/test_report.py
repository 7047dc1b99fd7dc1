"""``nestscope report``: formats, exit codes, formula files; end to end when the SMF writer exists."""

from __future__ import annotations

import argparse
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

from factory import MIN15, T0, frame, result  # noqa: E402

from app.commands import report  # noqa: E402
from app.engine import Workspace  # noqa: E402
from app.engine.catalog import METRIC_IDS  # noqa: E402


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nestscope")
    sub = p.add_subparsers(dest="command")
    report.add_parser(sub)
    return p


def args(*a: str) -> argparse.Namespace:
    return parser().parse_args(["report", *a])


def z13_records():
    # two CPUs, two intervals; CPSP 5000, B0 = 2.25e12 = 50 % of one engine per CPU and interval
    recs = []
    for i in (1, 2):
        for cpu in (0, 1):
            recs.append(dict(time=T0 + MIN15 * i, cpu=cpu, cpu_speed=5000, B0=2_250_000_000_000,
                             B1=900_000_000_000, B2=9_000_000_000, B4=27_000_000_000, P33=540_000_000_000,
                             E133=18_000_000_000, E144=18_000_000_000, E143=450_000_000_000))
    return recs


@pytest.fixture
def ws():
    w = Workspace()
    w.add(result(z13_records(), gen="z13"))
    return w


def test_csv_lpar(ws, capsys):
    assert report.run(args("x.smf", "--by", "lpar", "--format", "csv"), workspace=ws) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    head = rows[0]
    assert head[:5] == ["cec", "lpar", "system", "interval_start", "interval_end"]
    assert head[5:5 + len(METRIC_IDS)] == list(METRIC_IDS)
    assert head[5 + len(METRIC_IDS)] == "Workload_Hint"
    assert "formula_set" in head
    r = dict(zip(head, rows[1]))
    assert r["interval_start"] == "2026-01-05T08:00:00Z" and r["interval_end"] == "2026-01-05T08:30:00Z"
    assert float(r["CPI"]) == 2.5 and float(r["LPARCPU"]) == 100.0     # 2 CPUs x 50 %
    # L2P = L3P = 50 % ; RNI = 2.6*(0.4*50)/100 = 0.52 ; L1MP 4 -> LOW
    assert float(r["RNI"]) == pytest.approx(0.52) and r["Workload_Hint"] == "LOW"
    assert r["L15P"] == ""                                                # does not apply to z13: empty cell
    assert r["formula_set"].startswith("z13 / ")


def test_csv_cpu_level_full_precision(ws, capsys):
    report.run(args("x.smf", "--by", "cpu", "--format", "csv"), workspace=ws)
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 and [r["cpu"] for r in rows] == ["0", "0", "1", "1"]
    assert rows[0]["Workload_Hint"] == ""
    assert rows[0]["MIPS_per_CPU"] == "2000.0"


def test_json(ws, capsys):
    assert report.run(args("x.smf", "--by", "interval", "--format", "json",
                           "--from", "2026-01-05T08:15Z"), workspace=ws) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"meta", "rows", "findings"}
    meta = doc["meta"]
    assert meta["level"] == "interval" and meta["formula_sets"]["z13"].startswith("z13 / ")
    assert meta["statuses"]["z13"]["RNI"] == "confirmed" and meta["window"]["from"] == "2026-01-05T08:15:00Z"
    assert len(doc["rows"]) == 1 and doc["rows"][0]["L15P"] is None


def test_table_names_presentation_headers_at_every_level(ws, capsys):
    heads = {}
    for by in ("cpu", "interval", "class", "lpar"):
        report.run(args("x.smf", "--by", by), workspace=ws)
        out = capsys.readouterr().out
        assert any(line.startswith("Formula set z13 / ") for line in out.splitlines())
        top, bottom = [ln for ln in out.splitlines() if "CPI" in ln.split() or "Rel Nest" in ln][:2]
        # the presentation's names (layout.py headers) on two lines, never abbreviations
        assert "Rel Nest" in top and "Intensity" in bottom and "Prb" in top and "State" in bottom
        assert "Est Instr" in top and "Cmplx CPI" in bottom and "PrbSt" not in out and "ICmplx" not in out
        heads[by] = [w for w in bottom.split() if w not in ("LPAR", "Class", "CPU", "Interval", "end", "#CPU")]
        assert "2.50" in out
    # the same metric columns at every level (nothing dropped to fit a width)
    assert heads["cpu"] == heads["interval"] == heads["class"] == heads["lpar"]


def test_bad_time_is_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        args("x.smf", "--from", "yesterday-ish")
    assert e.value.code == 2


def test_from_after_to_is_usage_error(ws, capsys):
    assert report.run(args("x.smf", "--from", "2026-01-06", "--to", "2026-01-05"), workspace=ws) == 2


def test_bad_formulas_file_names_line(tmp_path, capsys):
    f = tmp_path / "f.json"
    f.write_text('{\n "z16": {\n  "metrics": {"RNI": {"expr": "L3P +* 2"}}\n }\n}\n')
    assert report.run(args(str(tmp_path / "none.smf"), "--formulas", str(f))) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "RNI" in err


def test_nothing_readable_exit_3(tmp_path, capsys):
    p = tmp_path / "junk.smf"
    p.write_bytes(b"%PDF-1.4 not smf at all")
    assert report.run(args(str(p))) == 3
    assert "nothing readable" in capsys.readouterr().err


def test_out_file(ws, tmp_path):
    out = tmp_path / "r.csv"
    assert report.run(args("x.smf", "--format", "csv", "--out", str(out)), workspace=ws) == 0
    assert out.read_text().startswith("cec,lpar,system,")


def test_end_to_end_smf_file(tmp_path, capsys):
    w = pytest.importorskip("app.formats.smf113_writer")
    recs = []
    for i in range(3):     # running totals (subtype 2): baseline + two intervals
        for cpu in (0, 1):
            recs.append(dict(kind="absolute", first=(i == 0), time=T0 + MIN15 * (i + 1), cpu=cpu, cpu_speed=5000,
                             B0=2_250_000_000_000 * (i + 1), B1=900_000_000_000 * (i + 1),
                             B2=9_000_000_000 * (i + 1), B4=27_000_000_000 * (i + 1),
                             P33=540_000_000_000 * (i + 1), E133=36_000_000_000 * (i + 1)))
    path = tmp_path / "e2e.smf"
    w.write_smf_file(path, w.encode_samples(frame(recs, gen="z13"), 2))
    assert report.run(args(str(path), "--by", "lpar", "--format", "csv")) == 0
    r = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert float(r["CPI"]) == pytest.approx(2.5) and float(r["LPARCPU"]) == pytest.approx(100.0)
    assert float(r["L2P"]) == pytest.approx(100.0) and float(r["RNI"]) == pytest.approx(0.0)
    assert report.run(args(str(path), "--format", "json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["files"][0]["file"] == str(path)


def test_table_splits_generations_with_different_columns(tmp_path, capsys):
    # z10 presentations show L15P/L2LP/L2RP, z196 and later L2P..L4RP: one table each, every row under its own columns
    pytest.importorskip("app.formats.smf113_writer")
    import datetime as dt

    from app.formats import smf113_writer as W
    from app.sample.build import zos_lpars
    from app.sample.model import CecModel, make_samples

    paths = []
    for gen, seq in (("z10", "0000000000010AAA"), ("z16", "0000000000030CCC")):
        s, _ = make_samples(CecModel(gen, seq, zos_lpars()[:1]), dt.datetime(2026, 1, 5), 4, 900.0)
        paths.append(str(W.write_smf_file(tmp_path / f"{gen}.smf", W.encode_samples(s, 1))))
    from app.cli import main

    assert main(["report", *paths, "--by", "class"]) == 0
    out = capsys.readouterr().out
    z10_part, z16_part = out.split("\n\n")
    assert "L15P" in z10_part and "L2P " not in z10_part and "2097-10AAA" in z10_part
    assert "L4RP" in z16_part and "L15P" not in z16_part and "3931-30CCC" in z16_part
    # every metric cell is filled, except the z16 RNI that no confirmed formula gives and the hint that needs it
    # (both "n/a", written the same way as everywhere)
    z10_rows = [ln.split() for ln in z10_part.splitlines() if ln.startswith("2097")]
    z16_rows = [ln.split() for ln in z16_part.splitlines() if ln.startswith("3931")]
    assert len(z10_rows) == len(z16_rows) == 2
    assert all(r.count("n/a") == 0 for r in z10_rows)
    assert all(r.count("n/a") == 2 for r in z16_rows)
