"""The window's tabs and commands not needed for its first table: Compare (and Export), Profile, Rankings & peaks,
File > Open Dataset.  Their modules import pyqtgraph, the dataset layer and duckdb (0.2-0.5 s): the start installs
them once its first table is shown (issue 23), or when something asks for them before (``w.compare``: closing
the files while the first is read); every other window at once."""

from __future__ import annotations

from typing import Any

POLL_MS = 200      # how often the start looks for its first table
IDLE_POLLS = 3     # polls with nothing read nor computed: no table is coming (no files given)


def install_tabs(w: Any, later: bool = False) -> None:
    """Install the tabs now, or (``later``) once ``w``'s table has rows or nothing is being read nor computed."""
    if not later:
        install_now(w)
        return
    from PySide6.QtCore import QTimer

    timer = QTimer(w)
    quiet = [0]

    def poll() -> None:
        quiet[0] = quiet[0] + 1 if not w.busy() else 0
        if "_paint_watch" in w.__dict__:   # the first table's paint is awaited (app/ui/first_table.py): it first
            return
        if w.table.model.rowCount() > 0 or quiet[0] >= IDLE_POLLS or w.__dict__.get("tabs_installed"):
            timer.stop()
            timer.deleteLater()
            install_now(w)

    timer.timeout.connect(poll)
    timer.start(POLL_MS)


def install_now(w: Any) -> None:
    """Install the tabs now unless they are (the start's later install, or a first use before it)."""
    if w.__dict__.get("tabs_installed"):
        return
    w.tabs_installed = True
    from app.ui.compare_controller import install as install_compare  # issue 10: Compare tab, Export, pictures

    install_compare(w)
    from app.ui.views_controller import install as install_views  # issue 26: Profile, Rankings & peaks tabs

    install_views(w)
    from app.ui.dataset_view import install as install_dataset  # issue 13: File > Open Dataset...

    install_dataset(w)
