"""The odd-length mark of a dataset's query is the dataset's own, wherever its files were cut (issue 24).

An interval is marked odd-length when it is more than 10 % away from its LPAR's usual length: the median length of
the LPAR's intervals measured between two samples of their CPU, else of all of them (``app.engine.deltas``,
report's rule).  Extract marks a file's intervals by the file alone, so a file whose LPAR changes its interval
length (15 minutes, then 5) cut into pieces that each hold one length marked nothing; the query now marks every
row again by the usual lengths of the whole dataset when its stored marks are not all the dataset's own
(``app.dataset.stats.usual_lengths``).

The files: the z16 ZOSB running totals (subtype 2, 8 CPUs, a sample every 15 minutes from the run's start at
00:00), their first 49 samples per CPU (48 intervals), retimed so that after the ``k``-th interval the samples
come ``factor`` times as far apart; the counters are left as they are (running totals stay rising).  So an LPAR
has k intervals of 900 s and 48 - k of 900 x factor s (both measured between two samples): the usual length is
the length of the majority, the median of the two when k = 24, and the marked rows are, by hand:
k < 24: the 8 x k rows of 900 s; k > 24: the 8 x (48 - k) others; k = 24: all 384 (each 50 % or more away from
the mean of the two lengths).
"""

from __future__ import annotations

import gzip
import os
from fractions import Fraction
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, assert_same, retimed_records
from app.dataset import Dataset
from app.dataset import stats
from app.dataset.query import QuerySpec, run_query
from app.engine import Workspace
from app.engine.catalog import load_formula_sets
from app.engine.deltas import QUALITY_BITS, RUN_START_BIT
from app.engine.metrics import metric_ids
from app.formats import read_bytes, read_file
from app.formats.smf113_writer import frame_rdw

IDS = metric_ids(load_formula_sets())
CPUS, SAMPLES_PER_CPU = 8, 49
BY = ("cpu", "lpar", "interval")


@pytest.fixture(scope="module")
def z16_samples():
    s = read_file(SAMPLES[2]).samples          # after_z16_ZOSB: subtype 2 only, 8 CPUs, 15-minute samples
    assert set(s["kind"].astype(str)) == {"absolute"} and s["cpu"].nunique() == CPUS
    return s.iloc[:CPUS * SAMPLES_PER_CPU].reset_index(drop=True)


def marked(frame: pd.DataFrame) -> np.ndarray:
    return frame["quality"].fillna("").str.contains("odd-length").to_numpy()


def expected_marks(k: int) -> int:
    """Rows per CPU marked odd-length (module docstring, by hand)."""
    return k if k < 24 else 48 - k if k > 24 else 48


def _extract(ds: Dataset, d: Path, blobs: list[tuple[bytes, bool]]) -> None:
    for i, (blob, gz) in enumerate(blobs):
        p = d / (f"piece{i}.rdw" + (".gz" if gz else ""))
        p.write_bytes(gzip.compress(blob) if gz else blob)
        assert ds.extract(p).status in ("added", "present")


def _whole(recs: list[bytes], d: Path):
    """The whole file extracted once (query results per level) and report's results over it."""
    ds = Dataset(d / "whole", create=True)
    _extract(ds, d, [(b"".join(recs), False)])
    ws = Workspace()
    ws.add_all([read_bytes(frame_rdw(recs), "whole.rdw")])
    return {by: run_query(ds, QuerySpec(by=by)) for by in BY}, {by: ws.metrics(by=by) for by in BY}


def test_the_constants_the_statement_writes_are_the_engines():
    assert stats.ODD == QUALITY_BITS["odd-length"] and stats.RUN_START == RUN_START_BIT
    assert RUN_START_BIT > max(QUALITY_BITS.values())          # not a quality code: never shown


@pytest.mark.parametrize("k, factor", [(16, Fraction(1, 3)), (32, Fraction(1, 3)), (24, Fraction(2))])
def test_pieces_cut_where_the_length_changes_mark_as_the_whole_file_and_report(z16_samples, tmp_path, k, factor):
    """15 then 5 minutes (the minority 15-minute intervals marked), 15 then 5 with 5 in the minority, and a tie
    (15 then 30 minutes, 24 each: every interval marked), cut exactly at the change: the first piece holds only
    one length, the second only the other."""
    recs = [frame_rdw([r]) for r in retimed_records(z16_samples, k, factor)]
    want, rep = _whole(recs, tmp_path)
    cut = (k + 1) * CPUS                          # the records up to the k-th interval's end: one length only
    for by in BY:
        assert_same(want[by], rep[by], by, IDS)               # query over the whole file = report
    assert int(marked(want["cpu"]).sum()) == CPUS * expected_marks(k)
    assert not want["cpu"]["quality"].fillna("").str.contains("implausible").any()     # the same rates
    ds = Dataset(tmp_path / "ds", create=True)
    _extract(ds, tmp_path, [(b"".join(recs[cut:]), False), (b"".join(recs[:cut]), True)])
    ws = Workspace()            # report over the two pieces (overlapping by a sample per CPU) marks the same
    ws.add_all([read_bytes(b"".join(recs[cut - CPUS:]), "b.rdw"), read_bytes(b"".join(recs[:cut]), "a.rdw")])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)
        assert_same(ws.metrics(by=by), rep[by], by, IDS)


