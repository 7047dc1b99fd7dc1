"""The extract's deltas made lean (issue 24): DeltaRows.make_all keeps its order and inverse as int32, lets go of the
sample row arrays once every row is made (the writer then reads the block alone, the values unchanged), and the
streamed extract's numpy arrays are not marked for transparent huge pages (the deltas' block, filled a counter at a
time, is resident only where written)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from factory import frame
from test_counter_blocks_column_order import by_column
from test_deltas_fast import KEEP, SETS, recs

from app.engine.deltas import compute_intervals

ROOT = Path(__file__).resolve().parents[2]


def test_made_rows_let_go_of_the_row_arrays_values_unchanged():
    """Absolute counters (running totals: a subtraction) of 3 CPUs, 6 records each: 15 intervals (3 x 5, the
    first record of each CPU starts a run).  Made in an order that leaves 4 rows out (they follow, in the frame's
    order: 14, 10, 0, 7 then 1..6, 8, 9, 11..13), every row's deltas equal the eager frame's, read in any order;
    the order and inverse are int32, and the samples' row arrays are gone."""
    f = by_column(frame(recs(6, cpus=(0, 1, 2), kind="absolute")))
    exp, _ = compute_intervals([f.copy()], SETS, KEEP)
    assert len(exp) == 15
    start = list(exp.columns).index("qbits") + 1
    want = exp.iloc[:, start:].to_numpy(dtype=np.float64)
    assert np.isfinite(want).any()
    _, _, later = compute_intervals([f], SETS, KEEP, consume=True, lazy=True)
    order = np.array([14, 10, 0, 7], np.int64)
    later.make_all(order=order)
    assert later.made
    whole = np.array([14, 10, 0, 7, 1, 2, 3, 4, 5, 6, 8, 9, 11, 12, 13])
    at, block = later.made_rows(0, 15)
    np.testing.assert_array_equal(at, whole)
    np.testing.assert_array_equal(block, want[whole])
    assert later._order.dtype == np.int32 and later._inv.dtype == np.int32
    np.testing.assert_array_equal(later._inv[whole], np.arange(15))
    assert later._cur is None and later._prev is None and later._bits is None and later._vers is None
    np.testing.assert_array_equal(later.rows(slice(None)), want)
    for idx in (np.arange(15)[::-1], np.array([3, 11, 0])):
        np.testing.assert_array_equal(later.rows(idx), want[idx])
    view = later.rows(np.array([10, 0]))        # consecutive in the block (its rows 1 and 2): a view
    assert np.shares_memory(view, block)


_SMALL_PAGES = r"""
import sys
import numpy as np
sys.path.insert(0, {root!r})
from app import memory
from numpy._core import multiarray as ma


def written_mib():
    a = np.empty(4 << 20, np.float64)           # 32 MiB: numpy marks arrays of 4 MiB or more
    before = memory.rss_mb()
    m = len(a) // 2
    a[m:m + 40_000] = 1.0                       # 312.5 KiB written inside the array
    return memory.rss_mb() - before


ma._set_madvise_hugepage(True)
marked = written_mib()
memory.streaming_heap()
print(marked, written_mib(), ma._set_madvise_hugepage(False))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="transparent huge pages and /proc are Linux's")
def test_streaming_heap_stops_huge_pages():
    """312.5 KiB written in a 32 MiB array: with numpy's huge page marking (and the kernel's transparent huge
    pages) a 2 MiB page becomes resident; after ``streaming_heap`` numpy no longer marks (its switch reads off)
    and only the 4 KiB pages written do (under 0.5 MiB)."""
    r = subprocess.run([sys.executable, "-c", _SMALL_PAGES.format(root=str(ROOT))], capture_output=True, text=True,
                       timeout=120, check=True)
    marked, small, was_on = r.stdout.split()
    assert was_on == "False"                # the switch was off after streaming_heap
    assert float(small) < 0.5, r.stdout
    if float(marked) < 1.5:
        pytest.skip(f"no transparent huge page given to a marked array here ({marked} MiB): the contrast is not seen")
    assert float(marked) >= 1.9, r.stdout
