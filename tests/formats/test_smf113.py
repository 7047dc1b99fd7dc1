"""SMF 113 decoding: the spec 11 worked example byte for byte, and every bad-input case."""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # repo root for app
import smf_builders as B  # noqa: E402

from app.formats import smf113  # noqa: E402
from app.formats.smf113 import OPTIONAL_COLUMNS  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.schema import IDENTITY_COLUMNS, SET_BASIC, SET_EXTENDED, SET_PROBLEM  # noqa: E402

F = "t.smf"


def codes(res):
    return [f.code for f in res.findings]


def rec2(**kw):
    """A subtype-2 record dict like spec 11.1, with overrides."""
    r = dict(system="SYSA", cpu=1, cls_code=0, cpu_speed=5200, machine_type="3931", model="A01",
             seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS, time_tod=B.CTM, flags=0x4000,
             counters={1: B.BASIC, 2: B.PROBLEM8})
    r.update(kw)
    return r


def test_builders_match_spec_hex():
    # the field-by-field builders reproduce the spec 11.1 / 11.2 dumps exactly
    assert B.build_st2() == B.ST2_BYTES and len(B.ST2_BYTES) == 244   # spec 11.1: 244 bytes
    assert B.build_st1() == B.ST1_BYTES and len(B.ST1_BYTES) == 230   # spec 11.2: 230 bytes


def test_subtype2_example_every_field():
    res = smf113.read_smf(B.ST2_BYTES, F)
    assert res.kind == "smf" and res.framing == "rdw"
    assert res.records == {"113/1": 0, "113/2": 1, "other": 0}
    s = res.samples.iloc[0]
    assert s["offset"] == 0
    assert s["system"] == "SYSA" and s["lpar"] == "SYSA" and s["os"] == "z/OS"   # SID E2E8E2C1
    assert s["class"] == "GCP"                      # CpuProcClass 00
    assert s["cpu"] == 1                            # CpuId 0001 at DOF+64 = 136
    assert s["core"] == -1                          # subtype 2 has no CoreId
    assert s["cpu_speed"] == 5200                   # CPSP 00001450
    assert s["cfvn"] == 3 and s["csvn"] == 7        # 0003 0007
    assert s["flags"] == 0x4000                     # CF intermediate
    assert not s["lost"] and not s["first"] and not s["mt_lost"]
    assert s["kind"] == "absolute"
    assert s["machine_type"] == "3931" and s["model"] == "A01"
    assert s["serial"] == "12345" and s["cec"] == "3931-12345"   # MachSeqCode at DOF+68 = 140 (C-fix)
    assert s["run_start"] == pd.Timestamp("2024-03-15 08:00:00")   # CTS DECBEADBCA000000
    assert s["time"] == pd.Timestamp("2024-03-15 12:00:00")        # CTM DECC2080B3000000
    assert s["sets"] == SET_BASIC | SET_PROBLEM
    assert s["B0"] == 10_000_000_000                # 00000002540BE400
    assert s["B1"] == 5_000_000_000                 # 000000012A05F200
    assert s["B2"] == 100_000_000                   # 0000000005F5E100
    assert s["B3"] == 3_000_000_000                 # 00000000B2D05E00
    assert s["B4"] == 50_000_000                    # 0000000002FAF080
    assert s["B5"] == 2_000_000_000                 # 0000000077359400
    assert s["P32"] == 1_000_000_000                # 000000003B9ACA00
    assert s["P33"] == 0x1DCD6500 == 500_000_000
    # header local time (spec 11.1): TME 0041EB00 = 4,320,000 hundredths = 12:00:00.00, DTE 0124075F = 2024 day 75
    assert s["local_time"] == pd.Timestamp("2024-03-15 12:00:00")
    for c in [c for c in res.samples.columns if c not in IDENTITY_COLUMNS and c not in OPTIONAL_COLUMNS]:
        assert res.samples[c].dtype == np.uint64
    assert list(res.samples.columns[:len(IDENTITY_COLUMNS)]) == list(IDENTITY_COLUMNS)
    # spec 10 item 6: CSOF 156 >= DOF+DLN 156, CDOF 180 == 156 + 12*2, CST 1 and 2, 6+2 = CDON 8 -> consistent
    assert res.meta["consistency"] == {"113/2": "ok"} and "inconsistent-record" not in codes(res)
    assert [f.severity for f in res.findings] == []


