"""Counted once (issue 24): a dataset holds each sample and interval once, whatever files brought them.

The property: any set of overlapping, duplicated and reordered pieces of the sample files (cut at record
boundaries; a piece may be gzipped, or hold records of two files, as a dump with other records around them)
gives the same ``query`` results, per CPU and interval and per LPAR, as the whole files extracted once, in order,
whether a piece is read in one chunk or in several (the streamed extract).
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.formats import read_file

IDS = metric_ids(load_formula_sets())


def _records(data: bytes) -> list[bytes]:
    """The records of an RDW-framed SMF file (2-byte big-endian length including the 4-byte RDW)."""
    out, o = [], 0
    while o + 4 <= len(data):
        n = int.from_bytes(data[o:o + 2], "big")
        assert n >= 4
        out.append(data[o:o + n])
        o += n
    assert o == len(data)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two RDW files: z16 ZOSB running totals (subtype 2: 1544 records, 8 CPUs) and z15 ZOSB deltas (subtype 1,
    1536 records)."""
    from app.formats.smf113_writer import encode_samples, frame_rdw

    d = tmp_path_factory.mktemp("dedup")
    a = d / "z16_zosb_st2.rdw"
    a.write_bytes(frame_rdw(encode_samples(read_file(SAMPLES[2]).samples, 2)))
    b = d / "z15_zosb_st1.rdw"
    b.write_bytes(gzip.decompress(SAMPLES[5].read_bytes()))
    recs = [_records(a.read_bytes()), _records(b.read_bytes())]
    assert [len(r) for r in recs] == [1544, 1536]
    whole = Dataset(d / "whole", create=True)
    for p in (a, b):
        assert whole.extract(p).status == "added"
    want = {by: run_query(whole, QuerySpec(by=by)) for by in ("cpu", "lpar")}
    assert len(want["cpu"]) == 8 * 192 + 1536       # 193 samples per CPU: 192 intervals; one per delta record
    return recs, want


# the property's input: the first 12 hours of both files (the z16 run's start sample and 48 intervals per CPU:
# 392 records; the z15 deltas' first 48 intervals per CPU: 384 records), a quarter of each, so that an example's
# cost (every piece extracted, chunk by chunk) stays within seconds whatever pieces and chunk size are drawn
SMALL = (49 * 8, 48 * 8)


@pytest.fixture(scope="module")
def small(files, tmp_path_factory):
    """The property's two files (:data:`SMALL` records of each, from the start) and their query results when
    each is extracted once, whole and in order."""
    recs, _want = files
    recs = [r[:n] for r, n in zip(recs, SMALL)]
    d = tmp_path_factory.mktemp("dedup_small")
    whole = Dataset(d / "whole", create=True)
    for i, r in enumerate(recs):
        (d / f"f{i}.rdw").write_bytes(b"".join(r))
        assert whole.extract(d / f"f{i}.rdw").status == "added"
    want = {by: run_query(whole, QuerySpec(by=by)) for by in ("cpu", "lpar")}
    assert len(want["cpu"]) == 8 * 48 + 384         # 49 samples per CPU: 48 intervals; one per delta record
    assert want["cpu"]["interval_end"].dt.strftime("%H:%M").nunique() == 48     # 00:15 .. 12:00 of their days
    return recs, want


def _check(ds: Dataset, want) -> None:
    for by in ("cpu", "lpar"):
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)
    iv = pd.read_parquet(ds.root / "intervals")
    key = ["lpar", "system", "class", "cpu", "t_end"]
    assert not iv.duplicated(key).any()                      # counted once on disk too (what other engines read)
    assert iv["interval_s"].max() <= 900.0                   # no interval spans a gap a later file filled


@st.composite
def pieces(draw, sizes):
    """(file index, first record, end record, gzip?) pieces covering every record of both files, with overlaps
    and repeats, in any order; some pieces of the two files joined into one file."""
    out = []
    for f, n in enumerate(sizes):
        cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=2))))
        bounds = [0, *cuts, n]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            ov_lo = draw(st.integers(0, 40))          # overlap with the piece before / after (records)
            ov_hi = draw(st.integers(0, 40))
            out.append((f, max(0, lo - ov_lo), min(n, hi + ov_hi), draw(st.booleans())))
    extra = draw(st.lists(st.sampled_from(out), max_size=2))       # the same data again (maybe gzipped)
    out += [(f, lo, hi, not gz) for f, lo, hi, gz in extra]
    order = draw(st.permutations(list(range(len(out)))))
    joined = draw(st.booleans())
    return [out[i] for i in order], joined


