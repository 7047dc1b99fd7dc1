"""The Spark engine gives what DuckDB gives (Spark local mode; CI installs Java through packaging/dev.sh)."""

from __future__ import annotations

import os
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

# The JVMs this module starts (this process's Spark session and the one of the command run by
# test_spark_output_has_no_jvm_noise) compile with the quick JIT only and collect with the serial collector:
# they live for minutes and run each query once, where the optimizing JIT's threads and the parallel collector
# cost more CPU than they give back (this module, serial, CPU s of the whole process tree with its JVMs:
# 173.9 -> 96.1 at load 2, 199.8 -> 103.1 under load, 2026-11-26).  Spark's results and output do not depend
# on it; the product sets no such option.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="module", autouse=True)
def quick_jvm():
    keep = os.environ.get("JAVA_TOOL_OPTIONS")
    os.environ["JAVA_TOOL_OPTIONS"] = f"{keep} {JVM_OPTIONS}" if keep else JVM_OPTIONS
    yield
    if keep is None:
        os.environ.pop("JAVA_TOOL_OPTIONS", None)
    else:
        os.environ["JAVA_TOOL_OPTIONS"] = keep


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = Dataset(tmp_path_factory.mktemp("spark") / "ds", create=True)
    for f in (SAMPLES[0], SAMPLES[2], SAMPLES[5]):      # z/VM (1-minute), z16 ZOSB (subtype 2), z15 ZOSB
        assert d.extract(f).status == "added"
    return d


@pytest.mark.parametrize("spec", [QuerySpec(by="cec"), QuerySpec(by="lpar", every="day"),
                                  QuerySpec(by="interval", where="lpar = 'ZOSB'", shift=make_shift("08:30-12", None),
                                            start="2026-11-02T06:00", end="2026-11-03T06:00"),
                                  QuerySpec(by="lpar", shift=make_shift("22-06,12-13", "mon-tue")),
                                  # query --tz ZONE: hours and days in New York time (EST), local days
                                  QuerySpec(by="lpar", every="day", tz="America/New_York",
                                            shift=make_shift("08-17", "mon-tue", "America/New_York"))],
                         ids=["cec", "lpar-every-day", "interval-where-hours", "lpar-night-list-days", "lpar-zone"])
def test_spark_equals_duckdb(ds, spec):
    a = run_query(ds, spec, engine="duckdb")
    b = run_query(ds, spec, engine="spark")
    assert len(a) > 0
    if spec.every:
        assert list(a["period"]) == list(b["period"])
    assert_same(b, a, spec.by, metric_ids(load_formula_sets()))


@pytest.mark.parametrize("table", ["samples", "intervals", "partitions"])
def test_spark_reads_every_table_as_it_is(ds, table):
    # issue 24: spark.read.parquet(DATASET/TABLE) without options (Hive partitions cec=/month= found by Spark
    # itself) gives the rows DuckDB reads; times are timestamps (Spark reads no nanosecond ones)
    import duckdb

    from app.dataset.spark_engine import spark_session
    from test_dataset_engines import KEYS, canonical

    if table == "partitions" and not ds.parts("partitions"):
        d2 = Dataset(ds.root.parent / "with_partitions", create=True)
        assert d2.extract(SAMPLES[0]).status == "added"          # z/VM: D0R16 partition data
        root = d2.root
    else:
        root = ds.root
    spark = spark_session()
    sdf = spark.read.parquet(str(root / table))
    keys, tcol, vcol = KEYS[table]
    assert dict(sdf.dtypes)[tcol] == "timestamp"
    got = sdf.select(*keys, tcol, vcol).toPandas()
    got[tcol] = got[tcol].dt.tz_localize("UTC") if got[tcol].dt.tz is None else got[tcol]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    want = con.execute(f"SELECT * FROM read_parquet('{root}/{table}/**/*.parquet')").df()
    a, b = canonical(got, table), canonical(want, table)
    assert len(a) == len(b) > 0
    import pandas as pd

    pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_spark_output_has_no_jvm_noise(ds, tmp_path):
    # the command's output is the table: no JVM warnings, no log lines, no progress bars; and the JVM's log of
    # start-up notes (its standard error, in the temporary folder) is not left behind
    import subprocess
    import sys

    from _fleet_helpers import ROOT

    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "app", "query", str(ds.root), "--engine", "spark", "--by", "cec"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("NestScope report")
    for noise in ("WARN", "WARNING", "log4j", "Setting default log level", "[Stage", "FutureWarning"):
        assert noise not in p.stdout and noise not in p.stderr, (noise, p.stderr[-1000:])
    assert not list(tmp_path.glob("nestscope-spark-*.log"))


