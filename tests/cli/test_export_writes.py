"""How exports write their files (issue 25): SIGTERM and SIGHUP leave nothing behind, a replaced file keeps its
permissions, an unknown extension lists every format, a file name that is not UTF-8 reaches the provenance."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from app.export import ExportError, format_of

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


def test_unknown_extension_lists_every_format():
    with pytest.raises(ExportError) as err:
        format_of("review.docx")
    msg = str(err.value)
    assert "'.docx'" in msg
    for ext in (".csv", ".xlsx", ".pptx", ".png", ".svg"):
        assert ext in msg


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="the platform has no SIGHUP")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_signal_during_export_leaves_no_temporary_file(tmp_path, sig):
    out = tmp_path / "deck.pptx"
    env = dict(os.environ, NESTSCOPE_CACHE="0", QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-m", "app", "export", "--before", B, "--after", A, "--out", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while not list(tmp_path.glob(".nestscope-*.part")):       # the writer's temporary file exists
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(getattr(signal, sig))
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + getattr(signal, sig)
    assert list(tmp_path.iterdir()) == []                          # no .part, no half deck


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_replaced_file_keeps_its_permissions(tmp_path):
    out = tmp_path / "table.csv"
    out.write_text("old\n")
    os.chmod(out, 0o640)
    assert main(["export", A, "--out", str(out), "--by", "lpar"]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640 and out.read_text() != "old\n"
    fresh = tmp_path / "new.csv"
    mask = os.umask(0o022)
    os.umask(mask)
    assert main(["export", A, "--out", str(fresh), "--by", "lpar"]) == 0
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o666 & ~mask


@pytest.mark.skipif(sys.platform == "win32" or sys.platform == "darwin",
                    reason="file names that are not UTF-8 exist on Linux file systems")
def test_name_that_is_not_utf8_reaches_the_provenance(tmp_path):
    from pptx import Presentation

    odd = os.path.join(os.fsencode(tmp_path), b"z16_\xff\xfe_ZOSA.rdw.gz")
    shutil.copyfile(A, odd)
    name = os.fsdecode(odd)
    out = tmp_path / "deck.pptx"
    assert main(["export", name, "--out", str(out)]) == 0
    notes = Presentation(str(out)).slides[0].notes_slide.notes_text_frame.text
    size = os.path.getsize(A)
    import hashlib

    digest = hashlib.sha256(Path(A).read_bytes()).hexdigest()
    assert "z16_\\xff\\xfe_ZOSA.rdw.gz" in notes and f"{size:,} bytes" in notes and digest in notes
    svg = tmp_path / "plot.svg"
    assert main(["export", name, "--out", str(svg), "--size", "1024x700"]) == 0
    assert svg.stat().st_size > 0


@pytest.mark.parametrize("when", ["made", "closed"])
def test_signal_the_instant_the_temporary_file_is_made_leaves_nothing(tmp_path, monkeypatch, when):
    """CI once saw a SIGHUP leave ``.nestscope-*.pptx.part`` behind: the signal landed between the temporary file's
    creation and the clean-up's ``try``.  Here the 'signal' (a KeyboardInterrupt, as :class:`app.cli.Terminated`
    is) is raised right after ``os.open`` made the file, or as its descriptor is closed."""
    from app.export import atomic_output

    real_open, real_close = os.open, os.close

    def open_then_signal(path, flags, mode=0o777, **kw):
        fd = real_open(path, flags, mode, **kw)
        if when == "made":
            real_close(fd)
            raise KeyboardInterrupt
        return fd

    def close_then_signal(fd):
        real_close(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "open", open_then_signal)
    if when == "closed":
        monkeypatch.setattr(os, "close", close_then_signal)
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(str(tmp_path / "deck.pptx")):
            pass
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_temporary_name_taken_by_another_file_is_left_alone(tmp_path, monkeypatch):
    """The temporary file is made with O_EXCL under a random name; a name already there is someone else's file:
    kept, and another name is drawn."""
    import secrets as secrets_module

    from app.export import atomic_output

    (tmp_path / ".nestscope-00000000.csv.part").write_text("not ours\n")
    draws = iter(["00000000", "11111111"])
    monkeypatch.setattr(secrets_module, "token_hex", lambda n: next(draws))
    with atomic_output(str(tmp_path / "t.csv")) as tmp:
        assert os.path.basename(tmp) == ".nestscope-11111111.csv.part"
        Path(tmp).write_text("ours\n")
    assert (tmp_path / ".nestscope-00000000.csv.part").read_text() == "not ours\n"
    assert (tmp_path / "t.csv").read_text() == "ours\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".nestscope-00000000.csv.part", "t.csv"]


def test_report_out_never_overwrites_an_input(tmp_path, capsys):
    """`report FILE --out FILE` truncated the input file to the report (435 bytes of a 295 KB dump): now refused,
    exit 2, the file as it was."""
    src = tmp_path / "in.rdw.gz"
    shutil.copyfile(A, src)
    before = src.read_bytes()
    assert main(["report", str(src), "--out", str(src)]) == 2
    assert src.read_bytes() == before
    assert "is one of the input files; choose another name" in capsys.readouterr().err
    out = tmp_path / "r.csv"
    assert main(["report", str(src), "--out", str(out), "--format", "csv"]) == 0
    assert out.read_text(encoding="utf-8").splitlines()[0].startswith("cec,lpar,system,")   # report's CSV header
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.rdw.gz", "r.csv"]   # no temporary file left


def test_query_out_inside_the_dataset_is_refused(tmp_path, capsys):
    ds = tmp_path / "ds"
    assert main(["extract", A, "--to", str(ds), "--quiet"]) == 0
    listing = sorted(str(p.relative_to(ds)) for p in ds.rglob("*"))
    assert main(["query", str(ds), "--out", str(ds / "q.csv"), "--format", "csv"]) == 2
    assert "lies inside the dataset" in capsys.readouterr().err
    assert sorted(str(p.relative_to(ds)) for p in ds.rglob("*")) == listing
    for fmt in ("csv", "parquet"):
        out = tmp_path / f"q.{fmt}"
        assert main(["query", str(ds), "--out", str(out), "--format", fmt]) == 0
        assert out.stat().st_size > 0
    assert not list(tmp_path.glob(".nestscope-*"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_report_out_to_a_named_pipe_writes_into_it(tmp_path):
    """A FIFO given as --out is written into, not replaced by a regular file."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    assert main(["report", A, "--out", str(fifo), "--format", "csv"]) == 0
    reader.join(30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].startswith("cec,lpar,system,")
