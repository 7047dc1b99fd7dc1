"""A comparison deck's cache writes (issue 23, the cold deck): ``export --before --after --out x.pptx`` holds the
workspace cache's background writes while both sides are read and added (the before side's thread, once its own
work is done, writes those queued by then while the after side is still read), and writes the rest beside the
comparison and the deck; every entry is written by the end, and the next run reads both sides from them (no
decode) and writes the same deck."""

from __future__ import annotations

import threading
import zipfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BEFORE = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
AFTER = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


@pytest.fixture
def cache_on(monkeypatch, tmp_path):
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NESTSCOPE_CACHE_BACKGROUND", raising=False)
    return tmp_path / "cache"


def _spy(monkeypatch):
    """(writes, decodes, steps): each cache entry written as (kind, whether the writes were let go by then, thread
    name); each file decoded; in order, "release" (the held writes let go), "compare" (the sides compared) and
    "planned" (plan_export returned)."""
    import app.analysis
    import app.engine.compare as comparison
    import app.formats
    from app.cache import store, writer

    released = threading.Event()
    steps: list[str] = []
    real_release, real_compare = writer.WritePause.release, comparison.compare

    def release(self):
        if id(self) in writer._PAUSES:         # a pause still holding (releasing again does nothing)
            steps.append("release")
            released.set()
        return real_release(self)

    def compare(*a, **kw):
        steps.append("compare")
        return real_compare(*a, **kw)
    monkeypatch.setattr(writer.WritePause, "release", release)
    monkeypatch.setattr(comparison, "compare", compare)
    planning = threading.Event()
    writes: list[tuple[str, bool, str]] = []
    decodes: list[str] = []
    real_plan, real_write, real_read = app.analysis.plan_export, store.Cache._write_entry, app.formats.read_file

    def plan(*a, **kw):
        planning.set()
        try:
            return real_plan(*a, **kw)
        finally:
            planning.clear()
            steps.append("planned")

    def write(self, kind, *a, **kw):
        writes.append((kind, released.is_set(), threading.current_thread().name))
        return real_write(self, kind, *a, **kw)

    def read(path, *a, **kw):
        decodes.append(str(path))
        return real_read(path, *a, **kw)
    monkeypatch.setattr(app.analysis, "plan_export", plan)
    monkeypatch.setattr(store.Cache, "_write_entry", write)
    monkeypatch.setattr(app.formats, "read_file", read)
    return writes, decodes, steps


def _deck(out: Path) -> int:
    from app.cache import wait_for_writes
    from app.cli import main

    code = main(["export", "--before", BEFORE, "--after", AFTER, "--hours", "08-17", "--days", "mon-fri",
                 "--out", str(out)])
    wait_for_writes()           # what the process's exit does (app.cache.writer)
    return code


def _parts(path) -> dict[str, object]:
    """Every part of the file, each embedded chart workbook's parts too, without the run's times (the
    ``docProps/core.xml`` parts)."""
    import io

    with zipfile.ZipFile(path) as z:
        return {n: (_parts(io.BytesIO(z.read(n))) if n.endswith(".xlsx") else z.read(n))
                for n in z.namelist() if n != "docProps/core.xml"}


def test_a_cold_deck_writes_its_entries_once_both_sides_are_added_and_the_warm_deck_reads_them(cache_on, monkeypatch,
                                                                                         tmp_path):
    writes, decodes, steps = _spy(monkeypatch)
    assert _deck(tmp_path / "cold.pptx") == 0
    assert sorted(decodes) == sorted([BEFORE, AFTER])
    # the held writes let go once, when both sides were read and added: before they are compared
    assert steps == ["release", "compare", "planned"]
    kinds = [k for k, _released, _th in writes]
    # both files' read entries and both sides' intervals (one entry each); before they were let go only on the
    # before side's thread, its own work done while the after side was still read and added (the held entries
    # written there meanwhile: app.commands.export._write_held); after, on the background writer or at the end on
    # this thread (app.cache.writer.wait_for_writes, as the exit)
    assert kinds.count("read") == 2 and kinds.count("iv") == 2
    assert {th for _k, released, th in writes if not released} <= {"nestscope-before-side"}
    assert {th for _k, released, th in writes if released} <= {"nestscope-cache-writer", "MainThread"}
    writes.clear()
    decodes.clear()
    steps.clear()
    assert _deck(tmp_path / "warm.pptx") == 0
    assert decodes == []                     # both sides from the cache entries the cold run wrote
    assert _parts(tmp_path / "warm.pptx") == _parts(tmp_path / "cold.pptx")


def test_the_compare_command_still_writes_beside_its_reads(cache_on, monkeypatch, tmp_path, capsys):
    """Only a deck holds the writes (its writers run long enough to hide them); ``compare`` has nothing after its
    comparison to write beside, so its entries are written as soon as they are made."""
    from app.cli import main
    from app.cache import wait_for_writes

    import app.commands.compare as cmd
    from app.cache import writer

    held: list[bool] = []
    real = cmd.build_comparison

    def build(*a, **kw):
        got = real(*a, **kw)
        held.append(writer._held())
        return got
    monkeypatch.setattr(cmd, "build_comparison", build)
    assert main(["compare", "--before", BEFORE, "--after", AFTER]) == 0
    wait_for_writes()
    assert held == [False]


def test_the_before_sides_thread_writes_the_held_entries_while_the_after_side_is_busy(cache_on, monkeypatch,
                                                                                     tmp_path):
    """The before side's read entry (held from the writer thread) is written on the before side's thread when that
    side is done before the after side: here the after side's Workspace waits until it was (issue 23: the second
    core, idle otherwise until both sides are made)."""
    import app.analysis.comparison as C

    writes, _decodes, _steps = _spy(monkeypatch)
    real = C.make_workspace
    before_wrote = threading.Event()

    def make(results, *a, **kw):
        if threading.current_thread() is threading.main_thread():      # the after side's, on this thread
            before_wrote.wait(20)
        return real(results, *a, **kw)
    monkeypatch.setattr(C, "make_workspace", make)
    from app.cache import store

    real_write = store.Cache._write_entry

    def write(self, kind, *a, **kw):
        try:
            return real_write(self, kind, *a, **kw)
        finally:
            if threading.current_thread().name == "nestscope-before-side":
                before_wrote.set()
    monkeypatch.setattr(store.Cache, "_write_entry", write)
    assert _deck(tmp_path / "cold.pptx") == 0
    early = [(k, th) for k, released, th in writes if not released]
    assert ("read", "nestscope-before-side") in early          # the before file's read entry, on its thread
    assert {th for _k, th in early} == {"nestscope-before-side"}
    kinds = [k for k, _r, _th in writes]
    assert kinds.count("read") == 2 and kinds.count("iv") == 2
