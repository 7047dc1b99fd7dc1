"""The extract's plausibility check of a chunk's intervals whose counters are made a row group at a time, as the
part is written (``app.dataset.adder.CheckedDeltas``, issue 24): the same rows marked implausible and the same
findings, in the same order, as :func:`app.engine.plausibility.check` of the whole intervals frame with its
counter columns, for any size of the pieces, the rows asked for in any order (a part's rows are a chunk's rows
of one CEC and month, and some rows are never written: they are tested for the findings at the end); also past
the per-file limit of detailed findings (10), where the rest of a file's rows are summed up in one finding."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from app.dataset.adder import CheckedDeltas
from app.engine.catalog import load_formula_sets
from app.engine.deltas import compute_intervals
from app.engine.plausibility import IMPLAUSIBLE, check
from app.formats import read_file
from app.formats.schema import is_counter_column

SETS = load_formula_sets()
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"


@functools.lru_cache(maxsize=1)
def _deltas():
    s = read_file(SAMPLE).samples
    return s[s["kind"].astype(str) == "delta"].reset_index(drop=True)


def _samples(bad: int):
    s = _deltas().copy()
    rows = np.arange(bad) * 5 + 3                   # every 5th record from the 4th: a delta record is an interval
    b1 = s["B1"].to_numpy(dtype=np.uint64).copy()
    # instructions (B1) at 20 per cycle (B0): above any generation's 8 per cycle (MAX_IPC) and the wall clock
    b1[rows] = s["B0"].to_numpy(dtype=np.uint64)[rows] * np.uint64(20) + np.uint64(10**9)
    s["B1"] = b1
    return s


@pytest.mark.parametrize("bad,step,asked", [(0, 4096, "all"), (3, 7, "all"), (14, 7, "all"), (14, 1, "some"),
                                            (14, 100_000, "all"), (14, 33, "some"), (14, 100, "none")])
def test_same_marks_and_findings_as_the_whole_frame(bad, step, asked):
    s = _samples(bad)
    iv, _ = compute_intervals([s.copy()], SETS)
    counters = [c for c in iv.columns if is_counter_column(c)]
    want = check(iv, SETS, counters)
    ident, _, later = compute_intervals([s.copy()], SETS, lazy=True)
    before = ident["qbits"].to_numpy().copy()
    got = CheckedDeltas(ident, later, SETS)
    n = len(ident)
    if asked == "all":              # in slices, as a part of every row of a chunk is written
        order = [slice(a, min(n, a + step)) for a in range(0, n, step)]
    elif asked == "some":           # every other row, from the end, in index arrays (a part's rows: ``take``)
        rows = np.arange(n)[::-2].copy()
        order = [rows[a:a + step] for a in range(0, len(rows), step)]
    else:
        order = []
    seen = np.zeros(n, bool)
    for idx in order:
        m = got.rows(idx)
        assert np.array_equal(m, later.rows(idx), equal_nan=True)       # the deltas as they are made
        seen[idx] = True
    assert got.findings() == want
    assert got.findings() == want                   # asked again: the same (nothing tested twice changes it)
    qb = got.own_columns["qbits"]
    assert np.array_equal(qb[seen], iv["qbits"].to_numpy()[seen])       # the rows written carry the marks
    assert np.array_equal(ident["qbits"].to_numpy(), before)           # the frame itself is left as it was
    marked = int((iv["qbits"].to_numpy() & IMPLAUSIBLE != 0).sum())
    assert marked == bad                            # each spoiled record's interval, no other
    if asked == "all":
        assert int((qb & IMPLAUSIBLE != 0).sum()) == bad
    # up to 10 findings with every detail, the rest of the file's rows in one finding
    assert len(want) == min(bad, 10) + (1 if bad > 10 else 0)
