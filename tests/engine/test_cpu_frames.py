"""The CPU rows of one LPAR prepared at once (Workspace.prepare_cpus, issue 11: selecting a CPU under the
selected LPAR or class is a slice): the sliced rows equal the rows computed for the CPU alone, column by column,
dtypes and order included, with and without a time window; after preparing, nothing is aggregated again."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine import workspace as wsmod

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_VMSYS1_monwrite.mondata.gz"]      # z/OS and z/VM CPUs


@pytest.fixture(scope="module")
def results(sample_result):
    return [sample_result(f) for f in FILES]      # decoded once per test process (tests/conftest.py)


def _ws(results) -> Workspace:
    ws = Workspace(cache=False)
    ws.add_all(results)
    return ws


def _cpus(ws: Workspace) -> list[tuple]:
    out, stack = [], list(ws.tree())
    while stack:
        n = stack.pop()
        if n.level == "cpu":
            out.append(tuple(n.key))
        stack.extend(n.children)
    return sorted(out, key=str)


@pytest.mark.parametrize("window", [(None, None), ("2026-11-02 06:00", "2026-11-02 18:00")])
def test_sliced_cpu_rows_equal_the_computed_ones(results, window, monkeypatch):
    start, end = (pd.Timestamp(w) if w else None for w in window)
    fresh = _ws(results)
    cpus = _cpus(fresh)
    picks = cpus[:2] + cpus[-2:]                       # CPUs of a z/OS and of the z/VM LPAR
    expect = {k: fresh.metrics("cpu", start, end, nodes=[k], summary=True) for k in picks}
    expect_lpar = fresh.metrics("cpu", start, end, nodes=[("lpar", *picks[0][1:3])], summary=False)

    ws = _ws(results)
    for k in picks:
        assert ws.prepare_cpus(k[1], k[2], start, end) and ws.cpus_prepared(k[1], k[2], start, end)

    def boom(*a, **kw):
        raise AssertionError("a prepared CPU selection must not aggregate again")
    monkeypatch.setattr(wsmod, "level_metrics", boom)
    for k in picks:
        got = ws.metrics("cpu", start, end, nodes=[k], summary=True)
        assert len(got) > 1
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expect[k].reset_index(drop=True))
    got = ws.metrics("cpu", start, end, nodes=[("lpar", *picks[0][1:3])], summary=False)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expect_lpar.reset_index(drop=True))


def test_other_windows_and_lpars_are_computed_not_sliced(results):
    ws = _ws(results)
    cpus = _cpus(ws)
    a = cpus[0]
    ws.prepare_cpus(a[1], a[2])
    assert not ws.cpus_prepared(a[1], a[2], pd.Timestamp("2026-11-02"), pd.Timestamp("2026-11-03"))
    other = next(k for k in cpus if k[2] != a[2])
    assert not ws.cpus_prepared(other[1], other[2])
    assert len(ws.metrics("cpu", nodes=[other], summary=True)) > 1     # computed, still right
    assert ws.prepare_cpus("no-such-cec", "NOLPAR") is False
