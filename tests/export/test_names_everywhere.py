"""Names from the data reach every output safely (issue 20): system ids, LPAR and partition names, models and
serials of arbitrary bytes, written into real SMF 113 / MONWRITE files with the project's writers, read back
and sent through info (text, JSON), report (table, CSV, JSON) and the CSV/XLSX/PPTX exports (the PPTX charts'
embedded workbooks too); query, compare and the PNG/SVG pictures: tests/cli/test_names_cli.py.

The rule (app/textsafe.py): control characters shown escaped, CSV cells that start like a formula
neutralised and quoted, names stored as text (never formulas) in every workbook.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for names_builders

from names_builders import (NASTY, csv_safely, deck_safely, ebcdic_name, json_safely, shown_safely,  # noqa: E402
                            smf_file, workbook_safely, zvm_file)

from app.commands import info, report  # noqa: E402
from app.engine import Workspace  # noqa: E402
from app.export import ExportRequest, export  # noqa: E402
from app.formats import read_file  # noqa: E402
from app.textsafe import FORMULA_START, csv_text, display_text  # noqa: E402


def info_args(*a):
    p = argparse.ArgumentParser()
    info.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["info", *a])


def report_args(*a):
    p = argparse.ArgumentParser()
    report.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["report", *a])


def every_output(folder: Path, files: list[Path], names: list[str], capsys) -> None:
    """Send ``files`` through every writer; each of ``names`` must come out shown by display_text."""
    shown = [display_text(n) for n in names]
    for fmt in ("text", "json"):
        assert info.run(info_args(*map(str, files), "--format", fmt)) == 0
        out = capsys.readouterr().out
        if fmt == "text":
            shown_safely(out)
            for s in shown:
                assert s in out
        else:
            doc = json_safely(out)
            got = {x for d in doc for x in d["systems"]}
            got |= {p["lpar"] for d in doc for p in d.get("partition_lpars", [])}
            assert set(names) <= got | {m["cec"] for d in doc for m in d["machines"]}   # the exact names, in JSON
    ws = Workspace()
    ws.add_all([read_file(str(f)) for f in files])
    assert report.run(report_args("x", "--by", "lpar", "--format", "json"), workspace=ws) == 0
    n_rows = len(json_safely(capsys.readouterr().out)["rows"])
    assert report.run(report_args("x", "--by", "lpar", "--format", "table"), workspace=ws) == 0
    table = capsys.readouterr().out
    shown_safely(table)
    assert report.run(report_args("x", "--by", "lpar", "--format", "csv"), workspace=ws) == 0
    rows = csv_safely(capsys.readouterr().out, n_rows)
    lpars = {r[rows[0].index("lpar")] for r in rows[1:]}
    for n in names:
        if n in set(ws.intervals["lpar"].astype(str)):
            assert csv_text(n) in lpars                        # escaped, and neutralised where it must be
    export(ExportRequest(ws, by="lpar"), str(folder / "x.csv"))
    csv_safely((folder / "x.csv").read_text(encoding="utf-8"), n_rows)
    export(ExportRequest(ws, by="lpar"), str(folder / "x.xlsx"))
    texts, series = workbook_safely(folder / "x.xlsx")
    export(ExportRequest(ws, by="lpar"), str(folder / "x.pptx"))
    deck = deck_safely(folder / "x.pptx")
    for n in set(ws.intervals["lpar"].astype(str)):
        assert any(display_text(n) in t for t in texts)          # the LPAR sheet's name column, as text
        assert any(t.startswith(display_text(n)) for t in series)  # the timeline charts' series
        assert display_text(n) in deck


SLOW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SLOW
@given(system=ebcdic_name(4), serial=ebcdic_name(16), model=ebcdic_name(16))
def test_smf_names_of_arbitrary_bytes_through_every_output(tmp_path_factory, capsys, system, serial, model):
    folder = tmp_path_factory.mktemp("smf")
    f = smf_file(folder, system, serial, model)
    every_output(folder, [f], [system], capsys)


@SLOW
@given(system=ebcdic_name(8), lpar=ebcdic_name(8), other=ebcdic_name(8))
def test_zvm_partition_names_of_arbitrary_bytes_through_every_output(tmp_path_factory, capsys, system, lpar, other):
    folder = tmp_path_factory.mktemp("vm")
    f = zvm_file(folder, system, lpar, other)
    every_output(folder, [f], [lpar], capsys)
    assert report.run(report_args(str(f), "--by", "lpar", "--format", "table")) == 0
    table = capsys.readouterr().out
    shown_safely(table)
    assert display_text(other) in table                    # the partition known only from partition data


def test_the_issues_names(tmp_path, capsys):
    # each as a z/OS system id (4 bytes: one LPAR each, all in one file) and, the longer ones whole, as z/VM
    # LPAR and partition names (8 bytes)
    sids = [n[:4] for n in NASTY]
    f = smf_file(tmp_path, sids, "00000000000123F5", "A01")
    every_output(tmp_path, [f], sids, capsys)
    assert report.run(report_args(str(f), "--by", "lpar", "--format", "csv")) == 0
    out = capsys.readouterr().out
    for sid in sids:
        if sid.startswith(FORMULA_START):
            # neutralised AND quoted: the cell is "'=1+2" in the file, '=1+2 in a spreadsheet
            assert re.search(r'(^|,)"\'' + re.escape(display_text(sid)) + '"(,|$)', out, re.M), sid
    long = [n for n in NASTY if len(n) > 4]
    vm = tmp_path / "vm"
    vm.mkdir()
    f = zvm_file(vm, "VMSYS1", long[0], long[1:] + ["=1+2", "\x1b[2J"])
    every_output(vm, [f], [long[0]], capsys)
    assert report.run(report_args(str(f), "--by", "lpar", "--format", "table")) == 0
    table = capsys.readouterr().out
    shown_safely(table)
    for name in long[1:] + ["=1+2", "\x1b[2J"]:
        assert display_text(name) in table                   # partitions known only from partition data
    assert report.run(report_args(str(f), "--by", "lpar", "--format", "csv")) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert {"'=1+2", "\\x1b[2J", "A\\r=1+"} <= {r[1] for r in rows[1:]}
