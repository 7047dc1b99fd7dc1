"""Fleet dataset: counter samples of many files in a Hive-partitioned Parquet dataset, queried with SQL.

``app.dataset.store``  extract files into ``DATASET/`` (samples + engine interval deltas + manifest), lock-free;
``app.dataset.sql``    the SQL dialects and expressions a query writes, ``--where`` validation;
``app.dataset.query``  the engine's aggregation rule as SQL group-bys, run by DuckDB (default) or Spark.

No Qt here.
"""

from __future__ import annotations

from app.dataset.store import Dataset, DatasetError, ExtractResult

__all__ = ["Dataset", "DatasetError", "ExtractResult"]
