"""Issue 20, "damaged files lose only what is damaged": each case built with the project's writers (or the
spec-record corpus of tests/fuzz/corpus.py), damaged here, and read back."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
from app.formats import read_bytes  # noqa: E402
from app.formats import smf113 as S  # noqa: E402
from app.formats import smf113_layout as L  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

F = "t.bin"
N = 30
REC = 244                                   # length of every corpus record (spec 11.1 record)
ALL = [C.smf_b0(i) for i in range(N)]       # B0 of the records in file order: 1000 + i


def codes(r):
    return [f.code for f in r.findings]


def b0(r):
    return sorted(r.samples["B0"].astype(int).tolist())


# ------------------------------------------------------------------ one bad counter-set entry

def _csn_zero(rec: bytes, entry: int = 0) -> bytes:
    """The record with the CSN (counter count) of counter-set entry ``entry`` set to 0 (spec 6.3)."""
    r = bytearray(rec)
    dof = struct.unpack_from(">I", r, 44)[0]
    csof = struct.unpack_from(">I", r, dof + L.S2_CSOF)[0]
    csln = struct.unpack_from(">H", r, dof + L.S2_CSLN)[0]
    struct.pack_into(">H", r, csof + entry * csln + L.S2_CSN, 0)
    return bytes(r)


@pytest.mark.parametrize("entry", [0, 1])
def test_counter_set_entry_with_csn_0_costs_only_its_record(entry):
    recs = C.smf_records(N)
    recs[5] = _csn_zero(recs[5], entry)
    r = read_bytes(W.frame_rdw(recs), F)
    assert b0(r) == [b for i, b in enumerate(ALL) if i != 5]          # 29 of 30: only record 5 is lost
    bad = [f for f in r.findings if f.code == "bad-counter-set"]
    assert len(bad) == 1 and bad[0].offset == 5 * REC + 0               # record 5 starts at 5 x 244 (RDW included)
    assert "decode-failure" not in codes(r)


def test_a_failing_shape_costs_only_its_records(monkeypatch):
    """Last line of defence: an unexpected error decoding one shape loses that shape's records, not the file."""
    recs = C.smf_records(N)
    recs[7] = _csn_zero(recs[7], 1)                   # its own shape (the counter-set entries differ)
    real = S._decode_shape

    def boom(dec, sh, want=None, by_column=False):
        if dec.mat.shape[0] == 1:
            raise IndexError("damaged")
        return real(dec, sh, want, by_column)

    monkeypatch.setattr(S, "_decode_shape", boom)
    monkeypatch.setattr(L, "_sets_st2", lambda r, sh, cfvn, csvn, low: None)    # no set problems: decode runs
    r = read_bytes(W.frame_rdw(recs), F)
    assert len(r.samples) == N - 1
    bad = [f for f in r.findings if f.code == "decode-failure"]
    assert len(bad) == 1 and bad[0].offset == 7 * REC


# ------------------------------------------------------------------ resynchronisation after a damaged RDW

def _fake_header(length: int) -> bytes:
    """14 bytes that pass the header check (spec 2.3): LEN, SEG 0, FLG, RTY 30, TME 0, DTE 2024 day 075."""
    return struct.pack(">HHBB", length, 0, 0x5E, 30) + struct.pack(">I", 0) + bytes.fromhex("0124075F")


FAKE_AT = 196                  # record offset of counter B2 (B0 at 180, 8 bytes each): 14 bytes of counters


@pytest.mark.parametrize("rdw", [b"\x00\x00", b"\xff\xff", b"\x00\x03"])
def test_damaged_rdw_never_costs_the_intact_record_before_it(rdw):
    """Record 10's RDW is damaged; record 9 holds a header-like pattern whose length leads exactly to record 11
    (a confirmed chain).  Record 9 is an SMF 113 record its own sections fill exactly: it was read whole and is
    kept; only record 10 is lost (before: records 9 and 10, and a false type-30 record was counted)."""
    recs = [bytearray(r) for r in C.smf_records(N)]
    recs[9][FAKE_AT:FAKE_AT + 14] = _fake_header(REC - FAKE_AT + REC)     # ends at record 11's start
    data = bytearray(W.frame_rdw([bytes(r) for r in recs]))
    data[10 * REC:10 * REC + 2] = rdw
    r = read_bytes(bytes(data), F)
    assert len(r.samples) == N - 1
    assert set(ALL) - set(b0(r)) == {C.smf_b0(10)}
    assert r.meta["type_counts"] == {"113": N - 1}                       # no false record of another type
    bad = [f for f in r.findings if f.code == "corrupt-length"]
    assert [f.offset for f in bad] == [10 * REC]


