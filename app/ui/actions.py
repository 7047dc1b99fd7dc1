"""All window actions with their shortcuts, in one place, and the menus holding them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QMenu, QWidget

from app.ui import messages as M

if TYPE_CHECKING:
    from app.ui.main_window import MainWindow


# keys a text field keeps for itself (copy, paste, undo... in the field); every other shortcut of the window's
# actions works whatever has the focus
TEXT_KEYS = (QKeySequence.StandardKey.Copy, QKeySequence.StandardKey.Paste, QKeySequence.StandardKey.Cut,
             QKeySequence.StandardKey.SelectAll, QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo,
             QKeySequence.StandardKey.Delete)


class ShortcutGuard(QObject):
    """Lets the window's shortcuts through text fields: a QLineEdit claims Ctrl+E (end of line, as in Emacs) and
    other keys before shortcuts see them, so Ctrl+E did nothing while the tree's filter box had the focus (and it
    has the focus at start).  Installed on the application; it only refuses a text field's claim on a key that one
    of the window's actions has as its shortcut (its own editing keys excepted).

    It filters the events of the text field that has the focus only (the application's focus changes move it),
    not every event of the application: during a big file's read the GUI thread delivered some 4,600 events
    (the progress bar's and the table's paints, timers), each a call into Python here that had to take the GIL
    from the read (issue 23)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.editing = {k.toString() for std in TEXT_KEYS for k in QKeySequence.keyBindings(std)}
        self.editing |= {"Esc", "Return", "Enter"}
        self.watched: list[QObject] = []     # the focused text field (and a spin box's own line edit)

    def install(self, app: QApplication) -> None:
        """Follow the application's focus: the field that has it now, then each one that gets it."""
        app.focusChanged.connect(self._focus_moved)
        self._focus_moved(None, app.focusWidget())

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        for obj in self.watched:
            try:
                obj.removeEventFilter(self)
            except RuntimeError:        # deleted meanwhile
                pass
        self.watched = []
        if isinstance(new, (QLineEdit, QAbstractSpinBox)):
            self.watched = [new]
            if isinstance(new, QAbstractSpinBox) and new.findChild(QLineEdit) is not None:
                self.watched.append(new.findChild(QLineEdit))
            for obj in self.watched:
                obj.installEventFilter(self)

    def keys(self) -> set[str]:
        """The shortcuts of the window's actions now (actions added later count too), its editing keys aside."""
        return {k.toString() for a in self.window.actions() for k in a.shortcuts()} - self.editing

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:   # noqa: N802 - Qt's name
        # the focused field's events pass here: the cheap test first (event.type() makes an enum object)
        if not isinstance(obj, (QLineEdit, QAbstractSpinBox)) or event.type() != QEvent.Type.ShortcutOverride:
            return False
        if obj.window() is not self.window:
            return False
        if QKeySequence(event.keyCombination()).toString() in self.keys():
            event.ignore()      # not the field's: the shortcut map triggers the action
            return True
        return False


class Actions:
    """The QActions of the main window (created once, connected to window slots)."""

    def __init__(self, w: MainWindow) -> None:
        def act(text: str, slot=None, shortcut=None, tip: str = "", checkable: bool = False) -> QAction:
            a = QAction(text, w)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setToolTip(tip)
                a.setStatusTip(tip)
            a.setCheckable(checkable)
            if slot is not None:
                (a.toggled if checkable else a.triggered).connect(slot)
            w.addAction(a)  # shortcuts work even when the menu bar is hidden
            return a

        self.new = act(M.ACT_NEW, w.new_workspace, QKeySequence.StandardKey.New, M.ACT_NEW_TIP)
        self.open = act(M.ACT_OPEN, w.open_dialog, QKeySequence.StandardKey.Open, M.ACT_OPEN_TIP)
        self.close_files = act(M.ACT_CLOSE_FILES, w.close_files_dialog, None, M.ACT_CLOSE_FILES_TIP)
        self.sample = act(M.ACT_SAMPLE, w.open_sample, None, M.ACT_SAMPLE_TIP)
        self.formulas = act(M.ACT_FORMULAS, w.formula_sets_dialog, None, M.ACT_FORMULAS_TIP)
        self.open_folder = act(M.ACT_OPEN_FOLDER, w.open_folder_dialog, "Ctrl+Shift+O")
        self.save_workspace = act(M.ACT_SAVE_WS, w.save_workspace_dialog, QKeySequence.StandardKey.Save,
                                  M.ACT_SAVE_WS_TIP)
        self.open_workspace = act(M.ACT_OPEN_WS, w.open_workspace_dialog, "Ctrl+Shift+W", M.ACT_OPEN_WS_TIP)
        self.export = act(M.ACT_EXPORT, None, "Ctrl+E", M.ACT_EXPORT_TIP)
        self.export.setEnabled(False)
        self.quit = act(M.ACT_QUIT, w.close, QKeySequence.StandardKey.Quit)
        self.copy = act(M.ACT_COPY, w.copy, QKeySequence.StandardKey.Copy, M.ACT_COPY_TIP)
        self.find = act(M.ACT_FIND, w.focus_filter, QKeySequence.StandardKey.Find, M.ACT_FIND_TIP)
        self.window_from_rows = act(M.ACT_WINDOW_FROM_ROWS, w.window_from_table, "Ctrl+T", M.ACT_WINDOW_FROM_ROWS_TIP)
        self.reset_window = act(M.ACT_RESET_WINDOW, w.clear_window, "Ctrl+Shift+T", M.ACT_RESET_WINDOW_TIP)
        self.reset_window.setShortcuts([QKeySequence("Ctrl+Shift+T"), QKeySequence("Esc")])  # Esc: the old one
        self.clear_window = self.reset_window
        self.dark = act(M.ACT_DARK, w.set_dark, "Ctrl+Shift+D", checkable=True)
        self.help = act(M.ACT_HELP, w.show_glossary, QKeySequence.StandardKey.HelpContents)
        self.about = act(M.ACT_ABOUT, w.show_about)
        self.guide = act(M.ACT_GUIDE, w.show_guide)
        self.recent_menu = QMenu(M.ACT_RECENT, w)
        self.recent_menu.aboutToShow.connect(w.fill_recent_menu)
        self.guard = ShortcutGuard(w)
        self.guard.install(QApplication.instance())

    def build_menus(self, w: MainWindow) -> None:
        bar = w.menuBar()
        file = bar.addMenu(M.MENU_FILE)
        file.addAction(self.new)
        file.addAction(self.open)
        file.addAction(self.open_folder)
        file.addMenu(self.recent_menu)
        file.addAction(self.close_files)
        file.addSeparator()
        file.addAction(self.open_workspace)
        file.addAction(self.save_workspace)
        file.addSeparator()
        file.addAction(self.export)
        file.addAction(self.formulas)
        file.addSeparator()
        file.addAction(self.quit)
        edit = bar.addMenu(M.MENU_EDIT)
        edit.addAction(self.copy)
        edit.addAction(self.find)
        view = bar.addMenu(M.MENU_VIEW)
        view.addAction(self.window_from_rows)
        view.addAction(self.reset_window)
        view.addAction(self.dark)
        self.view_menu = view
        helpm = bar.addMenu(M.MENU_HELP)
        helpm.addAction(self.guide)
        helpm.addAction(self.sample)
        helpm.addAction(self.help)
        helpm.addAction(self.about)
        # the export tooltip must show in the menu too
        file.setToolTipsVisible(True)
