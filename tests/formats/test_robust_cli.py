"""Issue 14 end to end: every command on damaged input, odd paths, special files and injected
engine/export failures ends with a message naming the file and a documented exit code, never a traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
from app import cli  # noqa: E402


@pytest.fixture
def odd(tmp_path):
    """A 20-record SMF file whose name holds a byte that is not UTF-8 (as str, via surrogateescape)."""
    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9.smf")
    with open(raw, "wb") as fh:
        fh.write(C.smf_file(20))
    return os.fsdecode(raw)


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("argv", [["info"], ["report"], ["report", "--format", "csv"], ["report", "--format", "json"],
                                  ["report", "--by", "smt-type"]])
def test_non_utf8_path_every_text_command(capsys, odd, argv):
    code, out, err = run(capsys, *argv, odd)
    assert code == 0
    (out + err).encode("utf-8")                       # printable


def test_export_csv_with_non_utf8_path(capsys, odd, tmp_path):
    code, out, err = run(capsys, "export", odd, "--out", str(tmp_path / "m.csv"))
    assert code == 0 and (tmp_path / "m.csv").stat().st_size > 0


@pytest.mark.parametrize("argv", [["info"], ["report"]])
def test_fifo_is_refused_at_once(capsys, tmp_path, argv):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, out, err = run(capsys, *argv, str(fifo))
    assert code == 3 and "FIFO" in out + err


def test_engine_failure_in_report_names_the_file(capsys, tmp_path, monkeypatch):
    p = tmp_path / "a.smf"
    p.write_bytes(C.smf_file(20))
    from app.engine import Workspace

    def boom(self, *a, **k):
        raise RuntimeError("injected engine failure")

    monkeypatch.setattr(Workspace, "metrics", boom)
    code, out, err = run(capsys, "report", str(p))
    assert code == 3 and str(p) in err and "injected engine failure" in err


def test_export_failure_names_the_file(capsys, tmp_path, monkeypatch):
    p = tmp_path / "a.smf"
    p.write_bytes(C.smf_file(20))
    import app.commands.export as E

    def boom(args):
        raise ValueError("injected export failure")

    monkeypatch.setattr(E, "run", boom)
    code, out, err = run(capsys, "export", str(p), "--out", str(tmp_path / "x.csv"))
    assert code == 3 and str(p) in err and "injected export failure" in err


def test_memory_error_in_a_command_is_a_clear_message(capsys, tmp_path, monkeypatch):
    p = tmp_path / "a.smf"
    p.write_bytes(C.smf_file(20))
    import app.commands.info as I

    def boom(args):
        raise MemoryError()

    monkeypatch.setattr(I, "run", boom)
    code, out, err = run(capsys, "info", str(p))
    assert code == 3 and "ran out of memory" in err and str(p) in err


@pytest.mark.parametrize("damage", ["zero-first-rdw", "gzip-cut", "garbage"])
def test_info_and_report_on_damaged_files(capsys, tmp_path, damage):
    import gzip

    data = C.smf_file(20)
    if damage == "zero-first-rdw":
        data = b"\x00\x00" + data[2:]
    elif damage == "gzip-cut":
        g = gzip.compress(data)
        data = g[:len(g) // 2]
    else:
        data = bytes(range(256)) * 64
    p = tmp_path / f"{damage}.bin"
    p.write_bytes(data)
    for argv in (["info", str(p)], ["report", str(p)]):
        code, out, err = run(capsys, *argv)
        assert code in (0, 3)
        assert (code == 3) == (damage == "garbage")
        if argv[0] == "info" or code == 3:             # the report table only counts findings
            assert str(p) in out + err


def test_unreadable_path_has_no_offset_0_and_no_size(capsys, tmp_path):
    code, out, err = run(capsys, "info", str(tmp_path / "missing.smf"))
    assert code == 3 and "offset 0" not in out and "size:" not in out and "whole file" in out
