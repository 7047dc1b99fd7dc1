"""A part written a row group at a time (app/dataset/tables.py ``write_frame``, issue 24: the extract's memory)
holds what the part written in one piece holds: the same schema, rows and order, for any frame and any group
size; a frame of ``n`` rows in groups of ``r`` is ceil(n / r) row groups.  An extract whose parts are cut in
small groups gives the parts of an extract written in one piece.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.dataset import Dataset, tables
from app.engine.catalog import load_formula_sets

NAMES = ["SYSA", "SYSB", "Zürich", ""]


@st.composite
def part_frames(draw):
    """(table, frame, counters): a samples frame whose counters are one 2-D block in row order (as the reader
    makes them: each column strided), or an interval frame of separate float64 columns with NaN (NULL)."""
    n = draw(st.integers(0, 40))
    table = draw(st.sampled_from(["samples", "intervals"]))
    names = draw(st.lists(st.sampled_from(NAMES + [None]), min_size=n, max_size=n))
    t = np.asarray(draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n)), np.int64) * 1000
    t = t.view("datetime64[ns]")
    if n:
        t[draw(st.integers(0, n - 1))] = np.datetime64("NaT")       # a missing time: NULL
    frame = pd.DataFrame({"lpar": pd.Categorical(names), "cpu": np.arange(n, dtype=np.int32),
                          tables.OFFSET: np.where(np.arange(n) % 3 == 0, np.nan, 3600.0)})
    frame["time" if table == "samples" else "t_end"] = t
    if table == "samples":
        k = draw(st.sampled_from([3, 9]))       # fewer than 8 counters: each column on its own
        vals = np.asarray(draw(st.lists(st.integers(0, 2**64 - 1), min_size=n * k, max_size=n * k)), np.uint64)
        block = pd.DataFrame(vals.reshape(n, k), columns=[f"B{i}" for i in range(min(k, 6))]
                             + [f"E{128 + i}" for i in range(k - min(k, 6))])
        frame = pd.concat([frame, block], axis=1)
        counters = tables.sample_counters(frame.columns)
    else:
        counters = ["B0", "B1", "E128"]            # E128: absent from the frame (NULL)
        for c in counters[:2]:
            v = np.asarray(draw(st.lists(st.floats(allow_nan=True, allow_infinity=False), min_size=n,
                                         max_size=n)), np.float64)
            frame[c] = v
    return table, frame, counters


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(part_frames(), st.integers(1, 50))
def test_row_groups_hold_the_one_piece_rows(tmp_path, case, rows):
    table, frame, counters = case
    whole, cut = tmp_path / "whole.parquet", tmp_path / "cut.parquet"
    tables.write_part(tables.to_table(table, frame, counters), whole)
    tables.write_frame(table, frame, counters, cut, rows=rows)
    a, b = pq.read_table(whole), pq.read_table(cut)
    assert a.schema == b.schema == tables.schema_of(table, counters)
    assert a.equals(b)
    n = len(frame)
    assert pq.ParquetFile(cut).num_row_groups == (-(-n // rows) if n > rows else 1)


def test_ten_rows_in_groups_of_four(tmp_path):
    # 10 rows, groups of 4: row groups of 4, 4 and 2 rows; the cpu column reads 0..9 in order
    frame = pd.DataFrame({"lpar": pd.Categorical(["A"] * 10), "cpu": np.arange(10, dtype=np.int32),
                          "B0": np.arange(10, dtype=np.float64)})
    tables.write_frame("intervals", frame, ["B0"], tmp_path / "p.parquet", rows=4)
    f = pq.ParquetFile(tmp_path / "p.parquet")
    assert [f.metadata.row_group(i).num_rows for i in range(f.num_row_groups)] == [4, 4, 2]
    got = f.read()
    assert got.column("cpu").to_pylist() == list(range(10))
    assert got.column("B0").to_pylist() == [float(i) for i in range(10)]
    assert got.column("lpar").to_pylist() == ["A"] * 10


def _parts(ds: Dataset) -> dict[str, list]:
    (entry,) = ds.entries()
    return {t: [pq.read_table(ds.root / p) for p in entry["parts"][t]] for t in tables.TABLES}


def test_an_extract_in_small_groups_writes_the_same_parts(tmp_path, sample_result, monkeypatch):
    r = sample_result("after_z16_ZOSA_smf113.rdw.gz")
    sets = load_formula_sets()
    one = Dataset(tmp_path / "one", create=True)
    one.add_result(r, "a" * 64, 1, sets)
    monkeypatch.setattr(tables, "GROUP_BYTES", 1)
    monkeypatch.setattr(tables, "_GROUP_MIN_ROWS", 97)      # groups of 97 rows (a prime: no part is whole groups)
    cut = Dataset(tmp_path / "cut", create=True)
    cut.add_result(r, "a" * 64, 1, sets)
    a, b = _parts(one), _parts(cut)
    groups = 0
    for t in tables.TABLES:
        assert len(a[t]) == len(b[t])
        for x, y in zip(a[t], b[t]):
            assert x.schema == y.schema and x.equals(y)
    for p in cut.entries()[0]["parts"]["samples"] + cut.entries()[0]["parts"]["intervals"]:
        groups += pq.ParquetFile(cut.root / p).num_row_groups
    assert groups > len(b["samples"]) + len(b["intervals"])        # cut in several groups indeed


def test_absent_columns_stored_plain_and_the_rest_as_before(tmp_path):
    """A column the frame lacks (a counter the file's machine does not have: NULL in every row) is stored
    uncompressed without statistics, in every row group; the columns with values keep zstd and their statistics;
    every value reads back as written (the absent ones NULL)."""
    n = 10
    frame = pd.DataFrame({"lpar": pd.Categorical(["SYSA"] * n), "cpu": np.arange(n, dtype=np.int32),
                          "time": (np.arange(n, dtype=np.int64) * 1000).view("datetime64[ns]")})
    frame = pd.concat([frame, pd.DataFrame(np.arange(n * 8, dtype=np.uint64).reshape(n, 8),
                                           columns=[f"B{i}" for i in range(6)] + ["P32", "P33"])], axis=1)
    counters = tables.sample_counters(frame.columns)
    path = tmp_path / "part.parquet"
    tables.write_frame("samples", frame, counters, path, rows=4)         # groups of 4, 4 and 2 rows
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 3
    names = tables.schema_of("samples", counters).names
    for g in range(meta.num_row_groups):
        cols = {meta.row_group(g).column(i).path_in_schema: meta.row_group(g).column(i) for i in range(len(names))}
        for c in ("E128", "M448", "K64", "source", "serial"):        # not in the frame: no value in any row
            assert cols[c].compression == "UNCOMPRESSED" and not cols[c].is_stats_set, (g, c)
        for c in ("B0", "P33", "cpu", "lpar", "time"):
            assert cols[c].compression == "ZSTD" and cols[c].is_stats_set, (g, c)
        assert cols["B5"].statistics.min == 5 + 8 * 4 * g                 # row 4g's B5: 8 x 4g + 5
    back = pq.read_table(path)
    assert back.schema == tables.schema_of("samples", counters)
    assert back.equals(tables.to_table("samples", frame, counters))
    assert back.column("E128").null_count == n and back.column("B5").to_pylist() == list(range(5, 8 * n, 8))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 30), st.integers(1, 9), st.randoms(use_true_random=False))
def test_one_name_columns_and_taken_rows_as_the_one_piece_part(tmp_path, n, rows, rnd):
    """A name column holding one name in every row (each group's array a slice of one made once) and one of
    several names, of rows taken in any order, read back as ``frame.take(take)`` written in one piece."""
    frame = pd.DataFrame({"source": pd.Categorical(["a.smf"] * n), "lpar": pd.Categorical(
        [rnd.choice(["SYSA", "SYSB", None]) for _ in range(n)]), "cpu": np.arange(n, dtype=np.int32),
        "sha256": pd.Categorical(["ab" * 32] * n, categories=["00" * 32, "ab" * 32])})    # an unused category
    take = np.asarray(rnd.sample(range(n), rnd.randint(0, n)), np.int64)
    path = tmp_path / "cut.parquet"
    tables.write_frame("intervals", frame, [], path, rows=rows, take=take)
    back = pq.read_table(path)
    assert back.equals(tables.to_table("intervals", frame.take(take).reset_index(drop=True), []))
    assert back.column("source").to_pylist() == ["a.smf"] * len(take)
    assert back.column("sha256").to_pylist() == ["ab" * 32] * len(take)


def test_column_order_counters_handed_to_arrow_as_they_are_and_nothing_from_arrows_pool(tmp_path):
    """Counters each one contiguous array (the SMF reader's blocks in column order): a row group's counter
    columns are the frame's own memory (no transposed copy); names, times and everything else of a part's
    columns come from the system allocator, none from Arrow's default pool (mimalloc: a segment mapped for a
    first small buffer, handed back after each part and mapped again beside the next chunk); the part reads
    back as the one-piece part."""
    import pyarrow as pa

    n = 50
    block = np.arange(8 * n, dtype=np.uint64).reshape(8, n)      # 8 counters in column order
    names = [f"B{i}" for i in range(6)] + ["P32", "P33"]
    frame = pd.concat([pd.DataFrame({"lpar": pd.Categorical(["SYSA", "SYSB"] * (n // 2)),
                                     "source": pd.Categorical(["f.smf"] * n),
                                     "cpu": np.arange(n, dtype=np.int32),
                                     "time": (np.arange(n, dtype=np.int64) * 1000).view("datetime64[ns]")}),
                       pd.DataFrame(block.T, columns=names, copy=False)], axis=1)
    counters = tables.sample_counters(frame.columns)
    pool = pa.default_memory_pool()
    before = pool.bytes_allocated()
    cols = tables._Columns("samples", frame, counters)
    t = cols.table(10, 30)
    assert pool.bytes_allocated() == before                       # (t alive: nothing of it from that pool)
    for i, c in enumerate(names):
        buf = t.column(c).chunk(0).buffers()[1]
        assert buf.address == block[i, 10:].ctypes.data, c          # rows 10.. of counter i, not a copy
    assert t.column("B2").to_pylist() == list(range(2 * n + 10, 2 * n + 30))
    path = tmp_path / "part.parquet"
    tables.write_frame("samples", frame, counters, path, rows=16)
    assert pq.read_table(path).equals(tables.to_table("samples", frame, counters))


def test_one_run():
    # consecutive ascending row numbers (or none, or one) are one run; a gap, a step back or a repeat is not
    # ([0, 2, 1, 3]: its ends are 3 apart over 4 rows, as a run's, but it is not one)
    one = tables._one_run
    assert one(np.array([], np.int64)) and one(np.array([7])) and one(np.array([3, 4, 5]))
    assert not one(np.array([3, 5])) and not one(np.array([5, 4])) and not one(np.array([0, 2, 1, 3]))
    assert not one(np.array([3, 3, 4]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(part_frames(), st.integers(1, 50), st.data())
def test_rows_taken_hold_the_frame_rows(tmp_path, case, rows, data):
    # a part of some rows of the frame (``take``): one run (written as ranges of the frame's arrays, views) or
    # any rows in any order (gathered) holds what the frame's copy of those rows written in one piece holds
    table, frame, counters = case
    n = len(frame)
    a = data.draw(st.integers(0, n))
    b = data.draw(st.integers(a, n))
    runs = np.arange(a, b, dtype=np.int64)
    anyrows = np.asarray(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=n if n else 0)), np.int64)
    for take in (runs, anyrows):
        whole, cut = tmp_path / "whole.parquet", tmp_path / "cut.parquet"
        sub = frame.iloc[take].reset_index(drop=True)
        tables.write_part(tables.to_table(table, sub, counters), whole)
        tables.write_frame(table, frame, counters, cut, rows=rows, take=take)
        x, y = pq.read_table(whole), pq.read_table(cut)
        assert x.schema == y.schema == tables.schema_of(table, counters)
        assert x.equals(y), take
        assert y.num_rows == len(take)
