"""Issue 23: the start shows the window before the demo's reads begin (MainWindow.after_first_paint), and the
workspace cache writes wait until the window is all idle."""

from __future__ import annotations

from tests.ui.conftest import wait_loaded


def test_after_first_paint_waits_for_the_paint(qtbot, monkeypatch):
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 120_000)    # a loaded machine: never the fallback here
    w = mw.MainWindow(Workspace())
    qtbot.addWidget(w)
    ran: list[bool] = []
    w.after_first_paint(lambda: ran.append(w._painted))
    assert ran == []                      # never at once: the window was not even shown
    w.resize(1024, 700)
    w.show()
    qtbot.waitUntil(lambda: bool(ran), timeout=60_000)
    assert ran == [True]                  # it ran after the window's first paint
    w.after_first_paint(lambda: ran.append("again"))
    assert ran == [True]                  # painted already: through the event loop, not inside the call
    qtbot.waitUntil(lambda: len(ran) == 2, timeout=30_000)


def test_after_first_paint_runs_without_a_paint(qtbot, monkeypatch):
    import app.ui.main_window as mw
    from app.engine import Workspace

    monkeypatch.setattr(mw, "FIRST_PAINT_MS", 50)
    w = mw.MainWindow(Workspace())          # never shown: no paint comes
    qtbot.addWidget(w)
    ran: list[int] = []
    w.after_first_paint(lambda: ran.append(1))
    qtbot.waitUntil(lambda: ran == [1], timeout=30_000)
    qtbot.wait(100)
    assert ran == [1]                       # once


def test_cache_writes_held_until_all_idle(qtbot, window, smf_a, monkeypatch):
    from app import cache as wc

    released: list[tuple] = []
    real = wc.pause_writes

    class Spy:
        def __init__(self):
            self.p = real()

        def release(self):
            # what was done when the writes were let go: the table shown and the level frames prepared
            released.append((window.table.model.rowCount(), window.runner.busy(),
                             window.ws.prepared("lpar_interval")))
            self.p.release()
    monkeypatch.setattr(wc, "pause_writes", Spy)
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert len(released) == 1
    rows, busy, prepared = released[0]
    assert rows > 0 and not busy and prepared