def test_subtype1_example_every_field():
    res = smf113.read_smf(B.ST1_BYTES, F)
    assert res.records == {"113/1": 1, "113/2": 0, "other": 0}
    s = res.samples.iloc[0]
    assert s["kind"] == "delta" and s["class"] == "GCP" and s["cpu"] == 1
    assert s["core"] == 0                           # CoreId 0000 at +76
    assert s["cpu_speed"] == 5200 and s["cfvn"] == 3 and s["csvn"] == 7
    assert s["cec"] == "3931-12345" and s["time"] == pd.Timestamp("2024-03-15 12:00:00")
    assert [s[f"B{k}"] for k in range(6)] == B.BASIC   # 8-byte LCDS at 174
    assert s["P32"] == 1_000_000 and s["P33"] == 500_000   # 4-byte SCDS at 222: 000F4240, 0007A120
    assert res.meta["consistency"] == {"113/1": "ok"}
    assert s["flags"] == 0 and not s["lost"] and not s["mt_lost"]


def test_both_records_and_meta():
    res = smf113.read_smf(B.ST2_BYTES + B.ST1_BYTES, F)
    assert res.records == {"113/1": 1, "113/2": 1, "other": 0}
    assert list(res.samples["offset"]) == [0, 244]          # second record starts at 244
    assert res.samples["cec"].nunique() == 1                # one machine: both serials read at their offsets
    assert res.meta["time_range"] == ["2024-03-15T12:00:00", "2024-03-15T12:00:00"]
    assert res.meta["machines"][0]["cec"] == "3931-12345"
    assert res.meta["systems"] == ["SYSA"] and res.meta["classes"] == {"GCP": 1}
    assert smf113.looks_like_smf(B.ST2_BYTES + B.ST1_BYTES)
    assert not smf113.looks_like_smf(b"hello world, this is not SMF\r\n" * 10)


@pytest.mark.parametrize("mtype,code,flag,expect", [
    ("2964", 0, 0, "GCP"), ("2964", 2, 0, "zAAP"), ("2964", 2, 0x0400, "zCBP"), ("2964", 4, 0, "zIIP"),
    ("2964", 7, 0, "unknown(7)"),
    ("3931", 2, 0, "zCBP"), ("3906", 2, 0, "zCBP")])        # spec 7.2 rule: no zAAP after z13 (z14 3906, z16 3931)
def test_class_names(mtype, code, flag, expect):
    _g, cfvn, csvn = smf113.L.MACHINES[mtype]
    res = smf113.read_smf(W.encode_subtype2(rec2(machine_type=mtype, cfvn=cfvn, csvn=csvn, cls_code=code,
                                                 flags=0x4000 | flag)), F)
    assert res.samples["class"].iloc[0] == expect      # spec 8.1


def test_flags_lost_first_mt():
    r = W.encode_subtype2(rec2(flags=0x8000 | 0x0800))    # first + lost (spec 6.2)
    s = smf113.read_smf(r, F).samples.iloc[0]
    assert s["first"] and s["lost"]
    # spec 7.2 on a z13 (2964, CFVN 1 / CSVN 4), where class 2 can still be a zAAP:
    # bit 0 lost data, bit 1 lost MT data, bit 2 (IBM formatter) or bit 3 (SMF Explorer) -> zCBP
    for fl, lost, mt, cls in [(0x8000, True, False, "zAAP"), (0x4000, False, True, "zAAP"),
                              (0x2000, False, False, "zCBP"), (0x1000, False, False, "zCBP"), (0, False, False, "zAAP")]:
        r1 = W.encode_subtype1(dict(rec2(counters={1: B.BASIC}), machine_type="2964", cfvn=1, csvn=4, flags=fl,
                                    cls_code=2))
        s = smf113.read_smf(r1, F).samples.iloc[0]
        assert (bool(s["lost"]), bool(s["mt_lost"])) == (lost, mt)
        assert s["class"] == cls and s["flags"] == fl            # the raw flags are kept


def test_other_records_skipped_and_counted():
    data = W.other_record(30, 500) + B.ST2_BYTES + W.other_record(70, 3000) + B.ST1_BYTES + W.other_record(2, 18)
    res = smf113.read_smf(data, F)
    assert res.records == {"113/1": 1, "113/2": 1, "other": 3}
    assert list(res.samples["offset"]) == [500, 500 + 244 + 3000]
    assert res.meta["type_counts"] == {"2": 1, "30": 1, "70": 1, "113": 2}


