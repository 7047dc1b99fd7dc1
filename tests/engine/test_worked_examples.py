"""One full worked example per generation, arithmetic in the comments.

Common basic counters (one CPU, one 900 s interval, subtype-1 style deltas, CPSP 5000):

    B0  = 2,250,000,000,000   cycles  = 50 % of 5000e6 * 900 = 4.5e12
    B1  =   900,000,000,000   instr.  -> CPI  = 2.25e12 / 9e11 = 2.5
    B2  =     9,000,000,000
    B4  =    27,000,000,000   -> L = B2+B4 = 3.6e10 -> L1MP = 3.6e10 / 9e11 * 100 = 4.0
    B3  =   300,000,000,000
    B5  =   600,000,000,000   -> B3+B5 = 9e11
    P33 =   540,000,000,000   -> PRBSTATE = 60.0, SUPSTATE = 40.0
    LPARCPU = 2.25e12 / (5000 * 1e6 * 900) * 100 = 50.0
    Eff_GHz = 5000 / 1000 = 5.0 ;  MIPS_per_CPU = 5000 / 2.5 = 2000.0

Sourcing counters are given in units of PCT = 1 % of L = 360,000,000.
z13..z17 finite CPI and TLB part (same counter numbers on all of them):

    E143 = 4.5e11            -> Est_Finite_CPI = 4.5e11 / 9e11 = 0.5 ; Est_Instr_Cmplx_CPI = 2.5 - 0.5 = 2.0
                                Est_SCPL1M = 4.5e11 / 3.6e10 = 12.5 ; E143/(B3+B5) = 0.5
    E130 + E135 = 2.25e11    -> TLB1_Miss_Pct_CPU = 2.25e11 / 2.25e12 * 0.5 * 100 = 5.0
    E129 + E134 = 2.25e9     -> TLB1_Cycles_per_Miss = 2.25e11 / 2.25e9 * 0.5 = 50.0
    E137 = 2.25e8            -> PTE_Pct_TLB1_Miss = 2.25e8 / 2.25e9 * 100 = 10.0
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from factory import MIN15, T0, result

from app.engine import Workspace

PCT = 360_000_000
BASIC = dict(B0=2_250_000_000_000, B1=900_000_000_000, B2=9_000_000_000, B4=27_000_000_000,
             B3=300_000_000_000, B5=600_000_000_000, P33=540_000_000_000)
COMMON = dict(CPI=2.5, L1MP=4.0, PRBSTATE=60.0, SUPSTATE=40.0, LPARCPU=50.0, Eff_GHz=5.0, MIPS_per_CPU=2000.0)
MODERN_TLB = dict(E143=450_000_000_000, E130=150_000_000_000, E135=75_000_000_000, E129=1_500_000_000,
                  E134=750_000_000, E137=225_000_000)
MODERN_EXPECT = dict(Est_Finite_CPI=0.5, Est_Instr_Cmplx_CPI=2.0, Est_SCPL1M=12.5, TLB1_Miss_Pct_CPU=5.0,
                     TLB1_Cycles_per_Miss=50.0, PTE_Pct_TLB1_Miss=10.0)

CASES = {
    # z10: L15P = (30+40) = 70 ; L2LP = 10+10 = 20 ; L2RP = 2+2 = 4 ;
    # MEMP = (E134+E135 = 2+2) + remainder (100 - 98 = 2) = 6
    # RNI = (1.0*20 + 2.4*4 + 7.5*6)/100 = (20 + 9.6 + 45)/100 = 0.746
    # Est_Finite_CPI = 9e11/9e11 * 0.84 = 0.84 ; Cmplx = 2.5 - 0.84 = 1.66 ; SCPL1M = 9e11/3.6e10*0.84 = 21.0
    # TLB: E145+E146 = 4.5e10 -> 4.5e10/2.25e12*100 = 2.0 ; /(E138+E139 = 4.5e8) = 100.0 ; E140 9e7 -> 20.0
    # hint: L1MP 4 in [3,6], RNI 0.746 in [0.6,1.0] -> AVERAGE
    "z10": (dict(E128=30 * PCT, E129=40 * PCT, E130=10 * PCT, E131=10 * PCT, E132=2 * PCT, E133=2 * PCT,
                 E134=2 * PCT, E135=2 * PCT, E145=20_000_000_000, E146=25_000_000_000, E138=200_000_000,
                 E139=250_000_000, E140=90_000_000),
            dict(L15P=70.0, L2LP=20.0, L2RP=4.0, MEMP=6.0, RNI=0.746, Est_Finite_CPI=0.84, Est_Instr_Cmplx_CPI=1.66,
                 Est_SCPL1M=21.0, TLB1_Miss_Pct_CPU=2.0, TLB1_Cycles_per_Miss=100.0, PTE_Pct_TLB1_Miss=20.0),
            "AVERAGE"),
    # z196: L2P = 40+30 = 70 ; L3P = 10+5 = 15 ; L4LP = 2+2+2+2 = 8 ; L4RP = E134 1 + E138 1 = 2 ;
    # MEMP = (E141 2 + E142 1) + remainder (100 - 98 = 2) = 5
    # RNI = 1.6*(0.4*15 + 1.0*8 + 2.4*2 + 7.5*5)/100 = 1.6*(6 + 8 + 4.8 + 37.5)/100 = 1.6*56.3/100 = 0.9008
    # Est_Finite_CPI = 9e11/9e11 * (0.57 + 0.1*0.9008) = 0.66008 ; Cmplx = 2.5 - 0.66008 = 1.83992
    # SCPL1M = 25 * 0.66008 = 16.502 ; TLB: (E130+E131 = 4.5e10) -> 2.0 ; /(E144+E145 = 4.5e8) = 100 ; E146 -> 20
    # hint: L1MP 4, RNI 0.9008 -> AVERAGE
    "z196": (dict(E128=40 * PCT, E129=30 * PCT, E150=10 * PCT, E153=5 * PCT, E135=2 * PCT, E136=2 * PCT,
                  E152=2 * PCT, E155=2 * PCT, E134=1 * PCT, E138=1 * PCT, E141=2 * PCT, E142=1 * PCT,
                  E130=20_000_000_000, E131=25_000_000_000, E144=200_000_000, E145=250_000_000, E146=90_000_000),
             dict(L2P=70.0, L3P=15.0, L4LP=8.0, L4RP=2.0, MEMP=5.0, RNI=0.9008, Est_Finite_CPI=0.66008,
                  Est_Instr_Cmplx_CPI=1.83992, Est_SCPL1M=16.502, TLB1_Miss_Pct_CPU=2.0, TLB1_Cycles_per_Miss=100.0,
                  PTE_Pct_TLB1_Miss=20.0),
             "AVERAGE"),
    # zEC12: L2P = 25+25+25 = 75 ; L3P = 3+3+3+3 = 12 ; L4LP = 6 x 1 = 6 ; L4RP = 1+1+1 = 3 ;
    # MEMP = (E135 2 + E137 1) + remainder (100 - 99 = 1) = 4
    # RNI = 2.3*(0.4*12 + 1.2*6 + 2.7*3 + 8.2*4)/100 = 2.3*(4.8 + 7.2 + 8.1 + 32.8)/100 = 2.3*52.9/100 = 1.2167
    # finite CPI / SCPL1M / complexity: no formula -> NaN ; Raw_Penalty_CPI = 9e11/9e11 = 1.0
    # TLB: E128+E129 = 4.5e10 -> 2.0 ; /(E133+E140 = 4.5e8) = 100 ; E141 9e7 -> 20 ; hint: RNI > 1.0 -> HIGH
    "zEC12": (dict(E130=25 * PCT, E131=25 * PCT, E132=25 * PCT, E144=3 * PCT, E150=3 * PCT, E153=3 * PCT,
                   E159=3 * PCT, E145=PCT, E147=PCT, E151=PCT, E154=PCT, E156=PCT, E160=PCT, E146=PCT, E148=PCT,
                   E152=PCT, E135=2 * PCT, E137=PCT, E128=20_000_000_000, E129=25_000_000_000, E133=200_000_000,
                   E140=250_000_000, E141=90_000_000),
              dict(L2P=75.0, L3P=12.0, L4LP=6.0, L4RP=3.0, MEMP=4.0, RNI=1.2167, Est_Finite_CPI=math.nan,
                   Est_Instr_Cmplx_CPI=math.nan, Est_SCPL1M=math.nan, Raw_Penalty_CPI=1.0, TLB1_Miss_Pct_CPU=2.0,
                   TLB1_Cycles_per_Miss=100.0, PTE_Pct_TLB1_Miss=20.0),
              "HIGH"),
    # z13: L2P = 50+30 = 80 ; L3P = 4+2+2+2 = 10 ; L4LP = 2+2+1 = 5 ; L4RP = 1+1 = 2 ; MEMP = 1+1+1 = 3
    # RNI = 2.6*(0.4*10 + 1.6*5 + 3.5*2 + 7.5*3)/100 = 2.6*(4 + 8 + 7 + 22.5)/100 = 2.6*41.5/100 = 1.079 -> HIGH
    "z13": (dict(E133=50 * PCT, E136=30 * PCT, E144=4 * PCT, E145=2 * PCT, E162=2 * PCT, E163=2 * PCT,
                 E146=2 * PCT, E148=2 * PCT, E164=PCT, E149=PCT, E167=PCT, E158=PCT, E161=PCT, E176=PCT, **MODERN_TLB),
            dict(L2P=80.0, L3P=10.0, L4LP=5.0, L4RP=2.0, MEMP=3.0, RNI=1.079, **MODERN_EXPECT),
            "HIGH"),
    # z14: L2P = 60+20 = 80 ; L3P = 5+2+2+1 = 10 ; L4LP = E147 2 + E150 2 + E158 1 + E174 1 = 6 ; L4RP = E153 1 ;
    # MEMP = E145 1 + E148 1 + E163 1 = 3
    # RNI = 2.4*(0.4*10 + 1.5*6 + 3.2*1 + 7.0*3)/100 = 2.4*(4 + 9 + 3.2 + 21)/100 = 2.4*37.2/100 = 0.8928 -> AVERAGE
    "z14": (dict(E133=60 * PCT, E136=20 * PCT, E144=5 * PCT, E146=2 * PCT, E162=2 * PCT, E164=PCT, E147=2 * PCT,
                 E150=2 * PCT, E158=PCT, E174=PCT, E153=PCT, E145=PCT, E148=PCT, E163=PCT, **MODERN_TLB),
            dict(L2P=80.0, L3P=10.0, L4LP=6.0, L4RP=1.0, MEMP=3.0, RNI=0.8928, **MODERN_EXPECT),
            "AVERAGE"),
    # z15: same counters as z14 ; RNI = 2.9*(0.45*10 + 1.5*6 + 3.2*1 + 6.5*3)/100
    #      = 2.9*(4.5 + 9 + 3.2 + 19.5)/100 = 2.9*36.2/100 = 1.0498 -> HIGH
    "z15": (dict(E133=60 * PCT, E136=20 * PCT, E144=5 * PCT, E146=2 * PCT, E162=2 * PCT, E164=PCT, E147=2 * PCT,
                 E150=2 * PCT, E158=PCT, E174=PCT, E153=PCT, E145=PCT, E148=PCT, E163=PCT, **MODERN_TLB),
            dict(L2P=80.0, L3P=10.0, L4LP=6.0, L4RP=1.0, MEMP=3.0, RNI=1.0498, **MODERN_EXPECT),
            "HIGH"),
    # z16: L2P = 30+10+15+5 = 60 ; L3P = 5+5+2+2+2+2+1+1 = 20 ; L4LP = E148 2 + E153 2 + E154 2 + E177 2 + E178 2 = 10
    # L4RP = E155 2 + E179 2 = 4 ; MEMP = E156 2 + E157 1 + E158 1 + E180 1 + E181 1 = 6 (sum 100)
    # RNI: no formula known for z16 -> NaN ; hint n/a
    "z16": (dict(E145=30 * PCT, E146=10 * PCT, E169=15 * PCT, E170=5 * PCT, E147=5 * PCT, E149=5 * PCT,
                 E150=2 * PCT, E151=2 * PCT, E171=2 * PCT, E173=2 * PCT, E174=PCT, E175=PCT, E148=2 * PCT,
                 E153=2 * PCT, E154=2 * PCT, E177=2 * PCT, E178=2 * PCT, E155=2 * PCT, E179=2 * PCT, E156=2 * PCT,
                 E157=PCT, E158=PCT, E180=PCT, E181=PCT, **MODERN_TLB),
            dict(L2P=60.0, L3P=20.0, L4LP=10.0, L4RP=4.0, MEMP=6.0, RNI=math.nan, **MODERN_EXPECT),
            "n/a"),
    # z17: as z16 but MEMP = E156..E159 only: 2+2+1+1 = 6 (E180/E181 do not exist on z17)
    # ST_IPC = E204/E202 = 1.5e11/1e11 = 1.5 ; MT_IPC_per_thread = E205/E203 = 2e11/2e11 = 1.0
    # MT_Throughput_Gain_est = 2*1.0/1.5 = 1.3333 ; RNI NaN ; hint n/a
    "z17": (dict(E145=30 * PCT, E146=10 * PCT, E169=15 * PCT, E170=5 * PCT, E147=5 * PCT, E149=5 * PCT,
                 E150=2 * PCT, E151=2 * PCT, E171=2 * PCT, E173=2 * PCT, E174=PCT, E175=PCT, E148=2 * PCT,
                 E153=2 * PCT, E154=2 * PCT, E177=2 * PCT, E178=2 * PCT, E155=2 * PCT, E179=2 * PCT, E156=2 * PCT,
                 E157=2 * PCT, E158=PCT, E159=PCT, E202=100_000_000_000, E203=200_000_000_000,
                 E204=150_000_000_000, E205=200_000_000_000, **MODERN_TLB),
            dict(L2P=60.0, L3P=20.0, L4LP=10.0, L4RP=4.0, MEMP=6.0, RNI=math.nan, ST_IPC=1.5, MT_IPC_per_thread=1.0,
                 MT_Throughput_Gain_est=2 / 1.5, **MODERN_EXPECT),
            "n/a"),
}


def _ws(gen: str, extra: dict) -> Workspace:
    ws = Workspace()
    ws.add(result([dict(time=T0 + MIN15, cpu_speed=5000, **BASIC, **extra)], gen=gen))
    return ws


def _check(row, expect: dict) -> None:
    for k, v in expect.items():
        got = float(row[k])
        if math.isnan(v):
            assert math.isnan(got), f"{k}: expected NaN, got {got}"
        else:
            assert got == pytest.approx(v, rel=1e-9, abs=1e-9), k


@pytest.mark.parametrize("gen", list(CASES))
def test_worked_example_cpu_level(gen):
    extra, expect, _hint = CASES[gen]
    ws = _ws(gen, extra)
    m = ws.metrics("cpu")
    assert len(m) == 1
    row = m.iloc[0]
    assert row["generation"] == gen
    assert row["formula_set"] == ws.formula_sets[gen].version
    _check(row, {**COMMON, **expect})
    assert row["Workload_Hint"] is None          # the hint is computed at aggregate levels only


@pytest.mark.parametrize("gen", list(CASES))
def test_worked_example_lpar_level_and_hint(gen):
    extra, expect, hint = CASES[gen]
    ws = _ws(gen, extra)
    row = ws.metrics("lpar").iloc[0]
    _check(row, {**COMMON, **expect})            # one CPU: the LPAR row equals the CPU row
    assert row["Workload_Hint"] == hint


def test_sourcing_sums_to_100_modern():
    for gen in ("z13", "z14", "z15", "z16", "z17"):
        extra, _e, _h = CASES[gen]
        r = _ws(gen, extra).metrics("cpu").iloc[0]
        assert r["L2P"] + r["L3P"] + r["L4LP"] + r["L4RP"] + r["MEMP"] == pytest.approx(100.0)


def test_metrics_not_in_generation_are_nan():
    r = _ws("z16", CASES["z16"][0]).metrics("cpu").iloc[0]
    for k in ("L15P", "L2LP", "L2RP", "Raw_Penalty_CPI", "ST_IPC"):
        assert np.isnan(r[k])
