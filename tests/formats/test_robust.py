"""Issue 14: every damaged-file defect of the mutation campaign, each with its small file built here."""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
import smf_builders as B  # noqa: E402
from app import formats  # noqa: E402
from app.formats import read_bytes, read_file  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

F = "t.bin"
REC = 244                                   # length of every corpus SMF record
ALL20 = [C.smf_b0(i) for i in range(20)]    # B0 of the 20 records, in file order


def codes(r):
    return [f.code for f in r.findings]


def within(seconds, fn, *a):
    """Run fn in a thread; fail (instead of hanging the suite) when it does not return in time."""
    box = {}

    def run():
        box["r"] = fn(*a)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not return within {seconds} s (hang)"
    return box["r"]


# ------------------------------------------------------------------ SMF framing
@pytest.mark.parametrize("framing,blk", [("bdw", 1000), ("vbs", 300)])
def test_extended_bdw_of_length_zero_does_not_hang(framing, blk):
    data = bytearray(W.frame_bdw(C.smf_records(20), blksize=blk, spanned=framing == "vbs"))
    b1 = struct.unpack(">H", data[:2])[0]            # second block starts after the first
    data[b1:b1 + 4] = b"\x80\x00\x00\x00"            # extended BDW, 31-bit length 0
    r = within(10, read_bytes, bytes(data), F)
    assert "corrupt-length" in codes(r)
    assert any(f.offset == b1 for f in r.findings)
    # the first block's records come first and unchanged; later blocks are found again
    b0 = C.b0_values(r)
    assert b0[0] == ALL20[0] and b0[-1] == ALL20[-1] and b0 == sorted(b0) and set(b0) <= set(ALL20)
    assert len(b0) >= 20 - (4 if framing == "bdw" else 3)   # one block's records (VBS: those touching it)


def test_sdw_of_length_5_is_a_finding_not_an_indexerror():
    seg5 = struct.pack(">HBB", 5, 0, 0) + b"\x71"    # SDW length 5: one data byte, no record header
    data = B.bdw(C.smf_record(0), seg5) + B.bdw(C.smf_record(1))
    r = read_bytes(data, F)
    assert C.b0_values(r) == [1000, 1001]
    assert "corrupt-length" in codes(r)
    assert any(f.offset == 4 + REC for f in r.findings)   # the bad SDW right after the first record


def test_null_segment_bit_on_a_segment_with_data_after_it_is_a_finding_and_the_block_is_read():
    recs = C.smf_records(16)
    data = bytearray(B.bdw(*recs))                   # one block of 16 records
    data[4 + 2] = 0x80                               # first SDW: null-segment bit
    r = read_bytes(bytes(data), F)
    assert C.b0_values(r) == [C.smf_b0(i) for i in range(16)]
    f = [f for f in r.findings if f.code == "null-segment"]
    assert len(f) == 1 and f[0].offset == 4


def test_true_null_segment_ends_the_block_silently():
    data = B.bdw(C.smf_record(0), struct.pack(">HBB", 0, 0x80, 0) + bytes(20)) + B.bdw(C.smf_record(1))
    r = read_bytes(data, F)
    assert C.b0_values(r) == [1000, 1001] and r.findings == []


def test_flag_byte_without_x40_is_a_finding_and_the_record_is_read():
    recs = [bytearray(x) for x in C.smf_records(3)]
    recs[1][4] &= ~0x40 & 0xFF                       # SMF113FLG X'DE' -> X'9E'
    r = read_bytes(b"".join(bytes(x) for x in recs), F)
    assert C.b0_values(r) == [1000, 1001, 1002]
    f = [f for f in r.findings if f.code == "flag-no-subtype"]
    assert len(f) == 1 and f[0].offset == REC and "9E" in f[0].message


def test_rdw_length_twice_the_record_does_not_swallow_the_next():
    data = bytearray(C.smf_file(20))
    data[3 * REC:3 * REC + 2] = struct.pack(">H", 2 * REC)
    r = read_bytes(bytes(data), F)
    assert C.b0_values(r) == ALL20                   # record 3 read with its own 244 bytes, record 4 found
    f = [f for f in r.findings if f.code == "corrupt-length"]
    assert len(f) == 1 and f[0].offset == 3 * REC


