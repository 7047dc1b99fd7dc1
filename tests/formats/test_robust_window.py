"""Issue 14: the window survives a read worker that raises and a cancel at any point of a read.

The error of a worker becomes a finding in Data health (never a window stuck on "Reading ...");
after every cancel the window has no job left and opens the next file normally.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

import app.ui  # noqa: E402,F401  (Qt set-up of the package)
import corpus as C  # noqa: E402

TIMEOUT_MS = 30_000


@pytest.fixture
def win(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "settings.ini"))
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = MainWindow(Workspace())
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.loader.cancel_all()
    from PySide6.QtCore import QThreadPool

    from app.ui.workers import read_pool

    read_pool().waitForDone(10_000)
    QThreadPool.globalInstance().waitForDone(10_000)


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.smf"
    p.write_bytes(C.smf_file(20))
    return str(p)


def idle(qtbot, w):
    qtbot.waitUntil(lambda: not w.busy(), timeout=TIMEOUT_MS)
    assert not w.loader.jobs and "Reading" not in w.statusBar().currentMessage()


def opens_normally(qtbot, w, path):
    """The window is usable: a good file opened afterwards is read and shown."""
    w.open_files([path])
    idle(qtbot, w)
    assert any(len(getattr(r, "samples", [])) == 20 for r in w.ws.files)


def test_worker_exception_shows_in_data_health(qtbot, win, good, tmp_path, monkeypatch):
    from app import cache

    bad = tmp_path / "bad.smf"
    bad.write_bytes(C.smf_file(3))
    real = cache.read_with_digest

    def boom(path, *a, **k):
        if str(path).endswith("bad.smf"):
            raise RuntimeError("injected reader failure")
        return real(path, *a, **k)

    monkeypatch.setattr(cache, "read_with_digest", boom)
    win.open_files([str(bad)])
    idle(qtbot, win)
    msgs = [f.message for f in win.health.model.findings]
    assert any("bad.smf" in m and "injected reader failure" in m for m in msgs), msgs
    opens_normally(qtbot, win, good)


class Gate:
    """A fake read that stops at a chosen step until the test cancels, then honours the cancel."""

    def __init__(self, step: int) -> None:
        self.step, self.reached = step, threading.Event()

    def __call__(self, path, digest_fn, progress=None, cancel=None, counters=None):
        from app.formats import read_file
        from app.formats.schema import Cancelled

        for k in range(4):
            if k == self.step:
                self.reached.set()
                t0 = time.monotonic()
                while not (cancel and cancel()) and time.monotonic() - t0 < 10:
                    time.sleep(0.005)
            if cancel and cancel():
                raise Cancelled()
            if progress:
                progress(k / 4)
        return read_file(path, counters=counters), ""


@pytest.mark.parametrize("step", [0, 1, 3, 4])
def test_cancel_at_any_point_leaves_the_window_usable(qtbot, win, good, tmp_path, monkeypatch, step):
    from app import cache

    slow = tmp_path / "slow.smf"
    slow.write_bytes(C.smf_file(5))
    real = cache.read_with_digest
    gate = Gate(step)
    monkeypatch.setattr(cache, "read_with_digest",
                        lambda p, *a, **k: gate(p, *a, **k) if str(p).endswith("slow.smf") else real(p, *a, **k))
    win.open_files([str(slow)])
    if step < 4:
        qtbot.waitUntil(gate.reached.is_set, timeout=TIMEOUT_MS)
    win.loader.cancel_all()                                 # step 4: the read may be done already
    idle(qtbot, win)
    assert win.errors == []
    opens_normally(qtbot, win, good)


def test_cancel_before_the_worker_starts(qtbot, win, good, tmp_path):
    files = []
    for i in range(3):
        p = tmp_path / f"q{i}.smf"
        p.write_bytes(C.smf_file(4 + i))
        files.append(str(p))
    win.open_files(files)
    win.loader.cancel_all()                                 # queued jobs never started
    idle(qtbot, win)
    opens_normally(qtbot, win, good)


def test_non_utf8_path_loads_in_the_window(qtbot, win, tmp_path):
    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9.smf")
    with open(raw, "wb") as fh:
        fh.write(C.smf_file(20))
    win.open_files([os.fsdecode(raw)])
    idle(qtbot, win)
    assert any(len(getattr(r, "samples", [])) == 20 for r in win.ws.files)
    assert win.errors == []


def test_fifo_never_blocks_the_window(qtbot, win, good, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    win.open_files([str(fifo)])                             # no writer: opening it for reading would block
    idle(qtbot, win)
    assert any("FIFO" in f.message for f in win.health.model.findings)
    opens_normally(qtbot, win, good)
