"""Issue 23 (session 10): opening files in an empty window (the start's demo), the reads after the first wait until
its first table is shown, and the next view job until that table has been painted (app/ui/first_table.py): neither
takes the GIL from the first table's job or paint.  Whatever happens to the first read, the others are read."""

from __future__ import annotations

import threading

from tests.ui.conftest import wait_loaded


def _record_reads(monkeypatch, seen: list, what):
    """Patch the read every job does (app.analysis.reading.read_one) to note ``what()`` as each read starts."""
    from app.analysis import reading

    real = reading.read_one

    def spy(path, **kw):
        seen.append((path, what()))
        return real(path, **kw)
    monkeypatch.setattr(reading, "read_one", spy)


def test_reads_after_the_first_wait_for_the_first_table(qtbot, window, smf_a, smf_b, monkeypatch):
    rows = {"n": 0}
    window.table.model.modelReset.connect(lambda: rows.update(n=window.table.model.rowCount()))
    seen: list = []
    _record_reads(monkeypatch, seen, lambda: rows["n"])
    window.open_files([smf_b, smf_a])
    assert len(window.loader.held) == 1                  # the second read waits, the first is in the pool
    wait_loaded(qtbot, window)
    assert [p for p, _ in seen] == [smf_b, smf_a]        # in their order
    assert seen[0][1] == 0 and seen[1][1] > 0            # the second read began once the first table had rows
    assert len(window.ws.files) == 2 and window.errors == [] and window.loader.held == []


def test_the_next_job_waits_for_the_first_tables_paint(qtbot, window, smf_b, monkeypatch):
    from PySide6.QtCore import QEvent, QObject

    import app.ui.main_window as mw

    paints = {"n": 0}

    class Count(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint and window.table.model.rowCount():
                paints["n"] += 1
            return False
    counter = Count()
    window.table.view.viewport().installEventFilter(counter)
    jobs: list[tuple] = []
    real = mw.compute_view

    def spy(ws, sel, added, **kw):
        jobs.append((len(added), kw.get("table"), paints["n"]))   # what was painted when each job began
        return real(ws, sel, added, **kw)
    monkeypatch.setattr(mw, "compute_view", spy)
    window.open_files([smf_b])
    wait_loaded(qtbot, window)
    assert jobs[0][:2] == (1, True)             # the first job: the file added, its table
    assert len(jobs) >= 2 and all(p >= 1 for *_, p in jobs[1:])   # every later job after the table was painted
    assert window.errors == []


def test_a_window_that_cannot_paint_its_table_does_not_wait(qtbot, window, smf_b, smf_a, monkeypatch):
    import app.ui.first_table as ft

    window.tabs.setCurrentWidget(window.health)       # the table's page hidden: no paint will come
    monkeypatch.setattr(ft, "PAINT_WAIT_MS", 600_000)  # so only the "not visible" rule can let the others go
    window.open_files([smf_b, smf_a])
    wait_loaded(qtbot, window, timeout=60_000)
    assert len(window.ws.files) == 2 and window.errors == []


def test_an_unreadable_first_file_lets_the_others_go(qtbot, window, broken, smf_b):
    window.open_files([broken, smf_b])
    wait_loaded(qtbot, window)
    assert len(window.ws.files) == 2 and window.table.model.rowCount() > 0   # the readable one's table
    assert window.loader.held == []


def test_cancelling_the_first_read_starts_the_held_ones(qtbot, smf_a, smf_b, monkeypatch):
    from app.analysis import reading
    from app.ui.loader import LoadController

    gate = threading.Event()
    real = reading.read_one

    def slow(path, **kw):        # the first read waits until the test has cancelled it
        if path == smf_a:
            gate.wait(30)
        return real(path, **kw)
    monkeypatch.setattr(reading, "read_one", slow)
    lc = LoadController()
    read: list[str] = []
    lc.file_read.connect(lambda o: read.append(o.path))
    lc.hold_next()
    assert lc.open([smf_a, smf_b]) == 2
    assert [j.path for j in lc.held] == [smf_b]
    lc.cancel(next(k for k, j in lc.jobs.items() if j.path == smf_a))   # no outcome will come for the window
    assert lc.held == []                                                 # so the held read started
    gate.set()
    qtbot.waitUntil(lambda: not lc.busy() and lc.running_workers() == 0, timeout=60_000)
    assert read == [smf_b]


def test_serial_runner_holds_requests_until_released(qtbot):
    from app.ui.workers import SerialRunner

    r = SerialRunner()
    done: list[int] = []
    r.done.connect(done.append)
    r.hold()
    r.submit(lambda: (lambda: 1))
    r.submit(lambda: (lambda: 2))        # the latest request wins, as when one runs
    qtbot.wait(200)
    assert done == [] and r.busy()
    r.release()
    qtbot.waitUntil(lambda: not r.busy(), timeout=30_000)
    assert done == [2]
