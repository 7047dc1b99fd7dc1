"""A careful SMF walk (blocks, VBS, a damaged RDW chain) keeps its records as offsets and lengths
(app/formats/smf_framing.py ``WalkedRecords``, issue 24), not a memoryview and a tuple per record: the records
it gives are the bytes written, a spanned record's joined segments kept apart, runs of adjacent records read as
one piece; and the extract's spool of a blocked chunk (smf113._spooled_records) puts exactly those bytes back
to back."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # repo root for app
import smf_builders as B  # noqa: E402

from app.formats import smf113  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.smf_framing import RecordSpans, WalkedRecords, frame_records  # noqa: E402


def _records(n: int = 12) -> list[bytes]:
    """SMF 113 records of two lengths (subtype 2: 244 bytes, subtype 1: 230; smf_builders), CPUs 0.. n-1."""
    out = []
    for k in range(n):
        rec = dict(system="SYSA", cpu=k, cls_code=0, cpu_speed=5200, machine_type="3931", model="A01",
                   seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS, time_tod=B.CTM, flags=0x4000,
                   counters={1: B.BASIC, 2: B.PROBLEM8})
        out.append(W.encode_subtype2(rec) if k % 2 else W.encode_subtype1(rec))
    return out


def _spanned_count(recs: list[bytes], blksize: int) -> int:
    """Records the writer splits into segments (W.frame_bdw's rule: a record that does not fit the room left in
    its block, with at least one byte of room for a segment)."""
    used, n = 4, 0
    for r in recs:
        if used + len(r) <= blksize:
            used += len(r)
            continue
        n += 1
        data, first = len(r) - 4, True
        while data:
            room = blksize - used - 4
            if room < 1:
                used = 4
                continue
            part = min(room, data)
            data -= part
            used += 4 + part
            if data:
                used = 4
    return n


@pytest.mark.parametrize("blksize,spanned", [(1000, True), (700, True), (27998, True), (1000, False)])
def test_blocked_walk_gives_the_records_written(blksize, spanned):
    recs = _records()
    data = W.frame_bdw(recs, blksize=blksize, spanned=spanned)
    fr = frame_records(data, "b.smf")
    got = fr.records
    assert isinstance(got, WalkedRecords) and len(got) == len(recs)
    assert [bytes(r) for _, r in got] == recs                      # every record, in order, RDW included
    # a record the walk joined (spanned) is kept as its bytes; every other one is where its offset says
    assert len(got.made) == (_spanned_count(recs, blksize) if spanned else 0)
    for i, (off, rec) in enumerate(got):
        if i in got.made:
            assert bytes(data[off:off + len(rec)]) != rec          # (its first segment's SDW is there)
        else:
            assert bytes(data[off:off + len(rec)]) == rec
    assert got.offs.dtype == np.int64 and got.lens.tolist() == [len(r) for r in recs]


def test_pieces_are_runs_of_adjacent_records():
    recs = _records(8)                    # 230, 244, 230, 244... bytes (subtype 1, 2, 1, 2...)
    assert [len(r) for r in recs] == [230, 244] * 4
    # blocks of 704 bytes of records: 0-2 (230 + 244 + 230 = 704), 3-4 (244 + 230; a third: 718), 5-6, 7
    data = W.frame_bdw(recs, blksize=4 + 230 + 244 + 230, spanned=False)
    got = frame_records(data, "b.smf").records
    for a, b in [(0, 8), (0, 1), (2, 5), (3, 6), (7, 8)]:
        pieces = got.pieces(a, b)
        assert b"".join(pieces) == b"".join(recs[a:b])
    # one piece a block (the blocks' descriptors between them): 4 blocks; records 2-4 span blocks 1 and 2
    assert len(got.pieces(0, 8)) == 4 and len(got.pieces(2, 5)) == 2 and len(got.pieces(3, 5)) == 1


def test_pieces_keep_a_spanned_record_apart():
    recs = _records(6)
    data = W.frame_bdw(recs, blksize=600, spanned=True)
    got = frame_records(data, "b.smf").records
    assert got.made                       # (some record spans blocks at this size)
    assert b"".join(got.pieces(0, len(got))) == b"".join(recs)
    for i in got.made:
        assert got.made[i] in got.pieces(i, i + 1)


def test_pop_and_truncate():
    recs = _records(5)
    got = frame_records(W.frame_bdw(recs, blksize=600, spanned=True), "b.smf").records
    n = len(got)
    last = got[-1]
    assert bytes(last[1]) == recs[-1]
    got.truncate(2)
    assert len(got) == 2 and [bytes(r) for _, r in got] == recs[:2]
    assert all(i < 2 for i in got.made)
    assert n == 5
    with pytest.raises(IndexError):
        got[2]


def test_a_clean_rdw_walk_keeps_its_spans_and_a_damaged_one_walks_carefully():
    recs = _records(6)
    clean = W.frame_rdw(recs)
    assert isinstance(frame_records(clean, "a.smf").records, RecordSpans)
    cut = len(recs[0])
    damaged = clean[:cut] + b"\xff\xff\xff\xff" + clean[cut:]          # 4 bytes of garbage after a record
    fr = frame_records(damaged, "a.smf")
    assert isinstance(fr.records, WalkedRecords)
    assert [bytes(r) for _, r in fr.records] == recs and not fr.records.made
    assert "corrupt-length" in [f.code for f in fr.findings]


def test_the_spool_of_a_blocked_chunk_holds_the_records_back_to_back(tmp_path, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_SPOOL_DIR", str(tmp_path))
    recs = _records(10)
    got = frame_records(W.frame_bdw(recs, blksize=700, spanned=True), "b.smf").records
    mm, head = smf113._spooled_records(got, sum(map(len, recs)))
    try:
        assert bytes(mm) == b"".join(recs)
        starts = np.concatenate([[0], np.cumsum([len(r) for r in recs])[:-1]])
        assert [bytes(head[i]) for i in range(len(recs))] == [bytes(mm[s:s + 52]) for s in starts]
    finally:
        mm.close()


def test_a_blocked_file_decodes_as_its_rdw_twin():
    recs = _records(10)
    a = smf113.read_smf(W.frame_rdw(recs), "x")
    for spanned in (True, False):
        b = smf113.read_smf(W.frame_bdw(recs, blksize=700, spanned=spanned), "x")
        cols = [c for c in a.samples.columns if c != "offset"]
        assert a.samples[cols].equals(b.samples[cols]) and len(b.samples) == 10
