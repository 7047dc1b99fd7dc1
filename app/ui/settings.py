"""QSettings access in one place.

``NESTSCOPE_SETTINGS_FILE`` points the settings at an INI file (tests use a file
under ``tmp_path``); otherwise the platform store of organization
``NESTSCOPE_SETTINGS_ORG`` (default ``NestScope``) is used.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

ORG = "NestScope"
APP = "NestScope"
MAX_RECENT = 10


def settings() -> QSettings:
    """The settings object for the window (cheap; create one per use)."""
    file = os.environ.get("NESTSCOPE_SETTINGS_FILE")
    if file:
        return QSettings(file, QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                     os.environ.get("NESTSCOPE_SETTINGS_ORG", ORG), APP)


def get_list(key: str) -> list[str]:
    """A string list stored under ``key`` ([] when absent)."""
    value = settings().value(key, [])
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value]


def set_list(key: str, values: list[str]) -> None:
    settings().setValue(key, list(values))


def recent_files() -> list[str]:
    return get_list("recent/files")


def add_recent(paths: list[str]) -> list[str]:
    """Put ``paths`` at the top of the recent list; returns the new list."""
    current = recent_files()
    for p in reversed(paths):
        p = str(Path(p))
        if p in current:
            current.remove(p)
        current.insert(0, p)
    current = current[:MAX_RECENT]
    set_list("recent/files", current)
    return current


def clear_recent() -> None:
    set_list("recent/files", [])
    set_list("recent/workspaces", [])


def recent_workspaces() -> list[str]:
    return get_list("recent/workspaces")


def add_recent_workspace(path: str) -> list[str]:
    current = [p for p in recent_workspaces() if p != str(Path(path))]
    current.insert(0, str(Path(path)))
    set_list("recent/workspaces", current[:MAX_RECENT])
    return current[:MAX_RECENT]


def get_bool(key: str, default: bool = False) -> bool:
    value = settings().value(key, default)
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)


def set_value(key: str, value: object) -> None:
    settings().setValue(key, value)


def get_value(key: str, default: object = None) -> object:
    return settings().value(key, default)


DEFAULT_SIZE = (1440, 900)      # px: the window's first size, the layout of IBM's CPU MF tables fits it


def restore_geometry(window, screen=None) -> None:
    """The window's saved geometry, or its default size (:data:`DEFAULT_SIZE`); either way no larger than the
    screen's available area (a 1440x900 window on a 1024x768 laptop, or a geometry saved on a bigger monitor,
    had its status bar and scroll bars beyond the screen's edge where no window manager moves it back)."""
    geo = get_value("window/geometry")
    if geo is None or not window.restoreGeometry(geo):
        window.resize(*DEFAULT_SIZE)
    if screen is None:
        from PySide6.QtGui import QGuiApplication

        if QGuiApplication.platformName() in ("offscreen", "minimal"):     # a made-up screen (800x800), not one
            return                                                          # an analyst looks at
        screen = window.screen()
    if screen is None:
        return
    area = screen.availableGeometry()
    w, h = min(window.width(), area.width()), min(window.height(), area.height())
    if (w, h) != (window.width(), window.height()):
        window.resize(w, h)
    x = min(max(window.x(), area.left()), area.right() + 1 - w)     # its top-left corner on the screen
    y = min(max(window.y(), area.top()), area.bottom() + 1 - h)
    if (x, y) != (window.x(), window.y()):
        window.move(x, y)
