"""``nestscope report --by smt-type|smt-core``: SMTMET-style multithreading reports."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests" / "engine")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from factory import T0  # noqa: E402

from app.commands import report  # noqa: E402
from app.engine import SMT_CORE_COLUMNS, SMT_TYPE_COLUMNS, Workspace  # noqa: E402
from app.formats.monwrite_records import MT_COLUMNS  # noqa: E402
from app.formats.schema import ReadResult, empty_samples  # noqa: E402

VMSAMPLE = ROOT / "resources" / "samples" / "after_VMSYS1_monwrite.mondata.gz"


def args(*a: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="nestscope")
    report.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["report", *a])


@pytest.fixture
def ibm_ws():
    # IBM's example as z/VM would report it: core busy 80 %, TD 1.25, CF 113 %, mCF 156 %
    # -> productivity 113/156 = 72.4 %, MT utilization 80 x 0.724 = 57.9 % (both derived)
    rows = []
    for i in (1, 2):
        for cpu in (0, 1):
            d = {c: float("nan") for c in MT_COLUMNS}
            d.update(time=T0 + pd.Timedelta(minutes=i), system="VMSYS1", cpu=cpu, core=0, core_busy_pct=80.0,
                     thread_density=1.25, capacity_factor=113.0, max_capacity_factor=156.0, lpar="VMPROD",
                     cec="3931-ABCDE")
            d["class"] = "IFL"
            rows.append(d)
    mt = pd.DataFrame(rows, columns=MT_COLUMNS).astype({"cpu": "int32", "core": "int32"})
    ws = Workspace()
    ws.add(ReadResult(file="ibm.mon", kind="monwrite", framing="monwrite", records={"D0R2": 4},
                      samples=empty_samples(), mt=mt))
    return ws


def test_table_rounding_and_mean(ibm_ws, capsys):
    assert report.run(args("x", "--by", "smt-type"), workspace=ibm_ws) == 0
    out = capsys.readouterr().out.splitlines()
    head = out[1].split()
    assert head == ["LPAR", "Interval", "end", "Type", "Seconds", "Cores", "Prod%", "CF%", "MaxCF%", "MTUtil%",
                    "ThrDens", "Source"]
    row = out[2].split()
    # productivity 72.4358974 -> 72.4, CF 113.0, mCF 156.0, MT util 57.948718 -> 57.9, TD 1.25
    assert row[-7:] == ["1", "72.4", "113.0", "156.0", "57.9", "1.25", "reported+derived"]
    mean = out[4].split()
    assert mean[:3] == ["VMPROD", "mean", "IFL"] and mean[3] == "120"


def test_core_table(ibm_ws, capsys):
    assert report.run(args("x", "--by", "smt-core"), workspace=ibm_ws) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[-6:] == ["Seconds", "Prod%", "MTUtil%", "ThrDens", "CoreBusy%", "Source"]
    assert out[2].split()[-6:] == ["60", "72.4", "57.9", "1.25", "80.0", "reported+derived"]


def test_json_full_precision(ibm_ws, capsys):
    assert report.run(args("x", "--by", "smt-type", "--format", "json"), workspace=ibm_ws) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["level"] == "smt-type"
    rows = doc["rows"]
    assert list(rows[0]) == SMT_TYPE_COLUMNS
    assert rows[0]["productivity"] == pytest.approx(113.0 / 156.0 * 100, rel=1e-12)
    assert rows[0]["interval_end"] == "2026-01-05T08:01:00Z"
    assert rows[-1]["mean"] is True and rows[-1]["interval_end"] is None


def test_no_smt_data_is_exit_0(capsys):
    ws = Workspace()
    assert report.run(args("x", "--by", "smt-core"), workspace=ws) == 0
    assert "no multithreading data" in capsys.readouterr().out


def test_nothing_readable_exit_3(tmp_path, capsys):
    p = tmp_path / "junk.bin"
    p.write_bytes(b"\x00" * 64)
    assert report.run(args(str(p), "--by", "smt-type")) == 3


def test_bad_by_is_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        args("x", "--by", "smt")
    assert e.value.code == 2


@pytest.mark.skipif(not VMSAMPLE.exists(), reason="bundled sample missing")
def test_bundled_sample_smt_type(capsys):
    assert report.run(args(str(VMSAMPLE), "--by", "smt-type")) == 0
    lines = capsys.readouterr().out.splitlines()
    body = [ln.split() for ln in lines[2:] if ln.startswith("VMPROD")]
    assert len(body) > 100 and all(r[3] == "IFL" for r in body if r[1] != "mean")
    means = [r for r in body if r[1] == "mean"]
    assert len(means) == 1 and means[0][2] == "IFL"


@pytest.mark.skipif(not VMSAMPLE.exists(), reason="bundled sample missing")
def test_bundled_sample_smt_core_csv(capsys):
    assert report.run(args(str(VMSAMPLE), "--by", "smt-core", "--format", "csv",
                            "--to", "2026-11-02T00:10Z")) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == SMT_CORE_COLUMNS
    data = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert len(data) == 20                              # 2 IFL cores x 10 one-minute intervals
    assert {d["core_id"] for d in data} == {"0", "1"}
    assert all(d["core_type"] == "IFL" and d["source"] == "reported" for d in data)
    assert all(1.0 <= float(d["thread_density"]) <= 2.0 and d["productivity"] for d in data)
