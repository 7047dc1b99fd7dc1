"""Workload hint: rule boundaries, aggregate-only, lost data excluded, n/a without RNI."""

from __future__ import annotations

import pytest
from factory import MIN15, T0, result

from app.engine import Workspace
from app.engine.hint import classify, rules_text


@pytest.mark.parametrize("l1mp,rni,hint", [
    (2.99, 0.75, "AVERAGE"), (2.99, 0.7499, "LOW"),
    (3.0, 1.0, "AVERAGE"),            # L1MP exactly 3 is in the 3..6 row; RNI 1.0 is inside 0.6..1.0
    (3.0, 1.0001, "HIGH"), (3.0, 0.6, "AVERAGE"), (3.0, 0.5999, "LOW"),
    (6.0, 1.0, "AVERAGE"), (6.0, 1.01, "HIGH"), (6.0, 0.6, "AVERAGE"), (6.0, 0.59, "LOW"),
    (6.0001, 0.75, "HIGH"), (6.0001, 0.7499, "AVERAGE"),
    (0.0, 0.0, "LOW"), (float("nan"), 1.0, "n/a"), (4.0, float("nan"), "n/a"),
])
def test_boundaries(l1mp, rni, hint):
    assert classify([l1mp], [rni])[0] == hint


def test_rules_text():
    assert rules_text()[0].startswith("L1MP < 3, RNI >= 0.75: AVERAGE")


# z13 counters giving RNI = 2.6*(7.5*MEMP)/100 with MEMP = 100 % -> 19.5 (HIGH with L1MP 4)
# and with L2P = 100 % -> RNI 0 (LOW).
def _z13(time, mem: bool, lost=False, cpu=0):
    l1 = 40_000_000
    src = dict(E158=l1) if mem else dict(E133=l1)
    return dict(time=time, cpu=cpu, cpu_speed=5000, lost=lost, B0=2_000_000_000, B1=1_000_000_000, B2=10_000_000,
                B4=30_000_000, **src)


def test_hint_excludes_lost_data_and_only_at_aggregate_levels():
    ws = Workspace()
    ws.add(result([_z13(T0 + MIN15, mem=False), _z13(T0 + 2 * MIN15, mem=True, lost=True)], gen="z13"))
    lp = ws.metrics("lpar").iloc[0]
    # all rows: MEMP = 50 % -> RNI = 2.6*7.5*50/100 = 9.75 ; the hint uses only the clean interval: RNI 0 -> LOW
    assert lp["RNI"] == pytest.approx(9.75)
    assert lp["Workload_Hint"] == "LOW"
    assert "lost-data" in lp["quality"]
    iv = ws.metrics("interval")
    assert list(iv["Workload_Hint"]) == ["LOW", "n/a"]      # the lost interval alone has no hint
    assert ws.metrics("cpu")["Workload_Hint"].isna().all()


def test_hint_na_for_z16_without_rni():
    ws = Workspace()
    ws.add(result([dict(time=T0 + MIN15, B0=2, B1=1, B2=1, B4=1, E145=2)], gen="z16"))
    assert ws.metrics("lpar").iloc[0]["Workload_Hint"] == "n/a"
