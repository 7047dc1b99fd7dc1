"""What the window shows once its start with the demo is idle, compared between two checkouts (issue 23).

Runs ``nestscope`` with no file (the bundled sample set) in each checkout, on an empty cache folder and then again
on the cache it wrote, waits until the window is idle (nothing read or computed, the start's later tabs installed,
the cache's writes let go) and dumps: the selection, every tree node (key, label, info), the tree's displayed
text, the interval table's headers and every cell as displayed, the table frame's CSV digest, the findings, the
Data health tab's title and the tree dock's width.  The checkout's own folder is replaced by ``ROOT`` in the dump
(file names in findings).  Exit status 0 when every dump matches.

    QT_QPA_PLATFORM=offscreen python bench/same_start_state.py --against /tmp/main15
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import argparse, hashlib, json, os, sys
from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QApplication
from app.commands import gui
from app.ui import main_window as mw

W, T = [], []
init = mw.MainWindow.__init__
def made(self, *a, **k):
    init(self, *a, **k)
    W.append(self)
    t = QTimer()
    t.timeout.connect(poll)
    t.start(20)
    T.append(t)
mw.MainWindow.__init__ = made

def idle(w):
    return (getattr(w, "table", None) is not None and w.table.model.rowCount() > 0 and not w.busy()
            and getattr(w, "tabs_installed", True) and w._write_pause is None)

def poll():
    if W and idle(W[0]):
        T[0].stop()
        QTimer.singleShot(1500, dump)        # the idle preparation jobs after it

def dump():
    w = W[0]
    if not idle(w):
        QTimer.singleShot(300, dump)
        return
    m, lines = w.tree.model, []
    def walk(parent, depth):
        for r in range(m.rowCount(parent)):
            lines.append("  " * depth + " | ".join(str(m.data(m.index(r, c, parent))) for c in range(m.columnCount(parent))))
            walk(m.index(r, 0, parent), depth + 1)
    walk(QModelIndex(), 0)
    tm = w.table.model
    out = {"selection": repr(w.selection.value),
           "tree nodes": [repr((n.key, n.label, sorted((k, repr(v)) for k, v in (n.info or {}).items())))
                          for n in m.all_nodes()],
           "tree text": lines,
           "table headers": [str(tm.headerData(c, Qt.Orientation.Horizontal)) for c in range(tm.columnCount())],
           "table cells": [[str(tm.data(tm.index(r, c))) for c in range(tm.columnCount())] for r in range(tm.rowCount())],
           "table frame sha1": hashlib.sha1(tm.frame.to_csv().encode()).hexdigest(),
           "findings": sorted(repr((f.code, f.severity, f.message)) for f in w.ws.findings),
           "health tab": w.tabs.tabText(w.tabs.indexOf(w.health)),
           "tree dock width": w.tree.dock.width()}
    text = json.dumps(out, indent=0, default=str).replace(os.getcwd(), "ROOT")
    with open(sys.argv[1], "w") as f:
        f.write(text)
    QApplication.instance().quit()

QTimer.singleShot(180_000, lambda: QApplication.instance().quit())
gui.run(argparse.Namespace(files=[], no_sample=False, formulas=None))
"""


def dumps(root: Path, work: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(root), NESTSCOPE_CACHE="1", NESTSCOPE_CACHE_DIR=str(work / "cache"),
               NESTSCOPE_SETTINGS_FILE=str(work / "start.ini"))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    shutil.rmtree(work / "cache", ignore_errors=True)
    out = []
    for run in ("first", "second"):
        target = work / f"{run}.json"
        target.unlink(missing_ok=True)
        subprocess.run([sys.executable, "-c", CHILD, str(target)], cwd=root, env=env, capture_output=True, check=True)
        (work / "start.ini").unlink(missing_ok=True)
        if not target.exists():
            raise SystemExit(f"{root}: the {run} start did not become idle")
        out.append(target.read_text())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", type=Path, required=True, help="the other checkout (e.g. /tmp/main15)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nestscope_same_start_"))
    try:
        mine = dumps(ROOT, work / "a")
        theirs = dumps(args.against.resolve(), work / "b")
        same = True
        for run, a, b in zip(("first start (empty cache)", "second start (cache)"), mine, theirs, strict=True):
            if a == b:
                n = json.loads(a)
                print(f"{run}: the same ({len(n['tree nodes'])} tree nodes, {len(n['table cells'])} table rows, "
                      f"{len(n['findings'])} findings, selection {n['selection']})")
                continue
            same = False
            print(f"{run}: DIFFERENT")
            sys.stdout.writelines(list(difflib.unified_diff(b.splitlines(True), a.splitlines(True), "against",
                                                             "this", n=1))[:60])
        print("same" if same else "different")
        raise SystemExit(0 if same else 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
