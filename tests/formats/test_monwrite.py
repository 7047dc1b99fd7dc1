"""MONWRITE reader: spec worked example, record decoders, P-bit series, broken files."""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import mon_builders as B  # noqa: E402
from app.formats import read_bytes, read_file  # noqa: E402
from app.formats.monwrite import looks_like_monwrite, read_monwrite  # noqa: E402
from app.formats.schema import SET_BASIC, SET_MT, SET_PROBLEM, Cancelled  # noqa: E402

Z16 = dict(mask=0x000F, cfvn=3, csvn=7)           # basic+problem+crypto+extended: 6+2+20+160 = 188


def codes(r):
    return [f.code for f in r.findings]


# ---------------------------------------------------------------- spec §6
def test_spec_example_decodes_every_field():
    data = B.spec_example()
    assert len(data) == 8192 and looks_like_monwrite(data)
    r = read_monwrite(data, "ex.mondata")
    assert r.kind == "monwrite" and r.framing == "monwrite"
    assert r.records["D5R13"] == 1 and r.records["D1R11"] == 1 and r.records["other"] == 0
    s = r.samples
    assert len(s) == 1
    row = s.iloc[0]
    assert row["cpu"] == 0 and row["cpu_speed"] == 5200 and row["sets"] == SET_BASIC | SET_PROBLEM == 0x0006
    assert row["cfvn"] == 3 and row["csvn"] == 7 and row["offset"] == 0x1000
    assert row["time"] == pd.Timestamp("2024-03-15 12:00:00")
    assert row["B0"] == 0x48A4B80000 and row["B1"] == 0x1F3C2A1000
    assert (row["B2"], row["B3"], row["B4"], row["B5"]) == (0x0A1B2C3D, 0x123456789, 0x0BCDEF01, 0x234567890)
    assert row["P32"] == 0xD4E5F6000 and row["P33"] == 0x5A0B0C000
    assert row["kind"] == "absolute" and row["os"] == "z/VM" and not row["first"] and not row["lost"]
    assert pd.isna(row["run_start"]) and row["core"] == -1
    assert [c for c in s.columns if c[0] in "BPKEM" and c[1:].isdigit()] == ["B0", "B1", "B2", "B3", "B4", "B5",
                                                                             "P32", "P33"]
    assert s["B0"].dtype == np.uint64
    assert "no-configuration" in codes(r)                     # no D1R4 in the example
    assert all(f.severity != "error" for f in r.findings)


def test_progress_and_cancel():
    seen = []
    read_monwrite(B.spec_example(), "x", progress=seen.append)
    assert seen and seen[-1] == 1.0
    with pytest.raises(Cancelled):
        read_monwrite(B.spec_example() * 40, "x", cancel=lambda: True)


# ---------------------------------------------------------------- decoders
def _config_block():
    recs = [B.d1r4(), B.d1r5(0, 3, 0), B.d1r5(1, 3, 0), B.d1r5(2, 5, 1), B.d1r11()]
    return B.block(recs, d1=0x40)


def test_d1r4_d1r5_identity_class_core():
    ctr = np.arange(1, 9, dtype=">u8").tobytes()
    data = _config_block() + B.block([B.d5r13(0, ctr), B.d5r13(1, ctr), B.d5r13(2, ctr), B.d1r11()],
                                     start=0x0A124000)
    r = read_monwrite(data, "f")
    s = r.samples
    assert list(s["cpu"]) == [0, 1, 2]
    assert set(s["system"]) == {"VMSYS1"} and set(s["lpar"]) == {"LPVM1"}
    assert set(s["cec"]) == {"3931-123F5"} and set(s["serial"]) == {"123F5"} and set(s["model"]) == {"A01"}
    assert list(s["class"]) == ["IFL", "IFL", "zIIP"] and list(s["core"]) == [0, 0, 1]
    assert r.meta["lpar_number"] == 3 and r.records["D1R5"] == 3 and r.records["D1R4"] == 1
    assert "no-configuration" not in codes(r)


