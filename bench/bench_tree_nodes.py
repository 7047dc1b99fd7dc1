"""Tree pools and SMT cores benchmark (issue 26): what the pool and core rows add to the tree's whole-window rows.

The synthetic month of bench_engine.py (8 LPARs x 16 CPUs x 2,880 15-minute intervals = 368,640 records); CPUs
8-15 of every LPAR are zIIPs with SMT-2 (two CPUs a core id), so every LPAR has 4 SMT cores.  Times, in one
run: the baseline (the class level's whole-window rows, ``compute_metrics(by="class")``: one grouped pass, what the
tree already computes), the CEC pools (``views.pools``), every SMT core (``node_rows.window_frame("core")``) and a
selected pool's and core's interval rows with summary (``ws.metrics``), plus the load average.

Run:  .venv/bin/python bench/bench_tree_nodes.py [--intervals N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine import Workspace  # noqa: E402
from app.engine.metrics import compute_metrics  # noqa: E402
from app.engine.node_rows import window_frame  # noqa: E402
from app.engine.views import pools  # noqa: E402
from app.formats.schema import ReadResult  # noqa: E402
from bench.bench_engine import synth  # noqa: E402


def clock(fn, repeat: int = 3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--intervals", type=int, default=2880)
    a = ap.parse_args(argv)
    df = synth(n_int=a.intervals)
    cpu = df["cpu"].to_numpy()
    ziip = cpu >= 8
    df["class"] = df["class"].cat.add_categories(["zIIP"])
    df.loc[ziip, "class"] = "zIIP"
    df["core"] = np.where(ziip, cpu // 2, cpu).astype(np.int32)          # CPUs 8+9 -> core 4, ...
    ws = Workspace(cache=False)
    ws.add(ReadResult(file="bench.smf", kind="smf", framing="rdw", records={"113/2": len(df)}, samples=df))
    iv = ws.intervals
    print(f"intervals: {len(iv):,} CPU-interval rows")
    tb, _ = clock(lambda: compute_metrics(iv, ws.formula_sets, ws.counters, by="class"))
    tp, p = clock(lambda: pools(ws))
    tc, c = clock(lambda: window_frame(ws, "core"))
    cec = str(iv["cec"].astype(str).iloc[0])
    ts, s = clock(lambda: ws.metrics(by="class_interval", nodes=[("pool", cec, "zIIP")], summary=True), repeat=1)
    tk, k = clock(lambda: ws.metrics(by="class_interval", nodes=[("core", cec, "LP00", "zIIP", 4)], summary=True),
                  repeat=1)
    print(f"baseline class level, whole window : {tb * 1000:8.1f} ms")
    print(f"CEC pools ({len(p)} rows)               : {tp * 1000:8.1f} ms  ({tp / tb:.2f} x baseline)")
    print(f"SMT cores ({len(c)} rows)              : {tc * 1000:8.1f} ms  ({tc / tb:.2f} x baseline)")
    print(f"selected pool, {len(s):,} rows + summary  : {ts * 1000:8.1f} ms")
    print(f"selected core, {len(k):,} rows + summary  : {tk * 1000:8.1f} ms")
    # the window's idle jobs: every node's rows of the LPAR level and every pool's rows prepared, then a selection
    # of an LPAR and of a pool (each a first selection: the workspace's frame cache emptied)
    ws._mcache.clear()
    tl, _ = clock(lambda: ws.prepare_levels(("lpar_interval",)), repeat=1)
    pool_prep = hasattr(ws, "prepare_pools")
    ws._lv.pop(("pool", "None", "None"), None)     # prepared by the selection above: the idle job's time alone
    tq, _ = clock(lambda: ws.prepare_pools(), repeat=1) if pool_prep else (float("nan"), None)

    def pick(nodes, by):
        ws._mcache.clear()
        return ws.metrics(by=by, nodes=nodes, summary=True)
    tsl, sl = clock(lambda: pick([("lpar", cec, "LP03")], "lpar_interval"))
    tsp, sp = clock(lambda: pick([("pool", cec, "GCP")], "class_interval"))
    print(f"idle job: LPAR level prepared       : {tl * 1000:8.1f} ms")
    print(f"idle job: CEC pools prepared        : {tq * 1000:8.1f} ms"
          + ("" if pool_prep else "  (none: pools not prepared)"))
    print(f"after the idle jobs: LPAR selected, {len(sl):,} rows : {tsl * 1000:8.1f} ms")
    print(f"after the idle jobs: pool selected, {len(sp):,} rows : {tsp * 1000:8.1f} ms")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
