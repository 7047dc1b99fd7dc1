"""The window's start with the demo (the bundled sample set): process start -> first paint -> first table.

Each run is a new process doing what ``nestscope`` (the ``gui`` command) does on a first start: the window, then
the sample set (``start_plan``).  The child records when the main window is first painted and when the interval
table first has rows; the parent prints them from the moment it started the process.  Runs: a first start with an
empty cache folder, then a second start (the sample set from the workspace cache).

The window paints first and builds its views after that paint (``MainWindow(shell=True)``, issue 23): "views
built" is when the child first saw them (the paint itself on a branch that builds them before showing the window).
"views built -> first table" is the part the start's reads and view jobs take (the imports before it vary most
with the machine's load), in wall and in the process' CPU seconds.

Baselines in the same run: a process that only imports what the start imports (Qt, pandas, the window's modules)
and creates the QApplication, and an empty Python process.  The machine may be shared: the load average is
printed with every figure (``os.getloadavg()``).

    QT_QPA_PLATFORM=offscreen python bench/bench_start.py [--runs N]
    QT_QPA_PLATFORM=offscreen python bench/bench_start.py --runs 3 --against /tmp/int9   (A B A B ..., medians)
    (on a real display: xvfb-run -a -s "-screen 0 1440x900x24" env QT_QPA_PLATFORM=xcb python bench/bench_start.py)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
import app as _app      # the checkout measured (the child runs in its folder), not another one on sys.path
assert os.path.realpath(_app.__file__).startswith(os.path.realpath(os.getcwd()) + os.sep), _app.__file__
marks, cpu = {}, {}
def mark(name):
    marks.setdefault(name, time.time())
    cpu.setdefault(name, time.process_time())   # the process' CPU seconds so far (every thread): load disturbs it less
if sys.argv[1] == "imports":
    from PySide6.QtWidgets import QApplication
    import app.commands.gui
    from app.ui.main_window import MainWindow
    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    if len(sys.argv) > 2:    # every module the built window needs (the start imports some after its first paint)
        import app.analysis, app.ui.main_window as mw
        getattr(mw, "_load_views", lambda: None)()
    mark("imports")
    print(json.dumps(marks))
    raise SystemExit(0)
import argparse
from app.commands import gui
from app.ui import main_window as mw
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

mark("imports")
paint = mw.MainWindow.paintEvent

def painted(self, event):
    paint(self, event)
    if "paint" not in marks:
        mark("paint")
        timer = QTimer(self)
        timer.timeout.connect(lambda: poll(self))
        timer.start(5)

def poll(w):
    if getattr(w, "table", None) is None:   # a shell window: its views are built after its first paint
        return
    mark("built")
    if w.table.model.rowCount() > 0:
        mark("table")
        if not w.busy() and getattr(w, "tabs_installed", True):   # (the tabs the start installs after its table)
            mark("idle")
            QApplication.instance().quit()

mw.MainWindow.paintEvent = painted
QTimer.singleShot(120_000, lambda: QApplication.instance().quit())
gui.run(argparse.Namespace(files=[], no_sample=False, formulas=None))
marks.update({k + "_cpu": v for k, v in cpu.items()})
print(json.dumps(marks))
"""


def span(r: dict, kind: str = "") -> float:
    """Views built -> first table (the reads and view jobs of the start, without its imports: those vary most
    with the machine's load), wall seconds or (``kind="_cpu"``) the process' CPU seconds."""
    return r.get("table" + kind, float("nan")) - r.get("built" + kind, r.get("paint" + kind, float("nan")))


