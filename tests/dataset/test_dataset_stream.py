"""Streamed extract (issue 24, "Speed and memory"): a file read and added a chunk of records at a time gives the
dataset what the whole file read at once gives; chunk boundaries inside a run of subtype 2 running totals lose
or change no delta; records out of time order across chunks are settled as across files.

Files: the z16 ZOSB sample as subtype 2 running totals (1544 records of 1536 bytes, 8 CPUs, 193 samples each:
192 intervals per CPU) and the z15 ZOSB sample (subtype 1, 1536 records), both RDW-framed, as
test_dataset_dedup.py makes them.
"""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.formats import read_bytes, read_file
from app.formats.chunks import chunked, read_chunks

IDS = metric_ids(load_formula_sets())
KEY = ["lpar", "system", "class", "cpu", "t_end"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from app.formats.smf113_writer import encode_samples, frame_rdw

    d = tmp_path_factory.mktemp("stream")
    st2 = d / "z16_zosb_st2.rdw"
    st2.write_bytes(frame_rdw(encode_samples(read_file(SAMPLES[2]).samples, 2)))
    st1 = d / "z15_zosb_st1.rdw"
    st1.write_bytes(gzip.decompress(SAMPLES[5].read_bytes()))
    whole = {}
    for p in (st2, st1):
        ds = Dataset(d / f"whole-{p.stem}", create=True)
        r = ds.extract(p)
        assert r.status == "added" and "chunks" not in r.entry        # 2.4 MB: one chunk of the default 32 MiB
        whole[p.name] = (_intervals(ds), run_query(ds, QuerySpec(by="cpu")))
    return st2, st1, whole


def _intervals(ds: Dataset) -> pd.DataFrame:
    iv = pd.read_parquet(ds.root / "intervals")
    iv = iv.drop(columns=["cec", "month"]).sort_values(KEY, ignore_index=True)
    return iv[sorted(iv.columns)]


def _chunked_extract(path, root, mb: float, monkeypatch) -> tuple[Dataset, object]:
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", str(mb))
    ds = Dataset(root, create=True)
    return ds, ds.extract(path)


def test_read_chunks_gives_the_whole_files_samples(files):
    _st2, st1, _ = files
    data = st1.read_bytes()
    assert chunked(data) and not chunked(gzip.compress(data))
    whole = read_bytes(data, str(st1))
    parts = list(read_chunks(data, str(st1), chunk=100_000))
    # 1536 records of 1530 bytes; a chunk takes every record that starts within its 100,000 bytes: 66 records
    # (ceil(100,000 / 1530)) -> ceil(1536 / 66) = 24 chunks, every one but the last says more follow
    assert len(parts) == 24 and [p.meta["more"] for p in parts] == [True] * 23 + [False]
    got = pd.concat([p.samples for p in parts], ignore_index=True)
    assert len(got) == len(whole.samples) == 1536
    for c in whole.samples.columns:
        assert (got[c].astype(str).to_numpy() == whole.samples[c].astype(str).to_numpy()).all(), c
    assert got["offset"].iloc[-1] == 1535 * 1530           # offsets of the whole file, not of the chunk
    assert sum(p.records["113/1"] for p in parts) == whole.records["113/1"] == 1536


def test_chunk_boundary_inside_a_run_of_running_totals(files, tmp_path, monkeypatch):
    # 0.25 MiB chunks of 1536-byte records: 171 records (ceil(262,144 / 1536)) a chunk, 10 chunks for 1544
    # records; each cut is inside the one run every CPU has (and inside the 8 records of one time, as 171 is
    # not a multiple of 8): the deltas are those of the file read whole, interval for interval
    st2, _st1, whole = files
    ds, r = _chunked_extract(st2, tmp_path / "ds", 0.25, monkeypatch)
    assert r.status == "added" and r.entry["chunks"] == 10 and r.findings == 0
    iv = _intervals(ds)
    want, q = whole[st2.name]
    assert len(iv) == 8 * 192 and iv["interval_s"].max() == 900.0
    pd.testing.assert_frame_equal(iv.drop(columns=["sha256"]), want.drop(columns=["sha256"]))
    assert_same(run_query(ds, QuerySpec(by="cpu")), q, "cpu", IDS)


@pytest.mark.slow        # a few extracts of 2 to 20 chunks (under a minute on a loaded machine)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(kb=st.integers(120, 1200))
def test_any_chunk_size_gives_the_same_deltas(files, tmp_path_factory, kb):
    st2, _st1, whole = files
    import os

    os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = str(kb / 1024)
    try:
        ds = Dataset(tmp_path_factory.mktemp("any") / "ds", create=True)
        assert ds.extract(st2).status == "added"
    finally:
        del os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"]
    want, _ = whole[st2.name]
    pd.testing.assert_frame_equal(_intervals(ds).drop(columns=["sha256"]), want.drop(columns=["sha256"]))


def test_records_out_of_time_order_across_chunks(files, tmp_path, monkeypatch):
    # the second half of the running totals first, then the first half, in one file cut into 6 chunks (274
    # records of 1536 bytes in 0.4 MiB, 1544 records): the
    # first chunks of the earlier half fill the gap before the later half's first samples (an interval of a
    # pending part superseded, rewritten in place); the result is the file read in order
    st2, _st1, whole = files
    data = st2.read_bytes()
    n = len(data) // 1536
    half = n // 2 // 8 * 8 * 1536                     # at a time boundary: 8 records per time
    p = tmp_path / "swapped.rdw"
    p.write_bytes(data[half:] + data[:half])
    ds, r = _chunked_extract(p, tmp_path / "ds", 0.4, monkeypatch)
    assert r.status == "added" and r.entry["chunks"] == 6
    iv = _intervals(ds)
    want, q = whole[st2.name]
    assert len(iv) == 8 * 192 and iv["interval_s"].max() == 900.0
    assert not iv.duplicated(KEY).any()
    cols = [c for c in want.columns if c not in ("sha256", "source")]
    pd.testing.assert_frame_equal(iv[cols], want[cols])
    assert_same(run_query(ds, QuerySpec(by="cpu")), q, "cpu", IDS)
    assert r.entry["intervals_superseded"] == 0            # nothing committed was touched
    assert r.entry["intervals"] == 8 * 192


def test_chunked_and_committed_overlap(files, tmp_path, monkeypatch):
    # the subtype 1 file's first 60 % extracted whole, then the whole file in chunks: the overlap is not added
    # again, the dataset equals the file extracted once
    _st2, st1, whole = files
    data = st1.read_bytes()
    recs, o = [], 0
    while o < len(data):
        recs.append(o)
        o += int.from_bytes(data[o:o + 2], "big")
    cut = recs[int(len(recs) * 0.6)]                  # records 0 .. 920 of 1536
    head = tmp_path / "head.rdw"
    head.write_bytes(data[:cut])
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "0.3")
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(head).status == "added"
    r = ds.extract(st1)
    assert r.status == "added" and r.entry["chunks"] > 1 and r.entry["samples_held_already"] == 921
    want, q = whole[st1.name]
    iv = _intervals(ds)
    cols = [c for c in want.columns if c not in ("sha256", "source")]
    pd.testing.assert_frame_equal(iv[cols], want[cols])
    assert_same(run_query(ds, QuerySpec(by="cpu")), q, "cpu", IDS)