def test_d0r2_mt_frame_and_class_fallback():
    f = dict(thread_density=1.62, thread_density_type=1.55, core_busy_pct=81.5, productivity=0.93,
             mt_util_pct=75.8, capacity_factor=1.21, max_capacity_factor=1.30)
    recs = [B.d0r2(0, 3, 0, f), B.d0r2(1, 3, 0, {**f, "capacity_factor": None}),
            B.d5r13(0, bytes(64)), B.d1r11()]
    r = read_monwrite(B.block(recs, d1=0xC4), "f")
    mt = r.mt
    assert list(mt.columns[:11]) == ["time", "system", "cpu", "core", "class", "core_busy_pct", "thread_density",
                                     "productivity", "mt_util_pct", "capacity_factor", "max_capacity_factor"]
    assert len(mt) == 2 and list(mt["cpu"]) == [0, 1] and list(mt["core"]) == [0, 0]
    assert mt["thread_density"].iloc[0] == pytest.approx(1.62)
    assert mt["core_busy_pct"].iloc[0] == pytest.approx(81.5)
    assert mt["max_capacity_factor"].iloc[0] == pytest.approx(1.30)
    assert np.isnan(mt["capacity_factor"].iloc[1]) and set(mt["class"]) == {"IFL"}
    assert r.samples["class"].iloc[0] == "IFL" and r.samples["core"].iloc[0] == 0   # class/core from D0R2


def test_d0r16_partitions_busy_microseconds_and_tod():
    for scale in (1, 4096):
        blocks = []
        for i in range(3):
            t = B.tod(B.T0 + pd.Timedelta(minutes=i))
            a = i * 30_000_000 * scale                       # 50 % of 60 s per CPU
            p1 = B.d0r16("LPVM1", 3, [(0, 100, 0, a, i * 600_000 * scale, "IFL"),
                                      (1, 100, 0, a, 0, "IFL"),
                                      (2, 40, 0x40, i * 6_000_000 * scale, 0, "ZIIP")], t)
            p2 = B.d0r16("ZOS1", 1, [(0, 300, 0, i * 60_000_000 * scale, 0, "CP")], t)
            p3 = B.d0r16("IDLE", 7, [], t)
            blocks.append(B.block([p1, p2, p3, B.d1r11(t)], start=0x0A130000 + i * 4096, d1=0xC0))
        r = read_monwrite(b"".join(blocks), "p")
        p = r.partitions
        assert list(p.columns[:9]) == ["cec", "lpar", "lpar_number", "class", "cpus", "weight", "capped",
                                       "busy_pct", "time"]
        assert r.meta["d0r16_time_unit"] == ("us" if scale == 1 else "tod")
        last = p[p["time"] == p["time"].max()].set_index(["lpar", "class"])
        assert last.loc[("LPVM1", "IFL"), "busy_pct"] == pytest.approx(50.0)
        assert last.loc[("LPVM1", "IFL"), "cpus"] == 2 and last.loc[("LPVM1", "IFL"), "weight"] == 100
        assert last.loc[("LPVM1", "IFL"), "overhead_pct"] == pytest.approx(0.5)
        assert last.loc[("LPVM1", "zIIP"), "busy_pct"] == pytest.approx(10.0)
        assert bool(last.loc[("LPVM1", "zIIP"), "capped"])
        assert last.loc[("ZOS1", "CP"), "busy_pct"] == pytest.approx(100.0)
        assert last.loc[("IDLE", ""), "cpus"] == 0 and np.isnan(last.loc[("IDLE", ""), "busy_pct"])
        first = p[p["time"] == p["time"].min()]
        assert first["busy_pct"].isna().all()
        assert r.records["D0R16"] == 9


