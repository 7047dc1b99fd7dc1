"""The tree's first level without values (issue 11: the window's first table before anything it does not
need): ``tree(deep=False, values=False)`` has the same CEC and LPAR nodes and CPU counts as the full tree, and
no busy/CPI (they need a pass over every interval and follow with the deeper tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine import Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


@pytest.fixture(scope="module")
def results(sample_result):
    return [sample_result(p.name) for p in sorted(SAMPLES.glob("*.gz"))]         # z15, z16 and the z/VM LPAR


@pytest.fixture
def ws(results):
    w = Workspace(cache=False)            # fresh: a built full tree would be returned for deep=False too
    w.add_all(results)
    return w


def _top(roots):
    return {n.key: n for r in roots for n in [r, *r.children]}


def test_skeleton_has_the_full_trees_nodes_and_cpu_counts(ws):
    skel = _top(ws.tree(deep=False, values=False))
    full = _top(ws.tree())
    assert set(skel) == set(full)
    for key, node in skel.items():
        assert node.label == full[key].label
        assert node.info.get("n_cpus") == full[key].info.get("n_cpus"), key
        assert not node.children or key[0] == "cec"        # LPARs without their class/CPU levels
    # the z/VM sample's LPAR VMPROD has CPUs with counters; the CEC counts every CPU of its LPARs
    vm = [n for k, n in skel.items() if k[0] == "lpar" and k[2] == "VMPROD"]
    assert vm and vm[0].info["n_cpus"] > 0


def test_skeleton_leaves_the_values_to_later(ws):
    skel = _top(ws.tree(deep=False, values=False))
    counter_nodes = [n for n in skel.values() if not n.info.get("partition_only")]
    assert counter_nodes and all("busy" not in n.info and "cpi" not in n.info for n in counter_nodes
                                 if n.key[0] == "cec" or n.info.get("n_cpus"))
    full = _top(ws.tree(deep=False))                       # values=True: as before
    assert any(n.info.get("cpi") is not None for n in full.values())


def _all(roots):
    out, stack = {}, list(roots)
    while stack:
        n = stack.pop()
        out[n.key] = n
        stack.extend(n.children)
    return out


def test_levels_first_has_every_node_and_the_deeper_levels_values(ws):
    """``tree(levels_first=True)`` (issue 23: the window's class and CPU levels before their parents' values): every
    node of the whole tree in the same order; the class, core and CPU nodes with the whole tree's info (busy,
    CPI, formula set), the CEC, LPAR and pool nodes with their CPU counts but no busy/CPI (the CEC, LPAR and pool
    frames are not computed for it); not kept: ``tree()`` afterwards builds the whole tree."""
    first = ws.tree(levels_first=True)
    assert "cec" not in ws._wm and "pool" not in ws._wm and {"class", "cpu_window"} <= set(ws._wm)
    assert ws._tree is None
    full = ws.tree()
    a, b = _all(first), _all(full)
    assert list(a) != [] and set(a) == set(b)
    assert [n.key for n in first] == [n.key for n in full]
    deeper = {"class", "core", "cpu"}
    assert {k[0] for k in a} >= {"cec", "lpar", "class", "cpu", "pool"}
    for key, node in a.items():
        assert node.label == b[key].label and [c.key for c in node.children] == [c.key for c in b[key].children]
        if key[0] in deeper:
            assert node.info == b[key].info, key
        else:
            assert node.info.get("n_cpus") == b[key].info.get("n_cpus"), key
            if not node.info.get("partition_only"):
                assert "busy" not in node.info and "cpi" not in node.info, key
    # the whole tree has the values the first one left out (some CEC and LPAR have a CPI)
    assert any(b[k].info.get("cpi") is not None for k in b if k[0] in ("cec", "lpar"))
    assert ws.tree(levels_first=True) is full               # once built, the whole tree is the answer
