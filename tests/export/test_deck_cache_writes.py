"""A comparison deck's cache writes (issue 23, the cold deck): ``export --before --after --out x.pptx`` holds the
workspace cache's background writes while both sides are read and added, and writes them beside the comparison and
the deck; every entry is written by the end, and the next run reads both sides from them (no decode) and writes the
same deck."""

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
    # both files' read entries and both sides' intervals (one entry each), none before they were let go, all on
    # the background writer
    assert kinds.count("read") == 2 and kinds.count("iv") == 2
    assert all(released for _k, released, _th in writes)
    assert {th for _k, _d, th in writes} == {"nestscope-cache-writer"}
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
