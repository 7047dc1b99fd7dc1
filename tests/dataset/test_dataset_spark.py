"""The Spark engine gives what DuckDB gives (Spark local mode; CI installs Java through packaging/dev.sh)."""

from __future__ import annotations

import shutil

import pytest

from _fleet_helpers import SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.engine.shift import make_shift

pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'nestscope[spark]')")
if shutil.which("java") is None:
    pytest.skip("no Java runtime on PATH: Spark cannot start (packaging/dev.sh installs default-jre-headless)",
                allow_module_level=True)

pytestmark = pytest.mark.slow      # a JVM and Spark local mode: minutes (skipped by `pytest -m "not slow"`)


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = Dataset(tmp_path_factory.mktemp("spark") / "ds", create=True)
    for f in (SAMPLES[0], SAMPLES[2], SAMPLES[5]):      # z/VM (1-minute), z16 ZOSB (subtype 2), z15 ZOSB
        assert d.extract(f).status == "added"
    return d


@pytest.mark.parametrize("spec", [QuerySpec(by="cec"), QuerySpec(by="lpar", every="day"),
                                  QuerySpec(by="interval", where="lpar = 'ZOSB'", shift=make_shift("08:30-12", None),
                                            start="2026-11-02T06:00", end="2026-11-03T06:00"),
                                  QuerySpec(by="lpar", shift=make_shift("22-06,12-13", "mon-tue"))],
                         ids=["cec", "lpar-every-day", "interval-where-hours", "lpar-night-list-days"])
def test_spark_equals_duckdb(ds, spec):
    a = run_query(ds, spec, engine="duckdb")
    b = run_query(ds, spec, engine="spark")
    assert len(a) > 0
    if spec.every:
        assert list(a["period"]) == list(b["period"])
    assert_same(b, a, spec.by, metric_ids(load_formula_sets()))