def test_a_spark_log_holding_an_error_is_kept(tmp_path):
    notes, error = tmp_path / "notes.log", tmp_path / "error.log"
    notes.write_text("WARNING: Using incubator modules: jdk.incubator.vector\nSetting default log level to \"WARN\".\n")
    error.write_text("WARNING: Using incubator modules\nspark: ERROR Executor: task 0 failed\n")
    code = ("from app.dataset.spark_quiet import remove_when_quiet; "
            f"remove_when_quiet({str(notes)!r}); remove_when_quiet({str(error)!r})")
    import subprocess
    import sys

    from _fleet_helpers import ROOT

    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120).returncode == 0
    assert not notes.exists() and error.exists()


def test_spark_equals_duckdb_in_local_time(tmp_path):
    """query --tz local on Spark: a Europe/Berlin system across the switch of 2026-03-29 (tests/engine/tz_builders),
    the hours, days and --every days in its own wall clock (the intervals' utc_offset_s), as DuckDB gives them."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    import tz_builders as T

    d = Dataset(tmp_path / "ds", create=True)
    assert d.extract(T.write_zos(tmp_path, T.zos_samples(days=2), name="berlin.smf")).status == "added"
    for spec in (QuerySpec(by="interval", tz="local", shift=make_shift("08-17", None, "local")),
                 QuerySpec(by="lpar", every="day", tz="local", shift=make_shift("22-06", "sat,sun", "local"))):
        a = run_query(d, spec, engine="duckdb")
        b = run_query(d, spec, engine="spark")
        # hand counts: 72 intervals of 08-17 (tests/cli/test_query_tz.py); the Saturday and Sunday nights
        assert len(a) == (72 if spec.by == "interval" else 2)
        for c in ("_off_start", "_off_end", "interval_start", "interval_end"):
            assert list(a[c]) == list(b[c]), c
        if spec.every:
            assert list(a["period"]) == list(b["period"])
        assert_same(b, a, spec.by, metric_ids(load_formula_sets()))


def test_spark_marks_odd_lengths_by_the_datasets_usual_length(tmp_path):
    """A file whose LPAR's samples come every 15 minutes, then every 5 (16 and 32 intervals per CPU), extracted
    as two pieces each holding one length: the stored marks are the pieces' (none), Spark works out the usual
    length (300 s) and marks the 900 s intervals as DuckDB does (tests/dataset/test_odd_length.py)."""
    from fractions import Fraction

    from _fleet_helpers import retimed_records
    from app.formats import read_file
    from app.formats.smf113_writer import frame_rdw

    s = read_file(SAMPLES[2]).samples.iloc[:8 * 49].reset_index(drop=True)
    recs = retimed_records(s, 16, Fraction(1, 3))
    d = Dataset(tmp_path / "ds", create=True)
    for i, part in enumerate((recs[17 * 8:], recs[:17 * 8])):
        (tmp_path / f"p{i}.rdw").write_bytes(frame_rdw(part))
        assert d.extract(tmp_path / f"p{i}.rdw").status == "added"
    for by in ("cpu", "lpar"):
        a = run_query(d, QuerySpec(by=by), engine="spark")
        assert_same(a, run_query(d, QuerySpec(by=by)), by, metric_ids(load_formula_sets()))
    assert int(a["quality"].str.contains("odd-length").sum()) == 1       # the LPAR's row: 128 of its intervals
    got = run_query(d, QuerySpec(by="cpu"), engine="spark")
    assert int(got["quality"].fillna("").str.contains("odd-length").sum()) == 16 * 8
