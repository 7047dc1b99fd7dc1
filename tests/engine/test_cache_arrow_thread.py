"""The workspace cache converts a frame to Arrow on the writing thread (app.cache.entry._to_arrow, ``nthreads=1``):
no pool of Python threads (whose tasks each wait for the GIL beside a busy thread, e.g. a deck's python-pptx), and
the frame read back is the one written."""

from __future__ import annotations

import concurrent.futures
import threading

import numpy as np
import pandas as pd

from app.cache.entry import _frame_from_parquet, _frame_to_parquet, _to_arrow


def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"lpar": pd.Categorical(["SYSA", "SYSB"] * (n // 2)),
                         "cpu": np.arange(n, dtype=np.int32) % 8,
                         "interval_end": (np.arange(n, dtype=np.int64) * 60_000_000_000).view("datetime64[ns]"),
                         "ok": np.arange(n) % 3 == 0,
                         "B0": np.arange(n, dtype=np.uint64) * 7, "B1": np.arange(n, dtype=np.uint64) + 2**40})


def test_long_frames_are_converted_on_the_writing_thread_and_read_back_the_same(monkeypatch, tmp_path):
    # pyarrow converts on a ThreadPoolExecutor when asked for threads and the frame has more than 100 rows per
    # column; 40,000 rows x 6 columns would be, and a second slice of 32,768 rows (the samples' row groups) too
    def no_pool(*a, **kw):
        raise AssertionError("a thread pool was started for the conversion")
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", no_pool)
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), real_start(self))[1])
    df = _frame(40_000)
    t = _to_arrow(df)
    assert t.num_rows == 40_000 and t.column("B1").to_pylist()[:2] == [2**40, 2**40 + 1]
    path = tmp_path / "s.parquet"
    _frame_to_parquet(df, path, samples=True)
    assert started == []
    got = _frame_from_parquet(path)
    pd.testing.assert_frame_equal(got, df)
    assert isinstance(got["lpar"].dtype, pd.CategoricalDtype) and got["B0"].dtype == np.uint64