@pytest.mark.parametrize("rdw", [b"\x00\x00", b"\xff\xff", b"\x00\x03"])
def test_false_header_reaching_the_end_of_file_does_not_swallow_the_records_after_it(rdw):
    """Inside the damaged record 10 a header-like pattern has a length that ends exactly at the end of the file
    (a weak candidate).  Resynchronisation finds the real record 11 (a confirmed chain) and resumes there:
    29 of 30 records (before: 10 of 30, the false record swallowed records 11 to 29)."""
    recs = [bytearray(r) for r in C.smf_records(N)]
    at = 10 * REC + FAKE_AT
    recs[10][FAKE_AT:FAKE_AT + 14] = _fake_header(N * REC - at)
    data = bytearray(W.frame_rdw([bytes(r) for r in recs]))
    data[10 * REC:10 * REC + 2] = rdw
    r = read_bytes(bytes(data), F)
    assert set(ALL) - set(b0(r)) == {C.smf_b0(10)}
    assert [f.message.split("resumed at offset ")[-1] for f in r.findings if f.code == "corrupt-length"] == \
        [str(11 * REC)]


# ------------------------------------------------------------------ a complete record that ends in zeros

@pytest.fixture(scope="module")
def zero_ending_records():
    """16 subtype-1 records of the sample workload model (one z15 LPAR, 2 intervals): 1530 bytes, each ending in
    928 zero bytes (counters that stay zero)."""
    import datetime as dt

    from app.sample.build import Z15_SEQ, _order_by_time, _smf, zos_lpars
    from app.sample.model import CecModel, make_samples

    s, _ = make_samples(CecModel("z15", Z15_SEQ, zos_lpars()[1:2]), dt.datetime(2026, 10, 5), 2, 900.0, seed=12)
    recs = _order_by_time(_smf(s, (1,)))
    assert all(len(r) - len(r.rstrip(b"\0")) >= 64 for r in recs)
    return recs


@pytest.mark.parametrize("pad", [1, 2, 3, 4, 100])
def test_complete_record_ending_in_zeros_is_kept_when_zeros_follow(zero_ending_records, pad):
    """The file cut 1-3 bytes into the next RDW (whose first byte is 0 for a record under 256 bytes), or zero
    padding after it: the last record is complete (an earlier record of its type and length ends in the same
    zeros) and is loaded (before: dropped as 'cut and padded')."""
    recs = zero_ending_records
    r = read_bytes(W.frame_rdw(recs) + b"\0" * pad, F)
    assert len(r.samples) == len(recs)
    end = sum(len(x) for x in recs)
    tr = [f for f in r.findings if f.code == "truncated-record"]
    assert len(tr) == (1 if pad < 4 else 0) and all(f.offset == end for f in tr)
    # zero padding after a record that ends in zeros: an info finding says what a cut there would have cost
    zp = [f for f in r.findings if f.code == "zero-padding"]
    assert [(f.offset, f.severity) for f in zp] == ([] if pad < 4 else [(end, "info")])


def test_record_cut_inside_its_counters_and_padded_is_still_not_loaded(zero_ending_records):
    recs = zero_ending_records
    data = W.frame_rdw(recs)
    cut = data[:-1000] + b"\0" * 1000 + b"\0" * 512        # cut 1000 bytes before the end: 72 counter bytes lost
    r = read_bytes(cut, F)
    assert len(r.samples) == len(recs) - 1
    assert "truncated-record" in codes(r)


# ------------------------------------------------------------------ records that are not subtype 1 or 2

@pytest.mark.parametrize("subtype", [0, 3, 0x0102])
def test_subtype_other_than_1_or_2_is_a_finding(subtype):
    recs = C.smf_records(N)
    recs[4] = recs[4][:22] + struct.pack(">H", subtype) + recs[4][24:]      # SMF113STY at record offset 22
    recs[6] = recs[6][:22] + struct.pack(">H", subtype) + recs[6][24:]
    r = read_bytes(W.frame_rdw(recs), F)
    assert r.records == {"113/1": 0, "113/2": N - 2, "other": 2}
    f = [f for f in r.findings if f.code == "unknown-subtype"]
    assert len(f) == 1 and f[0].offset == 4 * REC and f"subtype {subtype}" in f[0].message
    assert "2 records like this" in f[0].message


@pytest.mark.parametrize("careful", [False, True])
@pytest.mark.parametrize("rty", [0x73, 0x31, 0xF1])          # 113 = X'71' with one bit flipped
def test_record_type_byte_damaged_away_from_113_is_a_finding(rty, careful):
    """The framing says the records go on (valid RDW and header), but the type byte of record 8 says another
    type: the writer id 'HIS ' names it as a damaged SMF 113 record.  ``careful``: a damaged RDW elsewhere sends
    the walk down its record-by-record path (the other path checks all headers at once)."""
    recs = C.smf_records(N)
    recs[8] = recs[8][:5] + bytes([rty]) + recs[8][6:]
    data = bytearray(W.frame_rdw(recs))
    if careful:
        data[20 * REC:20 * REC + 2] = b"\xff\xff"
    r = read_bytes(bytes(data), F)
    assert r.records["113/2"] == N - 1 - careful and r.records["other"] == 1
    f = [f for f in r.findings if f.code == "damaged-record-type"]
    assert len(f) == 1 and f[0].offset == 8 * REC and f"type {rty}" in f[0].message


