"""SMF framing: the framings of spec 11.3, gzip, and damaged files (never raises, resyncs)."""

from __future__ import annotations

import gzip
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # repo root for app
import smf_builders as B  # noqa: E402

from app.formats import smf113  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.smf_framing import detect_framing, frame_records  # noqa: E402

F = "t.smf"
PAIR = B.ST2_BYTES + B.ST1_BYTES
HAVE_DISPATCH = (Path(smf113.__file__).with_name("monwrite.py")).exists()


def offsets(res):
    return list(res.samples["offset"])


def test_variant_a_rdw():
    assert PAIR[:8].hex().upper() == "00F40000DE710041"          # spec 11.3 a
    assert PAIR[244:250].hex().upper() == "00E60000DE71"         # second record at 244
    res = smf113.read_smf(PAIR, F)
    assert res.framing == "rdw" and offsets(res) == [0, 244]


def test_variant_b_one_block():
    data = B.bdw(B.ST2_BYTES, B.ST1_BYTES)
    assert data[:10].hex().upper() == "01DE000000F40000DE71"     # BDW 478 = 4 + 244 + 230 (spec 11.3 b)
    res = smf113.read_smf(data, F)
    assert res.framing == "bdw" and offsets(res) == [4, 248]     # records at file offsets 4 and 4+244
    assert res.records == {"113/1": 1, "113/2": 1, "other": 0}


def test_variant_c_vbs_example():
    data = B.vbs_example()
    assert data[:12].hex().upper() == "006C000000680100DE710041"     # block 1: BDW 108, SDW 104 code 01
    assert data[108:120].hex().upper() == "0094000000900200000000B4"  # block 2: BDW 148, SDW 144 code 10 (spec 11.3 c)
    res = smf113.read_smf(data, F)
    assert res.framing == "vbs" and res.records["113/2"] == 1
    assert res.samples["P33"].iloc[0] == 500_000_000               # reassembled 100 + 140 data bytes
    assert offsets(res) == [4]                                     # the first segment's SDW


def test_variant_d_rdw_stripped():
    data = W.frame_nordw([B.ST2_BYTES, B.ST1_BYTES])
    assert data[:12].hex().upper() == "DE710041EB000124075FE2E8"     # packed date at file offset 6
    res = smf113.read_smf(data, F)
    assert res.framing == "nordw"
    f = [f for f in res.findings if f.code == "rdw-stripped"]
    assert f and "site rdw" in f[0].message and f[0].offset == 0
    assert len(res.samples) == 2                                   # degraded mode: 113-only file still read


def test_variant_d_mixed_types_stops_with_message():
    data = W.frame_nordw([B.ST2_BYTES, W.other_record(30, 300), B.ST1_BYTES])
    res = smf113.read_smf(data, F)
    assert res.framing == "nordw" and len(res.samples) == 1
    assert sum(f.code == "rdw-stripped" for f in res.findings) == 2   # detection + where the walk stopped


def test_variant_e_ascii():
    text = PAIR.decode("cp037", errors="replace").encode("ascii", errors="replace").replace(b"\n", b"\r\n")
    data = (text + b"\r\n") * 20
    res = smf113.read_smf(data, F)
    assert res.framing == "ascii" and len(res.samples) == 0
    f = [f for f in res.findings if f.code == "ascii-transfer"][0]
    assert "ASCII mode" in f.message and "binary" in f.message and "site rdw" in f.message


def test_variant_f_double_rdw():
    data = W.frame_double_rdw([B.ST2_BYTES, B.ST1_BYTES])
    assert data[:8].hex().upper() == "00F8000000F40000"            # LL1 = 248, LL2 = 244 = LL1 - 4
    res = smf113.read_smf(data, F)
    assert res.framing == "double-rdw" and offsets(res) == [4, 252]   # offset of SMFxxLEN (inner RDW)


@pytest.mark.parametrize("framing", ["rdw", "bdw", "vbs", "double-rdw", "nordw"])
def test_gzip_each_framing(tmp_path, framing):
    blk = 200 if framing == "vbs" else 500     # vbs: 244-byte record must span; bdw: both records in one block
    p = W.write_smf_file(tmp_path / "x.smf.gz", [B.ST2_BYTES, B.ST1_BYTES], framing=framing, gzip=True, blksize=blk)
    data = gzip.decompress(p.read_bytes())
    res = smf113.read_smf(data, F)
    assert res.framing == framing and len(res.samples) == 2
    if HAVE_DISPATCH:
        from app.formats import read_file
        assert read_file(p).framing == framing + "+gzip"


def test_orphan_segments():
    r = B.ST2_BYTES
    data = B.bdw(B.sdw(0x02, r[104:244])) + B.bdw(B.ST1_BYTES)     # last segment with no first
    res = smf113.read_smf(data, F)
    assert [f.code for f in res.findings].count("orphan-segment") == 1
    assert res.records == {"113/1": 1, "113/2": 0, "other": 0}
    data = B.bdw(B.sdw(0x01, r[4:104])) + B.bdw(B.ST1_BYTES)        # first with no last
    res = smf113.read_smf(data, F)
    assert "orphan-segment" in [f.code for f in res.findings] and len(res.samples) == 1


def test_null_segment_and_zero_tail():
    data = B.bdw(B.ST2_BYTES, struct.pack(">HBB", 0, 0x80, 0) + b"\0" * 12) + b"\0" * 500
    res = smf113.read_smf(data, F)
    assert len(res.samples) == 1 and not [f for f in res.findings if f.severity != "info"]
    res = smf113.read_smf(PAIR + b"\0" * 4096, F)                  # zero-filled tail: stop quietly
    assert len(res.samples) == 2 and not [f for f in res.findings if f.severity != "info"]


