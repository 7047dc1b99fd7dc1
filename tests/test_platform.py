"""The code paths that differ between Linux, macOS and Windows, each checked here by simulating the other
platform's behaviour (an ``os`` attribute taken away, ``sys.platform`` set, ``os.replace`` refusing as Windows
does while a file is open, a cp1252 pipe), so a Linux run of the suite proves the Windows and macOS paths too.
The release workflow runs this file on Windows and macOS themselves."""

from __future__ import annotations

import io
import mmap
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import fileio
from app.formats import read_file

SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples"
SMF = SAMPLES / "after_z16_ZOSA_smf113.rdw.gz"
VM = SAMPLES / "after_VMSYS1_monwrite.mondata.gz"


def _same_read(a, b) -> None:
    assert a.kind == b.kind and a.framing == b.framing
    assert len(a.samples) > 0
    assert a.samples.equals(b.samples)
    assert [(f.code, f.offset) for f in a.findings] == [(f.code, f.offset) for f in b.findings]


# -- opening input: no O_NONBLOCK, no os.pread (Windows), no mmap (some network file systems) ---------------

@pytest.mark.parametrize("path", [SMF, VM], ids=["smf", "monwrite"])
def test_read_without_o_nonblock_as_on_windows(path, monkeypatch):
    here = read_file(path)
    monkeypatch.delattr(os, "O_NONBLOCK", raising=False)
    assert fileio.open_read_flags() & ~(os.O_RDONLY | getattr(os, "O_BINARY", 0)) == 0
    _same_read(read_file(path), here)


def test_read_without_pread_as_on_windows(monkeypatch):
    """The size cap is on the decompressed bytes: a gzip file is let through the first check (on its stored size)
    when its first two bytes are the gzip mark, and refused only once it decompresses past the cap.  Without
    ``os.pread`` the mark must be seen too (it read as b'' before, and the file was refused on its stored size
    with 'is 1.0 MiB, more than the limit')."""
    monkeypatch.setenv("NESTSCOPE_MAX_BYTES", str(SMF.stat().st_size - 1))
    here = read_file(SMF)
    monkeypatch.delattr(os, "pread", raising=False)
    there = read_file(SMF)
    for r in (here, there):
        assert [(f.code, f.offset) for f in r.findings] == [("too-large", None)]
        assert "decompresses to more than the limit" in r.findings[0].message


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=64), n=st.integers(0, 80), pread=st.booleans())
def test_read_head_is_the_first_bytes_with_or_without_pread(tmp_path_factory, data, n, pread):
    path = tmp_path_factory.mktemp("head") / "f.bin"
    path.write_bytes(data)
    fd = os.open(path, fileio.open_read_flags())
    try:
        with pytest.MonkeyPatch.context() as mp:
            if not pread:
                mp.delattr(os, "pread", raising=False)
            assert fileio.read_head(fd, n) == data[:n]
            assert os.read(fd, len(data) + 1) == data      # the position is at the start again
    finally:
        os.close(fd)


class _NoMap(mmap.mmap):
    """``mmap.mmap`` on a file system that cannot map (still a type: the reader asks isinstance of it)."""

    def __new__(cls, *args, **kwargs):
        raise OSError(19, "No such device")


@pytest.mark.parametrize("path", [SMF, VM], ids=["smf", "monwrite"])
def test_read_when_mmap_is_refused(path, monkeypatch):
    here = read_file(path)
    monkeypatch.setattr(mmap, "mmap", _NoMap)
    _same_read(read_file(path), here)


def test_file_digest_when_mmap_is_refused(monkeypatch):
    import hashlib

    from app.ui.workers import file_digest

    want = hashlib.sha1(SMF.read_bytes()).hexdigest()
    assert file_digest(SMF) == want
    monkeypatch.setattr(mmap, "mmap", _NoMap)
    monkeypatch.delattr(os, "O_NONBLOCK", raising=False)
    assert file_digest(SMF) == want


# -- replacing a target that Windows holds open -----------------------------------------------------------------

class _HeldOpen:
    """``os.replace`` as Windows behaves while another program holds the target: PermissionError ``times`` times,
    then the real replace."""

    def __init__(self, times: int) -> None:
        self.times, self.calls = times, 0
        self.real = os.replace

    def __call__(self, src, dst):
        self.calls += 1
        if self.calls <= self.times:
            raise PermissionError(13, "Permission denied", str(dst))
        self.real(src, dst)


def test_replace_tries_again_on_windows_while_the_target_is_held(tmp_path, monkeypatch):
    src, dst = tmp_path / "new", tmp_path / "report.csv"
    src.write_text("new"), dst.write_text("old")
    held, waits = _HeldOpen(times=2), []
    monkeypatch.setattr(os, "replace", held)
    monkeypatch.setattr(sys, "platform", "win32")
    fileio.replace(src, dst, sleep=waits.append)
    assert held.calls == 3 and dst.read_text() == "new" and not src.exists()
    assert waits == [0.02, 0.04]                       # REPLACE_FIRST_WAIT_S, then doubled


