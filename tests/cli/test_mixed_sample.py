"""The bundled sample: SMF 113 of z/OS LPARs and MONWRITE of a z/VM LPAR of one z16 under one CEC."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app.cli import main
from app.engine import Workspace
from app.formats import read_file

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
AFTER = sorted(SAMPLES.glob("after_*"))


def test_report_by_lpar_shows_zos_and_zvm_under_one_cec(capsys):
    assert main(["report", *map(str, AFTER), "--by", "lpar", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by_lpar = {r["lpar"]: r for r in rows}
    # every partition of the machine: four with counters, CF01 and ZOSD known only from D0R16
    assert set(by_lpar) == {"ZOSA", "ZOSB", "ZOSC", "VMPROD", "CF01", "ZOSD"}
    assert {k for k, r in by_lpar.items() if r["data"] == "counters"} == {"ZOSA", "ZOSB", "ZOSC", "VMPROD"}
    assert {r["cec"] for r in rows} == {"3931-123F5"}        # D1R4 sequence code and SMF113 MachSeqCode agree
    assert by_lpar["VMPROD"]["system"] == "VMSYS1" and by_lpar["ZOSA"]["system"] == "ZOSA"
    # the z/VM LPAR: 2 IFL cores x SMT-2 = 4 logical CPUs, modelled at 60% peak busy per thread with a
    # night factor of 0.4: its whole-day LPARCPU must lie between 4*60*0.4 = 96 and 4*60 = 240 (% of one engine)
    assert 96 <= float(by_lpar["VMPROD"]["LPARCPU"]) <= 240
    assert float(by_lpar["VMPROD"]["CPI"]) == pytest.approx(2.2, rel=0.02)   # model CPI 2.2


def test_tree_merges_kinds_and_adds_partition_only_lpars():
    ws = Workspace()
    ws.add_all([read_file(p) for p in AFTER])
    (cec,) = [n for n in ws.tree() if n.key == ("cec", "3931-123F5")]
    lpars = {n.label.split()[0]: n for n in cec.children}
    assert {"ZOSA", "ZOSB", "ZOSC", "VMPROD", "CF01", "ZOSD"} <= set(lpars)
    assert lpars["VMPROD"].info["os"] == "z/VM" and lpars["ZOSA"].info["os"] == "z/OS"
    assert lpars["CF01"].info["partition_only"] and lpars["ZOSD"].info["partition_only"]
    assert not lpars["ZOSA"].info["partition_only"]
    assert [c.label.split()[0] for c in lpars["VMPROD"].children] == ["IFL"]


def test_info_on_every_sample_file(capsys):
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file())
    assert main(["info", *map(str, files), "--format", "json"]) == 0
    import json

    out = {d["file"]: d for d in json.loads(capsys.readouterr().out)}
    assert len(out) == len(files)
    for f in files:
        d = out[str(f)]
        if f.parent.name == "broken":
            assert d["findings"], f"{f.name} must explain what is wrong"
            assert all("offset" in x and x["message"].startswith(str(f)) for x in d["findings"])
        else:
            assert not [x for x in d["findings"] if x["severity"] == "error"], f.name
