"""F1 metric glossary and the About box, both built from the workspace's formula sets.

The workspace's sets include a ``--formulas`` override file; the built-in sets are used only when there is
no workspace (or it has no sets).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M

UNIT_WIDTH = 200  # px: long unit texts are elided (tooltip), the formula column stretches


def formula_sets(ws: Any = None) -> dict[str, Any]:
    """The workspace's formula sets by generation (override file included), else the built-in ones
    ({} when the engine is unavailable)."""
    sets = getattr(ws, "formula_sets", None)
    if isinstance(sets, dict) and sets:
        return dict(sets)
    try:
        from app.engine import load_formula_sets
    except ImportError:
        return {}
    try:
        return dict(load_formula_sets())
    except Exception:
        return {}


def formula_versions(ws: Any = None, live: bool = True) -> dict[str, str]:
    """generation -> version: of the generations in the data when ``live`` (the workspace may compute),
    else of every set the workspace holds (nothing computed: safe while files are being read)."""
    if live and ws is not None and hasattr(ws, "formula_versions"):
        try:
            versions = dict(ws.formula_versions())
            if versions:
                return versions
        except Exception:
            pass
    return {gen: str(getattr(fs, "version", "")) for gen, fs in formula_sets(ws).items()}


def glossary_rows(generation: str, sets: dict[str, Any] | None = None) -> list[tuple[str, str, str, str, str, str]]:
    """(metric id, header, formula, unit, status, formula set) for one generation of ``sets``
    (default: the built-in sets)."""
    fs = (sets if sets is not None else formula_sets()).get(generation)
    if fs is None:
        return []
    name, version = str(getattr(fs, "name", "") or ""), str(getattr(fs, "version", "") or "")
    set_name = version if name and version.startswith(name) else f"{name} {version}".strip()  # not "z16 z16 / ..."
    rows = []
    for mid, m in getattr(fs, "metrics", {}).items():
        status = m.status if m.expr else f"{m.status} (none)"
        rows.append((mid, m.header or mid, m.expr or M.GLOSSARY_NO_FORMULA.format(gen=generation, metric=mid),
                     m.unit or "", status, set_name))
    return rows


class GlossaryDialog(QDialog):
    """Every metric of a formula set: header, formula, unit and status."""

    def __init__(self, parent: QWidget | None = None, generation: str | None = None, ws: Any = None) -> None:
        super().__init__(parent)
        self.sets = formula_sets(ws)
        self.setWindowTitle(M.GLOSSARY_TITLE)
        self.resize(1000, 600)
        self.generation = QComboBox()
        gens = list(self.sets)
        self.generation.addItems(gens)
        if generation in gens:
            self.generation.setCurrentText(generation)
        elif gens:
            self.generation.setCurrentIndex(len(gens) - 1)
        self.table = QTableWidget(0, len(M.GLOSSARY_HEADERS))
        self.table.setHorizontalHeaderLabels(list(M.GLOSSARY_HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)       # one line per metric; the full text is in the tooltip
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.generation.currentTextChanged.connect(self._fill)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        self.note = QLabel()
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.generation)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.note)
        lay.addWidget(buttons)
        self._fill(self.generation.currentText())

    def _fill(self, generation: str) -> None:
        rows = glossary_rows(generation, self.sets)
        missing = [r[0] for r in rows if r[2].startswith(M.GLOSSARY_NO_FORMULA[:12])]
        self.note.setText(M.GLOSSARY_HOWTO.format(gen=generation, metrics=", ".join(missing)) if missing else "")
        self.note.setVisible(bool(missing))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        self.table.setColumnWidth(3, min(self.table.columnWidth(3), UNIT_WIDTH))  # the formula gets the room


def about_text(ws: Any = None, live: bool = True) -> str:
    from app import __version__

    items = "".join(f"<li>{html.escape(gen)}: {html.escape(str(ver))}</li>"
                    for gen, ver in formula_versions(ws, live).items())
    text = M.ABOUT_TEXT.format(version=__version__, formulas=items or "<li>-</li>")
    path = getattr(ws, "formula_file", None)
    if path:
        text += M.ABOUT_OVERRIDE.format(path=html.escape(str(path)))
    return text


def show_about(parent: QWidget, ws: Any = None, live: bool = True) -> None:
    QMessageBox.about(parent, M.ABOUT_TITLE, about_text(ws, live))


def show_error(parent: QWidget | None, what: str, details: str) -> QMessageBox:
    """Unexpected exception: short text plus the traceback under Details (non-blocking)."""
    box = QMessageBox(QMessageBox.Icon.Critical, M.ERROR_TITLE, M.ERROR_TEXT.format(what=what[:500]),
                      QMessageBox.StandardButton.Ok, parent)
    box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
