"""Open Workspace of a month comparison -> the Compare tab shown -> the comparison computed.

A workspace file comparing two LPARs of the month of bench_month.py (the first and the last week of SY00 against
SY01; generated under /tmp with the sample writer if missing) is opened in a new MainWindow
(QT_QPA_PLATFORM=offscreen), with the workspace cache folder of bench_window (warm after its first run).  Printed:
open_workspace -> the Compare tab current with its sides, -> the comparison on screen, -> all idle; beside
same-run baselines: the engine alone (the read results added to a new Workspace, then the comparison computed by
the window's own function, ``compare_model.compute_compare``) and the load average.

    python bench/bench_workspace.py [--intervals N] [--keep PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("NESTSCOPE_CACHE", "1")
os.environ.setdefault("NESTSCOPE_CACHE_DIR", str(Path(tempfile.gettempdir()) / "nestscope_bench_window_cache"))
os.environ.setdefault("NESTSCOPE_SETTINGS_FILE", str(Path(tempfile.gettempdir()) / "nestscope_bench_ws.ini"))

import app.ui  # noqa: E402,F401
from PySide6.QtWidgets import QApplication  # noqa: E402


def pump_until(qapp, cond, timeout: float = 900.0) -> float:
    t_end = time.perf_counter() + timeout
    while time.perf_counter() < t_end:
        qapp.processEvents()
        if cond():
            return time.perf_counter()
        time.sleep(0.001)
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=2880)
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    path = args.keep or Path(tempfile.gettempdir()) / f"nestscope_month_{args.intervals}.smf"
    if not path.exists():
        from bench.bench_month import build

        print(f"writing {path} with the sample writer ...")
        build(path, args.intervals)
    import pandas as pd

    from app.engine import Workspace
    from app.ui import workspace_file as wsf
    from app.ui.main_window import MainWindow

    cec = "3931-BE7C4"
    t0 = pd.Timestamp("2026-10-01", tz="UTC")
    week = pd.Timedelta(days=7)
    end = t0 + pd.Timedelta(minutes=15 * args.intervals)
    comparison = {"by": "lpar",
                  "before": {"nodes": [["lpar", cec, "SY00"]], "start": t0.isoformat(), "end": (t0 + week).isoformat(),
                             "hours": "", "days": ""},
                  "after": {"nodes": [["lpar", cec, "SY01"]], "start": (end - week).isoformat(), "end": end.isoformat(),
                            "hours": "", "days": ""}}
    doc = Path(tempfile.gettempdir()) / "nestscope_bench_month_compare.nsw.json"
    wsf.save(wsf.WorkspaceState(files=[str(path)], comparison=comparison), str(doc))
    qapp = QApplication.instance() or QApplication([])
    print(f"month: {path} ({path.stat().st_size / 1e6:.0f} MB); cache {os.environ['NESTSCOPE_CACHE_DIR']}; "
          f"load average {os.getloadavg()[0]:.1f}")
    w = MainWindow(Workspace())
    w.resize(1440, 900)
    w.show()
    qapp.processEvents()
    tab = w.compare.tab
    t = time.perf_counter()
    w.open_workspace(str(doc))
    shown = lambda: w.tabs.currentWidget() is tab and tab.state() is not None  # noqa: E731
    t_tab = pump_until(qapp, lambda: shown() or tab.comparison is not None)
    if not shown():
        print("(the Compare tab was not made current: its sides and comparison appear when it is opened)")
    t_cmp = pump_until(qapp, lambda: tab.comparison is not None)
    t_idle = pump_until(qapp, lambda: not w.busy())
    print(f"open_workspace -> Compare tab shown with its sides {t_tab - t:7.3f} s; -> comparison on screen "
          f"{t_cmp - t:.3f} s; all idle {t_idle - t:.3f} s; load average {os.getloadavg()[0]:.1f}")
    # baseline: the engine alone, on this thread, with the window idle: the read results added to a new
    # workspace, then the comparison computed by the window's function
    from app.ui.compare_model import compute_compare

    results = list(w.ws.files)
    t = time.perf_counter()
    eng = Workspace()
    eng.add_all(results)
    t_add = time.perf_counter() - t
    t = time.perf_counter()
    compute_compare(eng, tab.side("before"), tab.side("after"), tab.current_by())
    t_c = time.perf_counter() - t
    print(f"baseline: the engine alone: add the read results {t_add:.3f} s, compute_compare {t_c:.3f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    w.close()


if __name__ == "__main__":
    main()
