"""The before side's metrics prepared on its own thread (issue 23, the cold comparison deck): with two threads,
``build_comparison`` computes the before side's selection metrics at the comparison's level and at the levels of
``ComparisonRequest.prepare`` on the before side's thread, once its Workspace is made; the comparison's main thread
then finds those frames in the workspace's frame cache.  The frames and the comparison are the same as with one
thread.  Readers are stand-ins (tests/engine/factory.py), as in test_analysis_layer.py."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "tests" / "engine") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "engine"))

from factory import MIN15, T0, result  # noqa: E402

from app.analysis import OK, ComparisonRequest, SideSpec  # noqa: E402
from app.analysis import comparison as AC  # noqa: E402


def _lpar(path: str, cycles: int):
    # LPAR SYSA: two CPUs, three 15-minute intervals; B0 = cycles, B1 = instructions (CPI = cycles / 900e9)
    recs = [dict(time=T0 + MIN15 * i, cpu=cpu, B0=cycles, B1=900_000_000_000) for i in (1, 2, 3) for cpu in (0, 1)]
    return result(recs, file=path)


@pytest.fixture
def reader(monkeypatch):
    def read(path, *a, **kw):
        return _lpar(str(path), 2_250_000_000_000 if "a.smf" in str(path) else 1_800_000_000_000)

    monkeypatch.setattr("app.formats.read_file", read)


@pytest.fixture
def metrics_calls(monkeypatch):
    """Every Selection.metrics computation: (workspace id, level, thread name, the frame returned)."""
    import app.engine.compare as C

    real = C.shifted_metrics
    calls: list[tuple[int, str, str, pd.DataFrame]] = []

    def spy(ws, by="interval", *a, **kw):
        m = real(ws, by, *a, **kw)
        calls.append((id(ws), by, threading.current_thread().name, m))
        return m
    monkeypatch.setattr(C, "shifted_metrics", spy)
    return calls


def _build(monkeypatch, threads: str, prepare: tuple[str, ...]):
    monkeypatch.setenv("NESTSCOPE_THREADS", threads)
    req = ComparisonRequest(SideSpec(["a.smf"], days="mon-sun"), SideSpec(["b.smf"], days="mon-sun"), prepare=prepare)
    got = AC.build_comparison(req)
    assert got.code == OK
    return got.comparison


def test_the_before_sides_levels_are_computed_on_its_thread_and_found_by_the_main_thread(reader, metrics_calls,
                                                                                        monkeypatch):
    import app.engine.shift as S

    real = S.compute_metrics
    computed: list[tuple[str, str]] = []          # (level, thread) of every frame computed (not from the cache)

    def spy(*a, by="interval", **kw):
        computed.append((by, threading.current_thread().name))
        return real(*a, by=by, **kw)
    monkeypatch.setattr(S, "compute_metrics", spy)
    c = _build(monkeypatch, "2", ("lpar_interval",))
    main = threading.main_thread().name
    before = id(c.before.workspace)
    mine = [(by, th) for w, by, th, _m in metrics_calls if w == before]
    # the comparison's level (lpar) and the prepared one, first on the before side's thread; the comparison itself
    # (compare(), main thread) asks for lpar again
    assert mine[:2] == [("lpar", "nestscope-before-side"), ("lpar_interval", "nestscope-before-side")]
    assert ("lpar", main) in mine[2:]
    # computed once each on the before side's thread; on the main thread only the after side's lpar frame
    assert sorted(computed) == [("lpar", main), ("lpar", "nestscope-before-side"),
                                ("lpar_interval", "nestscope-before-side")]
    # what the main thread asks of the before side later comes from the workspace's frame cache: nothing computed
    first = {by: m for w, by, th, m in metrics_calls if w == before and th == "nestscope-before-side"}
    for by in ("lpar", "lpar_interval"):
        pd.testing.assert_frame_equal(c.before.metrics(by), first[by])
    assert len(computed) == 3
    # the after side (read on this thread) is not prepared ahead
    assert all(th == main for w, _by, th, _m in metrics_calls if w != before)


def test_prepared_frames_and_comparison_equal_those_of_one_thread(reader, metrics_calls, monkeypatch):
    one = _build(monkeypatch, "1", ())
    two = _build(monkeypatch, "2", ("lpar_interval",))
    assert len(one.table) and one.table.equals(two.table)
    for by in ("lpar", "lpar_interval"):
        pd.testing.assert_frame_equal(one.before.metrics(by), two.before.metrics(by))
    # hand check of the frames compared: CPI of the before side 2.25e12 / 0.9e12 = 2.5, after 1.8e12 / 0.9e12 = 2.0
    assert two.before.metrics("lpar")["CPI"].round(6).tolist() == [2.5]
    assert two.after.metrics("lpar")["CPI"].round(6).tolist() == [2.0]


def test_a_before_side_that_cannot_be_selected_is_left_to_the_main_thread(reader, metrics_calls, monkeypatch):
    """An unknown LPAR: nothing is computed ahead, and the main thread reports it as before."""
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    req = ComparisonRequest(SideSpec(["a.smf"], lpars=["NOPE"]), SideSpec(["b.smf"]), prepare=("lpar_interval",))
    got = AC.build_comparison(req)
    assert got.comparison is None and "NOPE" in got.messages[-1].text
    assert metrics_calls == []


def test_the_after_side_workspace_is_made_while_the_before_side_thread_still_prepares(reader, monkeypatch):
    """The after side's Workspace is made on the main thread before it waits for the before side's thread: the
    before side's ``prepare`` (still running) sees it made; the comparison is the one of one thread."""
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    made_after = threading.Event()
    real = AC.make_workspace
    where: list[tuple[str, str]] = []

    def spy(results, *a, **kw):
        ws = real(results, *a, **kw)
        side = "after" if any("b.smf" in r.file for r in results) else "before"
        where.append((side, threading.current_thread().name))
        if side == "after":
            made_after.set()
        return ws
    monkeypatch.setattr(AC, "make_workspace", spy)
    seen: list[bool] = []

    def before_ready(sel):
        seen.append(made_after.wait(10))     # False only when the main thread waited for this one first
    req = ComparisonRequest(SideSpec(["a.smf"], days="mon-sun"), SideSpec(["b.smf"], days="mon-sun"),
                            before_ready=before_ready)
    got = AC.build_comparison(req)
    assert got.code == OK and seen == [True]
    # each side's Workspace made once: the before side's on its thread, the after side's on the main thread
    assert sorted(where) == [("after", threading.main_thread().name), ("before", "nestscope-before-side")]
    one = _build(monkeypatch, "1", ())
    assert len(one.table) and one.table.equals(got.comparison.table)


