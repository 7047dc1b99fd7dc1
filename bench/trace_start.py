"""Where the window's start with the demo spends its time: one start (``nestscope`` with no file: the bundled sample
set) with its steps timed, on a timeline from the process' start (issue 23).

The child does what bench_start.py's child does (``gui.run`` on an empty cache folder, then again on the cache it
wrote) with the window's build, the reads (one line per file, named), the view jobs (what each computes), the
engine steps they call (add, tree, metrics, window metrics) and the window's showing of a view wrapped: one line per
call of over 3 ms (every read): start, end, length and thread.  Marks: the imports, the first paint, the views
built, the first table (rows in the interval table) and all idle, as bench_start.py counts them.  ``--profile
FILE``: a cProfile of the first view job (on its own thread) in FILE.

    QT_QPA_PLATFORM=offscreen python bench/trace_start.py [--root CHECKOUT] [--profile /tmp/job.prof]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, sys, threading, time
T0 = float(sys.argv[1])
PROFILE = sys.argv[2] if len(sys.argv) > 2 else ""
CALLS, MARKS = [], {}
def now(): return time.time() - T0
def wrap(owner, name, note=lambda a, k: ""):
    real = getattr(owner, name)
    label = f"{getattr(owner, '__name__', owner)}.{name}".replace("app.", "")
    def timed(*a, **k):
        t = now()
        try:
            return real(*a, **k)
        finally:
            CALLS.append((t, now(), label + note(a, k), threading.current_thread().name))
    setattr(owner, name, timed)
import argparse
from app.commands import gui
from app.ui import main_window as mw
MARKS["imports"] = now()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
wrap(mw.MainWindow, "_build")
wrap(mw, "_load_views")
real_load = mw._load_views
def load_views():
    real_load()
    if "views imported" in MARKS:
        return
    MARKS["views imported"] = now()
    from app import cache
    from app.analysis import reading
    from app.engine import workspace
    from app.ui import render, table_model, tree_panel
    wrap(reading, "read_one", lambda a, k: " " + os.path.basename(a[0]))
    real_cv = render.compute_view
    def compute_view(*a, **k):
        if PROFILE and "profiled" not in MARKS:
            import cProfile
            MARKS["profiled"] = now()
            pr = cProfile.Profile()
            try:
                return pr.runcall(real_cv, *a, **k)
            finally:
                pr.dump_stats(PROFILE)
        return real_cv(*a, **k)
    render.compute_view = compute_view
    wrap(render, "compute_view", lambda a, k: f" (added {len(a[2])}; " + ", ".join(
        f"{n} {k[n]}" for n in ("table", "timeline", "values", "deeper", "partitions", "roots") if n in k) + ")")
    mw.compute_view = render.compute_view
    for n in ("add_all", "tree", "window_metrics", "metrics", "coverage_frames"):
        wrap(workspace.Workspace, n)
    wrap(cache, "read_with_digest")
    wrap(table_model.IntervalTableModel, "set_frame")
    for n in ("_apply", "_show_view"):
        wrap(mw.MainWindow, n)
    for n in ("set_roots", "add_deeper", "set_values"):
        wrap(tree_panel.TreePanel, n)
mw._load_views = load_views
paint = mw.MainWindow.paintEvent
def painted(self, event):
    paint(self, event)
    if "first paint" not in MARKS:
        MARKS["first paint"] = now()
        timer = QTimer(self)
        timer.timeout.connect(lambda: poll(self))
        timer.start(5)
def poll(w):
    if getattr(w, "table", None) is None:
        return
    MARKS.setdefault("views built", now())
    if w.table.model.rowCount() > 0:
        MARKS.setdefault("first table", now())
        if not w.busy() and getattr(w, "tabs_installed", True):
            MARKS.setdefault("all idle", now())
            QApplication.instance().quit()
mw.MainWindow.paintEvent = painted
QTimer.singleShot(120_000, lambda: QApplication.instance().quit())
gui.run(argparse.Namespace(files=[], no_sample=False, formulas=None))
for k, v in sorted(MARKS.items(), key=lambda kv: kv[1]):
    print(f"  mark {v:7.3f}  {k}")
for t, e, lab, th in sorted(CALLS):
    if e - t > 0.003 or "read_one" in lab:
        print(f"  {t:7.3f} {e:7.3f} {e - t:6.3f}  {th[:16]:16s} {lab}")
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout traced (default: this one)")
    ap.add_argument("--profile", default="", help="cProfile of the first start's first view job to this file")
    args = ap.parse_args()
    root = args.root.resolve()
    work = Path(tempfile.mkdtemp(prefix="nestscope_trace_start_"))
    env = dict(os.environ, PYTHONPATH=str(root), NESTSCOPE_CACHE="1", NESTSCOPE_CACHE_DIR=str(work / "cache"),
               NESTSCOPE_SETTINGS_FILE=str(work / "start.ini"))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        for name, prof in (("first start (empty cache)", args.profile), ("second start (cache)", "")):
            t0 = time.time()
            p = subprocess.run([sys.executable, "-c", CHILD, repr(t0), *([prof] if prof else [])], cwd=root,
                               env=env, capture_output=True, text=True, check=True)
            (work / "start.ini").unlink(missing_ok=True)
            print(f"{root.name}: {name}, load average {os.getloadavg()[0]:.1f}; s from the process' start "
                  "(start, end, length, thread):")
            print("\n".join(line for line in p.stdout.splitlines() if line.startswith("  ")), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
