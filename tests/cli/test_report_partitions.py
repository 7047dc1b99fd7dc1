"""`report --by lpar` lists every partition of the z/VM sample (issue 9)."""

from __future__ import annotations

import csv
import io
from contextlib import redirect_stdout
from pathlib import Path

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
VM = str(ROOT / "resources/samples/after_VMSYS1_monwrite.mondata.gz")


def _run(*args: str) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["report", *args]) == 0
    return buf.getvalue()


def test_partition_only_lpars_with_cpu_counts():
    rows = {r["lpar"]: r for r in csv.DictReader(io.StringIO(_run(VM, "--by", "lpar", "--format", "csv")))}
    # the sample's D0R16 (app/sample/build.py): CF01 2 ICF, ZOSD 2 CP capped, ZOSA 8 CP + 4 zIIP
    assert set(rows) == {"VMPROD", "CF01", "ZOSA", "ZOSB", "ZOSC", "ZOSD"}
    assert rows["VMPROD"]["data"] == "counters" and rows["VMPROD"]["CPI"] != ""
    for name in ("CF01", "ZOSD", "ZOSA"):     # only VMPROD sends counters in this file
        assert rows[name]["data"] == "partition data only" and rows[name]["CPI"] == ""
    assert rows["CF01"]["partition_cpus"] == "2" and rows["CF01"]["processors"] == "ICF 2"
    assert rows["ZOSD"]["capped"] == "true" and rows["ZOSD"]["weights"] == "CP 100"
    assert rows["ZOSA"]["partition_cpus"] == "12" and rows["ZOSA"]["processors"] == "CP 8, zIIP 4"
    busy_sum, per_cpu = float(rows["ZOSA"]["partition_busy_sum_pct"]), float(rows["ZOSA"]["partition_busy_per_cpu_pct"])
    assert abs(busy_sum / 12 - per_cpu) < 1e-9      # 12 CPUs in every interval: the sum is 12x the per-CPU average
    text = _run(VM, "--by", "lpar")
    assert "CF01   partition data only" in text and "Busy%sum = % of one CPU summed over the LPAR's CPUs" in text


def test_cec_row_says_its_coverage_differs():
    files = [str(p) for p in sorted((ROOT / "resources/samples").glob("after_*.gz"))]
    rows = list(csv.DictReader(io.StringIO(_run(*files, "--by", "cec", "--format", "csv"))))
    assert len(rows) == 1
    # z/OS LPARs cover 2 days, VMPROD 1 day: (3 * 1 + 0.5) / 4 = 87.5 %
    assert float(rows[0]["coverage_pct"]) == 87.5 and "LPAR VMPROD" in rows[0]["coverage_note"]
    assert "coverage 88%" in _run(*files, "--by", "cec")
