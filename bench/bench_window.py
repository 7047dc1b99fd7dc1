"""The window on a month of SMF 113 data: file to first table, tree, and node selection, with baselines.

Opens the month of bench_month.py (8 LPARs x 16 CPUs x 2,880 intervals, ~564 MB; generated under /tmp with the
sample writer if missing, reused otherwise) in the real MainWindow (QT_QPA_PLATFORM=offscreen) and prints:

* open_files() -> first table rows in the model and painted (the table viewport's first paint event after them,
  as the window's event loop delivers it; before 2026-11-27 a repaint forced by this script, which waited for the
  GIL behind the next view job).  A file over 64 MB is opened progressively (app/ui/window_partial.py): the first
  table is then its first part's, "rows shown are the first part: N of M intervals" says how many, and the time to
  the whole file's table (rows, painted) follows; -> the tree's CEC/LPAR levels (the first part's, for such a
  file); -> its class/CPU levels (inserted in the job
  after the first table); every view job's steps, including the idle jobs that prepare every node's rows of the
  LPAR/class/CEC levels (Workspace.prepare_level);
* selecting an LPAR, a processor class and a CPU in the tree -> table updated, -> timelines updated (drawn),
  once with the Table tab current (the timeline hidden) and once with the Timelines tab current;

each beside a same-run baseline: the engine calls alone on the same Workspace (``interval_frame`` for the table,
the same for the timeline's whole-range rows), measured after the window figures, and the table rows computed
from the intervals without the prepared level frames (what a selection cost before them).  The window's read + add
is set against the engine's own in a new process run after the window, and against the mean of that and of one
run before the window (the first process after a pause runs slower, whichever it is).  The machine is
shared: the load average is printed; compare figures of one run.  The bundled sample set is
measured the same way.  The workspace cache (app/cache.py) is on, in its own folder under /tmp: the first run
decodes (~9 s for the month), later runs read the cache (the README's "second open").

    python bench/bench_window.py [--intervals N] [--keep PATH] [--cold]   (--cold empties the cache folder first)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("NESTSCOPE_CACHE", "1")
os.environ.setdefault("NESTSCOPE_CACHE_DIR", str(Path(tempfile.gettempdir()) / "nestscope_bench_window_cache"))
CACHE_DIR = Path(os.environ["NESTSCOPE_CACHE_DIR"])    # the folder the window uses (--cold empties it)
os.environ.setdefault("NESTSCOPE_SETTINGS_FILE", str(Path(tempfile.gettempdir()) / "nestscope_bench_window.ini"))

import app.ui  # noqa: E402,F401  (pins None/True/False before Qt runs)
from PySide6.QtWidgets import QApplication  # noqa: E402


class Clock:
    """Timestamps of the window's steps, recorded by wrapping the views' update methods."""

    def __init__(self, w) -> None:
        self.marks: dict[str, float] = {}
        self.cpu: dict[str, float] = {}      # process CPU seconds at each mark (load disturbs them less than wall)
        self.w = w
        model = w.table.model
        model.modelReset.connect(self._table_reset)
        from PySide6.QtCore import QEvent, QObject

        clock = self

        class Paints(QObject):      # the table's first paint with rows, as the event loop delivers it
            def eventFilter(self, obj, event):      # noqa: N802 - Qt's name
                if event.type() == QEvent.Type.Paint and "table" in clock.marks:
                    clock.mark("table_painted")
                    if "table_full" in clock.marks:
                        clock.mark("table_full_painted")
                return False

        self._paints = Paints()
        w.table.view.viewport().installEventFilter(self._paints)
        self.outcomes: list = []
        self.jobs: list = []   # the ViewData of every view job, in order
        w.runner.done.connect(lambda v: self.jobs.append(v))
        self.spans: list[tuple[float, float, float]] = []   # (job started, job ended, shown) per view job
        import app.ui.main_window as mw

        real = mw.compute_view

        def timed(*a, **k):
            t = time.perf_counter()
            v = real(*a, **k)
            v.timings["_span"] = (t, time.perf_counter())
            return v
        mw.compute_view = timed
        import app.ui.render as render      # the first part's job (app/ui/progressive.py) calls it from there

        render.compute_view = timed
        w.runner.done.connect(lambda v: self.spans.append((*v.timings.get("_span", (0, 0)), time.perf_counter())))
        w.loader.file_read.connect(lambda o: (self.mark("file_read"), self.outcomes.append(o)))
        orig_roots = w.tree.set_roots
        orig_frame = w.timeline.set_frame
        orig_draw = getattr(w.timeline, "_draw", None)

        def set_roots(roots):
            orig_roots(roots)
            self.mark("tree")

        def set_frame(*a, **k):
            orig_frame(*a, **k)
            self.mark("timeline_frame")
            if orig_draw is None:   # before deferred drawing existed: set_frame drew
                self.mark("timeline_drawn")

        w.tree.set_roots = set_roots
        orig_deeper = getattr(w.tree, "add_deeper", None)
        if orig_deeper is not None:     # the tree's class and CPU levels, inserted after the first table
            def add_deeper(*a, **k):
                orig_deeper(*a, **k)
                self.mark("tree_deep")
            w.tree.add_deeper = add_deeper
        w.timeline.set_frame = set_frame
        if orig_draw is not None:
            def draw(*a, **k):
                orig_draw(*a, **k)
                self.mark("timeline_drawn")
            w.timeline._draw = draw

    def mark(self, name: str) -> None:
        if name not in self.marks:      # the first time after clear(); with the process's CPU seconds then
            self.marks[name] = time.perf_counter()
            self.cpu[name] = time.process_time()

    def _table_reset(self) -> None:
        n = self.w.table.model.rowCount()
        if n > 0:
            self.mark("table")
            if not self.w.ws.files:     # a big file's first part (app/ui/window_partial.py): the window's own
                self.marks.setdefault("part_rows", n)     # Workspace holds nothing yet
            else:
                self.mark("table_full")

    def clear(self) -> None:
        self.marks.clear()
        self.cpu.clear()


def pump_until(app, cond, timeout: float = 600.0) -> bool:
    """Run the event loop until ``cond()`` (looked at every 10 ms), as the application's own loop runs: idle in the
    OS between events.  (Before 2026-11-26's third session this spun processEvents() with a 1 ms sleep: the GUI
    thread then asked for the GIL a thousand times a second, which slowed the read and view jobs it measures.)"""
    from PySide6.QtCore import QEventLoop, QTimer

    app.processEvents()
    if cond():
        return True
    t_end = time.perf_counter() + timeout
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: loop.quit() if cond() or time.perf_counter() > t_end else None)
    timer.start()
    loop.exec()
    timer.stop()
    return bool(cond())


def tree_complete(w) -> bool:
    return any(n.level == "cpu" for n in w.tree.model.all_nodes())


def measure(app, label: str, paths: list[str]) -> None:
    from app.engine import Workspace
    from app.ui.frames import interval_frame
    from app.ui.main_window import MainWindow
    from app.ui.selection import Selection

    # the engine's own read and add (the read + add baseline) once before the window too: the first process after
    # a pause runs slower whichever it is (the machine's state: 1.47-1.68x in the window's runs that came first,
    # 0.86-1.29x in the runs after them, 2026-11-28), so the window is set against the baseline before and after it
    e_before = engine_read_add(paths)
    t = time.perf_counter()
    w = MainWindow(Workspace())
    t_made = time.perf_counter() - t
    w.resize(1440, 900)
    w.show()
    pump_until(app, lambda: w._painted)
    t_paint = time.perf_counter() - t
    from app.ui.timeline import TimelineView

    probe = TimelineView()
    t = time.perf_counter()
    probe.ensure_built() if hasattr(probe, "ensure_built") else None
    t_plots = time.perf_counter() - t
    probe.deleteLater()
    print(f"\nMainWindow() {t_made:.3f} s, -> first paint {t_paint:.3f} s; building the Timelines' plots (done when "
          f"the tab is first shown) takes {t_plots:.3f} s in this run; load average {os.getloadavg()[0]:.1f}")
    clock = Clock(w)
    w.tabs.setCurrentWidget(w.table)
    cpu: dict[str, float] = {}
    real_add = w.ws.add_all

    def add_all(*a, **k):      # the process's CPU seconds from open_files to the end of the add
        out = real_add(*a, **k)
        cpu.setdefault("added", time.process_time() - c0)
        return out
    w.ws.add_all = add_all
    c0 = time.process_time()
    t0 = time.perf_counter()
    w.open_files(paths)
    pump_until(app, lambda: "table" in clock.marks)
    # painted: the table viewport's first paint event after its rows were set (the window's own paint); when the
    # event loop has not painted it within 10 s, a forced repaint
    pump_until(app, lambda: "table_painted" in clock.marks, timeout=10.0)
    if "table_painted" not in clock.marks:
        w.table.view.viewport().repaint()
    t_painted = clock.marks.get("table_painted", time.perf_counter())
    pump_until(app, lambda: "table_full" in clock.marks)
    pump_until(app, lambda: "table_full_painted" in clock.marks, timeout=10.0)
    pump_until(app, lambda: not w.busy())
    t_idle, c_idle = time.perf_counter(), time.process_time()
    tree_t = clock.marks.get("tree", float("nan"))
    print(f"\n== {label}: {', '.join(Path(p).name for p in paths)}")
    print(f"open_files -> first table rows      {clock.marks['table'] - t0:7.3f} s (painted {t_painted - t0:.3f} s)")
    full_rows = w.table.model.frame
    body = int((~full_rows["_summary"]).sum()) if "_summary" in full_rows else len(full_rows)
    if "part_rows" in clock.marks:
        print(f"  rows shown are the first part: {int(clock.marks['part_rows'])} of {body} intervals "
              f"(the file still loading); the full table's rows {clock.marks['table_full'] - t0:.3f} s "
              f"(painted {clock.marks.get('table_full_painted', float('nan')) - t0:.3f} s)")
    else:
        print(f"  rows shown are the whole file's ({body} intervals): no first part")
    fr = clock.marks.get("file_read", float("nan"))
    print(f"open_files -> file read (worker)    {fr - t0:7.3f} s; then the first view job (add to the "
          f"workspace, tree, tree values, table rows) {clock.marks['table_full'] - fr:.3f} s")
    for i, (v, (a, b, c)) in enumerate(zip(clock.jobs[:8], clock.spans, strict=False)):
        steps = ", ".join(f"{k} {t:.3f}" for k, t in v.timings.items() if k != "_span")
        what = "preparing a level's rows (background)" if getattr(v, "background", False) else ""
        print(f"  view job {i + 1}: starts at {a - t0:.3f} s, worker {b - a:.3f} s ({steps}{what}); "
              f"shown on the GUI thread {c - b:.3f} s later")
    deep_t = clock.marks.get("tree_deep", tree_t)
    print(f"open_files -> tree CEC/LPAR levels  {tree_t - t0:7.3f} s; class/CPU levels {deep_t - t0:.3f} s "
          f"(CPU nodes: {tree_complete(w)})")
    tl = clock.marks.get("timeline_frame")
    print(f"open_files -> timeline frame set    {(tl - t0) if tl else float('nan'):7.3f} s; "
          f"drawn while hidden: {'timeline_drawn' in clock.marks}; all idle {t_idle - t0:.3f} s")
    c_deep = clock.cpu.get("tree_deep", clock.cpu.get("tree", float("nan")))
    print(f"  process CPU from open_files: to the class/CPU levels {c_deep - c0:.3f} s, "
          f"to all idle {c_idle - c0:.3f} s")
    print(f"rows in the first table: {w.table.model.rowCount()}")
    window_read = fr - t0
    whole = [v for v in clock.jobs if v.added]      # the first part's job (if any) adds nothing to the window's
    window_add = whole[0].timings.get("add", float("nan")) if whole else float("nan")

    nodes = list(w.tree.model.all_nodes())
    keys = {}
    for lvl in ("lpar", "class", "cpu"):
        cands = [tuple(n.key) for n in nodes if n.level == lvl and not (n.info or {}).get("partition_only")]
        if cands:
            keys[lvl] = cands[min(1, len(cands) - 1)] if lvl == "lpar" else cands[-1]
            if lvl == "lpar":
                keys["back"] = cands[0]
    results = []
    for tab in ("table", "timeline"):
        w.tabs.setCurrentWidget(w.table if tab == "table" else w.timeline)
        pump_until(app, lambda: not w.busy())
        for lvl, key in keys.items():
            if lvl == "back":
                continue
            for k in (key, keys["back"]):   # the node, then back to an LPAR (so the next is a change)
                clock.clear()
                t = time.perf_counter()
                w.tree.select_keys([k])
                pump_until(app, lambda: not w.busy())
                app.processEvents()
                t_done = time.perf_counter()
                if k == key:
                    tab_t = clock.marks.get("table", float("nan")) - t
                    drawn = clock.marks.get("timeline_drawn", float("nan")) - t
                    results.append((tab, lvl, key, tab_t, drawn, t_done - t))
    # baselines: the engine calls alone on the same workspace, after the window is idle
    # (the workspace's metric cache is emptied first: the window's own calls filled it)
    from app.ui.render import compute_view

    base = {}
    from collections import OrderedDict

    prepared = getattr(w.ws, "_lv", None)
    for lvl, key in keys.items():
        w.ws._mcache.clear()
        t = time.perf_counter()
        interval_frame(w.ws, Selection(nodes=(key,)), windowed=True, summary=True)
        t1 = time.perf_counter()
        interval_frame(w.ws, Selection(nodes=(key,)), windowed=False, summary=False)
        t2 = time.perf_counter()
        w.ws._mcache.clear()
        compute_view(w.ws, Selection(nodes=(key,)), [], table=True, timeline=True)
        t3 = time.perf_counter()
        old = float("nan")
        if prepared is not None:   # the node's rows computed from the intervals (no prepared level frames)
            w.ws._lv = OrderedDict()
            w.ws._mcache.clear()
            t4 = time.perf_counter()
            interval_frame(w.ws, Selection(nodes=(key,)), windowed=True, summary=True)
            old = time.perf_counter() - t4
            w.ws._lv = prepared
        base[lvl] = (t1 - t, t2 - t1, t3 - t2, old)
    # baseline of the first view: the same job (add the read results to a new workspace, tree, first table)
    # run alone on this thread, with the window idle
    outcomes = list(clock.outcomes)
    t = time.perf_counter()
    first = compute_view(Workspace(), Selection(), outcomes, table=True, timeline=False, values=False)
    print(f"baseline: the first view's job alone (add, tree, first table) {time.perf_counter() - t:.3f} s "
          f"({len(first.table)} rows)")
    # baseline of the tree's deeper levels and the level frames: the engine alone, without the cache (issue 23)
    eng = Workspace(cache=False)
    t = time.perf_counter()
    eng.add_all([o.result for o in outcomes])
    eng.tree(deep=False, values=False)
    t_first = time.perf_counter() - t
    t = time.perf_counter()
    eng.tree()
    t_deep = time.perf_counter() - t
    t = time.perf_counter()
    levels = ("lpar_interval", "class_interval", "cec_interval")
    eng.prepare_levels(levels) if hasattr(eng, "prepare_levels") else [eng.prepare_level(lv) for lv in levels]
    t_prep = time.perf_counter() - t
    print(f"baseline: the engine alone (no cache): add + CEC/LPAR levels {t_first:.3f} s, then the class/CPU levels "
          f"{t_deep:.3f} s, then the LPAR/class/CEC level frames {t_prep:.3f} s "
          f"(total {t_first + t_deep + t_prep:.3f} s); load average {os.getloadavg()[0]:.1f}")
    del eng
    print("selection (s)           table updated | timelines drawn | idle  || baseline engine: table rows | "
          "timeline rows | whole job | table rows computed from the intervals (no prepared level frame)")
    for tab, lvl, key, tab_t, drawn, idle in results:
        if lvl == "back":
            continue
        b = base[lvl]
        print(f"  {tab:8s} tab, {lvl:5s}  {tab_t:7.3f} ({tab_t / b[0]:4.1f}x) | {drawn:7.3f} | {idle:6.3f} || "
              f"{b[0]:7.3f} | {b[1]:7.3f} | {b[2]:7.3f} | {b[3]:7.3f}   {'/'.join(map(str, key[1:]))}")
    w.close()
    w.deleteLater()
    app.processEvents()
    # baseline: the engine's own read and add of the same files (bench_month's calls, no cache), in a new process
    # as the window's are the first of theirs (a later read in this process would reuse its warm heap)
    e = engine_read_add(paths)
    ratio = (window_read + window_add) / (e["read"] + e["add"])
    cpu_ratio = cpu["added"] / (e["cpu_read"] + e["cpu_add"])
    print(f"read + add: the window {window_read:.3f} + {window_add:.3f} = {window_read + window_add:.3f} s "
          f"({cpu['added']:.2f} CPU s of the process); the engine alone (same run, new process) {e['read']:.3f} + "
          f"{e['add']:.3f} = {e['read'] + e['add']:.3f} s ({e['cpu_read'] + e['cpu_add']:.2f} CPU s): {ratio:.2f}x "
          f"wall, {cpu_ratio:.2f}x CPU (goal <= 1.3x); load average {os.getloadavg()[0]:.1f}")
    both = [(x["read"] + x["add"], x["cpu_read"] + x["cpu_add"]) for x in (e_before, e)]
    mean_w, mean_c = sum(b[0] for b in both) / 2, sum(b[1] for b in both) / 2
    print(f"read + add against the engine's own before and after the window ({both[0][0]:.3f} and {both[1][0]:.3f} s, "
          f"mean {mean_w:.3f} s; CPU {both[0][1]:.2f} and {both[1][1]:.2f} s): "
          f"{(window_read + window_add) / mean_w:.2f}x wall, {cpu['added'] / mean_c:.2f}x CPU (goal <= 1.3x)")


ENGINE_CHILD = r"""
import json, sys, time
from app.engine import Workspace
from app.formats import read_file
need = Workspace(cache=False).counters_needed()
c, t = time.process_time(), time.perf_counter()
res = [read_file(p, counters=need) for p in sys.argv[1:]]
out = {"read": time.perf_counter() - t, "cpu_read": time.process_time() - c}
ws = Workspace(cache=False)
c, t = time.process_time(), time.perf_counter()
ws.add_all(res)
out.update({"add": time.perf_counter() - t, "cpu_add": time.process_time() - c})
print(json.dumps(out))
"""


def engine_read_add(paths: list[str]) -> dict:
    """The engine's read_file + Workspace.add_all of ``paths`` in a new process (wall and CPU seconds)."""
    import json
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(ROOT), NESTSCOPE_CACHE="0")
    p = subprocess.run([sys.executable, "-c", ENGINE_CHILD, *paths], capture_output=True, text=True, env=env,
                       check=True, cwd=str(ROOT))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=2880)
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--cold", action="store_true", help="empty the cache folder first (first decode)")
    ap.add_argument("--no-samples", action="store_true")
    args = ap.parse_args()
    path = args.keep or Path(tempfile.gettempdir()) / f"nestscope_month_{args.intervals}.smf"
    if not path.exists():
        from bench.bench_month import build

        print(f"writing {path} with the sample writer ...")
        build(path, args.intervals)
    if args.cold:
        shutil.rmtree(CACHE_DIR, ignore_errors=True)
    app = QApplication.instance() or QApplication([])
    print(f"month: {path} ({path.stat().st_size / 1e6:.0f} MB); cache {CACHE_DIR} "
          f"({'present' if CACHE_DIR.exists() and any(CACHE_DIR.iterdir()) else 'empty'}); "
          f"load average {os.getloadavg()[0]:.1f}")
    if not args.no_samples:
        samples = sorted(str(p) for p in (ROOT / "resources" / "samples").glob("after_*"))
        if samples:
            measure(app, "bundled sample set", samples)
    measure(app, "month", [str(path)])


if __name__ == "__main__":
    main()
