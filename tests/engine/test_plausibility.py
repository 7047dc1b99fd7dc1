"""Physical bounds on counter deltas (issue 20, "Values no machine can produce"; docs/physical-bounds.md).

The damaged files are made by the project's writers (workload model -> SMF 113 subtype 1, RDW framing) and then
damaged here: one byte of one extended counter of one record is flipped, as a bad transfer would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from damaged import samples as _samples
from damaged import write as _write
from factory import MIN15, T0, result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import Workspace
from app.engine import plausibility as P
from app.engine.aggregate import LEFT_OUT_BIT
from app.engine.deltas import QUALITY_BITS
from app.formats import read_file
from app.formats.smf113_writer import encode_samples
from app.sample.generations import GENERATIONS

Z16_L3P = ("E147", "E149", "E150", "E151", "E171", "E173", "E174", "E175")   # metrics.md 3.7 L3P numerator


def _ws(path: str, keep: bool = False) -> Workspace:
    ws = Workspace(cache=False, keep_implausible=keep)
    ws.add(read_file(path))
    return ws


def _l3p(iv: pd.DataFrame, drop=None) -> float:
    """L3P over the range by hand: sum of the L3P counters / sum of B2+B4 (ratio of sums, metrics.md 3.7)."""
    rows = iv if drop is None else iv.drop(index=drop)
    return float(rows[list(Z16_L3P)].to_numpy().sum() / (rows["B2"].sum() + rows["B4"].sum()) * 100)


def test_flipped_byte_is_a_finding_and_left_out(tmp_path):
    samples = _samples()
    row = 10                                          # one CPU-interval of the 24
    clean_path, _ = _write(tmp_path, samples)
    bad_path, flip_at = _write(tmp_path, samples, (row, "E149"))
    clean, bad, kept = _ws(clean_path), _ws(bad_path), _ws(bad_path, keep=True)

    assert not [f for f in clean.findings if f.code == "implausible"]
    found = [f for f in bad.findings if f.code == "implausible"]
    assert len(found) == 1
    f = found[0]
    # the finding names the file, the record's offset (the flipped byte lies inside that record), the counter,
    # its value and the bound it breaks
    rec_len = len(encode_samples(samples.iloc[[row]], 1)[0]) + 4
    assert f.file == bad_path and f.offset <= flip_at < f.offset + rec_len
    assert f.key["group"] == "sourcing" and f.key["counter"] in Z16_L3P
    assert f.key["value"] > f.key["bound"] > 0
    assert "E149" in f.message or f.key["counter"] in f.message
    assert f"{f.key['bound']:,.0f}" in f.message

    civ, biv = clean.intervals, bad.intervals
    key = ["cpu", "interval_end"]
    hit = biv.index[(biv["quality"].astype(str) == "implausible,left-out")]
    assert len(hit) == 1
    assert np.isnan(biv.loc[hit, "E149"]).all() and np.isnan(biv.loc[hit, "B0"]).all()
    drop = civ.index[(civ[key].to_numpy() == biv.loc[hit, key].to_numpy()).all(axis=1)]

    lp_clean = clean.metrics("lpar").iloc[0]
    lp_bad = bad.metrics("lpar").iloc[0]
    lp_kept = kept.metrics("lpar").iloc[0]
    # left out: the clean sums without that one CPU-interval (hand calculation), within 1 % of the clean value
    assert lp_bad["L3P"] == pytest.approx(_l3p(civ, drop), rel=1e-12)
    assert lp_bad["L3P"] == pytest.approx(lp_clean["L3P"], rel=0.01)
    assert lp_bad["left_out"] == 1 and "implausible" in lp_bad["quality"] and "left-out" in lp_bad["quality"]
    # kept: the damaged counter back in the sums, as before issue 20 (hand calculation over the damaged deltas)
    assert lp_kept["L3P"] == pytest.approx(_l3p(kept.intervals), rel=1e-12)
    assert lp_kept["L3P"] > lp_clean["L3P"] + 1
    assert lp_kept["left_out"] == 0 and "implausible" in lp_kept["quality"] and "left-out" not in lp_kept["quality"]
    # the CPU-interval row itself: kept with its 800-odd % marked; left out: its metrics empty, marked
    cpu_bad = bad.metrics("cpu")
    marked = cpu_bad[cpu_bad["left_out"] == 1]
    assert len(marked) == 1 and np.isnan(marked["L3P"].iloc[0])
    cpu_kept = kept.metrics("cpu")
    assert cpu_kept["L3P"].max() > 100 and "implausible" in cpu_kept.loc[cpu_kept["L3P"].idxmax(), "quality"]
    assert bad.left_out_count() == (1, 1) and kept.left_out_count() == (1, 0)


def test_switch_recomputes_the_sums(tmp_path):
    samples = _samples(intervals=4)
    path, _ = _write(tmp_path, samples, (5, "E149"))
    ws = _ws(path)
    left = ws.metrics("lpar").iloc[0]["L3P"]
    ws.set_keep_implausible(True)
    kept = ws.metrics("lpar").iloc[0]["L3P"]
    ws.set_keep_implausible(False)
    assert kept > left + 1 and ws.metrics("lpar").iloc[0]["L3P"] == left
    assert len([f for f in ws.findings if f.code == "implausible"]) == 1      # found once, not per switch


def _rec(**kw):
    d = dict(time=T0 + MIN15, B0=10**12, B1=4 * 10**11, B2=4 * 10**9, B3=10**11, B4=8 * 10**9, B5=2 * 10**11,
             P32=5 * 10**11, P33=2 * 10**11)
    d.update(kw)
    return d


# z16, 5200 cycles/us, 900 s: wall-clock bound 5.2e9 x (900 x 1.05 + 2) = 4.9244e12 cycles
WALL = 5200e6 * (900 * 1.05 + 2)


@pytest.mark.parametrize(("over", "group", "counter"), [
    (dict(B0=int(WALL) + 10**6), "cycles", "B0"),                          # more cycles than the clock gives
    (dict(B1=8 * 10**12 + 10**5), "instructions", "B1"),                   # IPC > 8 (z16 bound)
    (dict(P33=4 * 10**11 + 10**5), "problem state", "P33"),                # problem state above the total
    (dict(P32=10**12 + 10**5), "problem state", "P32"),
    (dict(B5=10**12 + 10**5), "cycle counts", "B5"),                       # penalty cycles above all cycles
    (dict(E143=10**12 + 10**5), "cycle counts", "E143"),
    (dict(E129=8 * 10**12 + 10**5), "events", "E129"),                     # > 8 events per cycle
    (dict(E149=int(1.25 * 1.2e10) + 10**5), "sourcing", "E149"),          # sourcing > (B2+B4) x 1.25
])
def test_each_bound(over, group, counter):
    """One counter just past each bound (hand-calculated next to each case) is caught; just below it is not."""
    ws = Workspace(cache=False)
    ws.add(result([_rec(**over)]))
    f = [x for x in ws.findings if x.code == "implausible"]
    assert len(f) == 1 and f[0].key["group"] == group and f[0].key["counter"] == counter
    below = {k: v - 2 * 10**5 if k != "B0" else int(WALL) - 10**6 for k, v in over.items()}
    ws = Workspace(cache=False)
    ws.add(result([_rec(**below)]))
    assert not [x for x in ws.findings if x.code == "implausible"]


def test_lost_data_rows_keep_only_the_wall_clock_bounds():
    """Lost counter data makes counts smaller: a ratio bound cannot be judged, an upper bound still can."""
    ws = Workspace(cache=False)
    ws.add(result([_rec(lost=True, B0=1000, B1=10**9)]))       # IPC 10^6: lost cycles, not a damaged record
    assert not [x for x in ws.findings if x.code == "implausible"]
    ws = Workspace(cache=False)
    ws.add(result([_rec(lost=True, B0=int(WALL) * 2)]))
    assert [x.key["group"] for x in ws.findings if x.code == "implausible"] == ["cycles"]


def test_findings_per_file_are_bounded():
    recs = [_rec(time=T0 + MIN15 * (i + 1), B1=10**14) for i in range(14)]
    ws = Workspace(cache=False)
    ws.add(result(recs))
    f = [x for x in ws.findings if x.code == "implausible"]
    assert len(f) == 11 and f[-1].key["count"] == 4          # 10 with details, one counting the other 4
    assert ws.left_out_count() == (14, 14)
    assert ws.metrics("lpar").iloc[0]["left_out"] == 14


def test_left_out_bit_agrees():
    assert LEFT_OUT_BIT == QUALITY_BITS["left-out"] == P.LEFT_OUT and P.IMPLAUSIBLE == QUALITY_BITS["implausible"]


def test_left_out_rows_do_not_mark_partial_sets():
    """A left-out row has every counter NaN; the other rows of its group do not become 'partial-sets'."""
    recs = [_rec(cpu=0), _rec(cpu=1, B1=10**14)]
    ws = Workspace(cache=False)
    ws.add(result(recs))
    q = ws.metrics("lpar").iloc[0]["quality"]
    assert "partial-sets" not in q and "left-out" in q
    assert ws.metrics("lpar").iloc[0]["CPI"] == pytest.approx(10**12 / (4 * 10**11))   # CPU 0 alone


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gen=st.sampled_from(sorted(GENERATIONS)), busy=st.floats(1, 100), cpi=st.floats(0.6, 12),
       l1mp=st.floats(0.3, 12), l2p=st.floats(40, 95), prb=st.floats(0, 100), seed=st.integers(0, 10**6),
       smt=st.booleans())
def test_clean_model_data_never_trips(gen, busy, cpi, l1mp, l2p, prb, seed, smt):
    """Any workload the model can describe, of any generation, gives no implausible CPU-interval."""
    rest = 100 - l2p
    mix = {"L2P": l2p, "L3P": rest * 0.5, "L4LP": rest * 0.2, "L4RP": rest * 0.1, "MEMP": rest * 0.2}
    smt = smt and GENERATIONS[gen].csvn > 3
    samples = _samples(gen, intervals=3, seed=seed, cpus=2, busy=busy, cpi=cpi, l1mp=l1mp, mix=mix,
                       prb_state=prb, smt=smt)
    ws = Workspace(cache=False, counters="all")
    ws.add(result_of(samples))
    assert not [f.message for f in ws.findings if f.code == "implausible"]
    assert ws.left_out_count() == (0, 0)
    # and so every sourcing share of every CPU-interval stays within 100 % x (1 + tolerance)
    m = ws.metrics("cpu")
    shares = [c for c in P.SOURCING_METRICS if c in m.columns]
    assert (m[shares].fillna(0).to_numpy() <= 100 * (1 + P.SOURCING_TOLERANCE)).all()


def result_of(samples: pd.DataFrame):
    from app.formats.schema import ReadResult

    s = samples.assign(source="model", offset=np.arange(len(samples)) * 100)
    return ReadResult(file="model", kind="smf", framing="none", records={"113/1": len(s)}, samples=s)