def child(mode: str, env: dict, *more: str) -> dict:
    t, ru = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # run in the checkout measured: ``python -c`` puts the current folder first on sys.path, so a child started
    # in another checkout's folder imported that checkout's ``app`` whatever PYTHONPATH said (--against compared
    # a checkout with itself when the script was run from its root)
    p = subprocess.run([sys.executable, "-c", CHILD, mode, *more], capture_output=True, text=True, env=env, check=True,
                       cwd=env["PYTHONPATH"])
    out = {k: v if k.endswith("_cpu") else v - t for k, v in json.loads(p.stdout.strip().splitlines()[-1]).items()}
    out["process"] = time.time() - t
    now = resource.getrusage(resource.RUSAGE_CHILDREN)   # the child's CPU seconds (load disturbs them less)
    out["cpu"] = now.ru_utime + now.ru_stime - ru.ru_utime - ru.ru_stime
    out["load"] = os.getloadavg()[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1, help="first + second starts to run")
    ap.add_argument("--against", type=Path, default=None,
                    help="another checkout (e.g. /tmp/int9): its starts interleaved with this one's, medians printed")
    args = ap.parse_args()
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    work = Path(tempfile.mkdtemp(prefix="nestscope_bench_start_"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), NESTSCOPE_CACHE="1", NESTSCOPE_CACHE_DIR=str(work / "cache"))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        t = time.time()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        empty = time.time() - t
        imports = child("imports", dict(env, NESTSCOPE_SETTINGS_FILE=str(work / "imports.ini")))
        print(f"platform {env['QT_QPA_PLATFORM']}; load average {os.getloadavg()[0]:.1f}")
        print(f"baseline  empty Python process:                   {empty:6.2f} s")
        views = child("imports", dict(env, NESTSCOPE_SETTINGS_FILE=str(work / "imports.ini")), "views")
        print(f"baseline  imports of the start + QApplication:     {imports['imports']:6.2f} s "
              f"(load {imports['load']:.1f})")
        print(f"baseline  ... + every module of the built window:  {views['imports']:6.2f} s "
              f"(load {views['load']:.1f})")
        got: dict[tuple, list] = {}
        for run in range(args.runs):
            for root in roots:      # interleaved: this checkout, then the other, run after run
                shutil.rmtree(work / "cache", ignore_errors=True)
                for name in ("first start (empty cache)", "second start (cache)     "):
                    r = child("start", dict(env, PYTHONPATH=str(root),
                                            NESTSCOPE_SETTINGS_FILE=str(work / f"start{run}.ini")))
                    got.setdefault((root, name), []).append(r)
                    print(f"{root.name:10s} {name}  imports {r['imports']:5.2f} s, "
                          f"first paint {r.get('paint', float('nan')):5.2f} s, "
                          f"views built {r.get('built', r.get('paint', float('nan'))):5.2f} s, "
                          f"first table {r.get('table', float('nan')):5.2f} s, "
                          f"all idle {r.get('idle', float('nan')):5.2f} s from process start "
                          f"({r.get('paint', float('nan')) - imports['imports']:+.2f} s paint beyond the imports "
                          f"baseline); process CPU {r.get('built_cpu', float('nan')):.2f} s to the views built, "
                          f"{r.get('table_cpu', float('nan')):.2f} s to the first table, "
                          f"{r['cpu']:.2f} s in all; views built -> first table {span(r):.2f} s "
                          f"({span(r, '_cpu'):.2f} CPU s); load {r['load']:.1f}", flush=True)
                    (work / f"start{run}.ini").unlink(missing_ok=True)
        if args.runs > 1 or len(roots) > 1:
            print("medians:")
            for (root, name), rs in got.items():
                med = {k: statistics.median(r.get(k, float("nan")) for r in rs)
                       for k in ("paint", "built", "table", "idle", "built_cpu", "table_cpu", "cpu", "load")}
                med["span"] = statistics.median(span(r) for r in rs)
                med["span_cpu"] = statistics.median(span(r, "_cpu") for r in rs)
                print(f"  {root.name:10s} {name}  first paint {med['paint']:5.2f} s, views built {med['built']:5.2f} s, "
                      f"first table {med['table']:5.2f} s, all idle {med['idle']:5.2f} s; process CPU "
                      f"{med['built_cpu']:.2f} s to the views built, {med['table_cpu']:.2f} s to the first table, "
                      f"{med['cpu']:.2f} s in all; views built -> first table {med['span']:.2f} s "
                      f"({med['span_cpu']:.2f} CPU s); load {med['load']:.1f} ({len(rs)} runs)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
