"""What the views show, computed from the Workspace off the GUI thread.  No Qt here.

``compute_view`` is the only function that touches the Workspace for the
views; it runs in the SerialRunner, one call at a time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from app.ui import messages as M
from app.ui.frames import FROZEN, ColDef, generations_of, interval_frame, is_summary, metric_columns
from app.ui.selection import BY_OF_LEVEL, Selection


@dataclass
class ViewData:
    """An immutable snapshot for the views (models keep it; the Workspace is not read again)."""

    selection: Selection
    roots: list[Any] | None = None         # None: the tree did not change
    findings: list[Any] | None = None
    files: list[str] | None = None
    loaded: bool = False
    table: pd.DataFrame | None = None
    columns: list[ColDef] = field(default_factory=list)
    timeline: pd.DataFrame | None = None   # None: the plotted series did not change
    quality_details: dict[str, str] = field(default_factory=dict)
    added: list[Any] = field(default_factory=list)  # LoadOutcomes added by this job
    smt: tuple[pd.DataFrame, pd.DataFrame] | None = None  # ws.smt by type, by core (None: not computed)
    tree_values: dict[tuple, dict] | None = None  # node key -> busy/cpi over the window (None: not computed)
    cec_stack: pd.DataFrame | None = None  # the selected CEC's LPARs' busy over time (partition_data.cec_stack)
    partition: Any = None                  # PartitionFacts of a selected partition-only LPAR
    partition_source: str = ""             # the file(s) its partition data came from
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step of compute_view (bench_window)
    deeper: list[Any] | None = None        # the whole tree, for the class and CPU levels shown after the rest
    background: bool = False               # a job preparing the engine (nothing to show)
    epoch: int = 0                         # the window's Workspace it was computed from (MainWindow._epoch)


def first_lpar(roots: list[Any]) -> tuple | None:
    """The first LPAR with CPU data, in tree order."""
    for cec in roots:
        for node in cec.children:
            if node.level == "lpar" and not (node.info or {}).get("partition_only"):
                return tuple(node.key)
    return None


def partition_only_keys(roots: list[Any]) -> set[tuple]:
    return {tuple(n.key) for cec in roots for n in cec.children
            if n.level == "lpar" and (n.info or {}).get("partition_only")}


def tree_values(ws: Any, start: Any, end: Any) -> dict[tuple, dict]:
    """Busy (LPARCPU: % of one CPU summed over the CPUs) and CPI of every tree node over ``(start, end]``.

    The CEC, LPAR and class values come from the same ``ws.metrics`` rows as the table's summary row, so the
    tree and the table agree; without a window the CPUs keep the tree's own whole-range values.  Partition-only
    LPARs get the D0R16 busy in the same unit as LPARCPU (see :mod:`app.ui.partition_data`)."""
    from app.ui.partition_data import busy_series

    out: dict[tuple, dict] = {}
    windowed = start is not None and end is not None
    if (ws.has_intervals() if hasattr(ws, "has_intervals") else len(ws.intervals)):
        for by, cols in (("cec", ["cec"]), ("lpar", ["cec", "lpar"]), ("class", ["cec", "lpar", "class"])):
            m = ws.metrics(by=by, start=start, end=end)
            if not len(m):
                continue
            keys = zip(*(m[c].astype(str) for c in cols), strict=True)
            for key, busy, cpi in zip(keys, _values(m, "LPARCPU"), _values(m, "CPI"), strict=True):
                out[(by, *key)] = {"busy": busy, "cpi": cpi}
        m = ws.metrics(by="cpu", start=start, end=end, summary=True) if windowed else pd.DataFrame()
        if len(m):
            m = m.loc[is_summary(m)]
            keys = zip(m["cec"].astype(str), m["lpar"].astype(str), m["class"].astype(str),
                       m["cpu"].astype(int), strict=True)
            for key, busy, cpi in zip(keys, _values(m, "LPARCPU"), _values(m, "CPI"), strict=True):
                out[("cpu", *key)] = {"busy": busy, "cpi": cpi}
        from app.engine.node_rows import extra_values   # the CEC pools and SMT cores

        out.update(extra_values(ws, start, end))
    b = busy_series(ws.partitions)
    if len(b):
        t = pd.to_datetime(b["time"], utc=True)
        if windowed:
            b = b.loc[((t > _utc(start)) & (t <= _utc(end))).to_numpy()]
        for (cec, lpar), g in b.groupby(["cec", "lpar"], sort=False):
            key = ("lpar", str(cec), str(lpar))
            if key not in out:   # LPARs with counters keep LPARCPU
                busy = g["busy"].mean()
                out[key] = {"busy": None if pd.isna(busy) else float(busy), "cpi": None, "partition": True}
    return out


def _utc(t: Any) -> pd.Timestamp:
    t = pd.Timestamp(t)
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def _values(m: pd.DataFrame, col: str) -> list:
    if col not in m.columns:
        return [None] * len(m)
    return [None if pd.isna(v) else float(v) for v in m[col].tolist()]


def _partition_parts(ws: Any, sel: Selection, roots: list[Any] | None, out: ViewData) -> None:
    """Facts of a selected partition-only LPAR, and the stacked busy of a selected CEC."""
    from app.ui.partition_data import cec_stack, facts

    # the LPAR level is all this reads (its partition-only LPARs): the whole tree once it is built, else its CEC
    # and LPAR levels alone (a big file's table comes before the whole tree's values: app/ui/window_partial.py)
    roots = roots if roots is not None else list(ws.tree(deep=False, values=False))
    only = partition_only_keys(roots)
    for key in sel.nodes:
        if key in only and out.partition is None:
            out.partition = facts(ws.partitions, key[1], key[2], sel.start, sel.end)
            out.partition_source = ", ".join(sorted({Path(r.file).name for r in ws.files
                                                     if r.partitions is not None and len(r.partitions)}))
        if key[0] == "cec" and out.cec_stack is None:
            stack = cec_stack(ws, key[1])
            stack.attrs["cec"] = key[1]
            out.cec_stack = stack


def compute_view(ws: Any, sel: Selection, added: list[Any], table: bool = True, timeline: bool = True,
                 smt: bool = False, values: bool | None = None, deep: bool = True, deeper: bool = False,
                 prepare: tuple[str, ...] = (), partitions: bool = True, roots: bool = False,
                 summary: bool = True, prepare_table: bool = False) -> ViewData:
    """Add ``added`` read outcomes to ``ws`` and compute what the views need for ``sel``.

    ``values``: the tree's Busy/CPI values (None: when files were added or the table is computed; False lets
    the first table come before them, a later job computing them).  ``deep=False``: a new tree has its CEC and
    LPAR levels only; ``deeper``: the whole tree (its class and CPU levels) in ``ViewData.deeper``,
    ``"levels"``: without the CEC, LPAR and pool values (``Workspace.tree(levels_first=True)``).
    ``partitions=False``: a new tree without the partition data (no partition-only LPARs: the window's first
    table of a load, more files following; ``Workspace.tree(partitions=False)``); ``roots``: the tree's roots
    (CEC and LPAR levels) again though no file was added (the whole tree after such a first one).
    ``summary``: the table with its nodes' whole-window summary rows (False: its interval rows alone, those of a
    big file's first part, whose summary rows would not be the file's).
    ``prepare_table``: the table's level prepared (every node's rows, ``Workspace.prepare_level``) and the
    table sliced from it, the idle job that would prepare it later left with nothing to do (without: prepared
    only when its frame is in the workspace cache, the table computed from the intervals otherwise).
    ``prepare``: only prepare these levels' rows of every node for the selection's window
    (``Workspace.prepare_level``; an item ``("cpus", cec, lpar)``: the CPU rows of that LPAR,
    ``Workspace.prepare_cpus``), so that later selections are sliced from them."""
    out = ViewData(selection=sel, added=list(added))
    if prepare:
        out.background = True
        levels = [by for by in prepare if not isinstance(by, tuple)]
        calls = []

        def prepare_levels() -> None:
            if len(levels) > 1 and hasattr(ws, "prepare_levels"):     # computed together, on two threads
                ws.prepare_levels(levels, sel.start, sel.end)
            elif hasattr(ws, "prepare_level"):
                for by in levels:
                    ws.prepare_level(by, sel.start, sel.end)
        if levels:
            calls.append(prepare_levels)
        for by in prepare:     # ("cpus", cec, lpar): the CPU rows of one LPAR, beside the levels (issue 23)
            if isinstance(by, tuple) and hasattr(ws, "prepare_cpus"):
                calls.append(lambda by=by: ws.prepare_cpus(by[1], by[2], sel.start, sel.end))
        if len(calls) > 1:     # the levels (the longest) first: the second thread takes the CPU rows
            from app.engine.parallel import parallel_map

            parallel_map(lambda call: call(), calls)
        elif calls:
            calls[0]()
        return out
    clock = [time.perf_counter()]

    def step(name: str) -> None:
        now = time.perf_counter()
        out.timings[name] = out.timings.get(name, 0.0) + now - clock[0]
        clock[0] = now

    if added:
        results = [o.result for o in added]
        if hasattr(ws, "add_all"):
            ws.add_all(results)
        else:
            for r in results:
                ws.add(r)
        step("add")
    out.loaded = bool(ws.files)
    if added or not sel.nodes or roots:
        # the first job of a load: nodes and CPU counts only; busy and CPI come with the tree's values later
        out.roots = list(ws.tree(deep=deep and not roots, values=values is not False, partitions=partitions))
        out.findings = list(ws.findings)
        out.files = [r.file for r in ws.files]
        if not sel.nodes and (first := first_lpar(out.roots)):
            sel = Selection(nodes=(first,), start=sel.start, end=sel.end)
            out.selection = sel
            table = True   # the timeline follows in its own job when asked for (the first table first)
        step("tree")
    if not out.loaded:
        return out
    if deeper and out.loaded:
        out.deeper = list(ws.tree(levels_first=deeper == "levels"))
        step("deeper tree")
    if (added or table) if values is None else values:
        out.tree_values = tree_values(ws, sel.start, sel.end)
        step("tree values")
    if table or timeline:
        _partition_parts(ws, sel, out.roots if out.roots is not None else out.deeper, out)
        step("partitions")
    if table:
        if not sel.has_window and hasattr(ws, "prepare_level"):   # every node's rows kept in the workspace cache
            for level in sel.levels():
                ws.prepare_level(BY_OF_LEVEL[level], cached_only=not prepare_table)
        df = interval_frame(ws, sel, windowed=True, summary=summary)
        out.table = df
        out.columns = [*FROZEN, *metric_columns(ws, generations_of(df))]
        out.quality_details = {f.code: f.message for f in ws.findings}
        out.quality_details.update(M.QUALITY_CODE_TIPS)    # one interval's finding would mislead on other rows
        step("table")
    if timeline:
        out.timeline = interval_frame(ws, Selection(nodes=sel.nodes), windowed=False, summary=False)
        step("timeline")
    if smt and hasattr(ws, "smt"):
        from app.ui.smt import smt_frames

        out.smt = smt_frames(ws, sel)
    return out
