"""``query``'s messages (issue 24): formulas over counters the dataset lacks, Spark without Java, the help."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

from _fleet_helpers import SAMPLES
from app.dataset import Dataset


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = Dataset(tmp_path_factory.mktemp("msg") / "ds", create=True)
    assert d.extract(SAMPLES[2]).status == "added"          # z16 ZOSB
    return d


def test_formula_over_counters_the_dataset_lacks_exits_2(ds, tmp_path, capsys):
    # the example: E184/E185 are read by no built-in formula, so the intervals do not keep them; SQL
    # would give NULL where report computes the metric: query names the counters and exits 2
    from app.cli import main

    f = tmp_path / "rni.json"
    f.write_text(json.dumps({"z16": {"metrics": {"RNI": {"expr": "(E184+E185)/B1*100"}}}}))
    assert main(["query", str(ds.root), "--formulas", str(f)]) == 2
    err = capsys.readouterr().err
    assert "RNI (z16) needs E184, E185" in err and "does not keep" in err and "Traceback" not in err
    # a formula over kept counters runs
    f.write_text(json.dumps({"z16": {"metrics": {"RNI": {"expr": "B1/B0*100"}}}}))
    assert main(["query", str(ds.root), "--formulas", str(f), "--format", "csv"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert out["RNI"].notna().all()


def test_spark_without_java_is_a_usage_error(ds, monkeypatch, capsys):
    from app.cli import main
    from app.dataset import spark_engine

    monkeypatch.setattr(spark_engine, "_SPARK", None)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["query", str(ds.root), "--engine", "spark"]) == 2
    err = capsys.readouterr().err
    assert "nestscope query: error: --engine spark needs" in err and "Traceback" not in err
    assert "Please report" not in err
    assert ("Java runtime" in err) or ("PySpark" in err)       # PySpark missing is said first


def _help_text(capsys) -> str:
    from app.cli import main

    with pytest.raises(SystemExit):
        main(["query", "--help"])
    return capsys.readouterr().out


def test_help_describes_every_result_column(ds, capsys):
    from app.cli import main

    text = _help_text(capsys)
    described = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text.split("result columns", 1)[1]))
    seen = set()
    for args in (["--by", "lpar"], ["--by", "cpu"], ["--by", "interval"], ["--by", "lpar", "--every", "day"]):
        assert main(["query", str(ds.root), *args, "--format", "csv"]) == 0
        seen |= set(pd.read_csv(io.StringIO(capsys.readouterr().out)).columns)
        assert main(["query", str(ds.root), *args, "--format", "json"]) == 0
        for row in json.loads(capsys.readouterr().out)["rows"]:
            seen |= set(row)
    assert {"LPARCPU", "coverage_pct", "data", "interval_end"} <= seen
    assert seen <= described, sorted(seen - described)


def test_help_describes_every_column_of_every_level_and_format(ds, capsys, tmp_path):
    """Every column ``query`` can return, at every --by level, with and without --every, in UTC and --tz local,
    as csv, json and parquet, is described under the help's "result columns" (issue 24, "Done when")."""
    from app.cli import main
    from app.dataset.query import BY_CHOICES
    from app.engine.catalog import load_formula_sets
    from app.engine.metrics import metric_ids

    described = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _help_text(capsys).split("result columns", 1)[1]))
    seen: set[str] = set()
    out = tmp_path / "q.parquet"
    for by in BY_CHOICES:
        for every in ([], ["--every", "day"]) if by != "interval" else ([],):
            for tz in (["--tz", "utc"], ["--tz", "local"]) if by in ("lpar", "cpu") else (["--tz", "utc"],):
                args = ["query", str(ds.root), "--by", by, *every, *tz]
                assert main([*args, "--format", "csv"]) == 0
                cols = set(pd.read_csv(io.StringIO(capsys.readouterr().out)).columns)
                assert main([*args, "--format", "json"]) == 0
                rows = json.loads(capsys.readouterr().out)["rows"]
                assert rows and all(set(r) == set(rows[0]) for r in rows)
                assert main([*args, "--format", "parquet", "--out", str(out)]) == 0
                capsys.readouterr()
                assert cols == set(rows[0]), (args, cols ^ set(rows[0]))
                assert set(pd.read_parquet(out).columns) == cols, args      # one schema for every format
                seen |= cols
    assert set(metric_ids(load_formula_sets())) <= seen          # every formula's column, every generation's
    assert {"period", "cpu", "class", "coverage_pct", "quality", "left_out"} <= seen
    assert seen <= described, sorted(seen - described)
