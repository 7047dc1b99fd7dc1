"""Benchmark the SMF 113 sample writer (not a test).

Encodes the month benchmark's z16 model (8 LPARs x 16 CPUs, 12 GCP + 4 zIIP,
subtype 1 and 2) with the vectorized ``encode_samples`` and, in the same run
on the same frame, with the row-by-row reference ``_encode_samples_rowwise``;
prints records/s of both and checks the bytes are identical.

Run: ``.venv/bin/python bench/bench_smf_write.py [intervals]``  (default 120 -> 15,360 records)
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.formats import smf113_writer as W
from app.sample.build import MIX_GCP, MIX_ZIIP
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("intervals", type=int, nargs="?", default=120, help="intervals written (default 120 -> 15,360 "
                    "records)")
    intervals = ap.parse_args().intervals
    lpars = [LparModel(f"LP{i:02d}", f"SY{i:02d}", [ClassModel("GCP", 12, 60 + i, 3.0 + 0.1 * i, 3.0, MIX_GCP),
                                                  ClassModel("zIIP", 4, 35, 2.5, 2.2, MIX_ZIIP, 85)])
             for i in range(8)]
    samples, _ = make_samples(CecModel("z16", "00000000000BE7C4", lpars), dt.datetime(2026, 10, 1), intervals,
                              900.0, seed=1)
    frames = {1: samples, 2: to_absolute(samples)}
    for st, df in frames.items():
        t = time.perf_counter()
        old = W._encode_samples_rowwise(df, st)
        t_old = time.perf_counter() - t
        t = time.perf_counter()
        new = W.encode_samples(df, st)
        t_new = time.perf_counter() - t
        assert new == old, "vectorized encoder differs from the row-wise reference"
        n = len(new)
        mb = sum(map(len, new)) / 1e6
        print(f"subtype {st}: {n:,} records ({mb:.1f} MB)  row-wise {n / t_old:>12,.0f} records/s  "
              f"vectorized {n / t_new:>12,.0f} records/s  ({t_old / t_new:.0f}x, {mb / t_new:.0f} MB/s)")


if __name__ == "__main__":
    main()
