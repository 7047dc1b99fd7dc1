"""The tree's class and CPU levels beside the whole file's table (issue 23, the progressive open's second view job).

After a big file's first part, the window's job that adds the whole file computes the tree's CEC/LPAR levels and the
table, and the class/CPU levels came in the next job; now they are computed beside the table in the same job
(``render.compute_view(deeper="beside")``: the two on two threads).  This script times, in one process on the
engine alone (no window, no cache), from a fresh Workspace with the file added:

* before: ``compute_view(deeper=False)`` (CEC/LPAR tree, table), then ``compute_view(deeper="levels")`` (the next job);
* after:  ``compute_view(deeper="beside")`` (CEC/LPAR tree, then table and class/CPU levels together);

alternating, each rep on its own new Workspace (the add is not timed), with the wall and CPU seconds of the part
after the add, and checks that both give the same table and the same tree levels.

    python bench/bench_levels_beside.py [--reps 6] [FILE]     (default: the month of bench_month.py)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["NESTSCOPE_CACHE"] = "0"


def _levels(roots) -> list[tuple]:
    out, stack = [], list(roots)
    while stack:
        n = stack.pop()
        out.append((tuple(n.key), n.level, n.info.get("n_cpus")))
        stack.extend(n.children)
    return sorted(out, key=repr)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("file", nargs="?", default=str(Path(tempfile.gettempdir()) / "nestscope-bench-exports"
                                                   / "month.smf"))
    args = ap.parse_args()
    from app.engine import Workspace
    from app.formats import read_file
    from app.ui.render import compute_view
    from app.ui.selection import Selection

    need = Workspace(cache=False).counters_needed()
    res = read_file(args.file, counters=need)
    outcome = SimpleNamespace(path=args.file, digest="", result=res)
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    seen: dict[str, tuple] = {}
    for rep in range(args.reps):
        for mode in (("before", "after") if rep % 2 == 0 else ("after", "before")):
            ws = Workspace(cache=False)
            ws.add_all([res])
            t, c = time.perf_counter(), time.process_time()
            if mode == "before":
                v = compute_view(ws, Selection(), [], table=True, timeline=False, values=False, deep=False)
                v2 = compute_view(ws, v.selection, [], table=False, timeline=False, values=False, deeper="levels")
                table, deeper = v.table, v2.deeper
            else:
                v = compute_view(ws, Selection(), [], table=True, timeline=False, values=False, deep=False,
                                 deeper="beside")
                table, deeper = v.table, v.deeper
            times[mode].append((time.perf_counter() - t, time.process_time() - c))
            seen.setdefault(mode, (table, _levels(deeper)))
            del ws, v
    import pandas as pd

    pd.testing.assert_frame_equal(seen["before"][0], seen["after"][0])
    assert seen["before"][1] == seen["after"][1], "the tree levels differ"
    print(f"{args.file}: {len(res.samples):,} samples; load average {os.getloadavg()[0]:.1f}")
    for mode, rows in times.items():
        print(f"  {mode:6s} tree + table + class/CPU levels: wall "
              f"{' '.join(f'{w:.3f}' for w, _ in rows)} s (median {statistics.median(w for w, _ in rows):.3f}); "
              f"CPU median {statistics.median(c for _, c in rows):.3f} s")
    print("  same table and same tree levels in both")


if __name__ == "__main__":
    main()
