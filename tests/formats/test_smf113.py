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
    assert B.build_st2() == B.ST2_BYTES and len(B.ST2_BYTES) == 224   # spec 11.1: 224 bytes
    assert B.build_st1() == B.ST1_BYTES and len(B.ST1_BYTES) == 228   # spec 11.2: 228 bytes


def test_subtype2_example_every_field():
    res = smf113.read_smf(B.ST2_BYTES, F)
    assert res.kind == "smf" and res.framing == "rdw"
    assert res.records == {"113/1": 0, "113/2": 1, "other": 0}
    s = res.samples.iloc[0]
    assert s["offset"] == 0
    assert s["system"] == "SYSA" and s["lpar"] == "SYSA" and s["os"] == "z/OS"   # SID E2E8E2C1
    assert s["class"] == "GCP"                      # CpuProcClass 00
    assert s["cpu"] == 1                            # CpuId 0001 at +64
    assert s["core"] == -1                          # subtype 2 has no CoreId
    assert s["cpu_speed"] == 5200                   # CPSP 00001450
    assert s["cfvn"] == 3 and s["csvn"] == 7        # 0003 0007
    assert s["flags"] == 0x4000                     # CF intermediate
    assert not s["lost"] and not s["first"] and not s["mt_lost"]
    assert s["kind"] == "absolute"
    assert s["machine_type"] == "3931" and s["model"] == "A01"
    assert s["serial"] == "12345" and s["cec"] == "3931-12345"   # seqcode '0000000000012345'
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
    for c in [c for c in res.samples.columns if c not in IDENTITY_COLUMNS]:
        assert res.samples[c].dtype == np.uint64
    assert list(res.samples.columns[:len(IDENTITY_COLUMNS)]) == list(IDENTITY_COLUMNS)
    info = [f for f in res.findings if f.code == "layout-self-check"]
    assert len(info) == 1 and info[0].severity == "info" and "CDOF 160 == CSOF+CSLN*CSON 160 ok" in info[0].message


def test_subtype1_example_every_field():
    res = smf113.read_smf(B.ST1_BYTES, F)
    assert res.records == {"113/1": 1, "113/2": 0, "other": 0}
    s = res.samples.iloc[0]
    assert s["kind"] == "delta" and s["class"] == "GCP" and s["cpu"] == 1
    assert s["core"] == 0                           # CoreId 0000 at +76
    assert s["cpu_speed"] == 5200 and s["cfvn"] == 3 and s["csvn"] == 7
    assert s["cec"] == "3931-12345" and s["time"] == pd.Timestamp("2024-03-15 12:00:00")
    assert [s[f"B{k}"] for k in range(6)] == B.BASIC   # 8-byte LCDS at 172
    assert s["P32"] == 1_000_000 and s["P33"] == 500_000   # 4-byte SCDS at 220: 000F4240, 0007A120
    assert s["flags"] == 0 and not s["lost"] and not s["mt_lost"]


def test_both_records_and_meta():
    res = smf113.read_smf(B.ST2_BYTES + B.ST1_BYTES, F)
    assert res.records == {"113/1": 1, "113/2": 1, "other": 0}
    assert list(res.samples["offset"]) == [0, 224]          # second record starts at 224
    assert res.meta["time_range"] == ["2024-03-15T12:00:00", "2024-03-15T12:00:00"]
    assert res.meta["machines"][0]["cec"] == "3931-12345"
    assert res.meta["systems"] == ["SYSA"] and res.meta["classes"] == {"GCP": 1}
    assert smf113.looks_like_smf(B.ST2_BYTES + B.ST1_BYTES)
    assert not smf113.looks_like_smf(b"hello world, this is not SMF\r\n" * 10)


@pytest.mark.parametrize("code,flag,expect", [(0, 0, "GCP"), (2, 0, "zAAP"), (2, 0x0400, "zCBP"), (4, 0, "zIIP"),
                                              (7, 0, "unknown(7)")])
def test_class_names(code, flag, expect):
    res = smf113.read_smf(W.encode_subtype2(rec2(cls_code=code, flags=0x4000 | flag)), F)
    assert res.samples["class"].iloc[0] == expect      # spec 8.1


def test_flags_lost_first_mt():
    r = W.encode_subtype2(rec2(flags=0x8000 | 0x0800))    # first + lost (spec 6.2)
    s = smf113.read_smf(r, F).samples.iloc[0]
    assert s["first"] and s["lost"]
    for fl, lost, mt in [(0x8000, True, False), (0x4000, False, True), (0x2000, False, True), (0x1000, False, False)]:
        r1 = W.encode_subtype1(dict(rec2(counters={1: B.BASIC}), flags=fl, cls_code=2))
        s = smf113.read_smf(r1, F).samples.iloc[0]
        assert (bool(s["lost"]), bool(s["mt_lost"])) == (lost, mt)     # spec 7.2
        assert s["class"] == ("zCBP" if fl == 0x1000 else "zAAP")


def test_other_records_skipped_and_counted():
    data = W.other_record(30, 500) + B.ST2_BYTES + W.other_record(70, 3000) + B.ST1_BYTES + W.other_record(2, 18)
    res = smf113.read_smf(data, F)
    assert res.records == {"113/1": 1, "113/2": 1, "other": 3}
    assert list(res.samples["offset"]) == [500, 500 + 224 + 3000]
    assert res.meta["type_counts"] == {"2": 1, "30": 1, "70": 1, "113": 2}


def test_duplicates_counted_once():
    res = smf113.read_smf(B.ST2_BYTES * 3, F)
    assert len(res.samples) == 1 and res.records["113/2"] == 3
    d = [f for f in res.findings if f.code == "duplicate-record"]
    assert len(d) == 1 and "2 records" in d[0].message and d[0].offset == 224   # first repeat at 224


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
    struct.pack_into(">H", r, 148 + 8, 6)           # set 1 CDLN 6 (not 4/8)
    res = smf113.read_smf(bytes(r), F)
    assert "bad-cdln" in codes(res) and "B0" not in res.samples.columns
    r = bytearray(B.ST2_BYTES)
    struct.pack_into(">I", r, 70 + 32, 200)         # CDOF 200 + 8*8 > 224
    res = smf113.read_smf(bytes(r), F)
    f = [f for f in res.findings if f.code == "bad-section"]
    assert f and f[0].offset == 0 and len(res.samples) == 0
    r = bytearray(B.ST2_BYTES)
    struct.pack_into(">I", r, 44, 400)              # DOF outside the record
    res = smf113.read_smf(bytes(r), F)
    assert "bad-section" in codes(res) and len(res.samples) == 0


def test_self_check_failure_reports_offset():
    r = bytearray(B.ST1_BYTES)
    struct.pack_into(">I", r, 70 + 52, 160)          # CSOF moved: CSOF != DOF+DLN (148)
    good, text = smf113.L.self_check(bytes(r))
    assert not good and "FAILED" in text


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
