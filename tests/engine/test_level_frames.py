"""Prepared level frames (Workspace.prepare_level, issue 11): a selection's rows sliced from every node's rows of
the level equal the rows computed for the selection alone, column by column, dtypes and order included."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.prepared_levels import SLICED_LEVELS

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz", "after_VMSYS1_monwrite.mondata.gz"]


@pytest.fixture(scope="module")
def results(sample_result):
    paths = [SAMPLES / f for f in FILES]
    if not all(p.exists() for p in paths):
        pytest.skip("sample set not generated")
    return [sample_result(f) for f in FILES]      # decoded once per test process (tests/conftest.py)


def _ws(results) -> Workspace:
    ws = Workspace(cache=False)
    ws.add_all(results)
    return ws


def _nodes(ws: Workspace) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {"cec": [], "lpar": [], "class": [], "cpu": []}
    stack = list(ws.tree())
    while stack:
        n = stack.pop()
        if not n.info.get("partition_only") and n.level in out:   # pools and SMT cores have tests of their own
            out[n.level].append(tuple(n.key))
        stack.extend(n.children)
    return {k: sorted(v, key=str) for k, v in out.items()}


def _selections(nodes: dict[str, list[tuple]]) -> list[list[tuple]]:
    sels = [[k] for lv in ("cec", "lpar", "class") for k in nodes[lv]]
    sels.append(nodes["lpar"][:2])                       # two LPARs
    sels.append([nodes["lpar"][0], nodes["class"][-1]])  # nodes of two levels
    sels.append([nodes["cpu"][0]])                       # finer than every sliced level: not sliced
    return sels


def _window(ws: Workspace) -> tuple[pd.Timestamp, pd.Timestamp]:
    ends = ws.intervals["interval_end"].sort_values().unique()
    return pd.Timestamp(ends[len(ends) // 4]), pd.Timestamp(ends[len(ends) // 2])


@pytest.mark.slow                  # every node of every level, row by row: the engine tests' slowest
@pytest.mark.parametrize("windowed", [False, True])
def test_sliced_rows_equal_the_rows_computed_alone(results, windowed):
    old, new = _ws(results), _ws(results)
    start, end = _window(old) if windowed else (None, None)
    for by in SLICED_LEVELS:
        assert new.prepare_level(by, start, end)
        assert new.prepared(by, start, end) and not old.prepared(by, start, end)
    sels = _selections(_nodes(old))
    assert len(sels) >= 8
    checked = 0
    for by in SLICED_LEVELS:
        for nodes in sels:
            for summary in (True, False):
                want = old.metrics(by=by, nodes=nodes, start=start, end=end, summary=summary)
                got = new.metrics(by=by, nodes=nodes, start=start, end=end, summary=summary)
                pd.testing.assert_frame_equal(got, want, check_exact=True)
                checked += len(want) > 0
    assert checked >= 30
    # every node at once (nodes=None) too
    for by in SLICED_LEVELS:
        pd.testing.assert_frame_equal(new.metrics(by=by, start=start, end=end, summary=True),
                                      old.metrics(by=by, start=start, end=end, summary=True), check_exact=True)


def test_slices_come_from_the_prepared_frame(results, monkeypatch):
    ws = _ws(results)
    ws.prepare_level("lpar_interval")
    lpar = _nodes(ws)["lpar"][0]
    import app.engine.workspace as wsmod

    def fail(*a, **k):
        raise AssertionError("computed again instead of sliced")
    monkeypatch.setattr(wsmod, "level_metrics", fail)
    df = ws.metrics(by="lpar_interval", nodes=[lpar], summary=True)
    assert set(df["lpar"]) == {lpar[2]}
    assert df["summary"].sum() == 1          # one whole-window row per LPAR
    # an unknown node is not sliced (the computation alone answers it: no rows)
    monkeypatch.undo()
    none = ws.metrics(by="lpar_interval", nodes=[("lpar", "nope", "NOPE")], summary=True)
    assert len(none) == 0


def test_whole_window_levels_come_from_the_tree_metrics(results):
    ws = _ws(results)
    ws.tree()
    fresh = _ws(results)
    for by in ("cec", "lpar", "class"):
        pd.testing.assert_frame_equal(ws.metrics(by=by), fresh.metrics(by=by), check_exact=True)


def test_add_drops_prepared_frames(results):
    ws = Workspace(cache=False)
    ws.add_all(results[:1])
    ws.prepare_level("lpar_interval")
    ws.add_all(results[1:])
    assert not ws.prepared("lpar_interval")
    # the CPU level is not kept whole (368,640 rows on a month): preparing it builds the index of its rows
    assert not ws.prepared("cpu")
    assert ws.prepare_level("cpu") and ws.prepared("cpu")
    assert not any(k[0] == "cpu" for k in ws._lv)
    ws.add_all(results[:1])
    assert not ws.prepared("cpu")


def _flat(nodes, deep=True):
    out = []
    for n in nodes:
        out.append((n.key, n.level, n.label, n.info))
        if deep:
            out.extend(_flat(n.children))
    return out


def test_shallow_tree_is_the_deep_tree_without_its_deeper_levels(results):
    ws = _ws(results)
    shallow = ws.tree(deep=False)
    # a CEC's children: its LPARs and its pools (issue 26), both without children in the shallow tree
    assert {n.level for r in shallow for n in [r, *r.children]} == {"cec", "lpar", "pool"}
    assert all(not n.children for r in shallow for n in r.children)
    deep = _ws(results).tree()
    want = [(r.key, r.level, r.label, r.info) for r in deep] + \
        [(n.key, n.level, n.label, n.info) for r in deep for n in r.children]
    got = [(r.key, r.level, r.label, r.info) for r in shallow] + \
        [(n.key, n.level, n.label, n.info) for r in shallow for n in r.children]
    assert got == want      # same nodes, same order, same info
    # the deep tree adds classes and CPUs, and SMT cores where CPUs share a core (the z/VM sample's IFLs)
    assert {x[1] for x in _flat(deep)} == {"cec", "lpar", "pool", "class", "core", "cpu"}


@pytest.mark.slow                  # every node of every level, row by row: the engine tests' slowest
@pytest.mark.parametrize("windowed", [False, True])
def test_rows_taken_by_node_positions_equal_select_rows(results, windowed):
    """Workspace.metrics takes a selection's interval rows by their positions (an index per node depth): the
    result equals compute_metrics over every interval row (select_rows' masks), for every level and depth."""
    from app.engine.metrics import compute_metrics

    ws = _ws(results)
    start, end = _window(ws) if windowed else (None, None)
    nodes = _nodes(ws)
    sels = [[nodes["cpu"][0]], [nodes["cpu"][-1], nodes["cpu"][1]], [nodes["class"][0]], [nodes["lpar"][-1]],
            [nodes["cec"][0], nodes["cpu"][2]], [("cpu", "nope", "X", "GCP", 0)]]
    for by in ("cpu", "interval", "lpar_interval", "cec_interval", "class", "lpar"):
        for sel in sels:
            want = compute_metrics(ws.intervals, ws.formula_sets, ws.counters, by, start, end, sel, summary=True)
            got = ws.metrics(by=by, nodes=sel, start=start, end=end, summary=True)
            pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert ws._rows_index, "the positions index was used"
