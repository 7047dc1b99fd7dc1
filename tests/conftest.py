"""Test-wide setup: Qt offscreen, never the user's cache or settings, and what the parallel run needs.

The suite runs in parallel with pytest-xdist (``./packaging/dev.sh test`` passes ``-n auto --dist loadgroup``:
the work is handed out as below, "the parallel run's schedule"): every worker is a
process of its own, so each gets its own Qt application (offscreen), its own cache folder and settings file
(below a private temporary folder, removed at its end), and every test writes only below its ``tmp_path``.
What is expensive to make and never changed by a test (a generated month of SMF data, for instance) is made once
for the whole run with :func:`shared_path`, whichever worker asks first, under a file lock.

``pytest -m "not slow"`` skips the minute-long tests (the Spark engine, ...): a developer's fast loop.  CI runs
everything.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# tests never use the user's workspace cache (tests/engine/test_cache*.py give their own Cache folder)
os.environ.setdefault("NESTSCOPE_CACHE", "0")
# nor the user's cache folder or settings, nor a folder another worker uses: one private folder per process
_PRIVATE = tempfile.mkdtemp(prefix="nestscope-tests-")
os.environ["NESTSCOPE_CACHE_DIR"] = os.path.join(_PRIVATE, "cache")
os.environ["NESTSCOPE_SETTINGS_FILE"] = os.path.join(_PRIVATE, "settings.ini")


# ------------------------------------------------------------------ the parallel run's schedule
# ``--dist loadgroup`` (packaging/dev.sh, bench/bench_suite.py) runs with the scheduler below: each unit of work
# goes whole to one worker.  A test module is one unit, so its module-scoped fixtures are built once (as with
# ``--dist loadscope``: the Spark module, for one, starts one JVM and Spark session per run), but
#  - the tests of SPREAD modules are units of their own: long tests whose module builds nothing costly (or builds
#    it once for the run with shared_path), spread over both workers;
#  - the heaviest units go first (HEAVY: about their seconds in the serial run on a quiet machine, 2026-11-26),
#    then the others by number of tests, so the run ends with small units on both workers, not one long module.
#    HEAVY only orders the work: a stale entry costs balance, never a result.
# (xdist's own loadgroup reads ``xdist_group`` marks by renaming the tests, which pytest 9 no longer allows; a
# nodeid that does carry a group, ``...@NAME``, is still one unit with its group.)
SPREAD = {"tests/export/test_names_everywhere.py", "tests/dataset/test_dataset_stream_kinds.py"}
HEAVY = {"tests/dataset/test_dataset_spark.py": 60,      # its JVMs with the quick JIT: half of the 120 before
         "tests/dataset/test_dataset_dedup.py": 35,
         "tests/dataset/test_dataset_stream.py": 40,
         "tests/ui/test_workspace_replace.py": 30,
         "tests/dataset/test_dataset_stream_kinds.py::test_tersed_file_in_chunks": 29,
         "tests/export/test_names_everywhere.py::test_zvm_partition_names_of_arbitrary_bytes_through_every_output": 28,
         "tests/export/test_names_everywhere.py::test_smf_names_of_arbitrary_bytes_through_every_output": 25,
         # the longest single test of the 2026-11-26 23:30 parallel run (54 s, load 2-4): its cost follows the
         # chunk sizes drawn, so it starts early
         "tests/dataset/test_dataset_stream_kinds.py::test_any_chunk_size_reads_the_gzip_files_records": 45,
         "tests/cli/test_export_picture.py": 25,
         "tests/engine/test_level_frames.py": 20,
         "tests/dataset/test_dataset_stream_kinds.py::test_cut_tersed_file_in_chunks": 16,
         "tests/export/test_names_everywhere.py::test_the_issues_names": 11,
         # few tests, but a dataset built per module: last by their count, they ended a run alone (measured
         # under load in a -n 2 run of tests/dataset, divided by that run's slow-down, about 6)
         "tests/dataset/test_dataset_upkeep.py": 20,
         "tests/dataset/test_dataset_pruning.py": 18,
         "tests/dataset/test_dataset_lock.py": 17,
         "tests/dataset/test_dataset_engines.py": 12,
         "tests/dataset/test_dataset_vs_report.py": 12,
         "tests/dataset/test_dataset_store.py": 10}


def _unit(nodeid: str) -> str:
    module = nodeid.split("::")[0]
    return nodeid if module in SPREAD else module


@pytest.hookimpl(optionalhook=True)      # a hook of pytest-xdist (absent with -p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class Units(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return super()._split_scope(nodeid) if "@" in nodeid.rsplit("]", 1)[-1] else _unit(nodeid)

    config.option.loadscopereorder = False       # keep the workers' order (below); xdist would sort by test count
    return Units(config, log)


def pytest_collection_modifyitems(config, items):
    """In a worker of the parallel run: the tests in the order their units are handed out (see above)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or config.getvalue("dist") != "loadgroup":
        return
    units: dict[str, list] = {}
    for item in items:
        units.setdefault(_unit(item.nodeid), []).append(item)

    def cost(unit: str) -> int:
        return HEAVY.get(unit, HEAVY.get(unit.split("[")[0], 0))

    order = sorted(units, key=lambda u: (-cost(u), -len(units[u])))     # stable: collection order within ties
    items[:] = [item for u in order for item in units[u]]


