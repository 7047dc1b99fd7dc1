"""First and second open of a month of SMF 113 data, each in a new process, with peak memory.

The month of bench_month.py (8 LPARs x 16 CPUs x 2,880 intervals = 368,640 records, ~564 MB) is opened the
way the window and ``nestscope report`` open files: through the workspace cache (app/cache.py), decoding the
counters the workspace's formulas read (``Workspace.counters_needed``), then the
intervals, the tree's CEC and LPAR levels and the first table (interval rows of the first LPAR with its summary
row, sliced from the LPAR level's cached frame when there is one), as the window's first job does.  Each open runs
in a fresh Python process; the first with an empty cache folder, the second reusing it.  As in the window, the
cache entries are written after the first table (``app.cache.writes_paused``); that write is timed apart.  Peak memory is the
child's ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak resident set size, Linux kB).

Baselines in the same run: the same steps with nothing but the imports (process floor), and reading the file
and summing it as 8-byte words with numpy.

    python bench/bench_open.py [--intervals N] [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
from app import cache
from app.engine import Workspace
import numpy as np
t_imp = time.perf_counter()
c_imp = time.process_time()
mode, path = sys.argv[1], sys.argv[2]
out = {"imports_s": t_imp - t0, "imports_cpu_s": c_imp - c0}
if mode == "raw":
    data = open(path, "rb").read()
    np.frombuffer(data[: len(data) // 8 * 8], ">u8").sum()
    out["work_s"] = time.perf_counter() - t_imp
elif mode == "open":
    paused = cache.writes_paused()        # as the window: the cache is written after the first table is shown
    paused.__enter__()
    ws = Workspace()
    t = time.perf_counter()
    res = cache.read_file(path, counters=ws.counters_needed())   # the counters its formulas read, as the window
    out["read_s"] = time.perf_counter() - t
    out["from_cache"] = type(res).__name__ == "CachedReadResult"
    t = time.perf_counter()
    ws.add_all([res])
    out["intervals_s"] = time.perf_counter() - t
    t = time.perf_counter()
    roots = ws.tree(deep=False, values=False)     # as the window's first job: the CEC and LPAR levels
    out["tree_s"] = time.perf_counter() - t
    lpar = roots[0].children[0].key
    t = time.perf_counter()
    ws.prepare_level("lpar_interval", cached_only=True)   # as the window: every LPAR's rows, when cached
    m = ws.metrics("lpar_interval", nodes=[lpar], summary=True)
    out["table_s"] = time.perf_counter() - t
    out["table_rows"] = len(m)
    out["work_s"] = time.perf_counter() - t_imp
    out["work_cpu_s"] = time.process_time() - c_imp
    t = time.perf_counter()        # then what the window does while idle: the tree's deeper levels, the level frames
    ws.tree()
    levels = ("lpar_interval", "class_interval", "cec_interval")
    if hasattr(ws, "prepare_levels"):
        ws.prepare_levels(levels)
    else:
        for lv in levels:
            ws.prepare_level(lv)
    out["idle_s"] = time.perf_counter() - t
    paused.__exit__(None, None, None)
    t = time.perf_counter()
    cache.wait_for_writes()
    out["cache_write_s"] = time.perf_counter() - t
out.setdefault("work_cpu_s", time.process_time() - c_imp)
out["load"] = os.getloadavg()[0]
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(mode: str, path: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, NESTSCOPE_CACHE="1", NESTSCOPE_CACHE_DIR=str(cache_dir), PYTHONPATH=os.environ.get("BENCH_PYTHONPATH", str(ROOT)))
    t = time.perf_counter()
    # in the checkout measured: ``python -c`` puts the current folder first on sys.path, so a child started in
    # another checkout's folder imported that one's ``app`` whatever BENCH_PYTHONPATH named
    p = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True, env=env,
                       check=True, cwd=env["PYTHONPATH"])
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process_s"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=2880)
    ap.add_argument("--keep", type=Path, default=None, help="reuse / keep the generated file here")
    args = ap.parse_args()
    path = args.keep or Path(tempfile.gettempdir()) / f"nestscope_month_{args.intervals}.smf"
    if not path.exists():
        from bench.bench_month import build

        print(f"writing {path} with the sample writer ...")
        build(path, args.intervals)
    size = path.stat().st_size
    cache_dir = Path(os.environ.get("BENCH_CACHE_DIR", Path(tempfile.gettempdir()) / "nestscope_bench_cache"))
    shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"file: {path} ({size / 1e6:.1f} MB); cache folder {cache_dir} (emptied)")
    raw = child("raw", path, cache_dir)
    first = child("open", path, cache_dir)
    second = child("open", path, cache_dir)
    if not second["from_cache"]:   # the reader sources changed between the two runs (a new reader version)
        second = child("open", path, cache_dir)
    assert not first["from_cache"] and second["from_cache"], (first, second)
    print("baseline  new process, imports only:            "
          f"{raw['imports_s']:6.2f} s imports ({raw['imports_cpu_s']:.2f} s CPU), {raw['process_s']:6.2f} s process")
    print(f"baseline  read + numpy sum of the file:          {raw['work_s']:6.2f} s ({raw['work_cpu_s']:.2f} s CPU) "
          f"({size / 1e6 / raw['work_s']:,.0f} MB/s), peak RSS {raw['maxrss_mb']:,.0f} MB")
    for name, r in (("first open ", first), ("second open", second)):
        print(f"{name}  read {r['read_s']:5.2f} + intervals {r['intervals_s']:5.2f} + tree {r['tree_s']:5.2f} + "
              f"first table {r['table_s']:5.2f} = {r['work_s']:5.2f} s after imports "
              f"({r['work_s'] / raw['work_s']:.1f}x the raw read; process {r['process_s']:.2f} s); "
              f"CPU {r['work_cpu_s']:.2f} s; peak RSS {r['maxrss_mb']:,.0f} MB (cache writes included); "
              f"load average {r['load']:.1f}")
        print(f"             then the tree's deeper levels and the level frames (the window's idle jobs): "
              f"{r['idle_s']:.2f} s")
        if r.get("cache_write_s", 0) > 0.01:
            print(f"             then the workspace cache written after the first table: {r['cache_write_s']:.2f} s")
    print(f"cache: {sum(p.stat().st_size for p in cache_dir.rglob('*') if p.is_file()) / 1e6:,.0f} MB on disk")


if __name__ == "__main__":
    main()
