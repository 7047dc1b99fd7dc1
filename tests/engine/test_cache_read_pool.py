"""A cache entry's frame read back with its file's Parquet reader into the system allocator (app.cache.entry): the
frame pyarrow's read_table gives, for any frame written; the process's default Arrow pool is the same afterwards,
also when several threads read at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cache.entry import _frame_from_parquet, _frame_to_parquet


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, 1 << 40, n).astype(np.float64)
    vals[rng.random(n) < 0.2] = np.nan
    return pd.DataFrame({
        "cec": pd.Categorical(rng.choice(["8561-45A12", "3931-123F5"], n)),
        "lpar": pd.Categorical(rng.choice(["ZOSA", "ZOSB", "VM ÄÖ"], n)),
        "cpu": rng.integers(0, 64, n).astype(np.int64),
        "interval_end": pd.to_datetime(rng.integers(1.7e18, 1.8e18, n)),
        "qbits": rng.integers(0, 512, n).astype(np.int64),
        "B0": vals,
        "B1": rng.random(n) * 1e12,
    })


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1), cols=st.booleans())
def test_a_frame_reads_back_as_read_table_gives_it(tmp_path_factory, n, seed, cols):
    df = frame(n, seed)
    path = tmp_path_factory.mktemp("entry") / "f.parquet"
    _frame_to_parquet(df, path)
    columns = ["lpar", "B0", "interval_end"] if cols else None
    got = _frame_from_parquet(path, columns)
    want = pq.read_table(path, columns=columns, page_checksum_verification=True).to_pandas(split_blocks=True,
                                                                                           self_destruct=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_categorical=True)
    assert list(got.columns) == (columns or list(df.columns)) and len(got) == n


def test_reads_on_several_threads_leave_the_default_pool_as_it_was(tmp_path):
    before = pa.default_memory_pool().backend_name
    paths = []
    for i in range(6):
        p = tmp_path / f"f{i}.parquet"
        _frame_to_parquet(frame(20_000, i), p)
        paths.append(p)
    with ThreadPoolExecutor(4) as ex:
        frames = list(ex.map(_frame_from_parquet, paths * 3))
    assert [len(f) for f in frames] == [20_000] * 18
    assert pa.default_memory_pool().backend_name == before
    assert pa.total_allocated_bytes() >= 0
