"""SMF 113 writer: byte-exact against spec 11, round trips for every generation, framings."""

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
from app.formats.schema import BASE_OF_BIT, SMF_SET_TYPES, counter_name, set_size  # noqa: E402
from app.formats.smf113_layout import MACHINES  # noqa: E402

F = "w.smf"


def base(**kw):
    r = dict(system="SYSA", cpu=1, core=0, cls_code=0, cpu_speed=5200, machine_type="3931", model="A01",
             seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS, time_tod=B.CTM, flags=0x4000,
             counters={1: B.BASIC, 2: B.PROBLEM8})
    r.update(kw)
    return r


def test_byte_exact_spec_examples():
    assert W.encode_subtype2(base()) == B.ST2_BYTES                       # spec 11.1
    assert W.encode_subtype1(base(flags=0, counters={1: B.BASIC, 2: B.PROBLEM4})) == B.ST1_BYTES  # spec 11.2


def test_scds_only_when_values_fit():
    r = W.encode_subtype1(base(flags=0, counters={1: B.BASIC, 2: [2**32, 1]}))   # P32 needs 33 bits
    # second set entry at 150 + 12: problem-state, CSFlags LCDS, CDOF 174 + 6*8 = 222 (X'DE'), 8-byte, 2 counters
    assert r[162:174].hex().upper() == "00028000000000DE00080002"
    assert smf113.read_smf(r, F).samples["P32"].iloc[0] == 2**32


@pytest.mark.parametrize("mtype", sorted(MACHINES))
@pytest.mark.parametrize("subtype", [1, 2])
def test_round_trip_every_generation(mtype, subtype):
    _gen, cfvn, csvn = MACHINES[mtype]
    rng = np.random.default_rng(int(mtype))
    counters, types = {}, [1, 2, 3, 4] + ([6] if subtype == 1 and csvn >= 4 else [])
    for t in types:
        bit = SMF_SET_TYPES[t][0]
        k = set_size(bit, cfvn, csvn)          # e.g. extended 160 for CSVN 6-8, MT-diag 48 for CSVN >= 4
        counters[t] = rng.integers(0, 2**40 if t in (1, 4) else 2**31, k, dtype=np.uint64)
    rec = base(machine_type=mtype, cfvn=cfvn, csvn=csvn, counters=counters, flags=0 if subtype == 1 else 0x4000)
    raw = (W.encode_subtype1 if subtype == 1 else W.encode_subtype2)(rec)
    res = smf113.read_smf(raw, F)
    assert not [f for f in res.findings if f.severity != "info"], res.findings
    s = res.samples.iloc[0]
    for t, v in counters.items():
        b = BASE_OF_BIT[SMF_SET_TYPES[t][0]]
        assert [int(s[counter_name(b + k)]) for k in range(len(v))] == [int(x) for x in v]
    assert s["machine_type"] == mtype and s["cfvn"] == cfvn and s["csvn"] == csvn


def test_encode_samples_round_trip():
    raws = [W.encode_subtype1(base(cpu=c, core=c // 2, flags=0, time_tod=B.CTM + c * 4096)) for c in range(4)]   # whole microseconds
    df = smf113.read_smf(b"".join(raws), F).samples
    again = W.encode_samples(df, 1)
    assert again == raws                      # frame -> records reproduces the bytes
    df2 = smf113.read_smf(B.ST2_BYTES, F).samples
    assert W.encode_samples(df2, 2) == [B.ST2_BYTES]


def test_vbs_record_spanning_three_blocks():
    data = W.frame_bdw([B.ST2_BYTES], blksize=100)       # 240 data bytes / 92 per block -> 92 + 92 + 56
    codes = []
    p = 0
    while p < len(data):
        bl = int.from_bytes(data[p:p + 2], "big")
        codes.append(data[p + 6])                          # SDW byte 2: 01 first, 03 middle, 02 last
        p += bl
    assert codes == [1, 3, 2]
    res = smf113.read_smf(data, F)
    assert res.framing == "vbs" and res.samples["P33"].iloc[0] == 500_000_000


def test_frames_and_other_records(tmp_path):
    recs = [W.other_record(30, 600), B.ST2_BYTES, W.other_record(70, 2000, sid="SYSB")]
    assert recs[0][5] == 30 and len(recs[0]) == 600 and recs[2][14:18] == "SYSB".encode("cp037")
    for framing in ("rdw", "bdw", "vbs", "double-rdw"):
        p = W.write_smf_file(tmp_path / f"{framing}.smf", recs, framing=framing, blksize=2100 if framing == "bdw" else 1000)
        res = smf113.read_smf(p.read_bytes(), F)
        assert res.records == {"113/1": 0, "113/2": 1, "other": 2}, framing
    assert W.frame_nordw([B.ST2_BYTES]) == B.ST2_BYTES[4:]
    assert W.frame_double_rdw([B.ST2_BYTES])[:4] == bytes.fromhex("00F80000")      # 244 + 4


def test_writer_encodes_many_records(tmp_path):
    # the writer's speed is bench/bench_smf_write.py's (a same-run baseline), never a timed test: here what it wrote
    rec = base(counters={1: B.BASIC, 2: B.PROBLEM8, 3: np.arange(20, dtype=np.uint64),
                         4: np.arange(160, dtype=np.uint64)})
    out = [W.encode_subtype2(dict(rec, cpu=i % 64)) for i in range(5000)]
    assert len(out) == 5000 and len({len(r) for r in out}) == 1       # one layout: one length
    assert len(set(out)) == 64                                          # the CPU number is the only difference
    p = W.write_smf_file(tmp_path / "many.smf", out[:128], framing="rdw")
    assert smf113.read_smf(p.read_bytes(), F).records == {"113/1": 0, "113/2": 128, "other": 0}
