"""The quick exit of an ``export``/``compare`` process (app.cli._quick_exit): once the command returned its code and
every other exit function ran, the process ends with ``os._exit`` instead of the interpreter's teardown.  Output,
exit codes, written files and the workspace cache's entries are those of the ordinary exit
(``NESTSCOPE_QUICK_EXIT=0``); a command run in-process (``main(argv)``, the tests') never registers it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import app.cli as cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")

# a process whose own exit function, registered before the command's main, writes a marker: the quick exit (the
# command's exit functions run first, the quick one last of them) ends the process before it
WRAPPER = """
import atexit, sys
marker = sys.argv[1]
atexit.register(lambda: open(marker, "w").write("teardown"))
sys.argv = ["nestscope"] + sys.argv[2:]
from app.cli import main
raise SystemExit(main())
"""


def _run(tmp_path: Path, quick: str, args: list[str], cache: str = "0") -> tuple[int, bytes, bytes, bool]:
    marker = tmp_path / f"marker-{quick}"
    marker.unlink(missing_ok=True)
    env = dict(os.environ, NESTSCOPE_QUICK_EXIT=quick, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    if cache == "0":
        env["NESTSCOPE_CACHE"] = "0"
    else:
        env.pop("NESTSCOPE_CACHE", None)
        env["NESTSCOPE_CACHE_DIR"] = cache
    p = subprocess.run([sys.executable, "-c", WRAPPER, str(marker), *args], cwd=tmp_path, env=env,
                       capture_output=True, timeout=300)
    return p.returncode, p.stdout, p.stderr, marker.exists()


def test_compare_output_and_codes_are_those_of_the_ordinary_exit(tmp_path):
    args = ["compare", "--before", B, "--after", A, "--format", "csv"]
    code, out, err, teardown = _run(tmp_path, "1", args)
    assert (code, teardown) == (0, False)                  # ended by the quick exit: the marker never written
    assert out.count(b"\n") > 3 and b"before" in out
    assert _run(tmp_path, "0", args) == (code, out, err, True)
    # nothing readable: exit 3, its message on stderr, the same both ways
    bad = ["compare", "--before", str(SAMPLES / "broken" / "notes_not_smf.txt"), "--after", A]
    code, out, err, teardown = _run(tmp_path, "1", bad)
    assert (code, teardown) == (3, False) and b"nothing readable" in err
    assert _run(tmp_path, "0", bad) == (code, out, err, True)


def test_a_deck_and_its_cache_entries_are_complete_after_the_quick_exit(tmp_path):
    cache = tmp_path / "cache"
    deck = tmp_path / "deck.pptx"
    code, _out, err, teardown = _run(tmp_path, "1", ["export", "--before", B, "--after", A, "--hours", "08-17",
                                                     "--out", str(deck)], cache=str(cache))
    assert (code, teardown) == (0, False) and b"wrote" in err and deck.stat().st_size > 0
    # the cache's writes were completed by its own exit function before the quick exit: each side's read and
    # intervals, every entry with its description and frames, no temporary folder left
    entries = sorted(p.name.split("-")[0] for p in cache.iterdir())
    assert entries == ["iv", "iv", "read", "read"]
    for d in cache.iterdir():
        names = {p.name for p in d.iterdir()}
        assert "entry.json" in names and any(n.endswith(".parquet") for n in names), (d.name, names)
    assert not list(tmp_path.glob(".nestscope-*.part"))


def test_main_called_in_process_registers_no_quick_exit(monkeypatch, capsys):
    registered = []
    monkeypatch.setattr(cli.atexit, "register", lambda f, *a, **k: registered.append(f))
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    assert cli.main(["compare", "--before", B, "--after", A, "--format", "csv"]) == 0
    assert cli._quick_exit not in registered


def test_the_quick_exit_leaves_the_ordinary_exit_when_main_gave_no_code_or_a_stream_fails(monkeypatch):
    exits = []
    monkeypatch.setattr(cli.os, "_exit", exits.append)
    monkeypatch.setattr(cli, "_EXIT_CODE", [])
    cli._quick_exit()                   # main raised or never returned: nothing done here
    assert exits == []

    class Broken(io.StringIO):
        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(cli, "_EXIT_CODE", [0])
    monkeypatch.setattr(sys, "stdout", Broken())
    cli._quick_exit()                   # the ordinary exit reports the closed pipe
    assert exits == []
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    cli._quick_exit()
    assert exits == [0]


@pytest.mark.parametrize("command", ["report", "info"])
def test_other_commands_keep_the_ordinary_exit(tmp_path, command):
    code, _out, _err, teardown = _run(tmp_path, "1", [command, B])
    assert code == 0 and teardown
