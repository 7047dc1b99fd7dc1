"""``nestscope snapshot`` renders the real window offscreen to a PNG."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NESTSCOPE_SETTINGS_FILE=str(tmp_path / "s.ini"))
    return subprocess.run([sys.executable, "-m", "app", "snapshot", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize("view,size", [("table", "1024x700"), ("timeline", "1200x800"), ("smt", "1024x700")])
def test_snapshot_png(tmp_path, view, size):
    smf = SAMPLES / "after_z16_ZOSA_smf113.rdw.gz"
    if not smf.exists():
        pytest.skip("samples not generated")
    out = tmp_path / f"{view}.png"
    proc = _run(str(smf), "--out", str(out), "--size", size, "--view", view, "--select", "ZOSA/GCP",
                tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    w, h = (int(v) for v in size.split("x"))
    assert _png_size(out) == (w, h)


def test_snapshot_nothing_readable(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello, not SMF" * 10)
    proc = _run(str(junk), "--out", str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert proc.returncode == 3
    assert "nothing readable" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_snapshot_never_overwrites_an_input_file(tmp_path):
    """`snapshot FILE --out FILE` would have saved the PNG over the dump: refused before the window opens, exit 2,
    the file unchanged."""
    src = tmp_path / "in.rdw.gz"
    src.write_bytes((SAMPLES / "after_z16_ZOSA_smf113.rdw.gz").read_bytes())
    before = src.read_bytes()
    proc = _run(str(src), "--out", str(src), tmp_path=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "is one of the input files" in proc.stderr and "Traceback" not in proc.stderr
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.rdw.gz"]


def test_snapshot_bad_size(tmp_path):
    proc = _run("--out", str(tmp_path / "x.png"), "--size", "huge", tmp_path=tmp_path)
    assert proc.returncode == 2


def test_gui_without_a_display_explains_instead_of_aborting():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run([sys.executable, "-m", "app"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2                      # a usage problem, not a Qt abort (134)
    assert "no display found" in proc.stderr and "snapshot" in proc.stderr
