"""Issue 11: a workspace whose intervals are in the workspace cache reads them only when something needs them; the
tree, the engine findings and the rows of a prepared level come from frames cached beside them, and what is read
later equals what a workspace without the cache computes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from app import cache as wc
from app.engine import Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_VMSYS1_monwrite.mondata.gz"]


def _flat(nodes):
    out = []
    for n in nodes:
        out.append((n.key, n.label, n.info))
        out.extend(_flat(n.children))
    return out


@pytest.fixture
def cache(tmp_path):
    paths = [SAMPLES / f for f in FILES]
    if not all(p.exists() for p in paths):
        pytest.skip("sample set not generated")
    return wc.Cache(tmp_path / "cache"), paths


def _open(c, paths) -> Workspace:
    ws = Workspace(cache=c)
    ws.add_all([wc.read_file(p, cache=c) for p in paths])
    return ws


def test_second_open_reads_intervals_only_when_needed(cache):
    c, paths = cache
    first = _open(c, paths)
    tree = _flat(first.tree())
    first.prepare_level("lpar_interval")
    lpar = next(n.key for r in first.tree() for n in r.children if not n.info.get("partition_only"))
    want_rows = first.metrics(by="lpar_interval", nodes=[lpar], summary=True)
    plain = Workspace(cache=False)
    plain.add_all([wc.read_file(p, cache=False) for p in paths])

    second = _open(c, paths)
    assert second._iv is None and second._iv_load is not None      # cached, not read
    assert [f.code for f in second.findings] == [f.code for f in plain.findings]
    assert _flat(second.tree(deep=False)) == [x for x in tree if x[0][0] in ("cec", "lpar", "pool")]
    assert _flat(second.tree()) == tree
    assert second.has_intervals()
    assert second.prepare_level("lpar_interval", cached_only=True)
    pd.testing.assert_frame_equal(second.metrics(by="lpar_interval", nodes=[lpar], summary=True), want_rows,
                                  check_exact=True)
    for by in ("cec", "lpar", "class"):      # the tree's whole-window rows
        pd.testing.assert_frame_equal(second.metrics(by=by), plain.metrics(by=by), check_exact=True)
    assert second._iv is None, "nothing above needed the intervals"
    # the first thing that needs them reads them: the same intervals and rows as without the cache
    cpu = next(n.key for n in _flat_nodes(second.tree()) if n.level == "cpu")
    pd.testing.assert_frame_equal(second.metrics(by="cpu", nodes=[cpu], summary=True),
                                  plain.metrics(by="cpu", nodes=[cpu], summary=True), check_exact=True)
    assert second._iv is not None
    pd.testing.assert_frame_equal(second.intervals.reset_index(drop=True), plain.intervals.reset_index(drop=True),
                                  check_exact=True)


def _flat_nodes(roots):
    stack, out = list(roots), []
    while stack:
        n = stack.pop(0)
        out.append(n)
        stack[:0] = n.children
    return out


def test_cache_entry_gone_before_the_intervals_are_read(cache):
    c, paths = cache
    _open(c, paths).tree()
    ws = _open(c, paths)
    assert ws._iv is None and ws._iv_load is not None
    for d in c.dir.glob("iv-*"):           # the intervals' entry deleted meanwhile (cache cleared, trimmed)
        shutil.rmtree(d)
    plain = Workspace(cache=False)
    plain.add_all([wc.read_file(p, cache=False) for p in paths])
    pd.testing.assert_frame_equal(ws.intervals.reset_index(drop=True), plain.intervals.reset_index(drop=True),
                                  check_exact=True)