def test_an_after_side_workspace_that_cannot_be_made_is_reported_as_with_one_thread(tmp_path, reader, monkeypatch):
    """A bad formula file: the after side's Workspace raises on the main thread; the outcome is the one-thread one."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    outcomes = []
    for n in ("1", "2"):
        monkeypatch.setenv("NESTSCOPE_THREADS", n)
        req = ComparisonRequest(SideSpec(["a.smf"]), SideSpec(["b.smf"]), formulas=str(bad))
        got = AC.build_comparison(req)
        outcomes.append((got.comparison is None, got.code, [m.text for m in got.messages]))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] and outcomes[0][1] != OK


def test_the_before_side_idle_hook_runs_on_its_thread_while_the_after_side_is_busy(reader, monkeypatch):
    """``ComparisonRequest.before_idle(busy)`` (a deck: the held cache writes) runs on the before side's thread once
    its work is done; ``busy()`` is true until this thread has the after side's Workspace, false afterwards."""
    import app.analysis.comparison as C

    seen: list[tuple[str, bool]] = []
    after_made = threading.Event()
    real = C.make_workspace

    def make(results, *a, **kw):
        ws = real(results, *a, **kw)
        if threading.current_thread() is threading.main_thread():
            after_made.wait(5)
        return ws
    # the after side (this thread) waits until the before side's hook has looked at busy() once
    monkeypatch.setattr(C, "make_workspace", make)
    got_busy: list = []

    def idle(busy):
        seen.append((threading.current_thread().name, busy()))
        got_busy.append(busy)
        after_made.set()
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    req = ComparisonRequest(SideSpec(["a.smf"], days="mon-sun"), SideSpec(["b.smf"], days="mon-sun"),
                            before_idle=idle)
    assert AC.build_comparison(req).code == OK
    assert seen == [("nestscope-before-side", True)]
    assert got_busy[0]() is False                  # the after side's Workspace made: no longer busy
    # one thread: no before side's thread, no hook
    seen.clear()
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    assert AC.build_comparison(req).code == OK
    assert seen == []