def pytest_collection_finish(session):
    """Move what collection made (every test module, app, pandas, Qt, ...: about 200,000 objects) out of the
    garbage collector's sight: it is never garbage, yet a full collection walked it each time, about half a
    second a time, and code under test collects (app.memory.release after each XLSX sheet) and Python collects
    by itself.  Objects made by the tests are collected as before."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session, exitstatus):
    """Release the clipboard's QMimeData while the QApplication still lives (see app.ui)."""
    import sys

    if "app.ui" in sys.modules:
        sys.modules["app.ui"].release_clipboard()


def pytest_unconfigure(config):
    shutil.rmtree(_PRIVATE, ignore_errors=True)


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of the whole run: the parent of each xdist worker's folder, or the base folder of a
    run without workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _lock(path: Path):
    """A lock between the run's worker processes (none needed without workers)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _NoLock()
    from filelock import FileLock     # the test extras bring it with pytest-xdist

    return FileLock(str(path))


@pytest.fixture(scope="session")
def shared_path(tmp_path_factory) -> Callable[[str, Callable[[Path], None]], Path]:
    """``shared_path(name, make)``: the folder ``name`` filled by ``make(folder)`` once for the whole run.

    The first worker to ask makes it while the others wait on a lock; later calls (in any worker) find it made.
    A ``make`` that fails leaves nothing behind, so the next caller tries again.  What is made there must be
    read-only for the tests: copy a file to ``tmp_path`` before changing it."""
    root = _run_root(tmp_path_factory) / "shared"
    root.mkdir(exist_ok=True)

    def get(name: str, make: Callable[[Path], None]) -> Path:
        folder, done = root / name, root / f"{name}.done"
        with _lock(root / f"{name}.lock"):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                try:
                    make(folder)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                done.touch()
        return folder

    return get


SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples"


@pytest.fixture(scope="session")
def sample_result() -> Callable[[str], object]:
    """``sample_result(name)``: the read result of the bundled sample ``resources/samples/NAME``, decoded once per
    test process (a worker of the parallel run) however many modules ask for it (each decode takes about a second
    to six on a loaded machine).  Read-only: tests add it to their own Workspaces (which never change a read
    result) and never change it themselves."""
    from app.formats import read_file

    done: dict[str, object] = {}

    def get(name: str) -> object:
        if name not in done:
            done[name] = read_file(SAMPLES / name)
        return done[name]

    return get