def test_chunks_filling_a_gap_between_committed_pieces(files, tmp_path, monkeypatch):
    # running totals: records 0-336 and 586-1543 in the dataset, then 297-641 in 0.2 MiB chunks (137 records of
    # 1536 bytes each: 3 chunks).  The first chunk's last interval ends at the dataset's sample of record 586
    # (the gap interval it replaces); each later chunk computes that interval again from its own last sample
    # and must replace the earlier chunk's, not add a second (the property test found it)
    st2, _st1, whole = files
    data = st2.read_bytes()

    def piece(name, lo, hi):
        p = tmp_path / name
        p.write_bytes(data[lo * 1536:hi * 1536])
        return p
    ds = Dataset(tmp_path / "ds", create=True)
    for p in (piece("a.rdw", 0, 337), piece("c.rdw", 586, 1544)):
        assert ds.extract(p).status == "added"
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "0.2")
    r = ds.extract(piece("b.rdw", 297, 642))
    assert r.status == "added" and r.entry["chunks"] == 3
    iv = _intervals(ds)
    want, q = whole[st2.name]
    assert len(iv) == 8 * 192 and not iv.duplicated(KEY).any() and iv["interval_s"].max() == 900.0
    cols = [c for c in want.columns if c not in ("sha256", "source")]
    pd.testing.assert_frame_equal(iv[cols], want[cols])
    assert_same(run_query(ds, QuerySpec(by="cpu")), q, "cpu", IDS)


