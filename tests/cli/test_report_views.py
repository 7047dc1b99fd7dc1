"""``report --by hour|weekday|hour-weekday|pool`` and ``--top N --metric M`` (issue 26): the engine's views as
CSV, JSON and tables; CSV values equal the engine frames (which tests/engine/test_views.py checks by hand)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.engine import Workspace
from app.engine.views import peaks, pools, profile

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")
B = str(SAMPLES / "after_z16_ZOSB_smf113.vbs.gz")


@pytest.fixture(scope="module")
def ws(sample_result):
    w = Workspace()
    w.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_z16_ZOSB_smf113.vbs.gz")])
    return w


def _csv(capsys):
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_hour_profile_csv(capsys, ws):
    assert main(["report", A, B, "--by", "hour", "--format", "csv"]) == 0
    rows = _csv(capsys)
    assert list(rows[0])[:2] == ["hour", "cec"]
    assert len(rows) == 48                                   # 24 hours x 2 LPARs
    p = profile(ws, by="hour", level="lpar").set_index(["lpar", "hour"])
    for r in rows:
        assert float(r["CPI"]) == pytest.approx(p.loc[(r["lpar"], int(r["hour"])), "CPI"], rel=1e-11)


def test_hour_weekday_profile_json_and_level(capsys):
    assert main(["report", A, "--by", "hour-weekday", "--level", "class", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    keys = {(r["weekday"], r["hour"], r["class"]) for r in doc["rows"]}
    assert len(keys) == len(doc["rows"]) and ("Mon", 8, "GCP") in keys


def test_pool_rows_have_the_type_in_class(capsys, ws):
    assert main(["report", A, B, "--by", "pool", "--format", "csv"]) == 0
    rows = _csv(capsys)
    assert sorted(r["class"] for r in rows) == ["GCP", "zIIP"] and {r["lpar"] for r in rows} == {"(pool)"}
    p = pools(ws).set_index("class")
    for r in rows:
        assert float(r["CPI"]) == pytest.approx(p.loc[r["class"], "CPI"], rel=1e-11)


def test_top_intervals_by_metric(capsys, ws):
    assert main(["report", A, B, "--by", "lpar", "--top", "3", "--metric", "CPI", "--format", "csv"]) == 0
    rows = _csv(capsys)
    assert [r["rank"] for r in rows] == ["1", "2", "3"] and "hour" in rows[0]
    want = peaks(ws, "CPI", level="lpar", top=3)
    assert [float(r["CPI"]) for r in rows] == pytest.approx(list(want["CPI"]), rel=1e-11)
    assert main(["report", A, "--by", "lpar", "--top", "3"]) == 2            # --metric missing
    assert main(["report", A, "--by", "lpar", "--top", "3", "--metric", "NOPE"]) == 2
    assert main(["report", A, "--by", "interval", "--top", "3", "--metric", "CPI"]) == 2
    capsys.readouterr()
    assert main(["report", A, "--by", "lpar", "--top", "2", "--metric", "RNI"]) == 0   # no RNI on z16: no rows
    assert "0 row(s)" in capsys.readouterr().out
