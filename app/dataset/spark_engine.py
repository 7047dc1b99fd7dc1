"""The Spark engine of ``query --engine spark``: the statements of :mod:`app.dataset.query` through PySpark
(``spark.sql``) over the dataset's Parquet parts, in a shared session (``local[2]`` unless ``SPARK_MASTER`` or
Spark's own settings name a cluster).  Imported only when Spark is asked for (PySpark is an optional extra)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
import warnings
from collections.abc import Sequence

import pandas as pd

from app.dataset.query import QueryError
from app.dataset.sql import SPARK


def _spark_frame(spark, files: Sequence[str]):
    from pyspark.sql import functions as F

    base = str(files[0]).rsplit("/cec=", 1)[0] if files else ""      # cec= and month= from the directory names
    df = spark.read.option("mergeSchema", "true").option("basePath", base).parquet(*files)
    return (df.withColumn("t_start", F.expr("unix_micros(t_start) * 1000"))
            .withColumn("t_end", F.expr("unix_micros(t_end) * 1000")))


_SPARK = None


def spark_session():
    """A shared SparkSession: ``local[2]`` unless ``SPARK_MASTER`` or Spark's own settings name a cluster."""
    global _SPARK
    if _SPARK is None:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise QueryError("--engine spark needs PySpark: pip install 'nestscope[spark]' (and a Java runtime)") \
                from None
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else \
            shutil.which("java")
        if not java or not os.path.exists(java):
            raise QueryError("--engine spark needs a Java runtime (Java 17 or later): none found on PATH or in "
                             "JAVA_HOME. Install one (Debian/Ubuntu: apt-get install default-jre-headless) or set "
                             "JAVA_HOME, or leave --engine out (DuckDB, in-process)")
        from app.dataset.spark_quiet import quiet_log4j, remove_when_quiet, spark_log_path, stderr_to

        b = SparkSession.builder.appName("nestscope")
        master = os.environ.get("SPARK_MASTER")
        if master:
            b = b.master(master)
        elif not os.environ.get("SPARK_HOME") and not os.environ.get("PYSPARK_SUBMIT_ARGS"):
            b = b.master("local[2]")
        b = (b.config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", os.environ.get("NESTSCOPE_SPARK_PARTITIONS", "4"))
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")       # no progress bars in the output
             .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={quiet_log4j()}")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false"))
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        warnings.filterwarnings("ignore", module=r"pyspark\.")     # its pandas-version notes: not the user's
        log = spark_log_path()
        try:
            with stderr_to(log):        # the JVM inherits it: its start-up notes and later logs go to the file
                _SPARK = b.getOrCreate()
        except Exception as exc:         # the JVM did not start (a broken Java, no memory...)
            raise QueryError(f"--engine spark could not start Spark ({type(exc).__name__}: "
                             f"{str(exc).strip().splitlines()[0][:200] if str(exc).strip() else 'no message'}); "
                             f"see {log}; check the Java runtime (java -version), or leave --engine out (DuckDB)") \
                from None
        _SPARK.sparkContext.setLogLevel("ERROR")
        remove_when_quiet(log)
    return _SPARK


class SparkEngine:
    """The same statements through PySpark (``spark.sql``)."""

    dialect = SPARK

    def __init__(self, files: Sequence[str], window: tuple[int | None, int | None] = (None, None)):
        self.spark = spark_session()         # the statement's conditions select the window
        df = _spark_frame(self.spark, files)
        df.createOrReplaceTempView("iv")
        self._cols = df.columns

    def sql(self, text: str) -> pd.DataFrame:
        return self.spark.sql(text).toPandas()

    # steps whose result is small: materialized (checkpointed), each planned alone
    _MATERIALIZE = ("agg", "a2")

    def run(self, steps: Sequence[tuple[str, str]]) -> pd.DataFrame:
        """The steps as temporary views; the aggregated ones checkpointed locally."""
        tag = uuid.uuid4().hex[:8]
        names = {name: f"{name}_{tag}" for name, _ in steps if name}
        made = []
        try:
            for name, body in steps:
                for old, new in names.items():
                    body = re.sub(rf"\b{old}\b", new, body)
                df = self.spark.sql(body)
                if not name:
                    return df.toPandas()
                if name in self._MATERIALIZE:
                    df = df.localCheckpoint()
                df.createOrReplaceTempView(names[name])
                made.append(names[name])
        finally:
            for v in made:
                self.spark.catalog.dropTempView(v)
        return pd.DataFrame()

    def view(self, name: str, files: Sequence[str]) -> None:
        _spark_frame(self.spark, files).createOrReplaceTempView(name)

    def window_view(self, name: str, files: Sequence[str], lo_ns: int | None, hi_ns: int | None) -> None:
        self.view(name, files)          # the statement's conditions select the window

    def columns(self) -> list[str]:
        return list(self._cols)

    def close(self) -> None:
        pass
