"""How many rows a part's row groups hold (app/dataset/tables.py ``_Columns.group_rows``, ``write_frame``):
a samples part whose counters are views of the frame's own arrays is cut by what a group makes
(``VIEW_GROUP_BYTES``), a part whose counters are made a group at a time (rows taken, deltas) by ``GROUP_BYTES``
of its columns, as before; and a part of several groups is cut into groups of even size (no small last group
paying a group's fixed cost).  The rows read back are the frame's, in order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from app.dataset import tables


def _frame(n: int) -> pd.DataFrame:
    # cpu (int32) and two counters (uint64), each its own contiguous array: handed to Arrow as views
    return pd.DataFrame({"cpu": np.arange(n, dtype=np.int32), "B0": np.arange(n, dtype=np.uint64) * 3,
                         "B1": np.arange(n, dtype=np.uint64) + 7})


def test_view_part_group_rows_by_what_a_group_makes():
    cols = tables._Columns("samples", _frame(10), tables.SAMPLE_COUNTERS)
    # made a row: 1 byte for each of the 3 views (cpu, B0, B1), and 8 for the NULL array of each type of the
    # absent columns: string (source...), int64 (offset...), int32 (core...), timestamp (run_start, time),
    # bool (lost...), uint64 (the other 238 counters) = 6 types -> 3 + 48 = 51 bytes
    assert cols.group_rows() == tables.VIEW_GROUP_BYTES // 51
    # its columns' width (8 for each of the 3 columns the frame has) is what decides when rows are taken
    taken = tables._Columns("samples", _frame(10), tables.SAMPLE_COUNTERS, take=np.array([3, 1, 2]))
    assert taken.width() == 24
    assert taken.group_rows() == tables.GROUP_BYTES // 24


def test_groups_of_even_size_hold_the_frame_rows(tmp_path):
    step = tables.VIEW_GROUP_BYTES // 51           # 20,560 rows a group (above)
    n = step + 9440                                 # 30,000 rows: two groups, of 15,000 each (not 20,560 + 9,440)
    f = _frame(n)
    path = tmp_path / "p.parquet"
    tables.write_frame("samples", f, tables.SAMPLE_COUNTERS, path)
    md = pq.ParquetFile(path).metadata
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [15_000, 15_000]
    back = pq.read_table(path)
    assert back.schema == tables.schema_of("samples", tables.SAMPLE_COUNTERS)
    assert back.column("B0").to_numpy().tolist() == (np.arange(n, dtype=np.uint64) * 3).tolist()
    assert back.column("cpu").to_numpy().tolist() == list(range(n))
    assert back.column("E128").null_count == n
    # groups asked for by ``rows`` are as asked (the last one the rest)
    tables.write_frame("samples", f, tables.SAMPLE_COUNTERS, path, rows=20_000)
    md = pq.ParquetFile(path).metadata
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [20_000, 10_000]
