"""Before/after comparison (app/engine/compare.py): ratio and delta rows, CPI decomposition, marks,
labels and the relative time axis."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.catalog import builtin_formula_sets
from app.engine.compare import (Selection, compare, decompose_cpi, formula_differences, node_labels,
                                ratio_delta, relative_axis, waterfall)
from app.engine.shift import make_shift

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


# ------------------------------------------------------------------ ratio row
def test_hiperdispatch_ratio_row():
    # the seed's HiperDispatch example: CPI 8.2 before, 7.5 after; IBM's ratio row divides old by new
    ratio, delta = ratio_delta(8.2, 7.5)
    assert round(ratio, 2) == 1.09           # 8.2 / 7.5 = 1.0933
    assert delta == pytest.approx(-0.7)      # 7.5 - 8.2
    assert all(math.isnan(x) for x in ratio_delta(None, 7.5))
    assert math.isnan(ratio_delta(1.0, 0.0)[0])


# ------------------------------------------------------------------ CPI decomposition
def test_decomposition_hand_worked_example():
    # before: L1MP 4.0 (L = 0.04 misses/instruction), SCPL1M 50 -> finite 0.04*50 = 2.0, ICX 8.2 - 2.0 = 6.2
    # after:  L1MP 3.5 (L = 0.035),          SCPL1M 40 -> finite 0.035*40 = 1.4, ICX 7.5 - 1.4 = 6.1
    # dCPI = -0.7 = dICX (-0.1) + dF (-0.6)
    # L1MP effect   = dL * (S0+S1)/2 = -0.005 * 45    = -0.225
    # SCPL1M effect = dS * (L0+L1)/2 = -10    * 0.0375 = -0.375      (-0.225 - 0.375 = -0.6 = dF)
    d = decompose_cpi(8.2, 2.0, 4.0, 50.0, 7.5, 1.4, 3.5, 40.0)
    assert d["d_cpi"] == pytest.approx(-0.7, abs=1e-12)
    assert d["d_instr_cmplx"] == pytest.approx(-0.1, abs=1e-12)
    assert d["d_finite"] == pytest.approx(-0.6, abs=1e-12)
    assert d["d_l1mp_effect"] == pytest.approx(-0.225, abs=1e-12)
    assert d["d_scpl1m_effect"] == pytest.approx(-0.375, abs=1e-12)
    assert d["d_other"] == 0.0 and d["note"] == ""


@pytest.mark.parametrize("seed", range(20))
def test_parts_sum_to_the_total(seed):
    rng = np.random.default_rng(seed)
    l0, l1 = rng.uniform(0.5, 8.0, 2)            # L1MP
    s0, s1 = rng.uniform(10, 200, 2)             # SCPL1M
    f0, f1 = l0 / 100 * s0, l1 / 100 * s1        # F = L1MP/100 * SCPL1M
    c0, c1 = f0 + rng.uniform(0.5, 3), f1 + rng.uniform(0.5, 3)
    d = decompose_cpi(c0, f0, l0, s0, c1, f1, l1, s1)
    assert d["d_instr_cmplx"] + d["d_finite"] == pytest.approx(d["d_cpi"], abs=1e-14)
    assert d["d_l1mp_effect"] + d["d_scpl1m_effect"] == pytest.approx(d["d_finite"], abs=1e-14)
    assert d["d_other"] == 0.0
    wf = waterfall(d)
    deltas = wf.loc[wf["kind"] == "delta", "value"].sum()
    assert wf["value"].iloc[0] + deltas == pytest.approx(wf["value"].iloc[-1], abs=1e-12)
    assert wf["end"].iloc[-2] == pytest.approx(c1, abs=1e-12)   # the running CPI ends at the after CPI


def test_decomposition_without_finite_cpi():
    d = decompose_cpi(3.0, float("nan"), 2.0, 40.0, 2.5, float("nan"), 1.8, 38.0)
    assert d["d_cpi"] == pytest.approx(-0.5)
    assert math.isnan(d["d_finite"]) and "Est Finite CPI" in d["note"]
    wf = waterfall(d)
    assert list(wf["step"]) == ["cpi_before", "d_cpi", "cpi_after"]


def test_decomposition_reports_a_rest_when_f_is_not_l_times_s():
    d = decompose_cpi(3.0, 1.0, 2.0, 40.0, 2.5, 0.7, 1.8, 38.0)   # 2.0/100*40 = 0.8 != 1.0
    assert d["d_l1mp_effect"] + d["d_scpl1m_effect"] + d["d_other"] == pytest.approx(d["d_finite"], abs=1e-14)
    assert d["d_other"] != 0 and "other" in d["note"]


# ------------------------------------------------------------------ formula marks
def test_formula_differences():
    sets = builtin_formula_sets()
    z15_z16 = formula_differences(sets["z15"], sets["z16"])
    assert "no formula for z16" in z15_z16["RNI"]
    assert "CPI" not in z15_z16 and "L1MP" not in z15_z16 and "Est_Finite_CPI" not in z15_z16
    assert "formula differs" in z15_z16["L2P"]           # other counter numbers on z16
    z10_z16 = formula_differences(sets["z10"], sets["z16"])
    assert "formula differs" in z10_z16["Est_Finite_CPI"]
    # same expression CPI-Est_Finite_CPI, but Est_Finite_CPI differs
    assert "Est_Finite_CPI" in z10_z16["Est_Instr_Cmplx_CPI"]
    assert formula_differences(sets["z16"], sets["z16"]) == {}


# ------------------------------------------------------------------ samples: z15 before, z16 after
@pytest.fixture(scope="module")
def sides(sample_result):
    before, after = Workspace(), Workspace()
    before.add_all([sample_result("before_z15_ZOSA_smf113.rdw.gz"), sample_result("before_z15_ZOSB_smf113.rdw.gz")])
    after.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_z16_ZOSB_smf113.vbs.gz")])
    return before, after


def _sums(ws, lpar):
    iv = ws.intervals
    rows = iv[iv["lpar"].astype(str) == lpar]
    return {c: float(rows[c].sum()) for c in ("B0", "B1", "B2", "B4", "E143")}


def test_sample_ratio_rows_and_waterfall(sides):
    before, after = sides
    c = compare(Selection(before, name="before"), Selection(after, name="after"), by="lpar")
    assert c.pairs == ["ZOSA", "ZOSB"]
    t = c.table.set_index(["pair", "row"])
    for lpar in ("ZOSA", "ZOSB"):
        b, a = _sums(before, lpar), _sums(after, lpar)
        # hand calculation from the counter sums: CPI = B0/B1, L1MP = (B2+B4)/B1*100,
        # Est Finite CPI = E143/B1, Est SCPL1M = E143/(B2+B4)
        cpi_b, cpi_a = b["B0"] / b["B1"], a["B0"] / a["B1"]
        l1mp_b, l1mp_a = (b["B2"] + b["B4"]) / b["B1"] * 100, (a["B2"] + a["B4"]) / a["B1"] * 100
        fin_b, fin_a = b["E143"] / b["B1"], a["E143"] / a["B1"]
        s_b, s_a = b["E143"] / (b["B2"] + b["B4"]), a["E143"] / (a["B2"] + a["B4"])
        assert t.loc[(lpar, "before"), "CPI"] == pytest.approx(cpi_b, rel=1e-12)
        assert t.loc[(lpar, "after"), "CPI"] == pytest.approx(cpi_a, rel=1e-12)
        assert t.loc[(lpar, "ratio"), "CPI"] == pytest.approx(cpi_b / cpi_a, rel=1e-12)
        assert t.loc[(lpar, "ratio"), "L1MP"] == pytest.approx(l1mp_b / l1mp_a, rel=1e-12)
        assert t.loc[(lpar, "delta"), "Est_SCPL1M"] == pytest.approx(s_a - s_b, rel=1e-9)
        assert t.loc[(lpar, "ratio"), "CPI"] > 1.0          # the z16 needs fewer cycles per instruction
        assert math.isnan(t.loc[(lpar, "ratio"), "RNI"])    # no z16 RNI formula: no ratio
        d = c.cpi.set_index("pair").loc[lpar]
        L_b, L_a = l1mp_b / 100, l1mp_a / 100
        assert d["d_l1mp_effect"] == pytest.approx((L_a - L_b) * (s_b + s_a) / 2, rel=1e-9)
        assert d["d_scpl1m_effect"] == pytest.approx((s_a - s_b) * (L_b + L_a) / 2, rel=1e-9)
        assert d["d_instr_cmplx"] == pytest.approx((cpi_a - fin_a) - (cpi_b - fin_b), rel=1e-9)
        wf = c.waterfall(lpar)
        assert wf["value"].iloc[0] + wf.loc[wf["kind"] == "delta", "value"].sum() == \
            pytest.approx(cpi_a, abs=1e-12)
    assert "RNI" in c.marks and "CPI" not in c.marks
    # labels name the CEC and the generation: the same LPAR name is on two machines
    labels = c.table.loc[c.table["pair"] == "ZOSA", "label"].tolist()
    assert labels[:2] == ["ZOSA (8561-45A12 z15)", "ZOSA (3931-123F5 z16)"]


def test_by_class_and_single_lpar_pairing(sides):
    before, after = sides
    c = compare(Selection(before, nodes=(("lpar", "8561-45A12", "ZOSA"),)),
                Selection(after, nodes=(("lpar", "3931-123F5", "ZOSB"),)), by="class")
    # one LPAR on each side: paired whatever their names, per class
    assert c.pairs == ["ZOSA vs ZOSB GCP", "ZOSA vs ZOSB zIIP"]
    assert set(c.table["row"]) == {"before", "after", "ratio", "delta"} and len(c.table) == 8


def test_unmatched_rows_keep_their_side(sides):
    before, after = sides
    c = compare(Selection(before), Selection(after, nodes=(("lpar", "3931-123F5", "ZOSA"),)), by="lpar")
    t = c.table.set_index(["pair", "row"])
    assert np.isfinite(t.loc[("ZOSB", "before"), "CPI"])
    assert math.isnan(t.loc[("ZOSB", "ratio"), "CPI"])
    assert "not in the selection" in t.loc[("ZOSB", "after"), "label"]


def test_shifted_selection(sides):
    before, _ = sides
    full = compare(Selection(before), Selection(before), by="lpar")
    prime = compare(Selection(before, shift=make_shift("08-17", "mon-fri")), Selection(before), by="lpar")
    # same data on both sides: ratio 1 everywhere, no marks
    assert full.table.loc[full.table["row"] == "ratio", "CPI"].tolist() == pytest.approx([1.0, 1.0])
    assert full.marks == {}
    assert prime.table.loc[prime.table["row"] == "ratio", "LPARCPU"].iloc[0] != pytest.approx(1.0)


# ------------------------------------------------------------------ labels and relative axis
def test_node_labels():
    f = pd.DataFrame({"cec": ["A-1", "B-2", "A-1"], "lpar": ["ZOSA", "ZOSA", "ZOSB"],
                      "generation": ["z15", "z16", "z15"]})
    assert node_labels(f, "lpar").tolist() == ["ZOSA (A-1 z15)", "ZOSA (B-2 z16)", "ZOSB"]
    # ambiguity across frames (the other side of a comparison)
    one = f.iloc[[2]]
    other = pd.DataFrame({"cec": ["B-2"], "lpar": ["ZOSB"], "generation": ["z16"]})
    assert node_labels(one, "lpar", [other]).tolist() == ["ZOSB (A-1 z15)"]
    assert node_labels(one, "lpar").tolist() == ["ZOSB"]


def _frame(first: str, n: int, minutes: int) -> pd.DataFrame:
    ends = pd.date_range(first, periods=n, freq=f"{minutes}min")
    return pd.DataFrame({"interval_start": ends - pd.Timedelta(minutes=minutes), "interval_end": ends,
                         "CPI": np.ones(n)})


def test_relative_axis_modes():
    # both within one day: time of day (hours after midnight of each day)
    a = relative_axis(_frame("2026-10-05 08:15", 4, 15), _frame("2026-11-02 09:15", 4, 15))
    assert a.unit == "time_of_day"
    assert a.before["x"].tolist() == [8.25, 8.5, 8.75, 9.0] and a.after["x"].iloc[0] == 9.25
    # two days: hours from each selection's start (the first interval start)
    b = relative_axis(_frame("2026-10-05 00:15", 192, 15), _frame("2026-11-02 00:15", 192, 15))
    assert b.unit == "hours" and b.before["x"].iloc[0] == 0.25 and b.after["x"].iloc[-1] == 48.0
    # a week: days; an explicit window start moves the origin
    c = relative_axis(_frame("2026-10-05 01:00", 7 * 24, 60), _frame("2026-11-02 01:00", 7 * 24, 60),
                      after_start="2026-11-01T00:00Z")
    assert c.unit == "days" and c.before["x"].iloc[0] == pytest.approx(1 / 24)
    assert c.after["x"].iloc[0] == pytest.approx(1 + 1 / 24)