@pytest.mark.slow      # about 15 s of CPU (a minute on a loaded machine)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(data=st.data())
def test_pieces_in_any_order_count_once(small, data):
    recs, want = small
    plan, joined = data.draw(pieces([len(r) for r in recs]))
    # the streamed extract: a piece (plain or gzipped) is read in chunks of this many KiB of records (None: the
    # default 32 MiB, the piece whole): 200 KiB is 133 records, 400 KiB 266 (1,536-byte records), so a piece of
    # the 12-hour files is cut in at most 4 chunks, within a sample
    kib = data.draw(st.sampled_from([None, 200, 400]))
    d = Path(tempfile.mkdtemp(prefix="nestscope-dedup-"))
    old_env = os.environ.pop("NESTSCOPE_EXTRACT_CHUNK_MB", None)
    if kib:
        os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = str(kib / 1024)
    try:
        blobs = [b"".join(recs[f][lo:hi]) for f, lo, hi, _gz in plan]
        if joined and len(blobs) >= 2:      # a dump holding records of both systems
            blobs = [blobs[0] + blobs[1]] + blobs[2:]
            plan = [plan[0]] + plan[2:]
        ds = Dataset(d / "ds", create=True)
        for i, (blob, (_f, _lo, _hi, gz)) in enumerate(zip(blobs, plan)):
            p = d / (f"piece{i}.rdw" + (".gz" if gz else ""))
            p.write_bytes(gzip.compress(blob) if gz else blob)
            assert ds.extract(p).status in ("added", "present")
        _check(ds, want)
    finally:
        os.environ.pop("NESTSCOPE_EXTRACT_CHUNK_MB", None)
        if old_env is not None:
            os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = old_env
        shutil.rmtree(d, ignore_errors=True)


