"""F1 metric glossary and the About box, both built from the engine's formula sets."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui import messages as M


def formula_sets() -> dict[str, Any]:
    """Built-in formula sets by generation ({} when the engine is unavailable)."""
    try:
        from app.engine import load_formula_sets
    except ImportError:
        return {}
    try:
        return dict(load_formula_sets())
    except Exception:
        return {}


def formula_versions(ws: Any = None) -> dict[str, str]:
    if ws is not None and hasattr(ws, "formula_versions"):
        try:
            versions = dict(ws.formula_versions())
            if versions:
                return versions
        except Exception:
            pass
    return {gen: str(getattr(fs, "version", "")) for gen, fs in formula_sets().items()}


def glossary_rows(generation: str) -> list[tuple[str, str, str, str, str, str]]:
    """(metric id, header, formula, unit, status, formula set) for one generation."""
    fs = formula_sets().get(generation)
    if fs is None:
        return []
    rows = []
    for mid, m in getattr(fs, "metrics", {}).items():
        rows.append((mid, m.header or mid, m.expr or "(computed by the analyzer)", m.unit or "",
                     m.status, f"{fs.name} {fs.version}".strip()))
    return rows


class GlossaryDialog(QDialog):
    """Every metric of a formula set: header, formula, unit and status."""

    def __init__(self, parent: QWidget | None = None, generation: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(M.GLOSSARY_TITLE)
        self.resize(1000, 600)
        self.generation = QComboBox()
        gens = list(formula_sets())
        self.generation.addItems(gens)
        if generation in gens:
            self.generation.setCurrentText(generation)
        elif gens:
            self.generation.setCurrentIndex(len(gens) - 1)
        self.table = QTableWidget(0, len(M.GLOSSARY_HEADERS))
        self.table.setHorizontalHeaderLabels(list(M.GLOSSARY_HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.generation.currentTextChanged.connect(self._fill)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.generation)
        lay.addWidget(self.table, 1)
        lay.addWidget(buttons)
        self._fill(self.generation.currentText())

    def _fill(self, generation: str) -> None:
        rows = glossary_rows(generation)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(2, min(self.table.columnWidth(2), 500))


def about_text(ws: Any = None) -> str:
    from app import __version__

    items = "".join(f"<li>{gen}: {ver}</li>" for gen, ver in formula_versions(ws).items())
    return M.ABOUT_TEXT.format(version=__version__, formulas=items or "<li>-</li>")


def show_about(parent: QWidget, ws: Any = None) -> None:
    QMessageBox.about(parent, M.ABOUT_TITLE, about_text(ws))


def show_error(parent: QWidget | None, what: str, details: str) -> QMessageBox:
    """Unexpected exception: short text plus the traceback under Details (non-blocking)."""
    box = QMessageBox(QMessageBox.Icon.Critical, M.ERROR_TITLE, M.ERROR_TEXT.format(what=what[:500]),
                      QMessageBox.StandardButton.Ok, parent)
    box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
