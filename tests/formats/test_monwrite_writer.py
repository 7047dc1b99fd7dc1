"""MONWRITE writer: byte-exact output, P-bit splitting, frames, round trips."""

from __future__ import annotations

import datetime as dt
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
from app.formats import read_file  # noqa: E402
from app.formats.monwrite import read_monwrite  # noqa: E402
from app.formats.monwrite_writer import (CounterRecord, MonwriteWriter, MtCounterRecord, MtRecord,  # noqa: E402
                                         Partition, PartitionCpu, pack_counters, write_samples)
from app.formats.schema import SET_MT, is_counter_column  # noqa: E402

IDENT = ("VMSYS1", "LPVM1", 3, "3931", "A01", "00000000000123F5")


def _writer(**kw) -> MonwriteWriter:
    return MonwriteWriter(*IDENT, **kw)


def test_spec_example_byte_exact():
    vals = np.array([0x48A4B80000, 0x1F3C2A1000, 0x0A1B2C3D, 0x123456789, 0x0BCDEF01, 0x234567890,
                     0xD4E5F6000, 0x5A0B0C000], dtype=np.uint64)
    w = _writer(msgid=0x123, mca_addr=0x0A000000, dcss_first=0x0A123000)
    w.sample_interval(B.T0, counters=[CounterRecord(0, vals, 0x0006, 3, 7, 5200)])
    assert w.to_bytes() == B.spec_example()


def test_records_match_hand_builders():
    w = _writer()
    t = B.TOD0
    assert w.d1r4(t) == B.d1r4()
    assert w.d1r5(t, 2, 5, 1) == B.d1r5(2, 5, 1) and w.d1r5(t, 0, 3, None) == B.d1r5(0, 3)
    f = dict(thread_density=1.62, thread_density_type=1.55, core_busy_pct=81.5, productivity=0.93,
             mt_util_pct=75.8, capacity_factor=None, max_capacity_factor=1.30)
    got = w.d0r2(t, MtRecord(1, 0, 3, **f))
    want = B.d0r2(1, 3, 0, f)
    assert got[:24] == want[:24] and got[32:] == want[32:]    # writer also seeds PFXPRBTM (count-down start)
    p = Partition("ZOS1", 1, [PartitionCpu(0, "CP", 300, 123456, 789, capped=True)])
    assert w.d0r16(t, p) == [B.d0r16("ZOS1", 1, [(0, 300, 0x40, 123456, 789, "CP")])]
    raw = np.arange(8, dtype=">u8").tobytes()
    assert w.mfc(t, 13, 0, 5200, 6, 3, 7, raw) == [B.d5r13(0, raw)]


@pytest.mark.parametrize("chunk,n", [(1000, 2), (504, 3), (4000, 1)])
def test_p_bit_split(chunk, n):
    vals = np.arange(188, dtype=np.uint64) + np.uint64(10**12)
    w = _writer(max_counter_bytes=chunk)
    recs = w.mfc(B.TOD0, 13, 5, 5200, 0x000F, 3, 7, vals)
    assert len(recs) == n
    assert [r[5] for r in recs] == [0x80] * (n - 1) + [0]
    assert b"".join(r[40:] for r in recs) == vals.astype(">u8").tobytes()
    w.sample_interval(B.T0, counters=[CounterRecord(5, vals, 0x000F, 3, 7, 5200)])
    s = read_monwrite(w.to_bytes(), "x").samples
    assert s["E287"].iloc[0] == 10**12 + 187 and s["B0"].iloc[0] == 10**12


