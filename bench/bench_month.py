"""File -> metrics frame for a month of SMF 113 data.

8 LPARs x 16 CPUs (12 GCP + 4 zIIP) x 2,880 fifteen-minute intervals = 368,640
subtype 1 records on a z16, made by the sample writer and written RDW-framed to
a temporary file.  The decode is timed twice: reading the counters the formulas read (what the window and
the CLI ask the reader for, ``Workspace.counters_needed``) and reading every counter (``extract``, ``info``).
Prints the time of each step beside two baselines measured
in the same run on the same bytes: reading the file and summing it as 8-byte
words with numpy (the memory-bandwidth floor), and a pandas groupby-sum of the
decoded counter frame (what any frame-based engine pays at least).

    python bench/bench_month.py [--intervals N] [--keep PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from app.engine import Workspace
from app.formats import read_file, smf113_writer
from app.sample.build import MIX_GCP, MIX_ZIIP
from app.sample.model import CecModel, ClassModel, LparModel, make_samples


def build(path: Path, intervals: int) -> int:
    lpars = [LparModel(f"LP{i:02d}", f"SY{i:02d}", [ClassModel("GCP", 12, 60 + i, 3.0 + 0.1 * i, 3.0, MIX_GCP),
                                                  ClassModel("zIIP", 4, 35, 2.5, 2.2, MIX_ZIIP, 85)])
             for i in range(8)]
    cec = CecModel("z16", "00000000000BE7C4", lpars)
    samples, _ = make_samples(cec, dt.datetime(2026, 10, 1), intervals, 900.0, seed=1)
    recs = smf113_writer.encode_samples(samples, 1)
    smf113_writer.write_smf_file(path, recs, framing="rdw")
    return len(recs)


def timed(label: str, fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    dt_s = time.perf_counter() - t
    print(f"  {label:<44} {dt_s:8.2f} s")
    return out, dt_s


def cpu_probe() -> float:
    """CPU seconds of a fixed pure-Python loop (3 million additions): how fast this machine runs right now.  On a
    shared virtual machine it varies between runs (0.29-0.6 s seen on the 2-core build machine); read the decode
    figures against it."""
    c0 = time.process_time()
    s = 0
    for i in range(3_000_000):
        s += i
    return time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=2880)
    ap.add_argument("--keep", type=Path, default=None, help="reuse / keep the generated file here")
    args = ap.parse_args()
    path = args.keep or Path(tempfile.gettempdir()) / f"nestscope_month_{args.intervals}.smf"
    if not path.exists():
        print(f"writing {path} with the sample writer ...")
        n, _ = timed("model + encode + write (setup)", build, path, args.intervals)
    size = path.stat().st_size
    print(f"file: {path} ({size / 1e6:.1f} MB)")
    probe0 = cpu_probe()
    print("baselines (same bytes, same run):")
    _, t_raw = timed("read + numpy sum of all 8-byte words", lambda: np.frombuffer(
        path.read_bytes()[: size // 8 * 8], ">u8").sum())
    print("NestScope:")
    ws = Workspace(cache=False)
    need = ws.counters_needed()
    c0 = time.process_time()
    res, t_read = timed("read_file, the counters the formulas read", read_file, path, counters=need)
    c_read = time.process_time() - c0
    c0 = time.process_time()
    full, t_all = timed("read_file, every counter of every set", read_file, path)
    c_all = time.process_time() - c0
    n_all, n_need = (sum(1 for c in f.samples.columns if c[:1] in "BPCEM" and c[1:].isdigit()) for f in (full, res))
    assert full.samples[res.samples.columns].equals(res.samples)     # the same values, fewer columns
    del full
    c0 = time.process_time()
    _, t_raw2 = timed("baseline again: read + numpy sum (after the decode)", lambda: np.frombuffer(
        path.read_bytes()[: size // 8 * 8], ">u8").sum())
    c_raw = time.process_time() - c0
    t_raw = min(t_raw, t_raw2)
    c0 = time.process_time()
    _, t_add = timed("Workspace.add + interval deltas", lambda: (ws.add(res), ws.intervals))
    c_add = time.process_time() - c0
    t_prev = _previous_deltas(res, ws)
    counters = [c for c in ws.intervals.columns if c[:1] in "BPE" and c[1:].isdigit()]
    _, t_gb = timed("baseline: pandas groupby-sum of the deltas", lambda: ws.intervals.groupby(
        ["system", "class", "interval_end"], observed=True)[counters].sum())
    m, t_met = timed("metrics(by='interval') (LPAR x class x interval)", ws.metrics, by="interval")
    m2, t_cpu = timed("metrics(by='cpu') (every CPU interval)", ws.metrics, by="cpu")
    n = len(res.samples)
    total = t_read + t_add + t_met
    print(f"records: {n:,}; interval rows: {len(m):,}; CPU rows: {len(m2):,}")
    print(f"SMF 113 decode (the window's and the CLI's read: {n_need} of the {n_all} counters, those the formulas "
          f"read): {n / t_read:,.0f} records/s wall ({n / c_read:,.0f} records/s on CPU seconds), "
          f"{t_read / t_raw:.1f}x the raw read+sum baseline (wall; {c_read / max(c_raw, 1e-9):.1f}x on CPU); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"SMF 113 decode of every counter (extract, info): {n / t_all:,.0f} records/s wall "
          f"({n / c_all:,.0f} records/s on CPU seconds), {t_all / t_raw:.1f}x the baseline")
    print(f"machine probe (a fixed Python loop, CPU seconds) before / after the run: {probe0:.3f} / {cpu_probe():.3f} s")
    print(f"engine add + deltas: {t_add:.2f} s wall, {c_add:.2f} s CPU"
          + (f"; previous implementation in this run {t_prev:.2f} s ({t_prev / t_add:.1f}x)" if t_prev else ""))
    print(f"file -> metrics frame (interval level): {total:.2f} s = {n / total:,.0f} records/s, "
          f"{size / 1e6 / total:.1f} MB/s  (raw-read baseline {size / 1e6 / t_raw:.0f} MB/s; "
          f"decode alone {n / t_read:,.0f} records/s)")


def _previous_deltas(res, ws) -> float | None:
    """The deltas of the previous (frame-based) implementation on the same samples, kept for the tests in
    tests/engine/_deltas_reference.py: the 'before' figure measured in the same run."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))
    try:
        from _deltas_reference import compute_intervals as previous
    except ImportError:
        return None
    _, t = timed("  previous implementation (same samples)", previous, [res.samples], ws.formula_sets, ws.counters_needed())
    return t


if __name__ == "__main__":
    main()