def test_duplicates_counted_once():
    res = smf113.read_smf(B.ST2_BYTES * 3, F)
    assert len(res.samples) == 1 and res.records["113/2"] == 3
    d = [f for f in res.findings if f.code == "duplicate-record"]
    assert len(d) == 1 and "2 records" in d[0].message and d[0].offset == 244   # first repeat at 244


def test_extended_set_missing():
    ext = np.arange(160, dtype=np.uint64)                 # CSVN 7 -> 160 extended counters
    r_full = W.encode_subtype2(rec2(counters={1: B.BASIC, 2: B.PROBLEM8, 4: ext}))
    r_part = W.encode_subtype2(rec2(time_tod=B.CTM + 900 * 4096 * 10**6, counters={1: B.BASIC, 2: B.PROBLEM8}))
    res = smf113.read_smf(r_full + r_part, F)
    assert len(res.samples) == 2
    assert res.samples["sets"].tolist() == [SET_BASIC | SET_PROBLEM | SET_EXTENDED, SET_BASIC | SET_PROBLEM]
    assert res.samples["E287"].tolist() == [159, 0]       # E128+159 = E287; absent set -> 0
    m = [f for f in res.findings if f.code == "set-missing"]
    assert len(m) == 1 and m[0].offset == len(r_full) and "extended" in m[0].message


def test_unknown_machine_and_csvn_mismatch():
    res = smf113.read_smf(W.encode_subtype2(rec2(machine_type="1234")), F)
    assert "unknown-machine" in codes(res) and len(res.samples) == 1
    res = smf113.read_smf(W.encode_subtype2(rec2(machine_type="3931", csvn=5)), F)   # z16 has CSVN 7
    f = [f for f in res.findings if f.code == "csvn-mismatch"]
    assert len(f) == 1 and f[0].severity == "warning" and f[0].offset == 0


def test_cdon_larger_than_installed():
    r = W.encode_subtype1(dict(rec2(), counters={1: np.arange(8, dtype=np.uint64)}))   # basic has 6
    res = smf113.read_smf(r, F)
    assert "cdon-too-large" in codes(res)
    assert "B6" not in res.samples.columns and res.samples["B5"].iloc[0] == 5


def test_bad_cdln_and_section_outside():
    r = bytearray(B.ST1_BYTES)
    struct.pack_into(">H", r, 150 + 8, 6)           # set 1 (entry at 150) CDLN 6 (not 4/8)
    res = smf113.read_smf(bytes(r), F)
    assert "bad-cdln" in codes(res) and "B0" not in res.samples.columns
    r = bytearray(B.ST2_BYTES)
    struct.pack_into(">I", r, 72 + 32, 200)         # CDOF 200 + 8*8 > 244
    res = smf113.read_smf(bytes(r), F)
    f = [f for f in res.findings if f.code == "bad-section"]
    assert f and f[0].offset == 0 and len(res.samples) == 0
    r = bytearray(B.ST2_BYTES)
    struct.pack_into(">I", r, 44, 400)              # DOF outside the record
    res = smf113.read_smf(bytes(r), F)
    assert "bad-section" in codes(res) and len(res.samples) == 0


def test_consistency_failure_is_a_warning_with_offset_and_field():
    r = bytearray(B.ST1_BYTES)
    struct.pack_into(">I", r, 72 + 52, 100)          # CSOF 100 lies inside the data section (DOF+DLN = 150)
    r[100:112] = r[150:162]                          # ...and holds a copy of the first set entry
    res = smf113.read_smf(bytes(r), F)
    f = [f for f in res.findings if f.code == "inconsistent-record"]
    # CSOF is reported; the second entry (read from data-section bytes) also makes the CDOF order fail
    assert {x.key["field"] for x in f} == {"SMF113_1_CSOF", "SMF113_1_CDOF"}
    assert all(x.severity == "warning" and x.offset == 0 for x in f)
    assert "record offset 124" in f[0].message                   # CSOF field at DOF 72 + 52
    r2 = bytearray(B.ST2_BYTES)
    r2[156] = 9                                      # CST of the first entry: 9 is not a set type 1..4
    bad = smf113.L.consistency_check(bytes(r2))
    assert bad[0][:2] == (156, "SMF113_2_CST")


