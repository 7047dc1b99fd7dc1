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
