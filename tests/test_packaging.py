"""The packaging scripts' own logic: the real-display check's verdict on a screenshot (packaging/display_check.py)
and the names the cross-platform bundle build gives on each platform (packaging/build.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import app.ui  # noqa: F401  (pins None/True/False before Qt runs on CPython 3.11; see app/ui/__init__.py)

PACKAGING = Path(__file__).resolve().parents[1] / "packaging"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"packaging_{name}", PACKAGING / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


display_check = _load("display_check")
build = _load("build")


def _image(w: int = 400, h: int = 300, colour: int = 0xFFFFFF):
    from PySide6.QtGui import QImage

    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(colour)
    return img


def test_one_flat_colour_is_blank():
    assert display_check.blank_reason(_image()) == ("only 1 distinct colours on the screen (a drawn window has at "
                                                    "least 24)")


def test_a_null_or_tiny_grab_is_blank():
    from PySide6.QtGui import QImage

    assert display_check.blank_reason(QImage()) == "the grab is empty or tiny (0x0)"
    assert display_check.blank_reason(_image(100, 100)) == "the grab is empty or tiny (100x100)"


def test_a_few_colours_in_a_corner_are_blank():
    """Many colours, but on 2% of the screen: the grid sees 100 x 75 = 7,500 pixels, 150 of them coloured."""
    img = _image()
    for i in range(150):                    # 150 grid points of the first rows, each its own colour
        x, y = (i % 100) * 4, (i // 100) * 4
        img.setPixel(x, y, 0x010101 * (i + 1))
    assert display_check.blank_reason(img) == "one colour (#ffffff) covers 98.0% of the screen"


def test_a_drawn_window_is_not_blank():
    """Bands of 40 colours, each 10 pixels wide: what a table with text and grid lines looks like to the check."""
    from PySide6.QtGui import QColor, QPainter

    img = _image()
    painter = QPainter(img)
    for band in range(40):
        painter.fillRect(band * 10, 0, 10, img.height(), QColor.fromRgb(0x0A0B0C * band))
    painter.end()
    assert display_check.blank_reason(img) is None


@pytest.mark.parametrize("platform, machine, want", [("linux", "x86_64", "linux-x86_64"),
                                                     ("win32", "AMD64", "windows-amd64"),
                                                     ("darwin", "arm64", "macos-arm64")])
def test_release_asset_names_per_platform(platform, machine, want, monkeypatch):
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(build.platform, "machine", lambda: machine)
    assert build.platform_tag() == want


@pytest.mark.parametrize("platform, name", [("win32", "nestscope.exe"), ("linux", "nestscope"),
                                            ("darwin", "nestscope")])
def test_bundled_executable_name_per_platform(platform, name, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "platform", platform)
    assert build.executable(tmp_path) == tmp_path / "nestscope" / name
