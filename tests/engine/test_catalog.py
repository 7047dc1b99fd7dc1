"""Formula sets as data: loading, versions, selection, user override files and their errors."""

from __future__ import annotations

import json

import pytest
from factory import MIN15, T0, result

from app.engine import FormulaFileError, Workspace, load_formula_sets, select_generation
from app.engine.catalog import GENERATION_ORDER, STATUSES

PCT = 400_000      # 1 % of L1 misses below


def test_all_generations_load_with_name_version_and_status():
    sets = load_formula_sets()
    assert set(GENERATION_ORDER) | {"generic"} == set(sets)
    for g, fs in sets.items():
        assert fs.name and fs.version.startswith(f"{g} / ")
        for m in fs.metrics.values():
            assert m.status in STATUSES and m.header and isinstance(m.decimals, int)
    assert sets["z16"].metrics["RNI"].expr is None and sets["z17"].metrics["RNI"].expr is None
    assert "2.6*(0.4*L3P" in sets["z13"].metrics["RNI"].expr           # coefficients visible in the data
    assert set(sets["generic"].metrics) == {"CPI", "L1MP", "PRBSTATE", "LPARCPU", "Eff_GHz", "MIPS_per_CPU"}
    assert not sets["z17"].workload_hint and sets["z10"].workload_hint


def test_select_generation():
    sets = load_formula_sets()
    assert select_generation(sets, "3931", 7) == ("z16", "machine-type")
    assert select_generation(sets, "3932", None) == ("z16", "machine-type")
    assert select_generation(sets, "3931", 6) == ("z16", "csvn-mismatch")
    assert select_generation(sets, "1234", 4) == ("z13", "by-csvn")
    assert select_generation(sets, "1234", 99) == ("generic", "generic")


def _z16_recs():
    # L1 misses 4e7 over B1 1e9 -> L1MP 4.0 ; L3P 50 %, MEMP 50 %
    return [dict(time=T0 + MIN15, B0=2_000_000_000, B1=1_000_000_000, B2=10_000_000, B4=30_000_000,
                 E147=20_000_000, E156=20_000_000)]


def test_user_override_sets_z16_rni(tmp_path):
    p = tmp_path / "site.json"
    p.write_text(json.dumps({"z16": {"version": "z16 / site-1",
                                     "metrics": {"RNI": {"expr": "2.0*(0.4*L3P+1.0*L4LP+2.0*L4RP+5.0*MEMP)/100"},
                                                 "Nest_per_K": {"expr": "RNI*1000", "decimals": 0}}}}))
    ws = Workspace(formula_file=p)
    ws.add(result(_z16_recs()))
    r = ws.metrics("lpar").iloc[0]
    # RNI = 2.0*(0.4*50 + 5.0*50)/100 = 2.0*(20 + 250)/100 = 5.4 ; L1MP 4 in 3..6, RNI > 1 -> HIGH
    assert r["RNI"] == pytest.approx(5.4)
    assert r["Nest_per_K"] == pytest.approx(5400)
    assert r["Workload_Hint"] == "HIGH"
    assert r["formula_set"] == "z16 / site-1" and ws.formula_versions() == {"z16": "z16 / site-1"}
    assert ws.formula_sets["z16"].metrics["RNI"].status == "unconfirmed"   # changed expr: builtin status dropped
    assert ws.formula_sets["z13"].version == load_formula_sets()["z13"].version


def test_override_default_version_names_file(tmp_path):
    p = tmp_path / "f.json"
    p.write_text(json.dumps({"formula_sets": {"z196": {"metrics": {"RNI": {
        "expr": "1.67*(0.4*L3P+1.0*L4LP+2.4*L4RP+7.5*MEMP)/100", "status": "seed"}}}}}))
    fs = load_formula_sets(p)["z196"]
    assert fs.version.endswith("+ f.json") and fs.metrics["RNI"].status == "seed"


def test_broken_json_names_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{\n  "z16": {\n    "metrics": {\n      "RNI": {"expr": "L3P"},\n    }\n  }\n}\n')
    with pytest.raises(FormulaFileError) as e:
        load_formula_sets(p)
    assert e.value.line == 5 and "line 5" in str(e.value) and str(p) in str(e.value)


@pytest.mark.parametrize("expr,what", [("__import__('os').system('x')", "function calls"),
                                       ("L3P.real", "attribute"), ("B0/NOPE", "NOPE"), ("(B0", "syntax")])
def test_bad_expression_names_metric_and_line(tmp_path, expr, what):
    p = tmp_path / "bad.json"
    p.write_text('{\n "z16": {\n  "metrics": {\n   "CPI": {"expr": "B0/B1"},\n   "RNI": {\n    "expr": '
                 + json.dumps(expr) + '\n   }\n  }\n }\n}\n')
    with pytest.raises(FormulaFileError) as e:
        load_formula_sets(p)
    assert e.value.line == 6
    assert "RNI" in str(e.value) and what in str(e.value)


def test_cycle_and_bad_status(tmp_path):
    p = tmp_path / "cyc.json"
    p.write_text('{"z16": {"metrics": {"A": {"expr": "B"}, "B": {"expr": "A*2"}}}}')
    with pytest.raises(FormulaFileError, match="circular"):
        load_formula_sets(p)
    p.write_text('{"z16": {"metrics": {"RNI": {"expr": "L3P", "status": "gospel"}}}}')
    with pytest.raises(FormulaFileError, match="status"):
        load_formula_sets(p)
    with pytest.raises(FormulaFileError, match="cannot be read"):
        load_formula_sets(tmp_path / "missing.json")


def test_new_generation_from_user_file(tmp_path):
    p = tmp_path / "z99.json"
    p.write_text(json.dumps({"z99": {"version": "z99 / lab", "machine_types": {"9999": "z99"}, "csvn": 9,
                                     "metrics": {"CPI": {"expr": "B0/B1", "status": "analyzer"}}}}))
    ws = Workspace(formula_file=p)
    ws.add(result([dict(time=T0 + MIN15, B0=30, B1=10, machine_type="9999", csvn=9)]))
    r = ws.metrics("cpu").iloc[0]
    assert r["generation"] == "z99" and r["CPI"] == 3.0
