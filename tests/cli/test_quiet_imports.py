"""An ``export``/``compare`` command's modules are imported with the cyclic garbage collector off (app.cli.main):
off while the parser is built and the command's module imported, then what was made is frozen and the collector
is on again, for the command's own work; other commands, and a caller that had it off, keep their state."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import app.cli as cli

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


@pytest.fixture
def seen(monkeypatch):
    """gc.isenabled() while the parser is built and while the command runs; gc.freeze calls."""
    got = {"parser": [], "run": [], "freeze": 0}
    real_build = cli.build_parser

    def build(command=None):
        got["parser"].append(gc.isenabled())
        return real_build(command)
    monkeypatch.setattr(cli, "build_parser", build)
    real_freeze = gc.freeze

    def freeze():
        got["freeze"] += 1
        real_freeze()
    monkeypatch.setattr(gc, "freeze", freeze)
    import app.commands.compare as C

    real_run = C.run

    def run(args):
        got["run"].append(gc.isenabled())
        return real_run(args)
    monkeypatch.setattr(C, "run", run)
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    yield got
    gc.unfreeze()


def test_compare_imports_without_the_collector_and_runs_with_it(seen, capsys):
    assert gc.isenabled()
    assert cli.main(["compare", "--before", B, "--after", A, "--format", "csv"]) == 0
    assert seen["parser"] == [False] and seen["run"] == [True] and seen["freeze"] >= 1
    assert gc.isenabled()


def test_a_caller_with_the_collector_off_keeps_it_off(seen, capsys):
    gc.disable()
    try:
        assert cli.main(["compare", "--before", B, "--after", A, "--format", "csv"]) == 0
        assert seen["parser"] == [False] and seen["run"] == [False] and seen["freeze"] == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_other_commands_import_with_the_collector_on(seen, capsys):
    assert cli.main(["info", B]) == 0
    assert seen["parser"] == [True] and seen["freeze"] == 0


def test_a_usage_error_leaves_the_collector_on(seen, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["compare", "--no-such-option"])
    assert exc.value.code == 2 and gc.isenabled() and seen["parser"] == [False]
