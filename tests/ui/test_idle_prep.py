"""Issue 23: the window's idle jobs (app/ui/idle_prep.py).  The selection's own level comes first, with the selected
LPAR's CPU rows beside it in the same job on the second thread (each used to be a job alone on one core); the
other levels come together next; once idle every level is prepared and the rows equal a fresh workspace's."""

from __future__ import annotations

import threading

import pandas as pd

from tests.ui.conftest import wait_loaded


def test_the_selected_lpars_cpu_rows_come_with_its_level(qtbot, window, smf_a, monkeypatch):
    from app.engine import Workspace
    from app.ui import render

    prepared: list[tuple] = []
    real = render.compute_view

    def spy(ws, sel, added, **kw):
        if kw.get("prepare"):
            prepared.append(tuple(kw["prepare"]))
        return real(ws, sel, added, **kw)
    monkeypatch.setattr(render, "compute_view", spy)
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    lpar = window.selection.value.nodes[0]
    assert lpar[0] == "lpar" and window.errors == []
    # the first idle job: the LPAR level (the selection's own) and this LPAR's CPU rows, nothing else
    assert prepared[0] == ("lpar_interval", ("cpus", lpar[1], lpar[2])), prepared
    # the next: the other levels together (the CPU rows index); the pools' frame came with the tree's pool rows
    # (Workspace.window_metrics: one frame of pool rows for both); no job prepares the CPU rows again
    assert set(prepared[1]) == {"class_interval", "cec_interval", "cpu"}, prepared
    assert not any("pool" in p for p in prepared)
    assert [p for p in prepared if any(isinstance(x, tuple) for x in p)] == [prepared[0]]
    ws = window.ws
    for by in ("lpar_interval", "class_interval", "cec_interval", "cpu", "pool"):
        assert ws.prepared(by), by
    assert ws.cpus_prepared(lpar[1], lpar[2])
    # the CPU rows sliced from what was prepared equal those a fresh workspace computes from the intervals
    fresh = Workspace(cache=False)
    fresh.add_all(ws.files)
    got = ws.metrics(by="cpu", nodes=[lpar], summary=True)
    want = fresh.metrics(by="cpu", nodes=[lpar], summary=True)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_a_levels_job_with_cpu_rows_runs_them_on_two_threads(smf_a, smf_b, monkeypatch):
    """compute_view(prepare=(level, ("cpus", ...))) runs the level and the CPU rows side by side (two threads);
    each frame equals the one computed alone, one after the other (NESTSCOPE_THREADS=1)."""
    from app.engine import Workspace
    from app.formats import read_file
    from app.ui.render import compute_view
    from app.ui.selection import Selection

    results = [read_file(p) for p in (smf_a, smf_b)]

    def prepared(threads: str) -> tuple[dict, set]:
        monkeypatch.setenv("NESTSCOPE_THREADS", threads)
        ws = Workspace(cache=False)
        ws.add_all(results)
        lpars = [tuple(n.key) for cec in ws.tree() for n in cec.children if n.level == "lpar"]
        names: set[str] = set()
        for name in ("prepare_level", "prepare_cpus"):
            real = getattr(ws, name)

            def spy(*a, real=real, **k):
                names.add(threading.current_thread().name)
                return real(*a, **k)
            setattr(ws, name, spy)
        items = ("lpar_interval", *(("cpus", lp[1], lp[2]) for lp in lpars))
        view = compute_view(ws, Selection(), [], prepare=items)
        assert view.background
        assert ws.prepared("lpar_interval") and all(ws.cpus_prepared(lp[1], lp[2]) for lp in lpars)
        frames = {lp: ws.metrics(by="cpu", nodes=[lp], summary=True) for lp in lpars}
        frames["lpar"] = ws.metrics(by="lpar_interval", summary=True)
        return frames, names
    two, names2 = prepared("2")
    one, names1 = prepared("1")
    assert len(names2) == 2 and len(names1) == 1, (names2, names1)
    assert two.keys() == one.keys() and len(two) == 3      # two LPARs' CPU rows and the LPAR level
    for key in two:
        pd.testing.assert_frame_equal(two[key], one[key], check_exact=True)
