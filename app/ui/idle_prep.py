"""What the window prepares while it is idle (issue 11, 23): the rows selections are sliced from.

Once the views are shown, the window's idle jobs compute every node's rows of the selection's level (then of the
LPAR, class and CEC levels, the CPU rows index and the CEC pools) for the current time window, then the CPU rows
of the selected LPARs, so that the next click is a slice.  The selection's own level comes first, in a job of
its own (its next click is a slice soonest); the selected LPARs' CPU rows are computed beside it on the second
core (each alone took one core while the other idled: issue 23, the cold open's all-idle time), the other
levels together in the next job.  A helper of MainWindow (``window.ws``, ``window.selection``,
``window.runner``, ``window._prep_tried``); no engine work on the GUI thread.
"""

from __future__ import annotations

from typing import Any


def prepare_next(window: Any) -> bool:
    """Submit the next idle job preparing rows for the window's selection; False when nothing is left to do."""
    ws, tried = window.ws, window._prep_tried
    if not hasattr(ws, "prepare_level"):
        return False
    from app.engine.prepared_levels import SLICED_LEVELS
    from app.ui.selection import BY_OF_LEVEL

    sel = window.selection.value
    todo = [BY_OF_LEVEL[lv] for lv in sel.levels()]
    own = set(todo)
    if not sel.has_window:
        todo += list(SLICED_LEVELS)
    todo.append("cpu")       # the index of every CPU's interval rows
    if not sel.has_window or "pool" in sel.levels():
        todo.append("pool")  # every CEC pool's rows (Workspace.prepare_pools): a pool picked next is a slice
    batch: list[Any] = []
    for by in dict.fromkeys(b for b in todo if b in (*SLICED_LEVELS, "cpu", "pool")):
        key = (by, str(sel.start), str(sel.end))
        if key in tried or ws.prepared(by, sel.start, sel.end):
            continue
        tried.add(key)
        batch.append(by)
        if len(batch) == 1 and by in own:   # the selection's own level alone, the CPU rows of its LPARs beside it
            batch += cpu_items(window, sel)
            break
    if batch and not own & set(batch):
        # the selection's own level prepared already (a big file's table after its part, window_partial.plan_job):
        # the CPU rows of its LPARs beside the other levels, not in a job of their own after them
        batch += cpu_items(window, sel)
    if not batch:   # then the CPU rows of the selected LPARs (a CPU picked under them next is a slice, issue 11)
        batch = cpu_items(window, sel)
    if not batch:
        return False
    # (render.compute_view: the levels together on two threads, Workspace.prepare_levels; CPU rows beside them)
    from app.ui.render import compute_view

    items = tuple(batch)
    window.runner.submit(lambda: (lambda: compute_view(ws, sel, [], prepare=items)))
    return True


def cpu_items(window: Any, sel: Any) -> list[tuple]:
    """``("cpus", cec, lpar)`` of the selected LPARs (of their classes and CPUs) whose CPU rows are neither prepared
    nor tried yet for the selection's window (marked tried)."""
    ws, tried = window.ws, window._prep_tried
    if not hasattr(ws, "prepare_cpus"):
        return []
    out = []
    for cec, lpar in dict.fromkeys(tuple(k[1:3]) for k in sel.nodes if k[0] in ("lpar", "class", "cpu")):
        key = ("cpus", cec, lpar, str(sel.start), str(sel.end))
        if key in tried or ws.cpus_prepared(cec, lpar, sel.start, sel.end):
            continue
        tried.add(key)
        out.append(("cpus", cec, lpar))
    return out