def test_other_record_types_of_other_writers_give_no_damaged_type_finding():
    recs = C.smf_records(N)
    recs.insert(3, W.other_record(30, 200))
    r = read_bytes(W.frame_rdw(recs), F)
    assert r.records["other"] == 1 and "damaged-record-type" not in codes(r)


# ------------------------------------------------------------------ repeated records dropped while decompressing

import gzip  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from app.formats import gunzip  # noqa: E402
from app.formats.stream_dedup import StreamDedup  # noqa: E402


def test_gzip_of_one_record_repeated_keeps_one_copy_in_memory():
    """10 distinct records, record 10 repeated 20,000 times (4.9 MB), 19 distinct records: the decompressed data
    kept is the 30 distinct records only (7,320 bytes); the finding and every offset name the decompressed file."""
    recs = C.smf_records(N)
    rep = 20_000
    body = W.frame_rdw(recs[:10]) + W.frame_rdw([recs[10]]) * rep + W.frame_rdw(recs[11:])
    gz = gzip.compress(body, mtime=0)
    dd = StreamDedup()
    out, found, stop = gunzip(gz, F, dedup=dd)
    assert stop is None and bytes(out) == W.frame_rdw(recs) and dd.count == rep - 1
    r = read_bytes(gz, F)
    assert b0(r) == ALL
    offs = r.samples.sort_values("B0")["offset"].tolist()
    assert offs == [i * REC for i in range(11)] + [(i + rep - 1) * REC for i in range(11, N)]   # unfiltered
    d = [f for f in r.findings if f.code == "duplicate-record"]
    assert len(d) == 1 and d[0].offset == 11 * REC and f"{rep - 1:,} records" in d[0].message


def test_offsets_of_findings_after_dropped_repeats_are_those_of_the_decompressed_file():
    recs = C.smf_records(N)
    rep = 50
    body = bytearray(W.frame_rdw(recs[:5]) + W.frame_rdw(recs[5:7]) * rep + W.frame_rdw(recs[7:]))
    bad = (5 + 2 * rep + 3) * REC                    # record 10 (0-based) of the stream: damaged RDW
    body[bad:bad + 2] = b"\xff\xff"
    r = read_bytes(gzip.compress(bytes(body), mtime=0), F)
    assert [f.offset for f in r.findings if f.code == "corrupt-length"] == [bad]
    assert set(ALL) - set(b0(r)) == {C.smf_b0(10)}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=60), st.integers(1, 40))
def test_gzip_and_plain_give_the_same_samples_and_offsets(order, times):
    """Any sequence of records (with repeats, near or far, in runs of any period): the gzip file gives the samples
    and offsets of the plain file (whose duplicates the reader's own check drops), and the same kept records."""
    recs = C.smf_records(6)
    seq = [recs[i] for i in order] * times
    plain = W.frame_rdw(seq)
    a, b = read_bytes(plain, F), read_bytes(gzip.compress(plain, mtime=0), F)
    cols = ["offset", "B0", "time"]
    assert a.samples[cols].reset_index(drop=True).equals(b.samples[cols].reset_index(drop=True))
    assert len(b.samples) == len(set(order))


# ------------------------------------------------------------------ a bad segment descriptor inside a block

@pytest.mark.parametrize("sdw", [b"\x00\x00\x00\x00", b"\xff\xff\x00\x00", b"\x00\xf4\xb7\x00", b"\x12\x34\x56\x78"])
def test_bad_segment_descriptor_costs_only_its_record_not_the_rest_of_the_block(sdw):
    """RECFM=VB blocks of 4 records (BDW 4 + 4 x 244 = 980 bytes).  The descriptor of the second record of the
    second block is damaged (zero, a huge length, the null-segment bit, random): the two records after it in
    the block are intact and are read (before: the rest of the block was skipped)."""
    data = bytearray(W.frame_bdw(C.smf_records(N), blksize=1000, spanned=False))
    assert data[980:984] == bytes.fromhex("03D40000")          # second block: BDW 980
    at = 980 + 4 + REC                                         # its second record (record 5 of the file)
    data[at:at + 4] = sdw
    r = read_bytes(bytes(data), F)
    assert set(ALL) - set(b0(r)) == {C.smf_b0(5)}
    f = [f for f in r.findings if f.code in ("corrupt-length", "null-segment")]
    assert [x.offset for x in f] == [at] and f"resumed at offset {at + REC}" in f[0].message


def test_no_resumption_inside_a_block_whose_own_length_is_in_doubt():
    """One byte inserted into the first BDW of a VBS file: the 'block' read there runs past the end of the file,
    so records are not looked for inside it (its BDW and SDW bytes tile like segments); the walk goes to the next
    valid block and loses only the first block's spanned record (found by the fuzz suite)."""
    d = bytearray(C.smf_file(20, "vbs"))
    d[2:2] = b"\x01"
    r = read_bytes(bytes(d), F)
    assert C.b0_values(r) == [C.smf_b0(i) for i in range(20) if i != 1]