def test_replace_names_the_held_file_when_it_stays_held(tmp_path, monkeypatch):
    src, dst = tmp_path / "new", tmp_path / "deck.pptx"
    src.write_text("new"), dst.write_text("old")
    held = _HeldOpen(times=99)
    monkeypatch.setattr(os, "replace", held)
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(fileio.TargetBusy) as err:
        fileio.replace(src, dst, sleep=lambda s: None)
    assert held.calls == fileio.REPLACE_TRIES
    assert "deck.pptx is open in another program" in err.value.strerror
    assert dst.read_text() == "old"


def test_replace_does_not_wait_on_posix(tmp_path, monkeypatch):
    """On Linux and macOS a PermissionError is a real permission problem: raised at once, not waited on."""
    held = _HeldOpen(times=1)
    monkeypatch.setattr(os, "replace", held)
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(PermissionError) as err:
        fileio.replace(tmp_path / "a", tmp_path / "b", sleep=lambda s: pytest.fail("waited"))
    assert not isinstance(err.value, fileio.TargetBusy) and held.calls == 1


def _held_on_windows(monkeypatch, target: Path, text: str) -> None:
    """``target`` exists with ``text`` and stays held open by another program, on Windows (no waiting)."""
    target.write_text(text)
    monkeypatch.setattr(os, "replace", _HeldOpen(times=99))
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(fileio, "REPLACE_FIRST_WAIT_S", 0.0)


def test_export_to_a_file_held_open_says_so(tmp_path, monkeypatch):
    from app.export import ExportError, atomic_output

    target = tmp_path / "report.csv"
    _held_on_windows(monkeypatch, target, "old")
    with pytest.raises(ExportError) as err:
        with atomic_output(str(target)) as tmp:
            Path(tmp).write_text("new")
    assert str(err.value).startswith(f"{target}: cannot be replaced: report.csv is open in another program")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.csv"]       # no temporary file left behind


def test_workspace_save_to_a_held_file_gives_a_sentence(tmp_path, monkeypatch):
    from app.ui import workspace_file as wsf

    target = tmp_path / "month.nsw.json"
    _held_on_windows(monkeypatch, target, "{}")
    with pytest.raises(wsf.WorkspaceFileError) as err:
        wsf.save(wsf.WorkspaceState([str(SMF)], [], None, None, None), target)
    assert str(err.value).startswith("month.nsw.json: cannot be saved (month.nsw.json is open in another program")
    assert target.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["month.nsw.json"]


# -- printing file names on a Windows pipe (cp1252) --------------------------------------------------------------

def _cp1252_stdout(monkeypatch) -> io.TextIOWrapper:
    """sys.stdout as a Windows pipe: cp1252, strict (read what was written with :func:`_written`)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="cp1252", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    return out


def _written(out: io.TextIOWrapper) -> str:
    out.flush()
    return out.buffer.getvalue().decode("cp1252")


def test_info_on_a_file_named_in_another_script_prints_on_cp1252(tmp_path, monkeypatch):
    from app.cli import main

    path = tmp_path / "数据_ZOSA.rdw.gz"
    shutil.copy(SMF, path)
    out = _cp1252_stdout(monkeypatch)
    assert main(["info", str(path)]) == 0
    text = _written(out)
    assert "\\u6570\\u636e_ZOSA.rdw.gz" in text                     # 数据 as escapes, the rest as it is
    assert "counter samples: 4,620" in text                          # README: the ZOSA sample's 4,620 samples


@settings(max_examples=10, deadline=None)
@given(name=st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\:*?\"<>|"),
                    min_size=1, max_size=20).filter(lambda s: s.strip(". ") == s))
def test_info_never_fails_to_print_a_file_name(tmp_path_factory, name):
    """Any file name (here: of a file that is not CPU MF data) is printed on a cp1252 pipe, with escapes for what
    cp1252 lacks: the command ends with exit 3 (nothing readable), never with an encoding error."""
    from app.cli import main

    path = tmp_path_factory.mktemp("names") / name
    try:
        path.write_bytes(b"not cpu mf data")
    except OSError:          # a name this file system refuses (too long in bytes): nothing to check
        return
    with pytest.MonkeyPatch.context() as mp:
        out = _cp1252_stdout(mp)
        err = io.StringIO()
        mp.setattr(sys, "stderr", err)
        assert main(["info", str(path)]) == 3
        text = _written(out)
    assert "failed (" not in err.getvalue()
    # named by the one rule for names (display_text: what str.isprintable() rejects, e.g. U+00A0, as an escape),
    # then escaped for what cp1252 lacks
    from app.textsafe import display_text

    assert display_text(str(path)).encode("cp1252", "backslashreplace").decode("cp1252") + "\n" in text


# -- the window's display check ----------------------------------------------------------------------------------

@pytest.mark.parametrize("platform, display, want", [("linux", None, True), ("linux", ":0", False),
                                                     ("win32", None, False), ("darwin", None, False)])
def test_no_display_is_said_only_where_x11_is_needed(platform, display, want, monkeypatch):
    from app.commands.gui import _no_display

    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if display:
        monkeypatch.setenv("DISPLAY", display)
    else:
        monkeypatch.delenv("DISPLAY", raising=False)
    assert _no_display() is want
