"""The window's first size and a restored geometry fit the screen's available area (a 1440x900 window on a
1024x700 screen had its status bar and scroll bars beyond the screen's edge: seen under Xvfb at 1024x700)."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QMainWindow

from app.ui import settings


class _Screen:
    """A screen of the given available area (the offscreen platform's own is a fixed 800x800)."""

    def __init__(self, rect: QRect) -> None:
        self.rect = rect

    def availableGeometry(self) -> QRect:
        return self.rect


def test_first_size_is_the_default_on_a_big_screen(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "s.ini"))
    w = QMainWindow()
    qtbot.addWidget(w)
    settings.restore_geometry(w, _Screen(QRect(0, 0, 1920, 1080)))
    assert (w.width(), w.height()) == settings.DEFAULT_SIZE == (1440, 900)


def test_first_size_shrinks_to_a_small_screen(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "s.ini"))
    w = QMainWindow()
    qtbot.addWidget(w)
    settings.restore_geometry(w, _Screen(QRect(0, 24, 1024, 676)))     # a 1024x700 screen less a 24 px panel
    assert (w.width(), w.height()) == (1024, 676)
    assert w.y() >= 24                                                  # not under the panel


def test_a_geometry_saved_on_a_bigger_monitor_is_brought_onto_the_screen(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "s.ini"))
    big = QMainWindow()
    qtbot.addWidget(big)
    big.resize(1900, 1000)
    big.move(600, 300)
    settings.set_value("window/geometry", big.saveGeometry())
    w = QMainWindow()
    qtbot.addWidget(w)
    settings.restore_geometry(w, _Screen(QRect(0, 0, 1280, 800)))
    assert w.width() <= 1280 and w.height() <= 800
    assert w.x() + w.width() <= 1280 and w.y() + w.height() <= 800     # every edge on the screen
