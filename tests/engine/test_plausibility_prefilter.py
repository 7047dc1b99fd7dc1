"""The physical-bounds check tests every row at once against a looser test first (``plausibility._suspects``) and
runs the rules only on the rows it finds.  That looser test must let through every row a rule catches: on any
frame, the check gives exactly what the rules give on every row (``_scan(..., every_row=True)``, the reference),
the violation named per row included.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import plausibility as P
from app.engine.catalog import load_formula_sets
from app.engine.deltas import QUALITY_BITS

SETS = load_formula_sets()
GENS = sorted(SETS) + ["z99"]          # z99: a generation no formula set or bound table knows
# every counter some rule reads: basic, problem state, the cycle counters and the sourcing counters of every
# generation, a few other extended counters, the MT counters (one of them with the core-cycle rule)
COUNTERS = (["B0", "B1", "B2", "B3", "B4", "B5", "B6", "B7"] + [f"P{i}" for i in range(32, 40)]
            + [f"K{i}" for i in range(64, 68)]
            + [f"E{i}" for i in range(128, 184)] + ["M448", "M449", "M450"])
# counter values as multiples of the row's cycles: around each bound (8 x, 6 x, 1 x, 1.25 x ...), NaN and negatives
FACTORS = [np.nan, -1.0, 0.0, 0.01, 0.3, 0.5, 0.99, 1.0, 1.01, 1.3, 2.0, 5.99, 6.01, 7.99, 8.0, 8.01, 15.9, 16.1,
           50.0]


def _frame(seed: int, n: int, subset: int, nan_share: float) -> tuple[pd.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    counters = COUNTERS if subset == 0 else sorted(rng.choice(COUNTERS, size=subset, replace=False).tolist(),
                                                   key=lambda c: ("BPKEM".index(c[0]), int(c[1:])))
    speed = rng.choice([0.0, 5200.0, 4400.0, -1.0, np.nan], size=n, p=[0.1, 0.5, 0.3, 0.05, 0.05])
    secs = rng.choice([900.0, 60.0, 0.5, np.nan], size=n, p=[0.6, 0.25, 0.1, 0.05])
    wall = speed * 1e6 * (secs * 1.05 + 2)
    b0 = wall * rng.choice([0.1, 0.9, 1.0, 1.0000001, 2.0, np.nan], size=n)
    data = {"generation": pd.Categorical(rng.choice(GENS, size=n)), "cpu_speed": speed, "interval_s": secs,
            "qbits": rng.choice([0, QUALITY_BITS["lost-data"], 4, 5], size=n).astype(np.int64),
            "source": pd.Categorical(rng.choice(["a.smf", "b.smf"], size=n)), "offset": np.arange(n) * 1000,
            "system": "SYS1", "class": "CP", "cpu": np.arange(n) % 8,
            "interval_end": pd.Timestamp("2026-11-02") + pd.to_timedelta(np.arange(n) // 8 * 900, unit="s")}
    for c in counters:
        # mostly small shares (a row then reaches the later rules), about two extended counters a row and a
        # quarter of the basic and problem-state ones from FACTORS
        hot = 0.25 if c[0] in "BP" else 2 / len(counters)
        f = np.where(rng.random(n) < hot, rng.choice(FACTORS, size=n),
                     rng.choice([0.0, 0.001, 0.01, 0.05], size=n))
        base = b0 if c != "B0" else wall
        if c.startswith("E") and c != "E143":       # sourcing counters: shares of the L1 misses (B2 + B4)
            f = f / rng.choice([1.0, 8.0, 30.0, 40.0], size=n)
        v = base * f + rng.choice([0.0, 1.0, -1.0, 10_000.0, 10_001.0, 9_999.0], size=n)
        v[rng.random(n) < nan_share] = np.nan
        data[c] = v
    return pd.DataFrame(data), counters


def _same(iv: pd.DataFrame, counters: list[str]) -> int:
    fast = P._scan(iv, SETS, counters)
    ref = P._scan(iv, SETS, counters, every_row=True)
    assert np.array_equal(fast.hit, ref.hit)
    assert fast.found() == ref.found()        # rows, groups, counters, values, bounds, rules
    return int(ref.hit.sum())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), subset=st.sampled_from([0, 3, 12, 40]),
       nan_share=st.sampled_from([0.0, 0.1, 0.6]))
def test_prefilter_finds_every_violation(seed, n, subset, nan_share):
    iv, counters = _frame(seed, n, subset, nan_share)
    _same(iv, counters)


def test_random_frames_break_every_kind_of_bound():
    """The frames of the property test reach every rule (else it would prove little): over a few seeds every
    group of bounds is named at least once, and clean rows are left."""
    groups, clean = set(), 0
    for seed in range(6):
        iv, counters = _frame(seed, 400, 0, 0.1)
        assert _same(iv, counters) < len(iv)
        R = P._scan(iv, SETS, counters)
        groups |= {v.group for v in R.found()}
        clean += int((~R.hit).sum())
    assert groups == {"cycles", "any counter", "events", "MT core cycles", "instructions", "problem state",
                      "cycle counts", "sourcing"}
    assert clean > 0


@pytest.mark.parametrize("rows", [1, P._CHUNK + 5])
def test_prefilter_across_chunks(rows):
    """Violations on both sides of a chunk boundary of the looser test and of the rules."""
    iv, counters = _frame(7, rows, 0, 0.0)
    _same(iv, counters)


@pytest.mark.parametrize("extra", [0.0, 1e30, np.nan])
def test_a_scan_made_before_a_column_was_added(extra):
    """The workspace scans the bounds beside the UTC offsets and adds the offsets column after: the check then
    reuses the scan only where a scan now would find the same (the new column breaks no bound: 0 s, NaN), and
    scans again where it would not (1e30 breaks the wall-clock bound of any counter on rows with a clock)."""
    iv, counters = _frame(3, 500, 0, 0.1)
    before = P.scan(iv, SETS, counters)
    iv["utc_offset_s"] = extra
    now = [*counters, "utc_offset_s"]
    assert P._covers(iv, SETS, now, before) is (extra != 1e30)
    fresh = iv.copy()
    got = P.check(iv, SETS, now, before)
    want = P.check(fresh, SETS, now)
    assert [f.message for f in got] == [f.message for f in want]
    pd.testing.assert_frame_equal(iv, fresh)
    if extra == 1e30:
        assert any(f.key.get("counter") == "utc_offset_s" for f in got)


def test_a_scan_of_other_counters_is_not_reused():
    iv, counters = _frame(4, 50, 0, 0.0)
    R = P.scan(iv, SETS, counters[1:])
    assert not P._covers(iv, SETS, counters, R)                      # a counter a rule reads was not tested
    assert not P._covers(iv, SETS, counters[::-1], P.scan(iv, SETS, counters))     # tested in another order
    assert P._covers(iv, SETS, counters, P.scan(iv, SETS, counters))
    assert not P._covers(iv.iloc[:10], SETS, counters, P.scan(iv, SETS, counters))   # other rows
