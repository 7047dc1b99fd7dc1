"""Light and dark palettes (Fusion style, so both look the same on every platform), and the window's own
named colours (error text, warnings, muted rows) in both themes: every colour the widgets draw comes from here
or from the Qt palette, so switching the theme switches them all."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

_DARK = {
    QPalette.ColorRole.Window: (45, 45, 48), QPalette.ColorRole.WindowText: (225, 225, 225),
    QPalette.ColorRole.Base: (30, 30, 32), QPalette.ColorRole.AlternateBase: (40, 40, 44),
    QPalette.ColorRole.ToolTipBase: (60, 60, 64), QPalette.ColorRole.ToolTipText: (235, 235, 235),
    QPalette.ColorRole.Text: (225, 225, 225), QPalette.ColorRole.Button: (50, 50, 54),
    QPalette.ColorRole.ButtonText: (225, 225, 225), QPalette.ColorRole.BrightText: (255, 80, 80),
    QPalette.ColorRole.Highlight: (42, 110, 190), QPalette.ColorRole.HighlightedText: (255, 255, 255),
    QPalette.ColorRole.Link: (100, 160, 255), QPalette.ColorRole.PlaceholderText: (150, 150, 150),
}

# named colours: (light theme, dark theme); each keeps a contrast of 4.5:1 or more against its theme's window
# and base colours (tests/ui/test_themes.py measures it)
NAMED = {
    "error": ("#b00020", "#ff7b7b"),        # inline field messages, failed exports, load errors
    "warning": ("#8a5300", "#f0b050"),      # the Data health tab with warnings
    "muted": ("#6a6a6a", "#a8a8a8"),        # partition-only LPARs in the tree
}


# the plots' colours (pyqtgraph draws outside the widget palette): one table for every chart of the window, the
# timelines' and the Compare tab's, in both themes
CHART_THEMES = {
    False: {"bg": "w", "hex_bg": "#ffffff", "fg": "#202020", "text": (20, 20, 20), "line": "#505050",
            "region": (70, 130, 220, 50), "shade": (70, 130, 220, 28), "legend": (255, 255, 255, 220),
            "ratio": (228, 236, 248), "delta": (245, 245, 245)},
    True: {"bg": "#1e1e1e", "hex_bg": "#1e1e1e", "fg": "#e0e0e0", "text": (230, 230, 230), "line": "#c0c0c0",
           "region": (120, 170, 255, 60), "shade": (120, 170, 255, 34), "legend": (30, 30, 30, 220),
           "ratio": (45, 60, 85), "delta": (52, 52, 56)},
}


def is_dark() -> bool:
    """True while the application palette is the dark one (its window colour is dark)."""
    app = QApplication.instance()
    if app is None:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def named(name: str, dark: bool | None = None) -> QColor:
    """The named colour ``name`` of the light or dark theme (``None``: the theme on screen now)."""
    light, dark_hex = NAMED[name]
    return QColor(dark_hex if (is_dark() if dark is None else dark) else light)


def error_style(on: bool, bold: bool = True) -> str:
    """A label's style sheet: the error colour of the current theme, or none (the palette's text colour)."""
    if not on:
        return ""
    return f"QLabel {{ color: {named('error').name()};{' font-weight: bold;' if bold else ''} }}"


def refresh_styles(root: QWidget) -> None:
    """Widgets with a style sheet keep the palette they were polished with (the time-window chip and the tree's
    "Busy and CPI over..." note stayed washed out after dark -> light): set each sheet again so it takes the
    palette on screen now."""
    for w in [root, *root.findChildren(QWidget)]:
        sheet = w.styleSheet()
        if sheet:
            w.setStyleSheet("")
            w.setStyleSheet(sheet)


def recolor_legend(legend: object, color: str) -> None:
    """A pyqtgraph legend's labels in ``color``, the ones it shows now too (``setLabelTextColor`` only stores
    the colour for labels added later: the CPI parts, sourcing and MT legends stayed dark on the dark theme)."""
    if legend is None:
        return
    legend.setLabelTextColor(color)
    for _sample, label in getattr(legend, "items", []):
        label.setText(label.text, color=color)


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
