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
    _assert_same_records(parts, want)


def _assert_same_records(parts, want) -> None:
    """The chunks' samples back to back are the whole read's (offsets included), their partition rows are the
    whole read's (busy % across cuts), and so are the findings (offset and message) and record counts."""
    got = _joined(parts)
    pd.testing.assert_frame_equal(got[list(want.samples.columns)], _plain(want.samples), check_dtype=False)
    gp = pd.concat([p.partitions for p in parts], ignore_index=True)
    gp = gp.sort_values(["time", "lpar", "class"], kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(gp, want.partitions, check_dtype=False)
    assert [(f.offset, f.message) for p in parts for f in p.findings] == [(f.offset, f.message) for f in want.findings]
    counts: dict[str, int] = {}
    for p in parts:
        for k, v in p.records.items():
            counts[k] = counts.get(k, 0) + v
    assert counts == want.records


# ---------------------------------------------------------------- RDW-wrapped MONWRITE (monwrite.md 1.2)
# A copy transferred as variable-length records: X'10040000' (RDW: length 4100 = 4 + 4096, two zero bytes)
# before every 4096-byte record.  Page k of the plain file (offset 4096 k) is at 4100 k + 4 in the wrapped copy,
# so a plain offset o is the wrapped offset o + 4 (o // 4096 + 1).
def _wrapped(raw: bytes) -> bytes:
    return b"".join(b"\x10\x04\x00\x00" + raw[i:i + 4096] for i in range(0, len(raw), 4096))


def _moved(o: int) -> int:
    return o + 4 * (o // 4096 + 1)


@pytest.fixture(scope="module")
def rdw_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("mw") / "vmsys1.rdw.mondata"
    p.write_bytes(_wrapped(gzip.decompress(MW.read_bytes())))       # 23,613,440 + 4 x 5765 = 23,636,500 bytes
    return p


def test_rdw_wrapped_monwrite_in_chunks_gives_the_whole_files_dataset(rdw_file, tmp_path, monkeypatch):
    assert rdw_file.stat().st_size == 23_636_500
    whole, rw, cut, rc = whole_and_chunked(rdw_file, tmp_path, 2.0, monkeypatch)
    # the deblocked stream is the plain file's 23,613,440 bytes: 2 MiB chunks of it as the plain test's -> 12
    assert rc.entry["chunks"] == 12 and rc.entry["framing"] == rw.entry["framing"] == "monwrite-rdw"
    assert rc.entry["records"] == rw.entry["records"] and rc.entry["records"]["D5R13"] == 11_528
    assert rc.samples == rw.samples == 5764 and rc.intervals == rw.intervals
    assert rc.findings == rw.findings == 0
    _assert_same_dataset(whole, cut)


def test_rdw_wrapped_chunks_name_the_wrapped_files_offsets(rdw_file, sample_result):
    # the chunks' samples are the plain sample's, each offset moved by the RDWs before it (hand rule above)
    plain = sample_result(MW.name)
    parts = list(read_chunks(rdw_file.read_bytes(), str(rdw_file), chunk=3 << 20))
    assert len(parts) > 1 and all(p.framing == "monwrite-rdw" for p in parts)
    got = _joined(parts)
    want = [_moved(int(o)) for o in plain.samples["offset"]]
    assert got["offset"].tolist() == want and want[0] > plain.samples["offset"].iloc[0]
    cols = [c for c in plain.samples.columns if c not in ("offset", "source")]
    pd.testing.assert_frame_equal(got[cols], _plain(plain.samples[cols]), check_dtype=False)


def test_truncated_rdw_monwrite_in_chunks_names_file_and_offset(tmp_path, monkeypatch):
    # the wrapped file cut 1230 bytes into the data of its record 2000 (8,201,234 bytes): the stream ends
    # 1230 bytes into page 2000, inside a monitor record; the plain file cut at the same place (page 2000 + 1230
    # bytes) names that record's plain offset, which the wrapped read names moved by 2001 RDWs
    raw = gzip.decompress(MW.read_bytes())
    path = tmp_path / "cut.rdw.mondata"
    path.write_bytes(_wrapped(raw)[:4100 * 2000 + 4 + 1230])
    plain_cut = read_bytes(raw[:4096 * 2000 + 1230], "p")
    (pf,) = [f for f in plain_cut.findings if f.code == "truncated"]
    want = read_bytes(path.read_bytes(), str(path))
    (wf,) = [f for f in want.findings if f.code == "truncated"]
    assert wf.offset == _moved(pf.offset) == 8_200_388 and wf.message.startswith(f"{path}: offset 8200388 ")
    parts = list(read_chunks(path.read_bytes(), str(path), chunk=512 << 10))
    assert len(parts) > 1 and parts[-1].meta["more"] is False
    assert [(f.offset, f.message) for p in parts for f in p.findings] == [(f.offset, f.message) for f in want.findings]
    pd.testing.assert_frame_equal(_joined(parts)[list(want.samples.columns)], _plain(want.samples),
                                  check_dtype=False)
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "1")
    r = Dataset(tmp_path / "ds", create=True).extract(path)
    assert r.status == "added" and r.entry["chunks"] > 1 and r.samples == len(want.samples)
    assert any(m.startswith(f"{path}: offset 8200388 ") and "file ends inside a monitor record" in m
               for m in r.entry["findings_sample"])


_CUT = 6 << 20          # the property's files: the sample's first 6 MiB (1536 pages), wrapped: 6,297,600 bytes


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kb=st.integers(256, 3_000), damage=st.sampled_from(["none", "rdw", "inserted"]), gz=st.booleans())
def test_any_chunk_size_reads_the_rdw_wrapped_files_records(kb, damage, gz):
    # any chunk size, plain or gzip, with a damaged RDW (its record kept) or 10 bytes inserted before an RDW
    # (skipped, the reading resumes after them): the chunks give the whole read's samples (offsets of the
    # wrapped file), partition rows, findings and record counts
    data = bytearray(_wrapped(gzip.decompress(MW.read_bytes())[:_CUT]))
    if damage == "rdw":
        data[4100 * 700:4100 * 700 + 4] = b"\x00\x00\x00\x00"
    elif damage == "inserted":
        data[4100 * 900:4100 * 900] = b"0123456789"
    raw = gzip.compress(bytes(data), 1) if gz else bytes(data)
    want = read_bytes(raw, "f")
    assert want.framing == ("monwrite-rdw+gzip" if gz else "monwrite-rdw")
    codes = {f.code for f in want.findings}         # the cut at 6 MiB: inside a record, series left open
    assert {"truncated", "incomplete-series"} <= codes and ("bad-rdw" in codes) == (damage != "none")
    parts = list(read_chunks(raw, "f", chunk=kb * 1024))
    assert len(parts) > 1 and all(p.meta["more"] for p in parts[:-1]) and not parts[-1].meta["more"]
    assert all(p.framing == want.framing for p in parts)
    _assert_same_records(parts, want)
