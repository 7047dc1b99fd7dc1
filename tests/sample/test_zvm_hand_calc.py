"""Metrics of one z/VM logical CPU from two D5R13 samples, checked by hand.

The two samples are one minute apart (12:00:00 and 12:01:00 UTC) on a z16 (3931,
CPU speed 5,200 cycles/us), IFL at CPU address 0, with the basic, problem-state
and extended sets active (mask X'0007').  Counters are running totals, so the
engine works on the differences below (second sample minus first):

    B0 cycles             = 156,000,000,000   (52% of 5,200e6 * 60 s = 312e9)
    B1 instructions       =  60,000,000,000
    B2 L1I misses         =     300,000,000
    B4 L1D misses         =     900,000,000    -> L1 misses 1,200,000,000
    B3 + B5 penalty       =  30,000,000,000
    P33 problem-state instr = 42,000,000,000
    E143 L1C/TLB2-miss cycles = 24,000,000,000
    sourcing (z16, metrics.md 3.7): E145 L2 960e6, E149 chip 156e6, E153 module 48e6,
                                    E155 off-drawer 12e6, E156 memory 24e6  (sum 1,200e6)
    TLB: E129 + E134 writes = 100e6 + 20e6 = 120e6; E130 + E135 miss cycles = 5,000e6 + 1,000e6
         E137 PTE writes = 30e6

Hand calculation:
    CPI      = 156e9 / 60e9               = 2.6
    L1MP     = 1.2e9 / 60e9 * 100         = 2.0
    PRBSTATE = 42e9 / 60e9 * 100          = 70.0
    L2P      = 960 / 1200 * 100           = 80.0
    L3P      = 156 / 1200 * 100           = 13.0
    L4LP     = 48 / 1200 * 100            = 4.0
    L4RP     = 12 / 1200 * 100            = 1.0
    MEMP     = 24 / 1200 * 100            = 2.0
    Est_Finite_CPI = E143 / B1 = 24e9 / 60e9  = 0.4
    Est_Instr_Cmplx_CPI = 2.6 - 0.4       = 2.2
    Est_SCPL1M = E143 / (B2+B4) = 24e9 / 1.2e9 = 20.0
    LPARCPU  = 156e9 / (5200 * 1e6 * 60) * 100 = 50.0
    Eff_GHz  = 5200 / 1000                = 5.2
    TLB1_Miss_Pct_CPU = (6e9 / 156e9) * (24e9 / 30e9) * 100 = 3.0769...
    TLB1_Cycles_per_Miss = (6e9 / 120e6) * (24e9 / 30e9) = 40.0
    PTE_Pct_TLB1_Miss = 30e6 / 120e6 * 100 = 25.0
"""

from __future__ import annotations

import datetime as dt

import pytest

from app.engine import Workspace
from app.formats import read_bytes
from app.formats.monwrite_writer import CounterRecord, MonwriteWriter, pack_counters

FIRST = {0: 1_000_000_000_000, 1: 400_000_000_000, 2: 2_000_000_000, 3: 90_000_000_000, 4: 6_000_000_000,
         5: 110_000_000_000, 32: 700_000_000_000, 33: 280_000_000_000, 143: 150_000_000_000,
         145: 7_000_000_000, 149: 1_000_000_000, 153: 300_000_000, 155: 80_000_000, 156: 150_000_000,
         129: 700_000_000, 134: 150_000_000, 130: 30_000_000_000, 135: 6_000_000_000, 137: 200_000_000}
DELTA = {0: 156_000_000_000, 1: 60_000_000_000, 2: 300_000_000, 3: 10_000_000_000, 4: 900_000_000,
         5: 20_000_000_000, 32: 109_200_000_000, 33: 42_000_000_000, 143: 24_000_000_000,
         145: 960_000_000, 149: 156_000_000, 153: 48_000_000, 155: 12_000_000, 156: 24_000_000,
         129: 100_000_000, 134: 20_000_000, 130: 5_000_000_000, 135: 1_000_000_000, 137: 30_000_000}
MASK = 0x0007   # extended + basic + problem-state


def _file() -> bytes:
    w = MonwriteWriter("VMSYS9", "VMLP9", 9, "3931", "A01", "00000000000123F5")
    w.config([(0, 3, 0)])                                    # CPU 0, type code 3 = IFL, core 0
    t0 = dt.datetime(2024, 3, 15, 12, 0)
    for k, t in enumerate((t0, t0 + dt.timedelta(minutes=1))):
        vals = {n: FIRST[n] + k * DELTA[n] for n in FIRST}
        w.sample_interval(t, counters=[CounterRecord(0, pack_counters(MASK, 3, 7, vals), MASK, 3, 7, 5200)])
    return w.to_bytes()


def test_zvm_cpu_metrics_by_hand() -> None:
    res = read_bytes(_file(), "hand.mondata")
    assert res.kind == "monwrite" and len(res.samples) == 2
    ws = Workspace()
    ws.add(res)
    m = ws.metrics(by="cpu")
    assert len(m) == 1                                       # two samples -> one interval
    row = m.iloc[0]
    assert (row["lpar"], row["system"], row["class"], int(row["cpu"])) == ("VMLP9", "VMSYS9", "IFL", 0)
    expected = {"CPI": 2.6, "L1MP": 2.0, "PRBSTATE": 70.0, "L2P": 80.0, "L3P": 13.0, "L4LP": 4.0, "L4RP": 1.0,
                "MEMP": 2.0, "Est_Finite_CPI": 0.4, "Est_Instr_Cmplx_CPI": 2.2, "Est_SCPL1M": 20.0,
                "LPARCPU": 50.0, "Eff_GHz": 5.2, "TLB1_Miss_Pct_CPU": 6e9 / 156e9 * 0.8 * 100,
                "TLB1_Cycles_per_Miss": 40.0, "PTE_Pct_TLB1_Miss": 25.0}
    for k, v in expected.items():
        assert row[k] == pytest.approx(v, rel=1e-12), k
