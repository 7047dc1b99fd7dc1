"""Light and dark palettes (Fusion style, so both look the same on every platform)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

_DARK = {
    QPalette.ColorRole.Window: (45, 45, 48), QPalette.ColorRole.WindowText: (225, 225, 225),
    QPalette.ColorRole.Base: (30, 30, 32), QPalette.ColorRole.AlternateBase: (40, 40, 44),
    QPalette.ColorRole.ToolTipBase: (60, 60, 64), QPalette.ColorRole.ToolTipText: (235, 235, 235),
    QPalette.ColorRole.Text: (225, 225, 225), QPalette.ColorRole.Button: (50, 50, 54),
    QPalette.ColorRole.ButtonText: (225, 225, 225), QPalette.ColorRole.BrightText: (255, 80, 80),
    QPalette.ColorRole.Highlight: (42, 110, 190), QPalette.ColorRole.HighlightedText: (255, 255, 255),
    QPalette.ColorRole.Link: (100, 160, 255), QPalette.ColorRole.PlaceholderText: (150, 150, 150),
}


def apply_palette(dark: bool) -> None:
    """Switch the application palette."""
    app = QApplication.instance()
    if app is None:
        return
    app.setStyle("Fusion")
    if not dark:
        app.setPalette(app.style().standardPalette())
        return
    pal = QPalette()
    for role, rgb in _DARK.items():
        pal.setColor(role, QColor(*rgb))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(120, 120, 120))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(120, 120, 120))
    app.setPalette(pal)
