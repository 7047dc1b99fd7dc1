"""Item-data roles shared by every model of the window."""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import Qt


class Role(IntEnum):
    SORT = int(Qt.ItemDataRole.UserRole)         # raw value for sorting
    TOTAL = int(Qt.ItemDataRole.UserRole) + 1    # denominator for bar delegates
    NODE_KEY = int(Qt.ItemDataRole.UserRole) + 2  # NodeKey tuple, for selection sync
    LEVEL = int(Qt.ItemDataRole.UserRole) + 3     # 'cec' | 'lpar' | 'class' | 'cpu'
    SUMMARY = int(Qt.ItemDataRole.UserRole) + 4   # True on summary rows
    FINDING = int(Qt.ItemDataRole.UserRole) + 5   # the Finding object of a health row