def test_running_totals_p2_p0_p1(files, tmp_path):
    # the case: thirds of a subtype-2 run extracted p2, p0, p1: p0's last interval first spans p1's
    # time (up to p2's first sample); extracting p1 replaces it by p1's own intervals
    recs, want = files
    n = len(recs[0])
    thirds = [recs[0][:n // 3 // 8 * 8], recs[0][n // 3 // 8 * 8:2 * n // 3 // 8 * 8], recs[0][2 * n // 3 // 8 * 8:]]
    ds = Dataset(tmp_path / "ds", create=True)
    paths = []
    for i, part in enumerate(thirds):
        paths.append(tmp_path / f"p{i}.rdw")
        paths[-1].write_bytes(b"".join(part))
    for i in (2, 0):
        assert ds.extract(paths[i]).status == "added"
    iv = pd.read_parquet(ds.root / "intervals")
    assert iv["interval_s"].max() > 900.0            # the gap interval, until p1 comes
    r = ds.extract(paths[1])
    assert r.status == "added" and "8 stored interval(s)" in r.message     # one per CPU
    iv = pd.read_parquet(ds.root / "intervals")
    assert iv["interval_s"].max() == 900.0 and len(iv) == 8 * 192
    whole_zosb = want["cpu"][want["cpu"]["cec"] == "3931-123F5"]
    assert_same(run_query(ds, QuerySpec(by="cpu")), whole_zosb, "cpu", IDS)
    # and every engine's view of the table holds no superseded row
    assert int(np.sum(iv["t_end"] == iv["t_end"].max())) == 8


def test_gap_interval_superseded_inside_a_compacted_part(files, tmp_path):
    # p2 and p0 extracted, then compacted (the gap interval now sits in a merged part): extracting p1 rewrites
    # the merged part without it
    from app.dataset import compact

    recs, want = files
    n = len(recs[0]) // 3 // 8 * 8
    thirds = [recs[0][:n], recs[0][n:2 * n], recs[0][2 * n:]]
    paths = []
    for i, part in enumerate(thirds):
        paths.append(tmp_path / f"p{i}.rdw")
        paths[-1].write_bytes(b"".join(part))
    ds = Dataset(tmp_path / "ds", create=True)
    for i in (2, 0):
        assert ds.extract(paths[i]).status == "added"
    assert any(r["table"] == "intervals" for r in compact.compact(ds))
    ds = Dataset(tmp_path / "ds")
    assert "8 stored interval(s)" in ds.extract(paths[1]).message
    iv = pd.read_parquet(ds.root / "intervals")
    assert len(iv) == 8 * 192 and iv["interval_s"].max() == 900.0
    assert_same(run_query(ds, QuerySpec(by="cpu")), want["cpu"][want["cpu"]["cec"] == "3931-123F5"], "cpu", IDS)


def test_an_interval_seen_across_a_gap_is_not_marked_odd_once_the_gap_is_filled(files, tmp_path):
    """Found by test_pieces_in_any_order_count_once (seed 13155013064426743692216489283867068443), shrunk by hand.

    The z16 running totals' first 40 records (5 samples of 8 CPUs), then their last 12 records (CPUs 4-7 at 23:45
    and 00:00, CPUs 0-3 at 00:00): the second extract measures each CPU from its stored sample before the gap, so
    the LPAR's intervals are 4 x 900 s and 8 spanning the gap, their median is the gap's length and the four real
    900 s intervals ending 00:00 were marked odd-length.  The whole file extracted afterwards superseded the gap
    intervals but kept the stored 23:45-00:00 ones with their mark, where the file extracted once has none.  An
    interval whose start sample is of another file (here the stored sample before the gap) is no measure of the
    usual length."""
    recs, want = files
    ds = Dataset(tmp_path / "ds", create=True)
    for i, (lo, hi) in enumerate([(0, 40), (1532, 1544), (0, 1544)]):
        p = tmp_path / f"z16_{i}.rdw"
        p.write_bytes(b"".join(recs[0][lo:hi]))
        assert ds.extract(p).status == "added"
    got = run_query(ds, QuerySpec(by="cpu"))
    z16 = want["cpu"]["cec"] == got["cec"].iloc[0]
    assert (got["quality"].fillna("") == "").all(), got.loc[got["quality"].fillna("") != "",
                                                             ["cpu", "interval_end", "quality"]]
    assert len(got) == int(z16.sum())


def test_a_gap_filled_in_small_chunks_leaves_no_odd_length_mark(small, tmp_path, monkeypatch):
    """Found by test_pieces_in_any_order_count_once on the 12-hour files while it read each piece in three chunks
    (seed 195920358247832422170854374626629120766), shrunk by hand to the z16 pieces; issue 24.

    Records 268-392 (08:15 for CPUs 4-7, then 08:30 .. 12:00), 0-229 gzipped (00:00 .. 06:45, and 07:00 for CPUs
    0-4) and 218-280 gzipped (06:45 .. 08:30, filling the gap) read in three chunks: the file extracted once has no
    quality mark, the pieces leave CPUs 5-7's 06:45-07:00 intervals (900 s, measured from the 06:45 samples the
    second piece stored) marked odd-length: the chunk holding them had three such intervals and three 4,500 s
    ones across the stored gap, and none measured within the file, so the usual length was their median,
    2,700 s. The third piece holds the 06:45 samples too (left out as stored), so those intervals are measured
    within the file, and the usual length is taken over them first: 900 s."""
    recs, want = small
    ds = Dataset(tmp_path / "ds", create=True)
    for i, (lo, hi, gz) in enumerate([(268, 392, False), (0, 229, True), (218, 280, True)]):
        blob = b"".join(recs[0][lo:hi])
        p = tmp_path / (f"z16_{i}.rdw" + (".gz" if gz else ""))
        p.write_bytes(gzip.compress(blob) if gz else blob)
        if i == 2:
            monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", str(-(-len(blob) // 3) / (1 << 20)))
        assert ds.extract(p).status == "added"
    got = run_query(ds, QuerySpec(by="cpu"))
    z16 = want["cpu"][want["cpu"]["cec"] == "3931-123F5"]
    assert len(got) == len(z16) == 8 * 48
    marked = got.loc[got["quality"].fillna("") != "", ["cpu", "interval_end", "quality"]]
    assert marked.empty, marked