@pytest.mark.parametrize("framing", ["rdw", "double-rdw"])
def test_damaged_first_rdw_loses_only_the_first_record(framing):
    data = bytearray(C.smf_file(20, framing))
    data[0:2] = b"\x00\x00"
    r = read_bytes(bytes(data), F)
    assert r.framing == framing
    assert C.b0_values(r) == ALL20[1:]
    assert len(r.findings) == 1 and r.findings[0].offset == 0 and r.findings[0].severity == "error"


def test_damaged_first_bdw_loses_only_the_first_block():
    data = bytearray(C.smf_file(20, "bdw"))           # blocks of 4 records
    data[0:4] = b"\xff\xff\xff\xff"
    r = read_bytes(bytes(data), F)
    assert r.framing == "bdw" and C.b0_values(r) == ALL20[4:]
    assert [f.offset for f in r.findings] == [0]


def test_one_stray_byte_after_every_record_loses_nothing():
    data = b"".join(x + b"\x77" for x in C.smf_records(20))
    r = read_bytes(data, F)
    assert C.b0_values(r) == ALL20
    lost = [f for f in r.findings if f.code == "corrupt-length"]
    assert lost and all("skipped 1 bytes" in f.message for f in lost[:19])
    assert lost[0].offset == REC                     # the first stray byte


def test_cut_record_followed_by_zero_padding_is_not_loaded_as_complete():
    data = C.smf_file(20)
    cut = 19 * REC + 100                             # inside the last record
    padded = data[:cut] + bytes(20 * REC + 512 - cut)
    r = read_bytes(padded, F)
    assert C.b0_values(r) == ALL20[:19]
    f = [f for f in r.findings if f.code == "truncated-record"]
    assert len(f) == 1 and f[0].offset == cut


def test_complete_file_followed_by_zero_padding_has_no_finding():
    r = read_bytes(C.smf_file(20) + bytes(4096), F)
    assert C.b0_values(r) == ALL20 and r.findings == []


