"""pytest-qt fixtures for the window: offscreen Qt, settings in tmp_path, the real sample set."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import app.ui  # noqa: E402,F401  (pins None/True/False before Qt runs on CPython 3.11)

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
LOAD_TIMEOUT_MS = 60_000


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own settings file (never the user's)."""
    path = tmp_path / "settings" / "nestscope.ini"
    path.parent.mkdir()
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(path))
    return path


@pytest.fixture(autouse=True)
def _gc_on_gui_thread(qapp):
    """Garbage collection as the window has it (app.ui.gc_guard): automatic collection off while the test runs and
    a GUI-thread timer collecting between events.  Tests of a lone widget (a TimelineView without its window) got
    Python's automatic collection instead, which may run inside a paint event: a worker of the parallel suite
    crashed (segmentation fault) in GraphicsView.paintEvent while resizing a timeline late in a run, with earlier
    tests' Qt wrappers waiting in cycles.  tests/ui/test_gc_guard.py overrides this fixture to test the guard."""
    import shiboken6
    from PySide6.QtCore import QObject

    from app.ui import gc_guard

    holder = QObject()
    gc_guard.install(holder)
    yield
    shiboken6.delete(holder)        # its destroyed signal: automatic collection back on when no window lives
    gc_guard.collect_due()          # what the test left, collected here, between tests


@pytest.fixture(autouse=True)
def _drain_pool():
    """No worker may outlive its test."""
    yield
    from PySide6.QtCore import QThreadPool

    from app.ui.workers import read_pool

    read_pool().waitForDone(10_000)
    QThreadPool.globalInstance().waitForDone(10_000)


def sample(name: str) -> str:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"sample {name} not generated yet")
    return str(path)


@pytest.fixture
def smf_a() -> str:
    return sample("after_z16_ZOSA_smf113.rdw.gz")


@pytest.fixture
def smf_b() -> str:
    return sample("after_z16_ZOSB_smf113.vbs.gz")


@pytest.fixture
def monwrite() -> str:
    return sample("after_VMSYS1_monwrite.mondata.gz")


@pytest.fixture
def broken() -> str:
    return sample("broken/truncated_smf113.rdw")


@pytest.fixture(scope="session")
def large_smf(shared_path) -> str:
    """A real SMF 113 file about ten times the bundled ZOSA sample (several seconds to read); written once for
    the whole run (tests/conftest.py shared_path)."""
    from app.sample.build import Z16_SEQ, write_zos, zos_lpars
    from app.sample.model import CecModel

    def make(out: Path) -> None:
        cec = CecModel("z16", Z16_SEQ, zos_lpars())
        write_zos(out, cec, dt.datetime(2026, 1, 1), 96 * 24, "large", {"ZOSA": ((1,), "rdw")}, seed=3)

    (path,) = sorted(p for p in shared_path("large_smf", make).iterdir() if p.is_file())
    return str(path)


@pytest.fixture
def window(qtbot):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w = MainWindow(Workspace())
    qtbot.addWidget(w)
    w.resize(1440, 900)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.loader.cancel_all()


def wait_loaded(qtbot, w, timeout: int = LOAD_TIMEOUT_MS) -> None:
    """Wait until every read job ended and its result was added to the workspace."""
    qtbot.waitUntil(lambda: not w.busy(), timeout=timeout)


def _fingerprint(result) -> tuple:
    """What a window could change in a read result it was given: its samples (every value), findings, meta."""
    import pandas as pd

    samples = result.samples
    return (tuple(samples.columns), int(pd.util.hash_pandas_object(samples, index=False).sum()),
            tuple(f.message for f in result.findings), repr(sorted(result.meta.items())))


@pytest.fixture(scope="session")
def _first_reads() -> dict:
    """(path, counters, cached, digest) -> (read result, digest, fingerprint): ``loaded``'s reads."""
    return {}


@pytest.fixture
def loaded(qtbot, window, smf_a, smf_b, _first_reads, monkeypatch):
    """The window with the two z16 samples opened and loaded.  Its read jobs are the window's own (the loader,
    the pool, the outcome signals), but the read itself (app.analysis.reading.read_one) is done once per test
    process for each file and way of reading it (the counters, cache and digest asked for): later windows get that
    first read's result, with the digest it gave.  A read result is never changed by the window nor a test:
    checked after each test.  The tests of the read path open their files themselves (``window``)."""
    from app.analysis import reading

    real = reading.read_one

    def read_once(path, *, counters=None, progress=None, **kw):
        key = (str(path), None if counters is None else tuple(sorted(counters)), kw.get("cached"), kw.get("digest"))
        if key not in _first_reads:
            result, digest = real(path, counters=counters, progress=progress, **kw)
            _first_reads[key] = (result, digest, _fingerprint(result))
        elif progress is not None:
            progress(1.0)
        return _first_reads[key][:2]

    with monkeypatch.context() as m:
        m.setattr(reading, "read_one", read_once)
        window.open_files([smf_a, smf_b])
        wait_loaded(qtbot, window)
    yield window
    for (path, *_), (result, _, fp) in _first_reads.items():
        assert _fingerprint(result) == fp, f"the test changed the read result of {path} it was given"