def test_frames_never_split_records_and_end_with_d1r13():
    w = _writer(max_counter_bytes=1000)
    vals = np.ones(188, dtype=np.uint64)
    w.sample_interval(B.T0, counters=[CounterRecord(c, vals * c, 0x000F, 3, 7, 5200) for c in range(16)])
    data = w.to_bytes()
    assert len(data) % 4096 == 0
    for pg in range(1, len(data) // 4096):
        p, o, last = data[pg * 4096:(pg + 1) * 4096], 0, None
        while o + 20 <= 4096 and int.from_bytes(p[o:o + 2], "big"):
            ln = int.from_bytes(p[o:o + 2], "big")
            assert o + ln <= 4096
            last = (p[o + 4], int.from_bytes(p[o + 6:o + 8], "big"))
            o += ln
        assert last in ((1, 13), (1, 11))
    r = read_monwrite(data, "f")
    assert r.records["D1R13"] >= 1 and r.records["D5R13"] == 32
    assert [f.code for f in r.findings] == ["no-configuration"]
    assert list(r.samples["cpu"]) == list(range(16)) and r.samples["E200"].iloc[7] == 7


def _synthetic(n_cpu=4, n_int=5, seed=1):
    rng = np.random.default_rng(seed)
    w = _writer()
    w.config(processors=[(c, 3 if c < n_cpu - 1 else 5, c // 2) for c in range(n_cpu)], partitions_defined=3)
    tot = np.zeros((n_cpu, 188), dtype=np.uint64)
    mtc = np.zeros((n_cpu, 48), dtype=np.uint64)
    busy = {("LPVM1", "IFL"): 0, ("ZOS1", "CP"): 0}
    for i in range(n_int):
        tot += rng.integers(0, 2**32, size=tot.shape, dtype=np.uint64)
        mtc += rng.integers(0, 2**30, size=mtc.shape, dtype=np.uint64)
        busy[("LPVM1", "IFL")] += int(rng.integers(0, 60_000_000))
        busy[("ZOS1", "CP")] += int(rng.integers(0, 60_000_000))
        parts = [Partition("LPVM1", 3, [PartitionCpu(c, "IFL", 100, busy[("LPVM1", "IFL")]) for c in range(2)]),
                 Partition("ZOS1", 1, [PartitionCpu(0, "CP", 250, busy[("ZOS1", "CP")], capped=True)]),
                 Partition("DOWN", 9, [])]
        mts = [MtRecord(c, c // 2, 3, 1.5 + c / 10, 1.4, 70.0 + i, 0.9, 63.0, 1.2, 1.3) for c in range(n_cpu)]
        w.sample_interval(B.T0 + dt.timedelta(minutes=i),
                          counters=[CounterRecord(c, tot[c], 0x000F, 3, 7, 5200) for c in range(n_cpu)],
                          mt_counters=[MtCounterRecord(c, mtc[c]) for c in range(n_cpu)], mt=mts,
                          partitions=parts, npar=3)
    return w.to_bytes()


def test_round_trip_writer_reader_write_samples():
    data = _synthetic()
    r1 = read_monwrite(data, "one")
    assert not [f for f in r1.findings if f.severity != "info"]
    assert len(r1.samples) == 20 and ((r1.samples["sets"] & SET_MT) != 0).sum() == 10     # thread 0 of 2 cores x 5
    assert list(r1.samples["class"].iloc[:4]) == ["IFL", "IFL", "IFL", "zIIP"]
    data2 = write_samples(r1.samples, r1.partitions, r1.mt)
    r2 = read_monwrite(data2, "two")
    ctr = [c for c in r1.samples.columns if is_counter_column(c)]
    pd.testing.assert_frame_equal(r1.samples[ctr], r2.samples[ctr])
    for c in ("cpu", "core", "class", "time", "cpu_speed", "cfvn", "csvn", "sets", "lpar", "system", "cec"):
        assert list(r1.samples[c]) == list(r2.samples[c]), c
    p1, p2 = r1.partitions, r2.partitions
    for c in ("lpar", "lpar_number", "class", "cpus", "weight", "capped", "time"):
        assert list(p1[c]) == list(p2[c]), c
    np.testing.assert_allclose(p1["busy_pct"], p2["busy_pct"], rtol=1e-6, atol=1e-4)
    pd.testing.assert_frame_equal(r1.mt, r2.mt)


def test_write_rdw_gzip_files(tmp_path):
    w = _writer()
    w.sample_interval(B.T0, counters=[CounterRecord(0, pack_counters(6, 3, 7, {0: 5, 33: 9}), 6, 3, 7, 5200)])
    for kw, framing in (({}, "monwrite"), ({"rdw": True}, "monwrite-rdw"), ({"gzip": True}, "monwrite+gzip"),
                        ({"rdw": True, "gzip": True}, "monwrite-rdw+gzip")):
        p = w.write(tmp_path / f"f{len(kw)}{framing}.mondata", **kw)
        r = read_file(p)
        assert r.framing == framing and r.samples["B0"].iloc[0] == 5 and r.samples["P33"].iloc[0] == 9


def test_writer_writes_an_hour_of_64_cpus():
    # no timed assertion (a loaded machine fails it): the writer builds bench/bench_monwrite.py's file there
    n_cpu, n_int = 64, 60
    vals = np.arange(n_cpu * 188, dtype=np.uint64).reshape(n_cpu, 188)
    w = _writer()
    w.config(processors=[(c, 3, c // 2) for c in range(n_cpu)])
    for i in range(n_int):
        w.sample_interval(B.T0 + dt.timedelta(minutes=i),
                          counters=[CounterRecord(c, vals[c], 0x000F, 3, 7, 5200) for c in range(n_cpu)])
    data = w.to_bytes()
    r = read_monwrite(data, "fast")
    assert len(r.samples) == n_cpu * n_int
    assert sorted(set(r.samples["cpu"])) == list(range(n_cpu)) and r.samples["time"].nunique() == n_int
