"""Presentation columns, metric info, tree, workspace behaviour, no Qt in the engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
from factory import MIN15, T0, result

from app.engine import Workspace, metric_info, presentation_columns

ROOT = Path(__file__).resolve().parents[2]


def test_presentation_order_z10_and_z16():
    z10 = [c.header for c in presentation_columns("z10") if c.group == "Main"]
    assert z10 == ["CPI", "Prb State", "Est Instr Cmplx CPI", "Est Finite CPI", "Est SCPL1M", "L1MP", "L15P",
                   "L2LP", "L2RP", "MEMP", "Rel Nest Intensity", "LPARCPU", "Eff GHz"]
    cols = presentation_columns("z16")
    main = [c.header for c in cols if c.group == "Main"]
    assert main == ["CPI", "Prb State", "Est Instr Cmplx CPI", "Est Finite CPI", "Est SCPL1M", "L1MP", "L2P", "L3P",
                    "L4LP", "L4RP", "MEMP", "Rel Nest Intensity", "LPARCPU", "Eff GHz"]
    groups = [c.group for c in cols]
    assert groups == sorted(groups, key=["Main", "Hint", "TLB", "MT", "Other"].index)
    ids = [c.id for c in cols]
    assert ids[ids.index("Eff_GHz") + 1] == "Workload_Hint"
    assert [c.id for c in cols if c.group == "TLB"] == ["TLB1_Miss_Pct_CPU", "TLB1_Cycles_per_Miss",
                                                        "PTE_Pct_TLB1_Miss"]
    assert "ST_IPC" in [c.id for c in presentation_columns("z17") if c.group == "MT"]
    dec = {c.id: c.decimals for c in cols}
    assert dec["CPI"] == 2 and dec["RNI"] == 2 and dec["L1MP"] == 1 and dec["LPARCPU"] == 1
    assert dec["Est_SCPL1M"] == 1 and dec["PRBSTATE"] == 1 and dec["Est_Finite_CPI"] == 2


def test_tooltip_and_metric_info():
    c = {c.id: c for c in presentation_columns("z13")}["RNI"]
    assert "2.6*(0.4*L3P" in c.tooltip and "z13 / " in c.tooltip and "confirmed" in c.tooltip
    info = metric_info("z16", "RNI")
    assert info["expr"] is None and info["status"] == "unconfirmed" and info["formula_set"].startswith("z16")
    assert metric_info("z16", "Workload_Hint")["status"] == "unconfirmed"
    assert metric_info("z16", "NOPE") == {} and metric_info("z99", "CPI") == {}
    assert [c.id for c in presentation_columns("generic")] == ["CPI", "PRBSTATE", "L1MP", "LPARCPU", "Eff_GHz",
                                                               "MIPS_per_CPU"]


def test_tree_with_partitions():
    recs = [dict(cpu=c, cls="GCP", time=T0 + MIN15, B0=10, B1=5) for c in (0, 1)]
    recs += [dict(cpu=2, time=T0 + MIN15, B0=10, B1=5, **{"class": "zIIP"})]
    parts = pd.DataFrame({"cec": ["3931-ABCDE", "3931-ABCDE"], "lpar": ["SYSA", "CF01"], "lpar_number": [1, 2],
                          "class": ["CP", "ICF"], "cpus": [3, 1], "weight": [700, 300], "capped": [False, False],
                          "busy_pct": [20.0, 95.0], "time": [T0 + MIN15, T0 + MIN15]})
    ws = Workspace()
    ws.add(result([{k: v for k, v in r.items() if k != "cls"} for r in recs], partitions=parts))
    roots = ws.tree()
    assert len(roots) == 1
    cec = roots[0]
    assert cec.key == ("cec", "3931-ABCDE") and cec.info["generation"] == "z16" and cec.info["n_cpus"] == 3
    sysa, cf01 = [c for c in cec.children if c.level == "lpar"]
    # the CEC pools after the LPARs (issue 26): SYSA's GCP CPUs and its zIIP
    assert [c.key for c in cec.children[2:]] == [("pool", "3931-ABCDE", "GCP"), ("pool", "3931-ABCDE", "zIIP")]
    assert cec.children[2].info["n_cpus"] == 2 and cec.children[2].info["cpi"] == 2.0
    assert sysa.key == ("lpar", "3931-ABCDE", "SYSA") and not sysa.info["partition_only"]
    assert sysa.info["weight"] == 700 and sysa.info["weights"] == "CP 700" and sysa.info["cpi"] == 2.0
    assert sysa.info["partition_cpus"] == 3
    assert cf01.info["partition_only"] and cf01.info["busy_pct"] == 95.0 and cf01.children == []
    assert [c.label for c in sysa.children] == ["GCP", "zIIP"]
    assert [c.key for c in sysa.children[0].children] == [("cpu", "3931-ABCDE", "SYSA", "GCP", 0),
                                                          ("cpu", "3931-ABCDE", "SYSA", "GCP", 1)]


def test_workspace_add_keeps_result_and_invalidates_cache():
    ws = Workspace()
    r1 = result([dict(time=T0 + MIN15, B0=10, B1=5)], file="a.smf")
    ws.add(r1)
    assert ws.files == [r1]
    m1 = ws.metrics("lpar")
    assert m1.iloc[0]["CPI"] == 2.0
    ws.add(result([dict(time=T0 + 2 * MIN15, B0=30, B1=5)], file="b.smf"))
    assert ws.metrics("lpar").iloc[0]["CPI"] == 4.0          # (10 + 30)/(5 + 5)
    assert len(ws.intervals) == 2 and [r.file for r in ws.files] == ["a.smf", "b.smf"]
    assert ws.statuses()["z16"]["CPI"] == "confirmed"


def test_engine_import_has_no_qt():
    code = ("import sys, app.engine; bad = [m for m in sys.modules if m.startswith(('PySide', 'PyQt', 'shiboken', "
            "'pyqtgraph'))]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
