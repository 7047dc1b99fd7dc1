"""Workspace.frames_not_kept: inside it (on its thread only) a computed metrics frame is handed over without a copy
kept in the workspace's frame cache (what the workbook writer uses to hold one level at a time); the frames are the
same either way, and other threads keep theirs."""

from __future__ import annotations

import threading

import pandas as pd

from app.analysis import make_workspace
from app.engine.workspace import frames_not_kept


def test_frames_computed_inside_are_not_kept_and_equal_those_kept_outside(sample_result):
    ws = make_workspace([sample_result("before_z15_ZOSB_smf113.rdw.gz")], None)
    kept = len(ws._mcache)
    with frames_not_kept():
        inside = {by: ws.metrics(by=by) for by in ("lpar", "lpar_interval", "interval")}
    assert len(ws._mcache) == kept                       # nothing kept (the interval level's rows neither)
    for by, frame in inside.items():
        outside = ws.metrics(by=by)
        pd.testing.assert_frame_equal(frame, outside)
        assert len(frame) > 0
    assert len(ws._mcache) > kept                        # outside: kept as before
    with frames_not_kept():                              # a kept frame is still reused inside (a copy of it)
        again = ws.metrics(by="lpar")
    pd.testing.assert_frame_equal(again, inside["lpar"])


def test_another_thread_keeps_its_frames_while_one_is_inside(sample_result):
    ws = make_workspace([sample_result("before_z15_ZOSB_smf113.rdw.gz")], None)
    inside, other = threading.Event(), threading.Event()
    sizes = {}

    def writer():
        with frames_not_kept():
            inside.set()
            other.wait(60)

    t = threading.Thread(target=writer)
    t.start()
    inside.wait(60)
    before = len(ws._mcache)
    ws.metrics(by="class")                               # this thread is not inside: its frame is kept
    sizes["after"] = len(ws._mcache)
    other.set()
    t.join()
    assert sizes["after"] > before
