"""Physical-bounds check (app/engine/plausibility.py) beside the deltas it checks, in the same run.

The workload model's month for the sample CEC (z16, three z/OS LPARs, 32 logical CPUs, 2,880 15-minute intervals =
92,160 CPU-intervals, subtype 1 deltas with every counter the model writes) goes through ``compute_intervals``
(the baseline), then ``plausibility.check`` on the clean intervals and on a copy whose clock is 52 times too slow
in every record (every row breaks the cycle bound: the findings path at its worst), once with the counters the
window reads and once with every counter.

Run:  .venv/bin/python bench/bench_plausibility.py [--days N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine import Workspace  # noqa: E402
from app.engine.catalog import load_formula_sets  # noqa: E402
from app.engine.deltas import compute_intervals  # noqa: E402
from app.engine.plausibility import check  # noqa: E402
from app.sample.build import Z16_SEQ, zos_lpars  # noqa: E402
from app.sample.model import CecModel, make_samples  # noqa: E402


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=30)
    days = ap.parse_args().days
    samples, _ = make_samples(CecModel("z16", Z16_SEQ, zos_lpars()), dt.datetime(2026, 1, 1), 96 * days)
    sets = load_formula_sets()
    for label, keep in (("window's counters", Workspace().counters_needed()), ("every counter", None)):
        (iv, _), t_iv = _timed(lambda keep=keep: compute_intervals([samples], sets, keep))
        counters = list(iv.columns[list(iv.columns).index("qbits") + 1:])
        clean, t_clean = _timed(lambda iv=iv, counters=counters: check(iv.copy(), sets, counters))
        bad = iv.copy()
        bad["cpu_speed"] = 100
        worst, t_bad = _timed(lambda bad=bad, counters=counters: check(bad, sets, counters))
        print(f"{label}: {len(iv):,} CPU-intervals x {len(counters)} counters: compute_intervals {t_iv:.2f} s "
              f"(baseline); check clean {t_clean:.2f} s ({t_clean / t_iv:.0%} of the baseline, {len(clean)} "
              f"findings); every row implausible {t_bad:.2f} s ({len(worst)} findings)")


if __name__ == "__main__":
    main()