# ---------------------------------------------------------------- P bit
def test_p_bit_series_of_three_rebuilds_exactly():
    vals = (np.arange(188, dtype=np.uint64) * np.uint64(0x1000001)) + np.uint64(7)
    raw = vals.astype(">u8").tobytes()
    parts = [raw[:504], raw[504:1008], raw[1008:]]          # split inside the extended set
    recs = [B.d5r13(4, parts[0], p=True, **Z16), B.d5r13(4, parts[1], p=True, **Z16),
            B.d5r13(4, parts[2], p=False, **Z16), B.d1r11()]
    r = read_monwrite(B.block(recs), "p")
    s = r.samples
    assert len(s) == 1 and r.records["D5R13"] == 3
    nums = list(range(6)) + [32, 33] + list(range(64, 84)) + list(range(128, 288))
    names = [("B" if n < 32 else "P" if n < 64 else "K" if n < 128 else "E") + str(n) for n in nums]
    np.testing.assert_array_equal(s[names].to_numpy(dtype=np.uint64)[0], vals)
    assert s["offset"].iloc[0] == 4096                        # offset of the first record of the series


def test_open_series_at_interval_end_is_a_finding():
    raw = bytes(8 * 188)
    recs = [B.d5r13(1, raw[:800], p=True, **Z16), B.d1r11()]
    r = read_monwrite(B.block(recs), "p")
    assert len(r.samples) == 0 and "incomplete-series" in codes(r)


def test_ccfdata_288_counter_form():
    vals = np.arange(288, dtype=np.uint64) + np.uint64(1000)
    raw = vals.astype(">u8").tobytes()
    recs = [B.d5r13(0, raw[:1152], p=True, mask=0x0006), B.d5r13(0, raw[1152:], mask=0x0006), B.d1r11()]
    r = read_monwrite(B.block(recs), "c")
    row = r.samples.iloc[0]
    assert row["B0"] == 1000 and row["B5"] == 1005 and row["P32"] == 1032 and row["P33"] == 1033


def test_counter_length_mismatch_is_finding():
    r = read_monwrite(B.block([B.d5r13(0, bytes(24)), B.d1r11()]), "c")
    assert len(r.samples) == 0 and "counter-length" in codes(r)


def test_d5r20_attached_to_thread0_rows():
    m = np.arange(48, dtype=">u8").tobytes()
    recs = [B.d1r5(0, 3, 0), B.d1r5(1, 3, 0), B.d5r13(0, bytes(64)), B.d5r13(1, bytes(64)),
            B.d5r13(0, m, mask=SET_MT, rc=20), B.d5r13(1, m, mask=SET_MT, rc=20),
            B.d5r13(2, m, mask=SET_MT, rc=20), B.d1r11()]
    r = read_monwrite(B.block(recs, d1=0x44), "m")
    s = r.samples.set_index("cpu")
    assert s.loc[0, "sets"] & SET_MT and s.loc[0, "M449"] == 1 and s.loc[0, "M495"] == 47
    assert not s.loc[1, "sets"] & SET_MT and s.loc[1, "M449"] == 0
    assert s.loc[2, "sets"] == SET_MT and s.loc[2, "B0"] == 0      # D5R20 without D5R13 -> M-only row
    assert "mt-thread-dedup" in codes(r)


# ---------------------------------------------------------------- walking
def test_d1r13_jump_event_entry_and_other_records():
    a, ev = 0x0A200000, 0x0A300000
    p1 = B.page(B.d5r13(0, bytes(64)), B.header(36, 4, 3) + bytes(16), B.d1r13())
    p2 = B.page(B.d5r13(1, bytes(64)), B.d1r11())
    p3 = B.page(B.header(28, 2, 4) + bytes(8), B.d5r13(9, bytes(64)))
    end2 = a + 4096 + 104 + 20 - 1
    ctl = B.control_record([(0xE2, 0x4C, 0, a, end2), (0xC5, 0x24, 0, ev, ev + 28 + 104 - 1)])
    r = read_monwrite(ctl + p1 + p2 + p3, "w")
    assert r.records["D1R13"] == 1 and r.records["D1R11"] == 1 and r.records["other"] == 2
    assert r.meta["other_records"] == {"D2R4": 1, "D4R3": 1}
    assert sorted(r.samples["cpu"]) == [0, 1, 9]