def test_a_dump_holding_records_twice_in_chunks_counts_them_once(files, tmp_path, monkeypatch):
    # found by the issue 24 property test (700 KiB chunks): records 0..1120 of the z15 subtype-1 file twice in one
    # dump (3,430,260 bytes: 1121 records of 1530 bytes, twice), then the rest of the file. Record 1120 is the
    # only record of its time (11:15, CPU 0): it waits for the next chunk each time, so its two copies met in the
    # carried samples, where no part file holds either (kept twice before). And the final chunk then held that one
    # record beside the sample before it (11:00, its interval back to the run's start: 126,000 s), whose median
    # with 900 s made the 900 s interval "odd-length" (the usual length now counts only intervals measured between
    # two samples). Expected: the dataset of the whole file, interval for interval.
    _st2, st1, whole = files
    recs = [st1.read_bytes()[i * 1530:(i + 1) * 1530] for i in range(1536)]
    dump, rest = tmp_path / "twice.rdw", tmp_path / "rest.rdw"
    dump.write_bytes(b"".join(recs[:1121]) * 2)
    rest.write_bytes(b"".join(recs[1121:]))
    ds, r = _chunked_extract(dump, tmp_path / "ds", 700 / 1024, monkeypatch)
    assert r.status == "added" and r.samples == 1121           # 1,121 distinct samples, 1,121 held already
    assert ds.extract(rest).status == "added"
    want_iv, want_q = whole[st1.name]
    got = _intervals(ds)
    assert len(got) == len(want_iv) == 1536
    assert (got["qbits"].to_numpy() == want_iv["qbits"].to_numpy()).all()       # no "odd-length" row
    assert_same(run_query(ds, QuerySpec(by="cpu")), want_q, "cpu", IDS)


def test_a_chunks_samples_part_is_listed_after_its_intervals(files, tmp_path, monkeypatch):
    # each chunk's samples part is written before its intervals are computed (memory), but the look-ups that
    # compute them must not list it as a pending part (its samples would come back as stored context): at each
    # interval computation exactly one samples part on disk, this chunk's, is not yet listed; the dataset's
    # intervals are those of the whole file read in one piece
    from app.dataset.store import Dataset as DS

    _, st1, whole = files
    seen = []
    real = DS._intervals

    def spy(self, *a, **k):
        on_disk = {p.relative_to(self.root).as_posix() for p in (self.root / "samples").rglob("part-*.parquet")}
        listed = {rel for rel in self._pending if rel.startswith("samples/")}
        seen.append((len(on_disk - listed), listed <= on_disk))
        return real(self, *a, **k)
    monkeypatch.setattr(DS, "_intervals", spy)
    ds, r = _chunked_extract(st1, tmp_path / "ds", 0.5, monkeypatch)
    assert r.status == "added" and r.entry["chunks"] > 1
    assert len(seen) >= 2 and all(s == (1, True) for s in seen), seen
    want, _ = whole[st1.name]
    cols = [c for c in want.columns if c not in ("sha256",)]
    pd.testing.assert_frame_equal(_intervals(ds)[cols], want[cols])
