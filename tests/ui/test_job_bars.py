"""Issue 23 (session 15): a read's progress bar is never an indeterminate ("busy") bar, which the style animates
on the GUI thread (a call into Python per frame and bar, holding the GIL the reads and the first table's job
need): the demo's held reads show 0 %, the running one its progress."""

from __future__ import annotations

from tests.ui.conftest import wait_loaded


def test_read_bars_are_static_until_their_progress(qtbot, window, monwrite, smf_a, smf_b):
    from app.ui.loader import JobWidget

    window.open_files([monwrite, smf_a, smf_b])
    bars = [w.bar for w in window.statusBar().findChildren(JobWidget)]
    assert len(bars) == 3                                  # one per file, the two held ones included
    assert all(b.minimum() == 0 and b.maximum() == 100 for b in bars)   # (0, 0) would be the animated kind
    assert [b.value() for b in bars[1:]] == [0, 0]         # held: nothing read yet
    wait_loaded(qtbot, window)
    assert len(window.ws.files) == 3 and window.errors == []


def test_progress_fills_the_bar():
    from app.ui.loader import JobWidget

    w = JobWidget("f.gz", lambda: None)
    assert (w.bar.minimum(), w.bar.maximum(), w.bar.value()) == (0, 100, 0)
    w.set_progress(0.37)
    assert w.bar.value() == 37
    w.deleteLater()


def test_a_reads_progress_signals_are_throttled(monkeypatch):
    """Issue 23: a read's progress is signalled at most every PROGRESS_EVERY seconds (each signal repaints the
    bar and the status line on the GUI thread), its first and its 100 % always; a percentage already signalled
    is never signalled again."""
    from app.ui import workers

    now = [100.0]
    monkeypatch.setattr(workers.time, "monotonic", lambda: now[0])
    worker = workers.ReadWorker("f.smf")
    got: list[float] = []
    worker.signals.progress.connect(got.append)
    for k in range(101):                # a fast read: every percentage within the same instant
        worker._progress(k / 100)
    assert got == [0.0, 1.0]            # the first and the last only
    got.clear()
    worker = workers.ReadWorker("f.smf")
    worker.signals.progress.connect(got.append)
    for k in range(0, 101, 10):         # a slow read: 0.1 s, then 0.2 s between its percentages
        worker._progress(k / 100)
        worker._progress(k / 100)       # the same percentage again: not signalled twice
        now[0] += 0.1 if k < 50 else 0.2
    # 0 %, then every second 10 % step while under PROGRESS_EVERY (0.1 s apart), every one from 60 % on
    assert workers.PROGRESS_EVERY == 0.125
    assert got == [0.0, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0]
