"""``nestscope compare``: table, csv and json output on the z15/z16 samples; exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from app.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")
EMPTY = str(SAMPLES / "broken" / "empty.smf")


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:          # argparse usage errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_table(capsys):
    code, out, _ = run(capsys, "compare", "--before", B, "--after", A)
    assert code == 0
    assert "before ZOSA (8561-45A12 z15)" in out and "after  ZOSA (3931-123F5 z16)" in out
    assert "ratio before/after" in out and "delta after-before" in out
    assert "RNI*" in out and "RNI: no formula for z16" in out
    assert out.count("CPI change ZOSA:") == 1


def test_json_matches_csv(capsys):
    code, out, _ = run(capsys, "compare", "--before", B, "--after", A, "--format", "json",
                       "--hours", "08-17", "--days", "mon-fri")
    assert code == 0
    doc = json.loads(out)
    assert doc["meta"]["before"]["shift"]["hours"] == "08:00-17:00"
    assert doc["meta"]["after"]["files"][0]["name"] == Path(A).name
    rows = {r["row"]: r for r in doc["rows"]}
    assert rows["ratio"]["CPI"] == pytest.approx(rows["before"]["CPI"] / rows["after"]["CPI"])
    wf = doc["waterfall"]["ZOSA"]
    assert wf[0]["value"] + sum(s["value"] for s in wf if s["kind"] == "delta") == \
        pytest.approx(rows["after"]["CPI"], abs=1e-12)
    code, out, _ = run(capsys, "compare", "--before", B, "--after", A, "--format", "csv",
                       "--hours", "08-17", "--days", "mon-fri")
    crow = {r["row"]: r for r in csv.DictReader(io.StringIO(out))}
    assert float(crow["ratio"]["CPI"]) == pytest.approx(rows["ratio"]["CPI"], rel=1e-11)


def test_by_class_and_lpar_options(capsys):
    code, out, _ = run(capsys, "compare", "--before", B, "--after", A, "--by", "class", "--format", "json",
                       "--after-lpar", "zosa")
    assert code == 0
    pairs = list(dict.fromkeys(r["pair"] for r in json.loads(out)["rows"]))
    assert pairs == ["ZOSA GCP", "ZOSA zIIP"]


@pytest.mark.parametrize("argv, code, text", [
    (["--before", B], 2, "--after"),
    (["--before", B, "--after", A, "--hours", "8"], 2, "hours"),
    (["--before", B, "--after", A, "--days", "someday"], 2, "days"),
    (["--before", B, "--after", A, "--before-lpar", "NOPE"], 2, "NOPE"),
    (["--before", B, "--after", A, "--before-from", "2026-10-06", "--before-to", "2026-10-05"], 2, "not before"),
    (["--before", EMPTY, "--after", A], 3, "nothing readable"),
])
def test_exit_codes(capsys, argv, code, text):
    got, _, err = run(capsys, "compare", *argv)
    assert got == code and text in err


def test_report_hours_and_days(capsys):
    # report --hours/--days use the same shift filter: 08:00-17:00 on Monday 2026-11-02 and Tuesday 11-03
    code, out, _ = run(capsys, "report", A, "--by", "interval", "--format", "csv", "--hours", "08-17",
                       "--days", "mon-fri")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 36 * 2               # 2 days x 36 quarter hours x 2 classes
    assert all("08:15" <= r["interval_end"][11:16] <= "17:00" for r in rows)
    code, _, err = run(capsys, "report", A, "--days", "weekdays")
    assert code == 2 and "days" in err


def test_report_json_names_the_shift(capsys):
    code, out, _ = run(capsys, "report", A, "--format", "json", "--hours", "22-06")
    assert code == 0
    assert json.loads(out)["meta"]["shift"] == {"hours": "22-06", "days": None}