def _damaged(size: int) -> bytes:
    """Records with every 97th byte flipped: thousands of near-valid candidate headers."""
    d = bytearray(b"".join(C.smf_records(200)) * (size // (200 * REC) + 1))[:size]
    for i in range(0, len(d), 97):
        d[i] ^= 0x55
    return bytes(d)


def test_resynchronisation_is_linear_not_quadratic():
    good = C.smf_file(20)
    times = []
    for size in (600_000, 2_400_000):
        data = good + _damaged(size) + good
        t = time.perf_counter()
        r = within(60, read_bytes, data, F)
        times.append(time.perf_counter() - t)
        assert C.b0_values(r)[:20] == ALL20          # the good records before the damage
    # 4x the damaged bytes may take about 4x as long (quadratic was 16x: 19 s for 2.3 MB, 60 s for 4.6 MB)
    assert times[1] < 8 * times[0] + 1.0, times


def test_short_records_beyond_ten_are_counted():
    short = [struct.pack(">HH", 40, 0) + bytes([0xDE, 113]) + struct.pack(">I", 0) + bytes.fromhex("0124075F")
             + bytes(26) for _ in range(15)]         # 40-byte type-113 records: shorter than 52
    r = read_bytes(b"".join(short) + C.smf_file(2), F)
    assert codes(r).count("short-record") == 11
    more = [f for f in r.findings if f.code == "short-record" and "more" in f.message]
    assert len(more) == 1 and "5 more" in more[0].message


# ------------------------------------------------------------------ gzip
def test_gzip_flipped_byte_keeps_everything_before_it():
    plain = C.smf_file(200)
    gz = bytearray(gzip.compress(plain, mtime=0))
    for pos in (20, len(gz) // 2, len(gz) - 12):
        g = bytearray(gz)
        g[pos] ^= 0x01
        r = read_bytes(bytes(g), F)
        assert r.kind == "smf" or pos < 40
        b0 = C.b0_values(r)
        assert b0 == [C.smf_b0(i) for i in range(len(b0))]   # a prefix of the clean file, unchanged
        assert any(c.startswith("gzip-") for c in codes(r))


def test_gzip_flipped_crc_keeps_all_records():
    gz = bytearray(gzip.compress(C.smf_file(200), mtime=0))
    gz[-6] ^= 0x01                                   # CRC32 of the member
    r = read_bytes(bytes(gz), F)
    assert len(r.samples) == 200 and codes(r) == ["gzip-checksum"]


def test_cut_gzip_is_named_as_cut():
    gz = gzip.compress(C.smf_file(200), mtime=0)
    r = read_bytes(gz[:len(gz) // 2], F)
    assert 0 < len(r.samples) < 200
    f = [f for f in r.findings if f.code == "gzip-cut"]
    assert len(f) == 1 and f[0].offset == len(gz) // 2 and "cut" in f[0].message


def test_second_gzip_member_after_a_damaged_one_is_read():
    a, b = C.smf_records(20)[:10], C.smf_records(20)[10:]
    m1 = bytearray(gzip.compress(b"".join(a), mtime=0))
    m1[len(m1) // 2] ^= 0xFF
    r = read_bytes(bytes(m1) + gzip.compress(b"".join(b), mtime=0), F)
    assert C.b0_values(r)[-10:] == ALL20[10:]
    assert any(c in ("gzip-damaged", "gzip-checksum") for c in codes(r))


def test_gzip_inside_gzip_is_read_not_called_ascii():
    r = read_bytes(gzip.compress(gzip.compress(C.smf_file(20))), F)
    assert C.b0_values(r) == ALL20 and "nested-gzip" in codes(r) and "ascii-transfer" not in codes(r)


def test_gzip_bomb_is_stopped_by_the_cap(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_MAX_BYTES", "1M")
    r = read_bytes(gzip.compress(bytes(4 << 20)), F)
    assert r.kind == "unknown" and "NESTSCOPE_MAX_BYTES" in r.findings[-1].message


def test_gzip_bomb_is_stopped_by_the_ratio(monkeypatch):
    monkeypatch.setattr(formats, "RATIO_FLOOR", 1 << 20)
    monkeypatch.setenv("NESTSCOPE_MAX_RATIO", "200")
    r = read_bytes(gzip.compress(bytes(16 << 20), 9), F)   # 16 MiB of zeros from ~16 KB: ratio ~1000
    assert r.kind == "unknown" and "NESTSCOPE_MAX_RATIO" in r.findings[-1].message


def test_gunzip_streams_in_bounded_pieces():
    out, found, stop = formats.gunzip(gzip.compress(bytes(3_000_000)), F, cap=1_000_000, ratio=0)
    assert len(out) == 1_000_000 and stop and found == []


# ------------------------------------------------------------------ files and paths
def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = within(5, read_file, fifo)
    assert r.kind == "unknown" and codes(r) == ["not-a-file"] and "FIFO" in r.findings[0].message


def test_folder_is_refused(tmp_path):
    r = read_file(tmp_path)
    assert codes(r) == ["not-a-file"] and r.findings[0].offset is None


def test_unreadable_path_is_not_reported_at_offset_0(tmp_path):
    r = read_file(tmp_path / "missing.bin")
    assert codes(r) == ["unreadable-file"] and r.findings[0].offset is None
    assert "whole file" in r.findings[0].message


def test_digest_comes_from_the_same_read(tmp_path):
    p = tmp_path / "a.smf.gz"
    raw = gzip.compress(C.smf_file(20))
    p.write_bytes(raw)
    r = read_file(p, digest=True)
    assert r.meta["sha1"] == hashlib.sha1(raw).hexdigest() and len(r.samples) == 20


def test_non_utf8_path_is_read_and_named_printably(tmp_path):
    p = os.path.join(os.fsencode(tmp_path), b"caf\xe9.smf")
    with open(p, "wb") as fh:
        fh.write(C.smf_file(3))
    r = read_file(p)
    assert len(r.samples) == 3
    r.file.encode("utf-8")                            # printable: no surrogates left
    assert "caf\\xe9" in r.file or "caf" in r.file


def test_memory_error_becomes_a_clear_message(tmp_path, monkeypatch):
    p = tmp_path / "a.smf"
    p.write_bytes(C.smf_file(3))

    def boom(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(formats, "read_bytes", boom)
    r = read_file(p)
    assert codes(r) == ["out-of-memory"] and "memory" in r.findings[0].message


def test_oversized_plain_file_is_refused_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "big.bin"
    with open(p, "wb") as fh:
        fh.truncate(3 << 20)                          # sparse: no data written
    monkeypatch.setenv("NESTSCOPE_MAX_BYTES", "1M")
    r = read_file(p)
    assert codes(r) == ["too-large"] and "NESTSCOPE_MAX_BYTES" in r.findings[0].message


# ------------------------------------------------------------------ MONWRITE
def test_damaged_first_control_record_field_loses_only_the_first_block():
    m = bytearray(C.mon_file(6))
    m[16:20] = struct.pack(">I", 0x0A000004)          # IPRMMSG2: MCA size 5, not a multiple of 12
    r = read_bytes(bytes(m), F)
    assert r.kind == "monwrite" and C.b0_values(r) == [1000 + i for i in range(6)]
    f = [f for f in r.findings if f.code == "bad-control-record"]
    assert f and f[0].offset == 0


def test_damaged_first_control_record_type_byte_reads_the_block():
    m = bytearray(C.mon_file(6))
    m[3] = 0x55                                       # IPTYPE, entries intact
    r = read_bytes(bytes(m), F)
    assert r.kind == "monwrite" and len(r.samples) == 6 and r.meta["system"] == "VMSYS1"
    assert [f.code for f in r.findings] == ["bad-control-record"]


@pytest.mark.parametrize("which", [0, 5])
def test_bad_rdw_in_rdw_wrapped_monwrite_does_not_stop_the_read(which):
    m = bytearray(C.with_rdw(C.mon_file(6)))
    m[which * 4100:which * 4100 + 4] = b"\x10\x04\xff\x00"
    r = read_bytes(bytes(m), F)
    assert r.framing == "monwrite-rdw" and len(r.samples) == 6
    f = [f for f in r.findings if f.code == "bad-rdw"]
    assert len(f) == 1 and f[0].offset == which * 4100


def test_inserted_bytes_in_rdw_wrapped_monwrite_resynchronise():
    m = C.with_rdw(C.mon_file(6))
    cut = 6 * 4100
    r = read_bytes(m[:cut] + b"JUNK" + m[cut:], F)
    assert len(r.samples) >= 5
    f = [f for f in r.findings if f.code == "bad-rdw"]
    assert f and f[0].offset == cut and "resumed at offset" in f[0].message


def _d5r13_page(m: bytes, interval: int) -> int:
    return (3 + 2 * interval) * 4096                  # page of interval i: control records at 0, 2, 4, ...


def test_d5r13_domain_damaged_into_end_of_frame_does_not_skip_the_frame():
    m = bytearray(C.mon_file(3, cpus=3))
    pg = _d5r13_page(m, 1)
    assert m[pg + 4] == 5 and m[pg + 7] == 13
    m[pg + 4] = 1                                     # D5R13 -> "D1R13" of 88 bytes
    r = read_bytes(bytes(m), F)
    assert len(r.samples) == 3 * 3 - 1               # only the damaged record is lost
    f = [f for f in r.findings if f.code == "bad-record-header"]
    assert len(f) == 1 and f[0].offset == pg


def test_d5r13_domain_damaged_into_another_domain_is_read_with_a_finding():
    m = bytearray(C.mon_file(3, cpus=3))
    pg = _d5r13_page(m, 1)
    m[pg + 4] = 7
    r = read_bytes(bytes(m), F)
    assert len(r.samples) == 9
    f = [f for f in r.findings if f.code == "damaged-domain"]
    assert len(f) == 1 and f[0].offset == pg


def test_monwrite_cut_record_followed_by_zero_padding_is_not_loaded():
    m = C.mon_file(3, cpus=3)
    pg = _d5r13_page(m, 2)
    cut = pg + 88 + 50                                # inside the second D5R13 of the last interval
    padded = m[:cut] + bytes(len(m) - cut)
    r = read_bytes(padded, F)
    assert len(r.samples) == 3 * 3 - 2               # CPU 0 of the last interval kept, CPU 1 dropped, CPU 2 gone
    f = [f for f in r.findings if f.code == "truncated"]
    assert f and "not loaded" in f[0].message


def test_damaged_monwrite_is_not_called_not_smf_data():
    m = bytearray(C.mon_file(6))
    m[0:64] = bytes(64)
    r = read_bytes(bytes(m), F)
    assert r.kind == "monwrite" and "unknown-framing" not in codes(r)


def test_data_needing_more_memory_than_available_is_a_message(monkeypatch):
    monkeypatch.setattr(formats, "MEMORY_CHECK_FROM", 1000)
    monkeypatch.setattr(formats, "_available_memory", lambda: 5000)    # 5 x 4,880 bytes > 5,000
    r = read_bytes(C.smf_file(20), F)
    assert codes(r) == ["too-large"] and "memory" in r.findings[0].message
    monkeypatch.setenv("NESTSCOPE_MEMORY_CHECK", "0")
    assert len(read_bytes(C.smf_file(20), F).samples) == 20
