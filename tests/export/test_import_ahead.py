"""The deck's writer modules imported ahead (issue 23, the cold deck): ``export ... --out x.pptx`` starts
:func:`app.export.import_writers_ahead` before the files are read, so python-pptx, the chart data and XlsxWriter are
imported on a thread of their own beside the reads, not on the main thread when the writers start."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
BEFORE = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
AFTER = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


def test_the_modules_are_imported_on_a_thread_of_their_own(monkeypatch):
    import importlib

    import app.export as ex

    # a small module no test loads, unloaded for this test (monkeypatch puts a loaded one back)
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    monkeypatch.setattr(ex, "DECK_MODULES", ("colorsys",))
    seen: list[tuple[str, str]] = []
    real = importlib.import_module

    def spy(name, *a, **kw):
        seen.append((name, threading.current_thread().name))
        return real(name, *a, **kw)
    monkeypatch.setattr(importlib, "import_module", spy)
    th = ex.import_writers_ahead("pptx")
    assert th is not None and th.daemon
    th.join(30)
    assert seen == [("colorsys", "nestscope-import-ahead")]
    assert "colorsys" in sys.modules


def test_nothing_to_import_starts_no_thread(monkeypatch):
    import app.export as ex

    monkeypatch.setattr(ex, "DECK_MODULES", ("json",))       # loaded already
    assert ex.import_writers_ahead("pptx") is None
    monkeypatch.setattr(ex, "DECK_MODULES", ("app.export.no_such_module",))
    assert ex.import_writers_ahead("xlsx") is None            # only a deck's writers are imported ahead


def test_a_failing_import_is_left_to_the_writers(monkeypatch):
    import app.export as ex

    monkeypatch.setattr(ex, "DECK_MODULES", ("app.export.no_such_module", "json.tool"))
    monkeypatch.delitem(sys.modules, "json.tool", raising=False)
    th = ex.import_writers_ahead("pptx")
    th.join(30)
    assert "json.tool" in sys.modules          # the modules after the failing one are still imported


@pytest.mark.parametrize("out, ahead", [("x.pptx", True), ("x.xlsx", False), ("x.csv", False)])
def test_the_cli_imports_ahead_for_a_deck_only(monkeypatch, tmp_path, out, ahead):
    import app.export as ex
    from app.cli import main

    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    kinds: list[str] = []
    monkeypatch.setattr(ex, "import_writers_ahead", lambda kind: kinds.append(kind))
    assert main(["export", "--before", BEFORE, "--after", AFTER, "--out", str(tmp_path / out)]) == 0
    assert kinds == (["pptx"] if ahead else [])


def test_the_list_holds_every_module_the_deck_writers_import(tmp_path):
    """In a fresh process: once the list is imported, writing a comparison deck (title, tables, waterfall, overlays,
    each side's charts) imports no module of python-pptx, XlsxWriter or app.export more: the list is complete."""
    code = f"""
import sys
import app.export as ex
th = ex.import_writers_ahead("pptx")
th.join()
from app.analysis import ExportSpec, plan_export
from app.commands.compare import comparison_request
import argparse
from app.cli import main
real = ex.export
def export(*a, **kw):
    before = set(sys.modules)
    try:
        return real(*a, **kw)
    finally:
        new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("pptx", "xlsxwriter", "lxml")
                     or m.startswith("app.export"))
        print("NEW", new)
ex.export = export
sys.exit(main(["export", "--before", {BEFORE!r}, "--after", {AFTER!r}, "--out", {str(tmp_path / 'x.pptx')!r}]))
"""
    env = {"PYTHONPATH": str(ROOT), "NESTSCOPE_CACHE": "0", "QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr
    assert "NEW []" in got.stdout.splitlines(), got.stdout


def test_the_writers_wait_for_the_imports_started_ahead(monkeypatch, tmp_path):
    """export() joins the import thread before a writer imports anything: a writer never imports a module that
    thread is importing (two threads importing modules that import each other can deadlock)."""
    import app.export as ex
    from app.analysis import ExportSpec, plan_export

    gate = threading.Event()
    order: list[str] = []

    def slow_imports() -> None:
        gate.wait(10)
        order.append("imports done")
    th = threading.Thread(target=slow_imports, daemon=True)
    th.start()
    monkeypatch.setattr(ex, "_AHEAD", [th])
    real_csv = ex.format_of

    def format_of(path):
        order.append("export started")
        threading.Timer(0.2, gate.set).start()       # the imports end 0.2 s after the export started
        return real_csv(path)
    monkeypatch.setattr(ex, "format_of", format_of)
    from app.export.csv import write_csv as real_write

    def write_csv(*a, **k):
        order.append("writer")
        return real_write(*a, **k)
    monkeypatch.setattr("app.export.csv.write_csv", write_csv)
    req = plan_export(ExportSpec(files=[AFTER], by="lpar")).request
    ex.export(req, str(tmp_path / "x.csv"))
    assert order == ["export started", "imports done", "writer"]
    assert ex._AHEAD == []
