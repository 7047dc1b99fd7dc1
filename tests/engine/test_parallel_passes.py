"""Issue 23: a node's interval rows and its summary rows (Workspace.metrics with ``summary``) and the tree's
coverage frames and identification rows (Workspace.coverage_frames) are computed side by side on two threads;
they equal what one thread gives (NESTSCOPE_THREADS=1), and inside frames_not_kept the pass run on the second
thread keeps nothing either."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.workspace import frames_not_kept

FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz", "after_VMSYS1_monwrite.mondata.gz"]


@pytest.fixture(scope="module")
def results(sample_result):
    return [sample_result(f) for f in FILES]      # decoded once per test process (tests/conftest.py)


def _ws(results, monkeypatch, threads: str) -> Workspace:
    monkeypatch.setenv("NESTSCOPE_THREADS", threads)
    ws = Workspace(cache=False)
    ws.add_all(results)
    return ws


def _selections(ws: Workspace) -> list:
    lpars = [tuple(n.key) for cec in ws.tree() for n in cec.children if n.level == "lpar"]
    cls = next(tuple(c.key) for cec in ws.tree() for n in cec.children if n.level == "lpar" for c in n.children)
    return [("lpar_interval", [lpars[0]]), ("lpar_interval", lpars[:2]), ("class_interval", [cls]),
            ("cpu", [lpars[1]]), ("interval", None), ("cec_interval", None)]


def test_body_and_summary_on_two_threads_equal_one_thread(results, monkeypatch):
    two = _ws(results, monkeypatch, "2")
    names: set[str] = set()
    import app.engine.workspace as wsmod

    real = wsmod.level_metrics
    monkeypatch.setattr(wsmod, "level_metrics",
                        lambda *a, **k: (names.add(threading.current_thread().name), real(*a, **k))[1])
    got = {(by, str(nodes)): two.metrics(by=by, nodes=nodes, summary=True) for by, nodes in _selections(two)}
    # the summary rows' pass ran on a pool thread beside the rows': more than the calling thread (the shared pool
    # may have grown in an earlier test of this process, so which and how many pool threads is not fixed)
    assert "MainThread" in names and len(names) >= 2, names
    monkeypatch.setattr(wsmod, "level_metrics", real)
    one = _ws(results, monkeypatch, "1")
    for by, nodes in _selections(one):
        want = one.metrics(by=by, nodes=nodes, summary=True)
        frame = got[(by, str(nodes))]
        assert len(frame) > 0 and frame["summary"].any() and (~frame["summary"]).any(), by
        pd.testing.assert_frame_equal(frame, want, check_exact=True)
    # a second call is the kept frame (no pass), and the rows without summary are the kept interval rows
    by, nodes = _selections(two)[0]
    pd.testing.assert_frame_equal(two.metrics(by=by, nodes=nodes, summary=True), got[(by, str(nodes))])
    body = two.metrics(by=by, nodes=nodes)
    pd.testing.assert_frame_equal(body, one.metrics(by=by, nodes=nodes), check_exact=True)


def test_the_second_threads_pass_keeps_nothing_inside_frames_not_kept(results, monkeypatch):
    ws = _ws(results, monkeypatch, "2")
    lpar = next(tuple(n.key) for cec in ws.tree() for n in cec.children if n.level == "lpar")
    kept = len(ws._mcache)
    with frames_not_kept():
        inside = ws.metrics(by="lpar_interval", nodes=[lpar], summary=True)
    assert len(ws._mcache) == kept        # neither pass's frame kept (the summary's ran on the pool thread)
    outside = ws.metrics(by="lpar_interval", nodes=[lpar], summary=True)
    assert len(ws._mcache) == kept + 3    # outside: both passes' rows and the frame with its summary rows
    pd.testing.assert_frame_equal(inside, outside, check_exact=True)


def test_coverage_frames_on_two_threads_equal_one_thread(results, monkeypatch):
    two = _ws(results, monkeypatch, "2").coverage_frames()
    one = _ws(results, monkeypatch, "1").coverage_frames()
    assert set(two) == set(one) == {"cec", "lpar", "ident"}
    assert len(two["ident"]) > 0 and len(two["lpar"]) > 0
    for k in one:
        pd.testing.assert_frame_equal(two[k], one[k], check_exact=True)
