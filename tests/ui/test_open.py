"""Opening data: dialog, action, drag and drop of files and folders, duplicates, broken files, recent files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from app.ui import messages as M
from app.ui import settings
from tests.ui.conftest import wait_loaded


def _drop(window, paths: list[str]) -> QDropEvent:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(p) for p in paths])
    pos = QPointF(window.width() / 2, window.height() / 2)
    enter = QDragEnterEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    return drop


def _lpars(window) -> set[str]:
    return {n.key[2] for n in window.tree.model.all_nodes() if n.level == "lpar"}


def test_placeholder_when_nothing_is_open(window):
    assert window.table.stack.currentIndex() == 0
    assert window.table.placeholder.text() == M.PLACEHOLDER
    assert window.timeline.placeholder.text() == M.PLACEHOLDER
    assert window.health.placeholder.text() == M.PLACEHOLDER
    assert window.tree.stack.currentIndex() == 0


def test_open_files_fills_tree_and_adds(qtbot, window, smf_a, smf_b):
    assert window.open_files([smf_a]) == 1
    wait_loaded(qtbot, window)
    assert _lpars(window) == {"ZOSA"}
    assert window.open_files([smf_b]) == 1  # added, never replacing
    wait_loaded(qtbot, window)
    assert _lpars(window) == {"ZOSA", "ZOSB"}
    assert len(window.ws.files) == 2
    assert window.errors == []
    assert window.table.model.rowCount() > 0


def test_open_action_uses_file_dialog(qtbot, window, monkeypatch, smf_a):
    calls = []

    def fake_dialog(parent, title, folder, filters):
        calls.append(filters)
        return [smf_a], filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(fake_dialog))
    window.actions_.open.trigger()
    wait_loaded(qtbot, window)
    assert "MONWRITE" in calls[0] and "All files (*)" in calls[0]
    assert _lpars(window) == {"ZOSA"}
    assert window.actions_.open.shortcut().toString() == "Ctrl+O"


def test_drop_mixed_files(qtbot, window, smf_a, monwrite):
    drop = _drop(window, [smf_a, monwrite])
    assert drop.isAccepted()
    wait_loaded(qtbot, window)
    kinds = {r.kind for r in window.ws.files}
    assert kinds == {"smf", "monwrite"}
    assert "ZOSA" in _lpars(window) and len(_lpars(window)) >= 2


def test_drop_folder(qtbot, window, tmp_path, smf_a, smf_b):
    folder = tmp_path / "data"
    folder.mkdir()
    for p in (smf_a, smf_b):
        (folder / Path(p).name).write_bytes(Path(p).read_bytes())
    _drop(window, [str(folder)])
    wait_loaded(qtbot, window)
    assert _lpars(window) == {"ZOSA", "ZOSB"}


def test_duplicate_open_is_noticed(qtbot, window, tmp_path, smf_a):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert window.open_files([smf_a]) == 0  # same path
    assert "already open" in window.statusBar().currentMessage()
    copy = tmp_path / "copy_of_a.gz"
    copy.write_bytes(Path(smf_a).read_bytes())
    window.open_files([str(copy)])  # same content under another name
    wait_loaded(qtbot, window)
    assert "already open" in window.statusBar().currentMessage()
    assert len(window.ws.files) == 1


def test_broken_file_becomes_a_finding(qtbot, window, broken):
    _drop(window, [broken])
    wait_loaded(qtbot, window)
    name = Path(broken).name
    files = {Path(f.file).name for f in window.health.model.findings}
    assert name in files
    assert window.health.stack.currentIndex() == 1
    assert name in window.statusBar().currentMessage()
    assert window.errors == []  # never a traceback dialog for bad data


def test_not_smf_at_all(qtbot, window):
    pdf = Path(__file__).resolve().parents[2] / "resources" / "samples" / "broken" / "report.pdf"
    if not pdf.exists():
        return
    window.open_files([str(pdf)])
    wait_loaded(qtbot, window)
    assert any(f.severity == "error" for f in window.health.model.findings)
    assert "report.pdf" in window.statusBar().currentMessage()
    assert window.errors == []


def test_recent_files_persist(qtbot, window, smf_a):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    assert settings.recent_files()[0] == smf_a
    window.fill_recent_menu()
    texts = [a.text() for a in window.actions_.recent_menu.actions()]
    assert smf_a in texts


def test_export_action(window):
    """File > Export (Ctrl+E) opens the export dialog (issue 10; see tests/ui/test_export_ui.py)."""
    export = window.actions_.export
    assert export.isEnabled()
    assert export.shortcut().toString() == "Ctrl+E"
    assert "PPTX" in export.toolTip() and "XLSX" in export.toolTip()
