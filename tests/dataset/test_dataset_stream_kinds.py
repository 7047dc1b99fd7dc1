"""Streamed extract of the other input kinds (issue 24, "Speed and memory"): a gzip file (RDW or blocked SMF
inside) is decompressed a piece at a time and cut in chunks, a plain blocked file is cut before a block that
starts a record or after the last segment of a spanned record (VBS), a tersed data set is untersed a piece at
a time; each gives the dataset what the file read whole gives, running totals across chunk
cuts included.  Damaged gzip: the same findings (file and offset named), no traceback.

Files (resources/samples, see _fleet_helpers.SAMPLES): z16 ZOSA, RDW in gzip (4620 records, 7,784,976 bytes
decompressed); z16 ZOSC, BDW blocks in gzip (2304 records, 3,921,984 bytes); z15 ZOSA, RDW in gzip (2304
records of 1622 bytes, 3,737,088 bytes); z16 ZOSB as subtype 2 running totals (1544 records of 1536 bytes), as
test_dataset_stream.py makes it, gzipped here; z15 ZOSB tersed (SPACK, tests/terse_builders.py).
"""

from __future__ import annotations

import functools
import gzip

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, assert_same, whole_and_chunked
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.formats import read_bytes, read_file
from app.formats.chunks import read_chunks

IDS = metric_ids(load_formula_sets())
KEY = ["lpar", "system", "class", "cpu", "t_end"]


def _intervals(ds: Dataset) -> pd.DataFrame:
    iv = pd.read_parquet(ds.root / "intervals")
    iv = iv.drop(columns=["cec", "month", "sha256"]).sort_values(KEY, ignore_index=True)
    return iv[sorted(iv.columns)]


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype({c: object for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)})


def _assert_same_dataset(whole: Dataset, cut: Dataset) -> None:
    pd.testing.assert_frame_equal(_intervals(cut), _intervals(whole))
    assert_same(run_query(cut, QuerySpec(by="cpu")), run_query(whole, QuerySpec(by="cpu")), "cpu", IDS)


@pytest.fixture(scope="module")
def running_totals_gz(tmp_path_factory):
    from app.formats.smf113_writer import encode_samples, frame_rdw

    p = tmp_path_factory.mktemp("kinds") / "z16_zosb_st2.rdw.gz"
    p.write_bytes(gzip.compress(frame_rdw(encode_samples(read_file(SAMPLES[2]).samples, 2)), 6))
    return p


