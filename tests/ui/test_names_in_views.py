"""Names from the data in the window's own views (issue 20): the tree and the interval table (and Data health) show
control characters escaped (``\\x1b``), as every other output does (app/textsafe.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from names_builders import smf_file
from tests.ui.conftest import wait_loaded

NAME = "\x1b[2J"          # ESC [ 2 J (4 bytes, a system id): clears a terminal; a box or nothing in a Qt view


def _texts(model, parent=None):
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    out = []
    for r in range(model.rowCount(parent)):
        for c in range(model.columnCount(parent)):
            v = model.data(model.index(r, c, parent), Qt.ItemDataRole.DisplayRole)
            if isinstance(v, str):
                out.append(v)
        out += _texts(model, model.index(r, 0, parent))
    return out


def test_tree_and_table_escape_control_characters(qtbot, window, tmp_path):
    path = smf_file(tmp_path, NAME, "00000000000ABCDE", "A01")
    window.open_files([str(path)])
    wait_loaded(qtbot, window)
    tree = _texts(window.tree.model)
    assert any("\\x1b[2J" in t for t in tree)
    assert not any("\x1b" in t for t in tree)
    key = next(tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "lpar")
    window.tree.select_keys([key])
    qtbot.waitUntil(lambda: set(window.selection.value.nodes) == {key})
    wait_loaded(qtbot, window)
    table = window.table.model
    cells = _texts(table)
    assert cells and not any("\x1b" in t for t in cells)
