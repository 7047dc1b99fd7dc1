"""The workspace cache's Parquet writer converts a frame's slices of rows to Arrow column by column from the
columns' arrays (app/cache/entry.py ``_column_slicers``) instead of through ``pa.Table.from_pandas`` per slice
(issue 23: 20-60 us per column and slice, 65-100 ms of a cold comparison deck's cache writer): the files are the
same bytes, nulls (NaN, NaT, a missing category) included, and read back to the same frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.cache import entry


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    times = np.datetime64("2026-11-02T08:00:00", "ns") + np.arange(n).astype("m8[m]").astype("m8[ns]")
    times[::7] = np.datetime64("NaT")
    f = rng.random(n)
    f[::5] = np.nan
    f[1::11] = np.inf
    return pd.DataFrame({
        "source": pd.Categorical(np.where(np.arange(n) % 3 == 0, "a.smf", "b.smf")),
        "class": pd.Categorical.from_codes(np.where(np.arange(n) % 4 == 0, -1, np.arange(n) % 2), ["GCP", "zIIP"]),
        "time": times,
        "cpu": (np.arange(n) % 16).astype(np.int32),
        "B0": rng.integers(0, 1 << 62, n, dtype=np.uint64),
        "B1": rng.integers(0, 1 << 40, n, dtype=np.uint64),
        "ratio": f,
        "absolute": np.arange(n) % 2 == 0,
        "offset": np.arange(n, dtype=np.int64) * 1712,
    })


@pytest.mark.parametrize("rows", [1000, 1 << 15])
def test_the_column_slices_write_the_same_bytes_as_pandas_conversion(tmp_path, monkeypatch, rows):
    df = _frame(2500)                                   # 3 slices of 1,000 rows (the last short), or one
    monkeypatch.setattr(entry, "SAMPLE_CHUNK_ROWS", rows)
    fast, slow = tmp_path / "fast.parquet", tmp_path / "slow.parquet"
    used = []
    real = entry._column_slicers

    def spy(frame):
        got = real(frame)
        used.append(got is not None)
        return got
    monkeypatch.setattr(entry, "_column_slicers", spy)
    entry._frame_to_parquet(df, fast, samples=True)
    assert used == [True]                                # every column of this frame has the fast path
    monkeypatch.setattr(entry, "_column_slicers", lambda frame: None)     # pandas' conversion of every slice
    entry._frame_to_parquet(df, slow, samples=True)
    assert fast.read_bytes() == slow.read_bytes()
    back = entry._frame_from_parquet(fast)
    pd.testing.assert_frame_equal(back, df, check_categorical=False)
    assert back["class"].isna().sum() == df["class"].isna().sum() > 0
    assert back["time"].isna().sum() == 2500 // 7 + 1


def test_other_columns_keep_pandas_conversion(tmp_path):
    df = _frame(10)
    df["name"] = pd.Series([f"LP{i}" for i in range(10)], dtype=object)       # text: not a fast column
    assert entry._column_slicers(df) is None
    assert entry._column_slicers(df.rename(columns={"B0": 5})) is None          # a name that is not text
    entry._frame_to_parquet(df, tmp_path / "x.parquet")
    back = entry._frame_from_parquet(tmp_path / "x.parquet")
    assert list(back["name"]) == list(df["name"])                 # (text comes back as pandas' string dtype)
    pd.testing.assert_frame_equal(back.drop(columns="name"), df.drop(columns="name"), check_categorical=False)
    empty = _frame(0)
    entry._frame_to_parquet(empty, tmp_path / "e.parquet")
    assert len(entry._frame_from_parquet(tmp_path / "e.parquet")) == 0
