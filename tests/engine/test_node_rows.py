"""Pool and SMT core nodes of the tree (issue 26): rows, sums and tree shape, against hand sums of a small built
SMF 113 file and against the bundled z/VM sample (SMT-2 IFLs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.aggregate import select_rows
from app.engine.node_rows import core_map, extra_values
from app.engine.views import pools
from app.formats import read_file
from app.formats.smf113_writer import encode_samples, write_smf_file
from tests.engine.factory import MIN15, T0, frame

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
CEC = "3931-ABCDE"

# The built file: one z16, two z/OS LPARs, two 15-minute intervals (subtype 1: every record is an interval's
# deltas; the second interval has twice the first's counters).  Interval 1, (B0 cycles, B1 instructions):
#   SYSA  GCP  CPU 0 (core 0)  1000,  500     SYSB  GCP  CPU 0 (core 0)  6000, 2000
#   SYSA  GCP  CPU 1 (core 1)  3000, 1000     SYSB  zIIP CPU 1 (core 5)   400,  100   } SMT-2: one core,
#   SYSA  zIIP CPU 2 (core 2)  2000, 1000     SYSB  zIIP CPU 2 (core 5)   600,  300   } two threads
# Hand sums over the window (x3 = interval 1 + interval 2):
#   GCP pool:   B0 = (1000 + 3000 + 6000) x 3 = 30000, B1 = (500 + 1000 + 2000) x 3 = 10500 -> CPI 2.857142857...
#               3 CPUs (SYSA 0, 1 and SYSB 0), 2 LPARs
#   zIIP pool:  B0 = (2000 + 400 + 600) x 3 = 9000,   B1 = (1000 + 100 + 300) x 3 = 4200   -> CPI 2.142857142...
#               3 CPUs, 2 LPARs
#   SYSB zIIP core 5: B0 = (400 + 600) x 3 = 3000, B1 = (100 + 300) x 3 = 1200 -> CPI 2.5; interval 1: 1000/400
CPUS = [("SYSA", "GCP", 0, 0, 1000, 500), ("SYSA", "GCP", 1, 1, 3000, 1000), ("SYSA", "zIIP", 2, 2, 2000, 1000),
        ("SYSB", "GCP", 0, 0, 6000, 2000), ("SYSB", "zIIP", 1, 5, 400, 100), ("SYSB", "zIIP", 2, 5, 600, 300)]


def built_samples() -> pd.DataFrame:
    recs = []
    for k in (1, 2):
        for lpar, cls, cpu, core, b0, b1 in CPUS:
            recs.append({"lpar": lpar, "system": lpar, "class": cls, "cpu": cpu, "core": core, "cec": CEC,
                         "time": T0 + k * MIN15, "run_start": T0, "B0": b0 * k, "B1": b1 * k})
    return frame(recs)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Workspace:
    path = tmp_path_factory.mktemp("pools") / "pools_smt.smf"
    write_smf_file(path, encode_samples(built_samples(), 1), framing="rdw")
    ws = Workspace(cache=False)
    ws.add(read_file(path))
    return ws


@pytest.fixture(scope="module")
def zvm() -> Workspace:
    path = SAMPLES / "after_VMSYS1_monwrite.mondata.gz"
    if not path.exists():
        pytest.skip("sample not generated")
    ws = Workspace(cache=False)
    ws.add(read_file(path))
    return ws


def _cec(ws) -> str:
    return str(ws.intervals["cec"].astype(str).iloc[0])


def test_pool_rows_are_hand_sums(built):
    cec = _cec(built)
    m = built.metrics(by="class", nodes=[("pool", cec, "GCP"), ("pool", cec, "zIIP")])
    gcp = m[m["class"] == "GCP"].iloc[0]
    ziip = m[m["class"] == "zIIP"].iloc[0]
    assert gcp["CPI"] == pytest.approx(30000 / 10500, rel=1e-12)
    assert ziip["CPI"] == pytest.approx(9000 / 4200, rel=1e-12)
    assert (gcp["n_cpus"], gcp["n_lpars"], gcp["lpar"]) == (3, 2, "(pool)")
    assert (ziip["n_cpus"], ziip["n_lpars"]) == (3, 2)


def test_pool_interval_rows_and_summary(built):
    cec = _cec(built)
    m = built.metrics(by="class_interval", nodes=[("pool", cec, "GCP")], summary=True)
    body = m[~m["summary"].astype(bool)].sort_values("interval_end")
    assert len(body) == 2 and int(m["summary"].astype(bool).sum()) == 1
    # interval 1: B0 1000 + 3000 + 6000 = 10000, B1 500 + 1000 + 2000 = 3500; interval 2 the same ratio
    assert body["CPI"].tolist() == pytest.approx([10000 / 3500, 20000 / 7000], rel=1e-12)
    summary = m[m["summary"].astype(bool)].iloc[0]
    assert summary["CPI"] == pytest.approx(30000 / 10500, rel=1e-12)
    # the numbers of report --by pool
    rep = pools(built)
    assert summary["CPI"] == pytest.approx(rep.loc[rep["class"] == "GCP", "CPI"].iloc[0], rel=1e-12)
    assert summary["LPARCPU"] == pytest.approx(rep.loc[rep["class"] == "GCP", "LPARCPU"].iloc[0], rel=1e-12)


def test_pool_and_core_keys_select_their_rows(built):
    cec = _cec(built)
    iv = built.intervals
    assert len(select_rows(iv, nodes=[("pool", cec, "zIIP")])) == 3 * 2          # 3 zIIP CPUs x 2 intervals
    core = select_rows(iv, nodes=[("core", cec, "SYSB", "zIIP", 5)])
    assert sorted(set(core["cpu"].tolist())) == [1, 2] and len(core) == 4
    # a pool key never reads as an LPAR named like the type
    assert len(select_rows(iv, nodes=[("lpar", cec, "GCP")])) == 0


def test_core_row_sums_its_threads(built):
    cec = _cec(built)
    m = built.metrics(by="class_interval", nodes=[("core", cec, "SYSB", "zIIP", 5)], summary=True)
    body = m[~m["summary"].astype(bool)].sort_values("interval_end")
    assert body["CPI"].tolist() == pytest.approx([1000 / 400, 2000 / 800], rel=1e-12)
    assert set(body["n_cpus"]) == {2} and set(body["core"]) == {5}
    whole = m[m["summary"].astype(bool)].iloc[0]
    assert whole["CPI"] == pytest.approx(3000 / 1200, rel=1e-12)
    # LPARCPU of a core interval = the sum of its threads' (CPU rows of the same interval)
    cpus = built.metrics(by="cpu", nodes=[("cpu", cec, "SYSB", "zIIP", 1), ("cpu", cec, "SYSB", "zIIP", 2)])
    per = cpus.groupby("interval_end")["LPARCPU"].sum().sort_index()
    assert body["LPARCPU"].to_numpy() == pytest.approx(per.to_numpy(), rel=1e-12)


def test_tree_has_pools_after_lpars_and_cores_only_where_cpus_share_one(built):
    (root,) = built.tree()
    kinds = [c.level for c in root.children]
    assert kinds == ["lpar", "lpar", "pool", "pool"]                    # pools after the LPARs
    gcp = next(c for c in root.children if c.key[0] == "pool" and c.key[2] == "GCP")
    assert gcp.label == "GCP pool" and gcp.info["n_cpus"] == 3 and gcp.info["n_lpars"] == 2
    assert gcp.info["cpi"] == pytest.approx(30000 / 10500, rel=1e-12)
    sysb = next(c for c in root.children if c.label == "SYSB")
    ziip = next(c for c in sysb.children if c.label == "zIIP")
    (core,) = ziip.children
    assert core.key == ("core", root.key[1], "SYSB", "zIIP", 5) and core.label == "Core 5"
    assert [t.key[-1] for t in core.children] == [1, 2]
    assert [t.info["thread"] for t in core.children] == [0, 1]
    assert core.info["cpi"] == pytest.approx(2.5, rel=1e-12)
    # one CPU per core: the class keeps its CPUs directly
    sysa = next(c for c in root.children if c.label == "SYSA")
    assert all(k.level == "cpu" for cls in sysa.children for k in cls.children)


def test_zvm_sample_smt_cores(zvm):
    """The bundled z/VM sample: VMPROD's 4 IFL CPUs are 2 cores of 2 threads (SMT-2, core ids from D1R5/D0R2)."""
    cmap = core_map(zvm.intervals)
    ((ck, cores),) = cmap.items()
    assert ck[1:] == ("VMPROD", "IFL") and cores == {0: [0, 1], 1: [2, 3]}
    (root,) = zvm.tree()
    vm = next(c for c in root.children if c.label == "VMPROD")
    (ifl,) = vm.children
    assert [c.label for c in ifl.children] == ["Core 0", "Core 1"]
    assert [[t.key[-1] for t in c.children] for c in ifl.children] == [[0, 1], [2, 3]]
    iv = zvm.intervals
    for core, threads in cores.items():
        m = zvm.metrics(by="class_interval", nodes=[("core", *ck, core)])
        rows = iv[(iv["lpar"].astype(str) == "VMPROD") & iv["cpu"].isin(threads)]
        g = rows.groupby("interval_end")
        want = (g["B0"].sum() / g["B1"].sum()).sort_index()
        got = m.set_index("interval_end")["CPI"].sort_index()
        assert got.to_numpy() == pytest.approx(want.to_numpy(), rel=1e-12)
        # the core's busy is the sum of its threads' busy, interval by interval
        cpu = zvm.metrics(by="cpu", nodes=[("cpu", *ck, t) for t in threads])
        assert m.sort_values("interval_end")["LPARCPU"].to_numpy() == pytest.approx(
            cpu.groupby("interval_end")["LPARCPU"].sum().sort_index().to_numpy(), rel=1e-9)


def test_extra_values_over_a_window(built):
    cec = _cec(built)
    v = extra_values(built, T0, T0 + MIN15)                    # interval 1 only
    assert v[("pool", cec, "GCP")]["cpi"] == pytest.approx(10000 / 3500, rel=1e-12)
    assert v[("core", cec, "SYSB", "zIIP", 5)]["cpi"] == pytest.approx(1000 / 400, rel=1e-12)
    assert np.isfinite(v[("pool", cec, "zIIP")]["busy"])