@pytest.mark.parametrize("idx, mb, chunks", [
    # 7,784,976 bytes in 1 MiB chunks: each takes the records that start within its 1,048,576 bytes -> 8 chunks
    (1, 1.0, 8),
    # 3,921,984 bytes of blocks in 0.5 MiB chunks: cut before the first block past each 524,288 bytes -> 8
    (3, 0.5, 8),
])
def test_gzip_file_in_chunks_gives_the_whole_files_dataset(idx, mb, chunks, tmp_path, monkeypatch):
    whole, rw, cut, rc = whole_and_chunked(SAMPLES[idx], tmp_path, mb, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == chunks
    assert rc.samples == rw.samples and rc.intervals == rw.intervals
    assert rc.entry["framing"] == rw.entry["framing"] and rc.entry["records"] == rw.entry["records"]
    _assert_same_dataset(whole, cut)


def test_gzipped_running_totals_cut_inside_their_run(running_totals_gz, tmp_path, monkeypatch):
    # 1544 records of 1536 bytes = 2,371,584 bytes decompressed; 0.25 MiB chunks: 171 records each (ceil(262,144
    # / 1536)) -> 10 chunks, every cut inside the run of each of the 8 CPUs: 192 intervals per CPU, none longer
    # than the 900 s between samples
    whole, _rw, cut, rc = whole_and_chunked(running_totals_gz, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == 10
    iv = _intervals(cut)
    assert len(iv) == 8 * 192 and iv["interval_s"].max() == 900.0
    _assert_same_dataset(whole, cut)


@pytest.fixture(scope="module")
def tersed_file(shared_path):
    # made once for the whole run (about 10 s of pure-Python tersing): the two tests using it may run on two workers
    from terse_builders import rdw_records, tersed

    def make(folder):
        (folder / "z15_zosb.trs").write_bytes(tersed(rdw_records(gzip.decompress(SAMPLES[5].read_bytes())), "SPACK"))

    return shared_path("z15_zosb_spack_trs", make) / "z15_zosb.trs"


def test_tersed_file_in_chunks(tersed_file, tmp_path, monkeypatch):
    # z15 ZOSB (1536 records of 1530 bytes) tersed SPACK: untersed on a thread a piece at a time; 2,350,080
    # bytes of RDW records in 0.25 MiB chunks: 172 records each (ceil(262,144 / 1530)) -> 9 chunks
    whole, rw, cut, rc = whole_and_chunked(tersed_file, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == 9
    assert rc.entry["framing"] == rw.entry["framing"] == "terse SPACK + RDW" and rc.samples == rw.samples == 1536
    _assert_same_dataset(whole, cut)


def test_cut_tersed_file_in_chunks(tersed_file, tmp_path, monkeypatch):
    # the tersed file cut in half: the records untersed before the cut are read in chunks; the finding (the
    # tersed data is cut, at the file's size) is the whole read's
    p = tmp_path / "half.trs"
    raw = tersed_file.read_bytes()
    p.write_bytes(raw[:len(raw) // 2])
    whole, rw, cut, rc = whole_and_chunked(p, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] > 1 and 0 < rc.samples == rw.samples < 1536
    msg = [m for m in rc.entry["findings_sample"] if "tersed data is cut" in m]
    assert msg and msg == [m for m in rw.entry["findings_sample"] if "tersed data is cut" in m]
    assert msg[0].startswith(f"{p}: offset {p.stat().st_size} ")
    _assert_same_dataset(whole, cut)


def test_plain_blocked_file_in_chunks(tmp_path, monkeypatch):
    p = tmp_path / "z16_zosc.bdw"
    p.write_bytes(gzip.decompress(SAMPLES[3].read_bytes()))
    whole, rw, cut, rc = whole_and_chunked(p, tmp_path, 0.5, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == 8 and rc.entry["framing"] == rw.entry["framing"] == "bdw"
    _assert_same_dataset(whole, cut)


@pytest.mark.parametrize("gz", [True, False])
def test_spanned_records_cut_at_their_last_segment(gz, tmp_path, monkeypatch):
    # the z16 ZOSB VBS sample (1544 records of 1536 bytes in blocks of 27,998 bytes, 2,372,260 bytes): every block
    # after the first starts with the last segment of a spanned record, so a chunk ends after that segment (its
    # block cut to it) and the next starts with the rest of the block; 0.25 MiB chunks: each ends in the first
    # block at or past 262,144 bytes (ceil(262,144 / 27,998) = 10 blocks), 85 blocks -> 9 chunks.  No record
    # cut, none read twice: the same
    # samples, record counts and framing as the file read whole
    p = SAMPLES[2]
    if not gz:
        p = tmp_path / "z16_zosb.vbs"
        p.write_bytes(gzip.decompress(SAMPLES[2].read_bytes()))
    whole, rw, cut, rc = whole_and_chunked(p, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == 9 and rc.samples == rw.samples == 1544
    assert rc.entry["records"] == rw.entry["records"] and rc.entry["framing"] == rw.entry["framing"]
    assert rc.findings == rw.findings == 0
    _assert_same_dataset(whole, cut)


def test_cut_gzip_file_in_chunks(tmp_path, monkeypatch):
    # the z15 ZOSA gzip cut after 60 % of its compressed bytes: the records before the cut are read in chunks,
    # the finding names the file and the offset where it ends, as the whole file's read does
    raw = SAMPLES[4].read_bytes()
    p = tmp_path / "cut.rdw.gz"
    p.write_bytes(raw[:len(raw) * 6 // 10])
    whole, rw, cut, rc = whole_and_chunked(p, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] > 1
    assert 0 < rc.samples == rw.samples < 2304
    msg = [m for m in rc.entry["findings_sample"] if "gzip file is cut" in m]
    assert msg and msg[0].startswith(f"{p}: offset {p.stat().st_size} ")
    assert msg == [m for m in rw.entry["findings_sample"] if "gzip file is cut" in m]
    _assert_same_dataset(whole, cut)


def test_damaged_gzip_member_in_chunks(tmp_path, monkeypatch):
    # two gzip members (the records before and after record 1200 of z15 ZOSA, 1622 bytes each); 64 bytes in the
    # middle of the first member's deflate data overwritten: it fails its check, the data is damaged there and
    # the framing walk skips to the next valid record.  Whole or in chunks: the same findings, every offset (of
    # the finding and in its text: where it resumed) that of the decompressed file, and the same dataset
    data = gzip.decompress(SAMPLES[4].read_bytes())
    a, b = gzip.compress(data[:1200 * 1622], 6), gzip.compress(data[1200 * 1622:], 6)
    bad = bytearray(a)
    mid = len(a) // 2
    bad[mid:mid + 64] = bytes(range(100, 164))
    p = tmp_path / "damaged.rdw.gz"
    p.write_bytes(bytes(bad) + b)
    whole, rw, cut, rc = whole_and_chunked(p, tmp_path, 0.25, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] > 1
    assert rc.entry["findings_sample"] == rw.entry["findings_sample"]
    gz = [m for m in rc.entry["findings_sample"] if "gzip member 1" in m]
    assert gz and gz[0].startswith(f"{p}: offset ")
    assert any("resumed at offset" in m for m in rc.entry["findings_sample"])
    assert rc.samples == rw.samples
    _assert_same_dataset(whole, cut)


@functools.cache
def _read_whole(idx: int):
    """SAMPLES[idx]'s bytes and their read whole: decoded once per process, not once per example (the
    examples draw among four files; the read result is never changed)."""
    raw = SAMPLES[idx].read_bytes()
    return raw, read_bytes(raw, "f")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kb=st.integers(40, 4000), idx=st.sampled_from([1, 2, 3, 5]))
def test_any_chunk_size_reads_the_gzip_files_records(kb, idx):
    # any chunk size: the chunks' samples, back to back, are the whole file's (offsets of the decompressed
    # file included), every chunk but the last says more follow
    raw, want = _read_whole(idx)
    parts = list(read_chunks(raw, "f", chunk=kb * 1024))
    assert [p.meta.get("more", False) for p in parts] == [True] * (len(parts) - 1) + [False]
    got = pd.concat([_plain(p.samples) for p in parts], ignore_index=True)
    assert set(got.columns) == set(want.samples.columns)
    pd.testing.assert_frame_equal(got[list(want.samples.columns)], _plain(want.samples), check_dtype=False)
    assert [f.message for p in parts for f in p.findings] == [f.message for f in want.findings]
