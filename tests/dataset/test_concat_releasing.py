"""The carried samples before a chunk's (app/dataset/adder.py ``_concat_releasing``, issue 24: the extract's peak)
are the frame ``_concat`` makes -- the same columns in the chunk's order, values, dtypes and categories -- for
frames whose counters are blocks in column order (the SMF reader's) or in row order, or whose columns differ;
the chunk a caller still holds is left as it was; and the chunk's counter blocks are let go one at a time as
they are copied, so the copy and the chunk are never both held whole.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.dataset.adder import _concat, _concat_releasing


def _frame(n: int, counters: list[str], seed: int, by_column: bool, group: int = 8) -> pd.DataFrame:
    """Identity columns, then the uint64 counters in blocks of ``group`` (column order) or one row-order block."""
    rng = np.random.default_rng(seed)
    ident = pd.DataFrame({"lpar": pd.Categorical(rng.choice(["SYSA", "SYSB", "LP1"], n)),
                          "cpu": rng.integers(0, 4, n).astype(np.int32),
                          "time": np.arange(n, dtype=np.int64).view("datetime64[ns]")})
    vals = rng.integers(0, 2**63, (n, len(counters)), dtype=np.uint64)
    if by_column:
        blocks = [pd.DataFrame(np.ascontiguousarray(vals[:, g:g + group].T).T, columns=counters[g:g + group],
                               copy=False) for g in range(0, len(counters), group)]
    else:
        blocks = [pd.DataFrame(vals, columns=counters, copy=False)]
    return pd.concat([ident] + blocks, axis=1)


COUNTERS = [f"B{i}" for i in range(6)] + [f"E{128 + i}" for i in range(13)]


@settings(max_examples=60, deadline=None)
@given(na=st.integers(0, 6), nb=st.integers(0, 30), k=st.integers(1, len(COUNTERS)), seed=st.integers(0, 2**31),
       by_column=st.booleans(), held=st.booleans())
def test_the_frame_of_concat(na, nb, k, seed, by_column, held):
    a = _frame(na, COUNTERS[:k], seed, by_column)
    b = _frame(nb, COUNTERS[:k], seed + 1, by_column)
    b["lpar"] = b["lpar"].cat.add_categories(["ZOSD"])      # categories a's column lacks
    want = _concat(a, b)
    keep = b.copy()
    box = [b]
    if not held:
        del b
    got = _concat_releasing(a, box)
    assert box == []
    pd.testing.assert_frame_equal(got, want)
    if held:                                  # the caller's frame as it was: every column, the same values
        pd.testing.assert_frame_equal(b, keep)
    for c in COUNTERS[:k]:                    # each counter one contiguous array (Arrow takes it as it is)
        assert got[c].to_numpy().flags.c_contiguous


def test_frames_whose_columns_differ_as_concat():
    a = _frame(3, COUNTERS[:5], 1, True)
    b = _frame(4, COUNTERS[:7], 2, True)         # two counters a lacks: NaN there, as _concat gives them
    pd.testing.assert_frame_equal(_concat_releasing(a, [b]), _concat(a, b))


_CHILD = """
import sys
import numpy as np
sys.path[:0] = [{root!r}, {here!r}]
from app import memory
from app.dataset.adder import _concat_releasing
from test_concat_releasing import _frame

def hwm_mb():
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024

memory.streaming_heap()
counters = [f"E{{128 + i}}" for i in range(80)]
a = _frame(5, counters, 3, True)
box = [_frame(20_000, counters, 4, {by_column!r})]
memory.release(collect=False)
start = memory.rss_mb()
assert memory.reset_peak()
out = _concat_releasing(a, box)
assert len(out) == 20_005
print(hwm_mb() - start)
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="the peak resident size is reset on Linux")
@pytest.mark.parametrize("by_column", [True, False])
def test_the_chunks_blocks_let_go_as_copied(by_column):
    """80 counters of 20,000 rows (a z16 chunk's): 12.2 MiB, in blocks of 8 (1.2 MiB).  ``_concat`` holds a whole
    copy beside the chunk (12.2 MiB more at its peak); here the most held beside the chunk is the copy's filled
    part while a block of the chunk waits for its last column: a block, the identity columns' copy and the
    copy's pages faulted ahead (transparent huge pages: 2 MiB at a time), under 6 MiB resident (the copy is one
    allocation whose pages become resident as they are filled: a measure of allocations would see it whole).
    A chunk in one row-order block cannot be let go before its last column: ``_concat``'s 12 MiB (the reader's
    blocks are what bounds it).  Measured in a fresh process with the extract's heap (every block of 1 MiB or
    more its own mapping): a test process's heap, after other tests, keeps freed blocks of its own."""
    root = str(Path(__file__).resolve().parents[2])
    code = _CHILD.format(root=root, here=str(Path(__file__).resolve().parent), by_column=by_column)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    extra = float(got.stdout.strip().splitlines()[-1])
    if by_column:
        assert extra < 6
    else:
        assert extra > 11
