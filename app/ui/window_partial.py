"""The window's progressive open (issue 23): a big file's first part on screen while the whole file is read.

The read worker hands over the first part of a big file (:mod:`app.ui.progressive`) when the window is empty.
It is added to a Workspace of its own (never the window's), off the GUI thread, and shown: the tree's CEC and
LPAR levels, the first LPAR's table of the intervals the whole file gives unchanged
(:func:`app.ui.progressive.final_rows`), and a status line saying the file is still loading, with its
progress.  Its findings are not shown (they come with the whole file).  The whole file then comes the usual
way (today's path) over the part on screen, with no empty table between: the selection, the table's scroll
position and current row and the current tab are kept.  A read cancelled (or failed) while the part is shown
takes the part off the screen: nothing of it was added to the window's Workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtWidgets import QAbstractItemView

from app.ui import messages as M
from app.ui.frames import N_FROZEN

LOADING_PART = "Loading {name} - {shown}"   # (the job's progress bar shows how much of the file is read)
SHOWN = "{start} to {end} shown"
NONE_SHOWN = "no interval final yet"


@dataclass
class Partial:
    """The first part the window shows (or is computing) for ``path``."""

    path: str
    part: Any                 # progressive.FirstPart
    shown: bool = False       # its view is on screen
    superseded: bool = False  # the whole file has been read: its view comes next
    text: str = ""            # the shown range, for the status line
    pct: int = 0


def install(w: Any) -> None:
    """Hook the progressive open into window ``w`` (a MainWindow)."""
    w._partial = None
    w._table_first = False      # the whole file's table comes before the whole tree's values (plan_job)
    w.loader.progressive = lambda: wants_part(w)
    w.loader.file_part.connect(lambda part: on_part(w, part))
    w.loader.file_progress.connect(lambda path, f: on_progress(w, path, f))
    w.loader.file_read.connect(lambda outcome: on_read(w, outcome))
    w.loader.job_ended.connect(lambda path: on_ended(w, path))


def wants_part(w: Any) -> bool:
    """A first part is useful only to an empty window with nothing else being read or computed."""
    return not w.ws.files and not w._pending and not w.loader.jobs and not w.runner.busy() and not w._loaded


def on_part(w: Any, part: Any) -> None:
    if not wants_part_now(w):
        return
    w._partial = state = Partial(part.path, part)
    sets, keep, epoch = w.ws.formula_sets, getattr(w, "keep_implausible", False), w._epoch

    def job():
        from app.ui.progressive import part_view

        view = part_view(part, sets, keep)
        view.epoch = epoch
        view.partial = state
        return view
    w.runner.submit(lambda: job)


def wants_part_now(w: Any) -> bool:
    return not w.ws.files and not w._pending and not w.runner.busy() and not w._loaded


def show(w: Any, view: Any) -> None:
    """Show a first part's view (GUI thread), unless the read ended or the window moved on meanwhile."""
    state = view.partial
    if state is not w._partial or state.superseded or w._loaded or w.ws.files:
        return
    state.shown = True
    if view.roots is not None:
        w.tree.set_roots(view.roots)
        if view.roots and w.isVisible():
            w._size_dock() if not w._dock_sized else w._grow_dock()
    if not w.selection.value.nodes and view.selection.nodes:
        w.selection.blockSignals(True)
        w.selection.set_nodes(view.selection.nodes)
        w.selection.blockSignals(False)
    w.tree.select_keys(w.selection.value.nodes, emit=False)
    table = view.table
    if table is not None and len(table):
        w.table.model.quality_details = view.quality_details
        _set_frame_once(w, table, view.columns)
        state.text = SHOWN.format(start=_when(table["interval_end"].min(), True),
                                  end=_when(table["interval_end"].max(), False))
    else:
        w.table.set_placeholder(M.LOADING)
        state.text = NONE_SHOWN
    state.pct = max(state.pct, int(state.part.fraction * 100))
    _status(w, state)


def _set_frame_once(w: Any, table: pd.DataFrame, columns: Any) -> None:
    """The part's rows set on the table, painted once: the table's column widths, set to its rows', each start a
    zero timer of the view's (QTableView repaints its viewport from the first column resized onwards when it
    fires), which fired after the first paint and painted both panes again (0.07-0.1 CPU s of the GUI thread,
    most of it the cells' Python data() calls, taken from the whole file's read beside it: issue 23).  The
    table's updates stay off until those timers have fired (a timer of 1 ms, after them), then one paint."""
    from PySide6.QtCore import QTimer

    t = w.table
    if not t.updatesEnabled():
        t.model.set_frame(table, columns)
        return
    t.setUpdatesEnabled(False)
    try:
        t.model.set_frame(table, columns)
    finally:
        QTimer.singleShot(1, t, lambda: t.setUpdatesEnabled(True))


def _when(t: Any, full: bool) -> str:
    ts = pd.Timestamp(t)
    return ts.strftime("%Y-%m-%d %H:%M" if full else "%m-%d %H:%M")


def _status(w: Any, state: Partial) -> None:
    w.statusBar().showMessage(LOADING_PART.format(name=Path(state.path).name, shown=state.text), 0)


