"""Partition data per LPAR (z/VM D0R16) and the time coverage of aggregated rows (issue 9)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.engine.partitions import coverage, partition_summary

T0 = pd.Timestamp("2026-11-02 00:00")
MIN = pd.Timedelta(minutes=1)


def _parts() -> pd.DataFrame:
    rows = []
    for k, (cp_busy, ziip_busy) in enumerate([(50.0, 20.0), (70.0, 40.0)]):
        t = T0 + (k + 1) * MIN
        rows.append(dict(cec="3931-X", lpar="PRD1", lpar_number=1, **{"class": "CP"}, cpus=4, weight=300,
                         capped=False, busy_pct=cp_busy, time=t))
        rows.append(dict(cec="3931-X", lpar="PRD1", lpar_number=1, **{"class": "zIIP"}, cpus=2, weight=200,
                         capped=False, busy_pct=ziip_busy, time=t))
        rows.append(dict(cec="3931-X", lpar="CF01", lpar_number=2, **{"class": "ICF"}, cpus=2, weight=0,
                         capped=True, busy_pct=np.nan if k == 0 else 90.0, time=t))
    return pd.DataFrame(rows)


def test_partition_with_two_processor_types():
    ps = partition_summary(_parts(), measured={("3931-X", "PRD1")}).set_index("lpar")
    prd = ps.loc["PRD1"]
    assert prd["n_cpus"] == 6                       # 4 CPs + 2 zIIPs, not 2 rows
    assert prd["processors"] == "CP 4, zIIP 2" and prd["weights"] == "CP 300, zIIP 200"
    assert prd["data"] == "counters" and not prd["capped"]
    # busy summed over CPUs per interval: 50*4 + 20*2 = 240, 70*4 + 40*2 = 360 -> mean 300 (% of one CPU)
    assert prd["busy_sum_pct"] == 300.0
    # per CPU: 240/6 = 40, 360/6 = 60 -> mean 50
    assert prd["busy_per_cpu_pct"] == 50.0
    cf = ps.loc["CF01"]
    assert cf["data"] == "partition data only" and cf["n_cpus"] == 2 and cf["capped"]
    assert cf["busy_sum_pct"] == 180.0               # only the interval with a busy value: 90 * 2


def test_coverage_names_the_short_lpar():
    rows = []
    for lpar, n in (("A", 8), ("B", 4)):              # B's data ends after 4 of the 8 intervals
        for k in range(n):
            rows.append(dict(cec="C", lpar=lpar, system=lpar, **{"class": "GCP"}, cpu=0,
                             interval_start=T0 + k * 15 * MIN, interval_end=T0 + (k + 1) * 15 * MIN,
                             interval_s=900.0))
    iv = pd.DataFrame(rows)
    c = coverage(iv, "cec").iloc[0]
    # A covers 2 h of 2 h, B 1 h of 2 h -> (1 + 0.5) / 2 = 75 %
    assert c["coverage_pct"] == 75.0 and "LPAR B 2026-11-02 00:00..2026-11-02 01:00" in c["coverage_note"]
    lp = coverage(iv, "lpar")
    assert list(lp["coverage_pct"]) == [100.0, 100.0] and list(lp["coverage_note"]) == ["", ""]
