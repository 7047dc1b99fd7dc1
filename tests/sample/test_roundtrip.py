"""Workload model -> SMF 113 / MONWRITE bytes -> readers -> engine gives the model's numbers back.

The model states, per CPU and interval, the busy (LPARCPU), CPI, L1MP, problem-state
share, sourcing percentages and the finite-cache CPI it put into the counters
(``app.sample.model.make_samples`` returns them as ``expected``).  Counters are
integers, so the engine's values may differ from the model's by rounding only:
with ~10^11 instructions per interval the error is far below the 1e-6 relative
tolerance used here.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from app.engine import Workspace
from app.formats import read_bytes
from app.formats import monwrite_writer, smf113_writer
from app.sample.generations import GENERATIONS
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute

MIX = {"L2P": 76.0, "L3P": 15.0, "L4LP": 5.0, "L4RP": 1.5, "MEMP": 2.5}
START = dt.datetime(2026, 3, 2, 8, 0)
SOURCING = {"z10": ["L15P", "L2LP", "L2RP", "MEMP"]}


def _cec(gen: str, smt: bool = False) -> CecModel:
    classes = [ClassModel("GCP", 3, 70, 3.1, 3.4, MIX, 61), ClassModel("zIIP", 2 if not smt else 4, 40, 2.4, 2.2,
                                                                         MIX, 85, smt=smt)]
    return CecModel(gen, "00000000000ABCDE", [LparModel("PRD1", "PRD1", classes)])


def _metrics(data: bytes, name: str) -> pd.DataFrame:
    res = read_bytes(data, name)
    assert not [f for f in res.findings if f.severity == "error"], res.findings
    ws = Workspace()
    ws.add(res)
    return ws.metrics(by="cpu")


def _compare(got: pd.DataFrame, expected: pd.DataFrame, gen: str) -> None:
    keys = ["system", "cpu"]
    got = got.assign(time=pd.to_datetime(got["interval_end"]).dt.tz_localize(None))
    m = expected.merge(got, on=keys + ["time"], suffixes=("_model", ""))
    assert len(m) == len(expected), "every modelled CPU interval is in the engine's output"
    cols = ["LPARCPU", "CPI", "L1MP", "PRBSTATE"] + SOURCING.get(gen, ["L2P", "L3P", "L4LP", "L4RP", "MEMP"])
    if gen in ("z10", "z196") or GENERATIONS[gen].finite == "e143":
        cols.append("Est_Finite_CPI")
    for c in cols:
        np.testing.assert_allclose(m[c].to_numpy(float), m[c + "_model"].to_numpy(float), rtol=1e-6, atol=1e-6,
                                   err_msg=f"{gen} {c}")


@pytest.mark.parametrize("gen", list(GENERATIONS))
def test_smf_subtype1_round_trip(gen: str) -> None:
    samples, expected = make_samples(_cec(gen), START, intervals=6, interval_s=900.0, seed=3)
    data = smf113_writer.frame_rdw(smf113_writer.encode_samples(samples, 1))
    _compare(_metrics(data, f"{gen}.st1"), expected, gen)


@pytest.mark.parametrize("gen", list(GENERATIONS))
def test_smf_subtype2_round_trip(gen: str) -> None:
    samples, expected = make_samples(_cec(gen), START, intervals=6, interval_s=900.0, seed=4)
    data = smf113_writer.frame_bdw(smf113_writer.encode_samples(to_absolute(samples), 2))
    _compare(_metrics(data, f"{gen}.st2"), expected, gen)


def test_smt_thread_density_round_trip() -> None:
    # SMT zIIPs under PROCVIEW CORE: the MT-diagnostic set comes from thread 0 of each core.
    samples, expected = make_samples(_cec("z16", smt=True), START, intervals=4, interval_s=900.0, seed=5)
    got = _metrics(smf113_writer.frame_rdw(smf113_writer.encode_samples(samples, 1)), "smt.st1")
    got = got.assign(time=pd.to_datetime(got["interval_end"]).dt.tz_localize(None))
    exp = expected.dropna(subset=["Thread_Density"])
    m = exp.merge(got, on=["system", "cpu", "time"], suffixes=("_model", ""))
    assert len(m) == len(exp) > 0
    np.testing.assert_allclose(m["Thread_Density"], m["Thread_Density_model"], rtol=1e-9)


def test_monwrite_round_trip() -> None:
    cec = CecModel("z16", "00000000000ABCDE",
                   [LparModel("VMP1", "VMSYS9", [ClassModel("IFL", 4, 55, 2.3, 2.1, MIX, 70)], os="z/VM")])
    samples, expected = make_samples(cec, START, intervals=5, interval_s=60.0, seed=6)
    data = monwrite_writer.write_samples(to_absolute(samples), interval_s=60.0)
    got = _metrics(data, "vm.mondata")
    _compare(got, expected, "z16")