def test_the_usual_lengths_are_kept_with_the_cecs_stats(z16_samples, tmp_path):
    """``extract`` keeps each LPAR's usual length, and how many of its rows are marked otherwise, in stats.json
    (``refresh_stats``, as the command does); a query of a CEC whose marks are all its own marks nothing again."""
    recs = [frame_rdw([r]) for r in retimed_records(z16_samples, 16, Fraction(1, 3))]
    cut = 17 * CPUS                     # the run's start and 16 intervals of 900 s per CPU, then 32 of 300 s
    ds = Dataset(tmp_path / "ds", create=True)
    _extract(ds, tmp_path, [(b"".join(recs[:cut]), False)])
    stats.refresh_stats(ds)
    cache = stats._load(ds)
    (cec,) = cache
    assert cache[cec]["usual"] == [["ZOSB", "ZOSB", 900.0, 0]]
    assert stats.odd_length_of(cache, [cec]) is None
    _extract(ds, tmp_path, [(b"".join(recs[cut:]), False)])
    stats.refresh_stats(ds)
    cache = stats._load(ds)
    # 16 x 900 s and 32 x 300 s per CPU: usual 300 s; the 128 rows of 900 s were stored unmarked
    assert cache[cec]["usual"] == [["ZOSB", "ZOSB", 300.0, 16 * CPUS]]
    assert stats.odd_length_of(cache, [cec]) == [(cec, "ZOSB", "ZOSB", 300.0)]
    got = run_query(ds, QuerySpec(by="cpu"))
    odd = marked(got)
    assert odd.sum() == 16 * CPUS
    length = (got["interval_end"] - got["interval_start"]).dt.total_seconds()
    assert (length[odd] == 900.0).all() and (length[~odd] == 300.0).all()


@st.composite
def retimed_pieces(draw):
    """(k, factor, pieces, chunk KiB): pieces (first record, end record, gzip?) covering every record, cut anywhere
    (some at the change), overlapping, some repeated, in any order; each read whole or in chunks."""
    k = draw(st.integers(1, 47))
    factor = draw(st.sampled_from([Fraction(1, 3), Fraction(2), Fraction(3)]))
    n = CPUS * SAMPLES_PER_CPU
    cuts = set(draw(st.lists(st.integers(1, n - 1), max_size=3)))
    if draw(st.booleans()):
        cuts.add((k + 1) * CPUS)
    bounds = [0, *sorted(cuts), n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        ov = draw(st.integers(0, 24))
        out.append((max(0, lo - ov), hi, draw(st.booleans())))
    out += [(lo, hi, not gz) for lo, hi, gz in draw(st.lists(st.sampled_from(out), max_size=1))]
    order = draw(st.permutations(range(len(out))))
    # a piece read in chunks of this many KiB of records (None: whole): 200 KiB is 133 records of 1,544 bytes
    return k, factor, [out[i] for i in order], draw(st.sampled_from([None, 200]))


@pytest.mark.slow       # a few seconds an example
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(case=retimed_pieces())
def test_any_pieces_of_a_file_changing_its_length_mark_as_the_whole_file(z16_samples, case):
    k, factor, plan, kib = case
    recs = [frame_rdw([r]) for r in retimed_records(z16_samples, k, factor)]
    d = Path(tempfile.mkdtemp(prefix="nestscope-odd-"))
    old_env = os.environ.pop("NESTSCOPE_EXTRACT_CHUNK_MB", None)
    try:
        want, rep = _whole(recs, d)
        assert int(marked(want["cpu"]).sum()) == CPUS * expected_marks(k)
        for by in ("cpu", "lpar"):
            assert_same(want[by], rep[by], by, IDS)
        ds = Dataset(d / "ds", create=True)
        if kib:
            os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = str(kib / 1024)
        _extract(ds, d, [(b"".join(recs[lo:hi]), gz) for lo, hi, gz in plan])
        for by in BY:
            assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)
    finally:
        os.environ.pop("NESTSCOPE_EXTRACT_CHUNK_MB", None)
        if old_env is not None:
            os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = old_env
        shutil.rmtree(d, ignore_errors=True)
