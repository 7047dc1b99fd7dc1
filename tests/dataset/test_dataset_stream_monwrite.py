"""Streamed extract of z/VM MONWRITE (issue 24, "Speed and memory"): the walk goes block by block, carrying the
system, CPU types and cores, open P-bit series and findings, and decodes its finished intervals a chunk at a
time (app/formats/monwrite_stream.py); a gzip file's stream is spooled to a temporary file first.  Whole or in
chunks: the same samples, partition rows (busy % across a chunk's cut), findings (file and offset named) and
dataset.

The sample (resources/samples/after_VMSYS1_monwrite.mondata.gz): 23,613,440 bytes decompressed, 1442 blocks,
1442 sample intervals (D1R11), 5764 counter samples (4 CPUs), 12,960 partition rows.
"""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import ROOT, SAMPLES, assert_same, whole_and_chunked
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.formats import read_bytes
from app.formats.chunks import read_chunks

IDS = metric_ids(load_formula_sets())
MW = [p for p in SAMPLES if "monwrite" in p.name][0]
RAW = 23_613_440
KEY = ["lpar", "system", "class", "cpu", "t_end"]


def _table(ds: Dataset, table: str, key: list[str]) -> pd.DataFrame:
    t = pd.read_parquet(ds.root / table)
    t = t.drop(columns=["cec", "month", "sha256"]).sort_values(key, ignore_index=True)
    return t[sorted(t.columns)]


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype({c: object for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)})


def _joined(parts) -> pd.DataFrame:
    """The chunks' samples back to back; a counter a chunk has no record of (no D5R20 in it: no M448...) is 0,
    as in the whole file's frame, where ``sets`` says the set is absent (the dataset stores NULL there)."""
    got = pd.concat([_plain(p.samples) for p in parts], ignore_index=True)
    for c in got.columns:
        if c[0] in "BPKEM" and c[1:].isdigit() and got[c].isna().any():
            got[c] = got[c].fillna(0).astype("uint64")
    return got


def _assert_same_dataset(whole: Dataset, cut: Dataset) -> None:
    pd.testing.assert_frame_equal(_table(cut, "intervals", KEY), _table(whole, "intervals", KEY))
    pkey = ["time", "lpar", "class"]
    pd.testing.assert_frame_equal(_table(cut, "partitions", pkey), _table(whole, "partitions", pkey))
    assert_same(run_query(cut, QuerySpec(by="cpu")), run_query(whole, QuerySpec(by="cpu")), "cpu", IDS)


@pytest.fixture(scope="module")
def plain_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("mw") / "vmsys1.mondata"
    p.write_bytes(gzip.decompress(MW.read_bytes()))
    return p


@pytest.fixture(scope="module")
def damaged_file(tmp_path_factory):
    """The sample with the control record of block 721 (offset 11,800,576) overwritten: the whole file's read
    says bad-control-record there and resumes at the next block (its interval's 4 samples and 8 partition rows
    are lost); damage inside a block 100 bytes after the control record of block 480 is not met (padding)."""
    data = bytearray(gzip.decompress(MW.read_bytes()))
    data[11_800_576:11_800_576 + 64] = bytes(range(100, 164))
    p = tmp_path_factory.mktemp("mw") / "damaged.mondata"
    p.write_bytes(bytes(data))
    return p


def test_monwrite_gzip_in_chunks_gives_the_whole_files_dataset(tmp_path, monkeypatch):
    # 23,613,440 bytes in 1 MiB chunks: each chunk ends at the first block at or past 1,048,576 bytes after the
    # last cut (blocks of 8-16 KB), so 22 full chunks and the rest (545,768 bytes) -> 23 chunks
    whole, rw, cut, rc = whole_and_chunked(MW, tmp_path, 1.0, monkeypatch)
    assert rc.status == "added" and rc.entry["chunks"] == 23
    assert rc.entry["framing"] == rw.entry["framing"] == "monwrite+gzip"
    assert rc.entry["records"] == rw.entry["records"] and rc.entry["records"]["D5R13"] == 11_528
    assert rc.samples == rw.samples == 5764 and rc.intervals == rw.intervals
    assert rc.findings == rw.findings == 0
    _assert_same_dataset(whole, cut)


def test_plain_monwrite_file_in_chunks(plain_file, tmp_path, monkeypatch):
    whole, rw, cut, rc = whole_and_chunked(plain_file, tmp_path, 2.0, monkeypatch)
    # 2 MiB chunks of 23,613,440 bytes: 11 full ones and the rest -> 12
    assert rc.entry["chunks"] == 12 and rc.entry["framing"] == rw.entry["framing"] == "monwrite"
    assert rc.samples == rw.samples == 5764
    _assert_same_dataset(whole, cut)


def test_damaged_monwrite_in_chunks_says_what_the_whole_read_says(damaged_file, tmp_path, monkeypatch):
    whole, rw, cut, rc = whole_and_chunked(damaged_file, tmp_path, 0.5, monkeypatch)
    assert rc.entry["chunks"] > 1
    assert rc.entry["findings_sample"] == rw.entry["findings_sample"]
    msg = [m for m in rc.entry["findings_sample"] if "invalid MONWRITE control record" in m]
    assert msg and msg[0].startswith(f"{damaged_file}: offset 11800576 ")
    assert rc.samples == rw.samples == 5764 - 4
    _assert_same_dataset(whole, cut)


def test_truncated_monwrite_in_chunks(tmp_path, monkeypatch):
    # the bundled truncated file (97,070 bytes: the last block cut) in 16 KB chunks: the same samples and
    # the same "truncated" finding at the same offset
    path = ROOT / "resources" / "samples" / "broken" / "truncated_monwrite.mondata"
    want = read_bytes(path.read_bytes(), str(path))
    parts = list(read_chunks(path.read_bytes(), str(path), chunk=16 * 1024))
    assert len(parts) > 1 and [p.meta["more"] for p in parts][-1] is False
    got = _joined(parts)
    pd.testing.assert_frame_equal(got[list(want.samples.columns)], _plain(want.samples), check_dtype=False)
    assert [(f.offset, f.message) for p in parts for f in p.findings] == [(f.offset, f.message) for f in want.findings]
    assert any(f.code == "truncated" for f in want.findings)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kb=st.integers(300, 12_000), damaged=st.booleans())
def test_any_chunk_size_reads_the_monwrite_files_records(kb, damaged, tmp_path_factory):
    # any chunk size: the chunks' samples back to back are the whole file's (offsets included), their
    # partition rows are the whole file's (busy % across cuts), the findings and record counts are the same
    data = bytearray(gzip.decompress(MW.read_bytes()))
    if damaged:
        data[11_800_576:11_800_576 + 64] = bytes(range(100, 164))
    raw = bytes(data)
    want = read_bytes(raw, "f")
    parts = list(read_chunks(raw, "f", chunk=kb * 1024))
    assert len(parts) == 1 or all(p.meta["more"] for p in parts[:-1])
    assert len(parts) <= RAW // (kb * 1024) + 1        # every chunk but the last holds at least kb KiB of blocks
    got = _joined(parts)
    pd.testing.assert_frame_equal(got[list(want.samples.columns)], _plain(want.samples), check_dtype=False)
    gp = pd.concat([p.partitions for p in parts], ignore_index=True)
    gp = gp.sort_values(["time", "lpar", "class"], kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(gp, want.partitions, check_dtype=False)
    assert [f.message for p in parts for f in p.findings] == [f.message for f in want.findings]
    counts: dict[str, int] = {}
    for p in parts:
        for k, v in p.records.items():
            counts[k] = counts.get(k, 0) + v
    assert counts == want.records