def _mixed():
    recs = [W.other_record(30, 400), B.ST2_BYTES, W.other_record(70, 1000), B.ST1_BYTES]
    recs += [W.encode_subtype2(dict(_rec(cpu=k))) for k in range(2, 6)]
    return recs


def _rec(**kw):
    r = dict(system="SYSA", cpu=1, cls_code=0, cpu_speed=5200, machine_type="3931", model="A01",
             seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS, time_tod=B.CTM, flags=0x4000,
             counters={1: B.BASIC, 2: B.PROBLEM8})
    r.update(kw)
    return r


@pytest.mark.parametrize("framing", ["rdw", "vbs", "double-rdw"])
def test_truncated_at_every_cut(framing):
    recs = _mixed()
    data = {"rdw": W.frame_rdw, "double-rdw": W.frame_double_rdw,
            "vbs": lambda r: W.frame_bdw(r, 700)}[framing](recs)
    full = smf113.read_smf(data, F)
    assert len(full.samples) == 6
    for cut in range(1, len(data), 17):
        res = smf113.read_smf(data[:cut], F)                    # never raises
        assert len(res.samples) <= 6
        if framing == "rdw" and cut > 410:                      # type 30 record (400) complete -> chain found
            # every 113 record that ends before the cut still loads
            want = [o for o, r in zip(_starts(recs), recs) if r[5] == 113 and o + len(r) <= cut]
            assert list(res.samples["offset"]) == want, cut
            last = max(o for o in _starts(recs) if o < cut)
            if cut != last + len(recs[_starts(recs).index(last)]) and any(data[last:cut]):  # all-zero stub = padding
                t = [f for f in res.findings if f.code == "truncated-record"]
                assert t and "past end of file" in t[0].message and f"size {cut})" in t[0].message, (cut, res.findings)


def _starts(recs):
    out, p = [], 0
    for r in recs:
        out.append(p)
        p += len(r)
    return out


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=0, max_size=600), st.integers(0, 2000))
def test_fuzz_never_raises(junk, pos):
    data = bytearray(W.frame_rdw(_mixed()))
    pos = min(pos, len(data))
    data[pos:pos + len(junk)] = junk
    res = smf113.read_smf(bytes(data), F)
    assert res.kind == "smf"


def test_corrupt_length_mid_file_resyncs():
    recs = _mixed()
    data = bytearray(W.frame_rdw(recs))
    starts = _starts(recs)
    bad = starts[3]                                               # the subtype 1 record
    struct.pack_into(">H", data, bad, 9000)                       # length 9000 instead of 228
    res = smf113.read_smf(bytes(data), F)
    assert res.framing == "rdw"
    f = [f for f in res.findings if f.code == "corrupt-length"]
    assert f and f[0].offset == bad and "9000" in f[0].message
    assert list(res.samples["offset"]) == [starts[1]] + starts[4:]   # the 4 records after it still load
    struct.pack_into(">H", data, bad, 30000)                      # runs past EOF, valid records follow
    res = smf113.read_smf(bytes(data), F)
    assert list(res.samples["offset"]) == [starts[1]] + starts[4:]
    assert any("runs past end of file" in f.message for f in res.findings if f.code == "corrupt-length")


def test_garbage_between_records_resyncs():
    recs = _mixed()
    data = W.frame_rdw(recs[:2]) + b"\x13\x37" * 50 + W.frame_rdw(recs[2:])
    res = smf113.read_smf(data, F)
    assert len(res.samples) == 6
    f = [f for f in res.findings if f.code == "corrupt-length"]
    assert len(f) == 1 and f[0].offset == 400 + 244


def test_bdw_corrupt_block_resyncs():
    blocks = [B.bdw(r) for r in _mixed()]
    bad = bytearray(blocks[2])
    bad[4:6] = b"\x7f\xff"                                        # SDW length beyond the block
    data = b"".join(blocks[:2]) + bytes(bad) + b"".join(blocks[3:])
    res = smf113.read_smf(data, F)
    assert len(res.samples) == 6 - 0 and "corrupt-length" in [f.code for f in res.findings]


def test_detect_unknown_and_empty():
    assert detect_framing(b"") == "unknown"
    assert detect_framing(bytes(range(256)) * 4) == "unknown"
    res = smf113.read_smf(bytes(range(256)) * 4, F)
    assert res.framing == "unknown" and "unknown-framing" in [f.code for f in res.findings]


def test_frame_records_skips_without_copy():
    data = W.frame_rdw(_mixed())
    fr = frame_records(data, F)
    assert all(isinstance(r, memoryview) for _, r in fr.records)
    assert fr.type_counts == {30: 1, 70: 1, 113: 6} and fr.other_bytes == 1400


@pytest.mark.skipif(not HAVE_DISPATCH, reason="app/formats/monwrite.py (other engineer) not present yet")
@pytest.mark.parametrize("data,code", [(b"%PDF-1.7\n...", "wrong-file-type"), (b"", "empty-file"),
                                       (b"just some text\n" * 50, "text-file")])
def test_dispatcher_rejects_non_smf(data, code):
    from app.formats import read_bytes
    res = read_bytes(data, F)
    assert code in [f.code for f in res.findings] and not res.readable