def test_page_offset_entry_start():
    recs = [B.d5r13(3, bytes(64)), B.d1r11()]
    ctl = B.control_record([(0xE2, 0x44, 0, 0x0A123800, 0x0A123800 + 124 - 1)])
    pg = bytearray(4096)
    pg[0x800:0x800 + 124] = b"".join(recs)
    r = read_monwrite(ctl + bytes(pg), "o")
    assert list(r.samples["cpu"]) == [3] and r.meta["page_mapping"] == "page"


def _three_interval_file():
    out = [_config_block()]
    for i in range(3):
        t = B.tod(B.T0 + pd.Timedelta(minutes=i + 1))
        recs = [B.d5r13(c, np.full(8, i + 1, dtype=">u8").tobytes(), t=t) for c in (0, 1)] + [B.d1r11(t)]
        out.append(B.block(recs, start=0x0A200000 + i * 4096))
    return b"".join(out)


@pytest.mark.parametrize("cut", [100, 4096, 4096 * 3 + 20, 4096 * 3 + 50, 4096 * 5 + 130, 4096 * 8 - 1])
def test_truncated_never_raises_and_keeps_prefix(cut):
    data = _three_interval_file()
    r = read_monwrite(data[:cut], "t")
    full_blocks = max(0, (cut - 8192) // 8192)
    assert len(r.samples) >= 2 * full_blocks
    if cut % 4096:
        assert any(f.code == "truncated" and f.offset is not None and f.offset <= cut for f in r.findings)


def test_corrupt_mrhdrlen_resumes_at_next_valid_record():
    data = bytearray(_three_interval_file())
    o = 8192 + 4096                                          # first record of interval 1: D5R13 of CPU 0
    data[o:o + 2] = (5000).to_bytes(2, "big")                # MRHDRLEN 5000 cannot fit a 4 KB frame
    r = read_monwrite(bytes(data), "c")
    bad = [f for f in r.findings if f.code == "bad-record-header"]
    assert bad and bad[0].offset == o and "offset 12288" in bad[0].message
    # the walk resumes at the next record of the same frame (CPU 1's D5R13, 104 bytes on)
    assert f"offset {o + 104}" in bad[0].message
    assert len(r.samples) == 5                               # only CPU 0 of interval 1 is lost
    assert list(r.samples.query("B0 == 1")["cpu"]) == [1]


def test_corrupt_mrhdrlen_with_no_valid_record_after_skips_the_frame():
    data = bytearray(_three_interval_file())
    o = 8192 + 4096
    data[o:o + 2] = (5000).to_bytes(2, "big")
    data[o + 104:o + 106] = (7).to_bytes(2, "big")           # the following header is damaged too
    data[o + 208:o + 210] = (7).to_bytes(2, "big")           # ... and the interval-end record
    r = read_monwrite(bytes(data), "c")
    bad = [f for f in r.findings if f.code == "bad-record-header"]
    assert "resumes at the next frame" in bad[0].message
    assert len(r.samples) == 4                               # intervals 2 and 3 intact


def test_bad_control_record_mid_file_resyncs():
    data = bytearray(_three_interval_file())
    data[8192 + 19] ^= 0x01                                  # IPRMMSG2 of block 2: MCA size not a multiple of 12
    # (a damaged IPTYPE alone no longer loses the block: test_robust.py)
    r = read_monwrite(bytes(data), "b")
    assert any(f.code == "bad-control-record" and f.offset == 8192 for f in r.findings)
    assert len(r.samples) == 4 and set(r.samples["B0"]) == {2, 3}


def test_ascii_transfer_is_claimed_and_explained():
    data = _three_interval_file()
    table = bytes(range(256)).decode("cp037").encode("latin-1")
    asc = b"".join(data[i:i + 4096].translate(table) + b"\r\n" for i in range(0, len(data), 4096))
    assert looks_like_monwrite(asc)
    r = read_bytes(asc, "a.txt")
    assert r.kind == "unknown" and len(r.samples) == 0
    assert r.findings[0].severity == "error" and "BINARY" in r.findings[0].message.upper()
    assert "GET fn MONDATA fm" in r.findings[0].message


def test_packed_file_is_claimed_and_explained():
    packed = b"\xcb\xff\x00\x50" + "MON0315  MONDATA A1".encode("cp037") + bytes(range(200)) * 20
    assert looks_like_monwrite(packed)
    r = read_monwrite(packed, "p")
    assert r.kind == "unknown" and "UNPACK" in r.findings[0].message
    vmarc = b"\x00\x01\x02\x03" + "MON0315  MONDATA".encode("cp037") + bytes(300)
    assert looks_like_monwrite(vmarc)


def test_not_monwrite():
    assert not looks_like_monwrite(b"\x00\x40\x00\x00" + bytes(8000))      # SMF-like RDW
    assert not looks_like_monwrite(bytes(8192))
    assert not looks_like_monwrite(b"hello world" * 1000)


def test_gzip_rdw_and_file_hash(tmp_path):
    data = _three_interval_file()
    rg = read_bytes(gzip.compress(data), "g.gz")
    assert rg.framing == "monwrite+gzip" and len(rg.samples) == 6
    rdw = b"".join(b"\x10\x04\x00\x00" + data[i:i + 4096] for i in range(0, len(data), 4096))
    assert looks_like_monwrite(rdw)
    p = tmp_path / "r.mondata"
    p.write_bytes(rdw)
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    rr = read_file(p)
    assert rr.framing == "monwrite-rdw" and len(rr.samples) == 6
    assert rr.samples["offset"].iloc[0] == 3 * 4100 + 4      # file offsets, RDWs counted
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before
    cut = read_monwrite(rdw[:-4000], "cut")
    assert len(cut.samples) == 4 and "truncated" in codes(cut)


def test_contiguous_entry_fallback():
    recs = [B.d5r13(3, bytes(64)), B.d1r11()]
    ctl = B.control_record([(0xE2, 0x44, 0, 0x0A123800, 0x0A123800 + 124 - 1)])
    r = read_monwrite(ctl + B.page(*recs), "c")              # bytes at page offset 0, not 0x800
    assert list(r.samples["cpu"]) == [3] and r.meta["page_mapping"] == "contiguous"
    assert "contiguous-entries" in codes(r)


def test_bdw_plus_rdw():
    data = _three_interval_file()
    recs = [b"\x10\x04\x00\x00" + data[i:i + 4096] for i in range(0, len(data), 4096)]
    blocks = b"".join(u2 + b"\x00\x00" + b"".join(recs[i:i + 2])
                      for i in range(0, len(recs), 2) for u2 in [(4 + 4100 * len(recs[i:i + 2])).to_bytes(2, "big")])
    assert looks_like_monwrite(blocks)
    r = read_monwrite(blocks, "bdw")
    assert r.framing == "monwrite-rdw" and len(r.samples) == 6 and not [f for f in r.findings if f.code == "bad-rdw"]


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:                                          # pragma: no cover
    given = None

if given is not None:
    _BASE = None

    def _base():
        global _BASE
        if _BASE is None:
            _BASE = _three_interval_file()
        return _BASE

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 8 * 4096 - 1), st.integers(0, 255)), max_size=12),
           st.integers(1, 8 * 4096))
    def test_fuzz_never_raises(edits, cut):
        data = bytearray(_base())
        for pos, val in edits:
            data[pos] = val
        data = bytes(data[:cut])
        r = read_monwrite(data, "fz")
        assert r.kind in ("monwrite", "unknown")
        for f in r.findings:
            assert f.offset is None or 0 <= f.offset <= len(data)
        looks_like_monwrite(data)
