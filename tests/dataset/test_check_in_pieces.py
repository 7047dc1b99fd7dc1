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


def test_extract_in_chunks_marks_and_says_what_the_whole_file_does(tmp_path, monkeypatch):
    # a record of the last third of the file spoiled (E149's value flipped by 2**32 and more: above any bound);
    # the file extracted whole and in chunks of about a third: the one interval marked, its finding in the
    # manifest (the chunked extract tests the chunk's deltas as its intervals' part is written)
    import sys

    import pandas as pd

    from app.dataset import Dataset

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from damaged import samples, write

    s = samples(intervals=30)                               # 3 CPUs: 90 records
    path, _ = write(tmp_path, s, (80, "E149"))
    got = {}
    for name, mb in (("whole", None), ("chunks", Path(path).stat().st_size / 3 / (1 << 20))):
        if mb is not None:
            monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", repr(mb))
        ds = Dataset(tmp_path / name, create=True)
        r = ds.extract(path)
        assert r.status == "added"
        iv = pd.read_parquet(ds.root / "intervals", columns=["cpu", "t_end", "qbits"])
        marked = iv.loc[(iv["qbits"] & IMPLAUSIBLE) != 0, ["cpu", "t_end"]]
        said = [m for m in r.entry["findings_sample"] if "breaks the physical bound" in m]
        got[name] = (r.entry.get("chunks", 1), marked.to_numpy().tolist(), said)
    assert got["chunks"][0] >= 3 and got["whole"][0] == 1
    assert len(got["whole"][1]) == 1 and len(got["whole"][2]) == 1 and "E149" in got["whole"][2][0]
    assert got["chunks"][1:] == got["whole"][1:]
