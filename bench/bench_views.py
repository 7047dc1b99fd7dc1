"""Benchmark of the window's issue-26 views on a month: the Profile tab's job (profile by hour plus the hour x
weekday profile of the heat map), a peak search and a ranking, beside a baseline taken in the same run (the
window's own LPAR table: ``ws.metrics(by="lpar")`` over the month) and the load average.

Synthetic z16 data from bench_engine.synth: 8 LPARs x 16 CPUs x 2,880 15-minute intervals (a month).

Run:  .venv/bin/python bench/bench_views.py [--intervals N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import clock, synth  # noqa: E402

from app.engine import Workspace  # noqa: E402
from app.formats.schema import ReadResult  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--intervals", type=int, default=2880)
    a = ap.parse_args(argv)
    df = synth(n_int=a.intervals)
    ws = Workspace()
    ws.add(ReadResult(file="bench.smf", kind="smf", framing="rdw", records={"113/2": len(df)}, samples=df))
    from app.engine.views import peaks, ranking
    from app.ui.profile_tab import compute_profile
    from app.ui.selection import Selection

    print(f"intervals: {len(ws.intervals):,} CPU rows ({a.intervals:,} intervals x 8 LPARs x 16 CPUs); "
          f"load average {os.getloadavg()[0]:.2f}")
    tb, m = clock(lambda: ws.metrics("lpar"))
    ws._mcache.clear()
    print(f"baseline  ws.metrics(by='lpar') over the window ({len(m)} rows):       {tb:8.2f} s")
    nodes = (("lpar", "3931-BENCH", "LP00"),)
    t0, d0 = clock(lambda: compute_profile(ws, Selection(nodes), "hour", heat=False))
    print(f"profile   one LPAR: the table by hour alone, shown first ({len(d0.table)} rows):      {t0:8.2f} s")
    t1, d1 = clock(lambda: compute_profile(ws, Selection(nodes), "hour"))
    print(f"profile   one LPAR: by hour + hour x weekday ({len(d1.table)} + {len(d1.heat)} rows): {t1:8.2f} s")
    t2, d2 = clock(lambda: compute_profile(ws, Selection((("cec", "3931-BENCH"),)), "hour"))
    print(f"profile   the CEC: by hour + hour x weekday ({len(d2.table)} + {len(d2.heat)} rows):  {t2:8.2f} s")
    t3, p = clock(lambda: peaks(ws, "CPI", level="lpar", top=10, nodes=[("cec", "3931-BENCH")]))
    print(f"peaks     top 10 LPAR intervals by CPI ({len(p)} rows):                {t3:8.2f} s")
    t4, r = clock(lambda: ranking(ws, ("cec", "3931-BENCH"), "CPI"))
    print(f"ranking   the CEC's LPARs by CPI ({len(r)} rows):                     {t4:8.2f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores, other work running: compare with the baseline)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