def on_progress(w: Any, path: str, fraction: float) -> None:
    state = w._partial
    if state is None or state.path != path or not state.shown or state.superseded:
        return
    pct = int(fraction * 100)
    if pct > state.pct:
        state.pct = pct
        _status(w, state)


def on_read(w: Any, outcome: Any) -> None:
    state = w._partial
    if state is not None and state.path == outcome.path:
        state.superseded = True          # the whole file's view replaces the part's (before_full / after_full)


def on_ended(w: Any, path: str) -> None:
    """A read ended: cancelled or failed before its whole file came, the part leaves the screen."""
    state = w._partial
    if state is None or state.path != path or state.superseded:
        return
    w._partial = None
    if state.shown:
        from app.ui.render import ViewData
        from app.ui.selection import Selection

        w.selection.blockSignals(True)
        w.selection.set_nodes([])
        w.selection.blockSignals(False)
        w.table.model.set_frame(w.table.model.frame.iloc[0:0], w.table.model.columns)
        w._show_view(ViewData(selection=Selection(), roots=[], findings=[], files=[], loaded=False))


def part_on_screen(w: Any) -> bool:
    """A big file's first part is on screen (its table and the tree's CEC and LPAR levels)."""
    state = getattr(w, "_partial", None)
    return state is not None and state.shown


def plan_job(w: Any, added: list, table: bool, deeper: Any) -> tuple[bool, Any, bool]:
    """The (table, deeper, prepare_table) of the window's next view job (MainWindow._make_job, render.compute_view).
    The whole file read while its part is on screen: its first job adds it and computes the tree's levels (CEC
    and LPAR, then class and CPU: ``deeper="levels"``) without the table, the part's table staying on screen; the
    next job computes the whole file's table alone, sliced from its level's rows of every node (prepared then,
    which the idle jobs would do next: the table computed from the intervals was 0.3 CPU s more), the whole
    tree's values follow it (issue 23: the part's table is the first table, every tree level ready came after
    the whole file's table and a round trip to the GUI thread: 0.3-0.5 s later)."""
    if added and part_on_screen(w):
        w._want_table, w._want_deeper, w._table_first = True, "whole", True
        return False, "levels", False
    if getattr(w, "_table_first", False) and table:
        w._table_first = False
        if deeper == "whole":                # the whole tree's values after the table
            w._want_deeper = "whole"
            return table, False, True
        return table, deeper, True
    return table, deeper, False


def keep_place(w: Any, view: Any) -> Any:
    """Before the whole file's first view with a table replaces the part on screen: what to restore after it
    (the table's top and current rows by their interval), or None.  The whole file's first job without a table
    (:func:`plan_job`) leaves the part's table on screen until the next."""
    state = w._partial
    if state is None or not state.shown:
        return None
    readable = any(getattr(o.result, "readable", True) for o in view.added)
    if view.added and view.table is None and readable:
        w._part_replaced = True     # the first table on screen was the part's (app/ui/first_table.py)
        return None
    if not view.added and not (state.superseded and view.table is not None and w.ws.files):
        return None
    w._partial = None
    w._part_replaced = True     # the first table on screen was the part's (app/ui/first_table.py)
    t = w.table
    if view.table is None or (view.added and not readable):
        # the whole read gave nothing to show (it failed): the part's rows and its LPAR's selection go
        from app.ui.selection import Selection

        w.selection.blockSignals(True)
        w.selection.set_nodes([])
        w.selection.blockSignals(False)
        view.selection, view.table = Selection(), None
        t.model.set_frame(t.model.frame.iloc[0:0], t.model.columns)
        return None
    top, cur = t.view.rowAt(0), t.view.currentIndex().row()
    ends = []
    for row in (top, cur):
        ends.append(t.model.frame["interval_end"].iloc[t.model.frame_row(row)]
                    if 0 <= row < t.model.rowCount() and "interval_end" in t.model.frame else None)
    return top, cur, ends, t.view.horizontalScrollBar().value()


def restore_place(w: Any, place: Any) -> None:
    """The table's top and current rows (and its column scroll) of the part, on the whole file's rows: the rows
    before them are the whole file's summary rows more, the rest the same intervals in the same order."""
    if place is None:
        return
    top, cur, ends, hval = place
    t = w.table
    shift = int(t.model._summary.sum()) if len(t.model._summary) else 0
    for row, end, kind in ((top, ends[0], "top"), (cur, ends[1], "cur")):
        if row < 0 or end is None:
            continue
        new = row + shift
        while new >= t.model.rowCount() and t.model.canFetchMore():
            t.model.fetchMore()
        if new >= t.model.rowCount() or t.model.frame["interval_end"].iloc[t.model.frame_row(new)] != end:
            continue
        index = t.model.index(new, 0)
        if kind == "top":
            if row == 0:        # the part was not scrolled: the whole file's table from its top (summary rows)
                continue
            t.view.scrollTo(t.model.index(new, N_FROZEN), QAbstractItemView.ScrollHint.PositionAtTop)
        else:
            t.view.setCurrentIndex(index)
            t.frozen.selectRow(new)
    t.view.horizontalScrollBar().setValue(hval)
