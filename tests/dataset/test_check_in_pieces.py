"""The extract's plausibility check of a chunk's intervals whose counters are made a row group at a time
(``app.dataset.adder.check_in_pieces``, issue 24): the same rows marked implausible and the same findings, in the
same order, as :func:`app.engine.plausibility.check` of the whole intervals frame with its counter columns, for
any size of the pieces; also past the per-file limit of detailed findings (10), where the rest of a file's rows
are summed up in one finding."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from app.dataset.adder import check_in_pieces
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


@pytest.mark.parametrize("bad,step", [(0, 4096), (3, 7), (14, 7), (14, 1), (14, 100_000)])
def test_same_marks_and_findings_as_the_whole_frame(bad, step):
    s = _samples(bad)
    iv, _ = compute_intervals([s.copy()], SETS)
    counters = [c for c in iv.columns if is_counter_column(c)]
    want = check(iv, SETS, counters)
    ident, _, rows = compute_intervals([s.copy()], SETS, lazy=True)
    got = check_in_pieces(ident, rows, SETS, step=step)
    assert got == want
    assert np.array_equal(ident["qbits"].to_numpy(), iv["qbits"].to_numpy())
    marked = int((iv["qbits"].to_numpy() & IMPLAUSIBLE != 0).sum())
    assert marked == bad                            # each spoiled record's interval, no other
    # up to 10 findings with every detail, the rest of the file's rows in one finding
    assert len(want) == min(bad, 10) + (1 if bad > 10 else 0)