def _grow_st1(extra: int, csln: int) -> bytes:
    """Spec 11.2 as a later z/OS might write it: ``extra`` bytes appended to the data section and
    ``csln``-byte counter-set entries (trailing bytes X'EE'); every offset moved accordingly."""
    dln, csof = 78 + extra, 72 + 78 + extra
    cdof1 = csof + 2 * csln
    r = bytearray(B.ST1_BYTES[:150])
    struct.pack_into(">H", r, 0, cdof1 + 48 + 8)      # LEN
    struct.pack_into(">H", r, 48, dln)                # DLN
    struct.pack_into(">IH", r, 72 + 52, csof, csln)   # CSOF, CSLN
    r += b"\xEE" * extra
    r += struct.pack(">HHIHH", 1, 0x8000, cdof1, 8, 6) + b"\xEE" * (csln - 12)
    r += struct.pack(">HHIHH", 2, 0, cdof1 + 48, 4, 2) + b"\xEE" * (csln - 12)
    r += struct.pack(">6Q", *B.BASIC) + struct.pack(">2I", *B.PROBLEM4)
    return bytes(r)


def _grow_st2(extra: int, csln: int) -> bytes:
    """Spec 11.1 with ``extra`` bytes after today's data section and ``csln``-byte counter-set entries."""
    dln, csof = 84 + extra, 72 + 84 + extra
    cdof = csof + 2 * csln
    r = bytearray(B.ST2_BYTES[:156])
    struct.pack_into(">H", r, 0, cdof + 64)
    struct.pack_into(">H", r, 48, dln)
    struct.pack_into(">IHHIHH", r, 72 + 24, csof, csln, 2, cdof, 8, 8)
    r += b"\xEE" * extra
    r += B.ST2_BYTES[156:168] + b"\xEE" * (csln - 12) + B.ST2_BYTES[168:180] + b"\xEE" * (csln - 12)
    r += B.ST2_BYTES[180:]
    return bytes(r)


@pytest.mark.parametrize("extra,csln", [(12, 16), (0, 16), (20, 12)])
def test_longer_sections_decode_to_the_same_counters(extra, csln):
    cols = ["cpu", "core", "cpu_speed", "cfvn", "csvn", "cec", "time", "B0", "B5", "P32", "P33"]
    for grown, plain in ((_grow_st1(extra, csln), B.ST1_BYTES), (_grow_st2(extra, csln), B.ST2_BYTES)):
        a, b = smf113.read_smf(grown, F), smf113.read_smf(plain, F)
        assert not [f for f in a.findings if f.severity != "info"], a.findings
        assert a.samples[cols].to_dict("records") == b.samples[cols].to_dict("records")


def test_subtype1_and_2_of_one_machine_give_one_cec():
    st1 = W.encode_subtype1(dict(rec2(), flags=0, counters={1: B.BASIC, 2: B.PROBLEM4}))
    res = smf113.read_smf(B.ST2_BYTES + st1, F)
    assert res.samples["cec"].tolist() == ["3931-12345", "3931-12345"]


def test_identification_section_interval():
    start, end = B.CTM - 900 * 4096 * 10**6, B.CTM                   # 11:45 .. 12:00
    r = W.encode_subtype1(dict(rec2(), flags=0, counters={1: B.BASIC, 2: B.PROBLEM4}, interval=(start, end)))
    assert struct.unpack_from(">IHH", r, 36) == (72, 40, 1)          # IOF/ILN/ION
    assert struct.unpack_from(">I", r, 44)[0] == 112                 # data section after it
    assert struct.unpack_from(">QQ", r, 72 + 24) == (start, end)     # IntervalStart/End at +24/+32
    s = smf113.read_smf(r, F).samples.iloc[0]
    assert s["rec_start"] == pd.Timestamp("2024-03-15 11:45:00") and s["rec_end"] == pd.Timestamp("2024-03-15 12:00")
    assert [s[f"B{k}"] for k in range(6)] == B.BASIC


def test_cancel_and_progress():
    data = b"".join(W.encode_subtype2(rec2(cpu=i)) for i in range(9000))
    seen = []
    res = smf113.read_smf(data, F, progress=seen.append)
    assert len(res.samples) == 9000 and seen[-1] == 1.0 and len(seen) > 10
    from app.formats.schema import Cancelled
    with pytest.raises(Cancelled):
        smf113.read_smf(data, F, cancel=lambda: True)


def test_input_not_modified(tmp_path):
    p = tmp_path / "a.smf"
    p.write_bytes(B.ST2_BYTES + B.ST1_BYTES)
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    try:
        from app.formats import read_file
    except ImportError:
        read_file = None
    if read_file is not None and Path(smf113.__file__).with_name("monwrite.py").exists():
        res = read_file(p)
    else:
        res = smf113.read_smf(p.read_bytes(), str(p))
    assert len(res.samples) == 2
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before
