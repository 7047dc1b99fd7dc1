"""Engine benchmark: counter-sample frame -> metrics frame.

Synthetic z16 data generated with numpy: 8 LPARs x 16 CPUs x 2,880 15-minute
intervals = 368,640 records (running totals, SMF 113 subtype-2 style), basic +
problem-state + all 160 extended counters.  Times the engine beside two
baselines taken in the same run: a naive per-row Python CPI loop on a
10,000-row subset (extrapolated) and a bare pandas groupby-sum.

Run:  .venv/bin/python bench/bench_engine.py [--intervals N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine import Workspace  # noqa: E402
from app.formats.schema import (IDENTITY_COLUMNS, SET_BASIC, SET_EXTENDED, SET_PROBLEM,  # noqa: E402
                                ReadResult)

T0 = pd.Timestamp("2026-01-01")


def synth(n_lpar: int = 8, n_cpu: int = 16, n_int: int = 2880, seed: int = 1) -> pd.DataFrame:
    """z16 running-total samples, one row per LPAR x CPU x interval (time-major per CPU)."""
    rng = np.random.default_rng(seed)
    n = n_lpar * n_cpu * n_int
    lp = np.repeat(np.arange(n_lpar), n_cpu * n_int)
    cpu = np.tile(np.repeat(np.arange(n_cpu), n_int), n_lpar)
    k = np.tile(np.arange(1, n_int + 1), n_lpar * n_cpu)
    speed = 5200
    busy = rng.uniform(0.2, 0.9, n)
    b0 = (busy * speed * 1e6 * 900).astype(np.uint64)
    cpi = rng.uniform(1.5, 3.5, n)
    b1 = (b0 / cpi).astype(np.uint64)
    l1m = (b1 * rng.uniform(0.01, 0.06, n)).astype(np.uint64)
    cols: dict[str, np.ndarray] = {"B0": b0, "B1": b1, "B2": l1m // 4, "B3": l1m * 6, "B4": l1m - l1m // 4,
                                   "B5": l1m * 14, "P32": b0 // 2, "P33": b1 // 2}
    mix = rng.dirichlet([60, 25, 8, 2, 5], size=n).T        # L2 / L3 / L4L / L4R / MEM shares
    groups = {0: [145, 146, 169, 170], 1: [147, 149, 150, 151, 171, 173, 174, 175],
              2: [148, 152, 153, 154, 160, 161, 162, 163, 164, 165, 172, 176, 177, 178],
              3: [155, 166, 167, 168, 179], 4: [156, 157, 158, 159, 180, 181, 182, 183]}
    where = {e: g for g, es in groups.items() for e in es}
    for e in range(128, 288):
        if e in where:
            g = where[e]
            v = l1m * mix[g] / len(groups[g])
        else:
            v = b1 * 0.001
        cols[f"E{e}"] = v.astype(np.uint64)
    cols["E143"] = (l1m * 20).astype(np.uint64)
    # running totals per CPU (time is the fastest axis)
    for c, v in cols.items():
        m = v.reshape(n_lpar * n_cpu, n_int)
        cols[c] = np.cumsum(m, axis=1, dtype=np.uint64).reshape(-1)
    lpar = np.array([f"LP{i:02d}" for i in range(n_lpar)], dtype=object)[lp]
    ident = {
        "source": "bench.smf", "offset": np.arange(n, dtype=np.int64) * 1024, "cec": "3931-BENCH",
        "machine_type": "3931", "model": "A01", "serial": "BENCH", "lpar": lpar, "system": lpar, "os": "z/OS",
        "class": "GCP", "cpu": cpu.astype(np.int32), "core": -1, "run_start": T0,
        "time": (T0 + pd.to_timedelta(k * 900, unit="s")).to_numpy(), "cpu_speed": speed, "cfvn": 3, "csvn": 7,
        "flags": 0, "lost": False, "mt_lost": False, "first": k == 1, "kind": "absolute",
        "sets": SET_BASIC | SET_PROBLEM | SET_EXTENDED}
    df = pd.DataFrame({c: pd.Series(ident[c] if np.ndim(ident[c]) else np.repeat(ident[c], n)).astype(t)
                       for c, t in IDENTITY_COLUMNS.items()})
    return pd.concat([df, pd.DataFrame(cols)], axis=1)


def clock(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--intervals", type=int, default=2880)
    a = ap.parse_args(argv)
    tg, df = clock(lambda: synth(n_int=a.intervals))
    n = len(df)
    print(f"records: {n:,} ({df.shape[1]} columns, {df.memory_usage().sum() / 2**20:.0f} MiB), generated in {tg:.2f} s")
    rr = ReadResult(file="bench.smf", kind="smf", framing="rdw", records={"113/2": n}, samples=df)

    # baseline: naive per-row Python (running totals -> deltas per CPU -> CPI, L1MP, LPARCPU) on 10,000 rows
    sub = df.iloc[:10_000]
    ctr = [c for c in df.columns if c[0] in "BPE" and c[1:].isdigit()]
    recs = sub[["lpar", "cpu", "time", "cpu_speed"] + ctr].to_dict("records")

    def naive():
        prev, out = {}, []
        for r in recs:
            k = (r["lpar"], r["cpu"])
            p = prev.get(k)
            prev[k] = r
            if p is None:
                continue
            d = {c: r[c] - p[c] for c in ctr}
            secs = (r["time"] - p["time"]).total_seconds()
            cpi = d["B0"] / d["B1"] if d["B1"] else None
            l1mp = (d["B2"] + d["B4"]) / d["B1"] * 100 if d["B1"] else None
            out.append((cpi, l1mp, d["B0"] / (r["cpu_speed"] * 1e6 * secs) * 100))
        return out

    tn, _ = clock(naive)
    tgs, _ = clock(lambda: df.groupby(["lpar", "cpu"], observed=True)[[c for c in df.columns if c[0] in "BPE"
                                                                      and c[1:].isdigit()]].sum())
    ws = Workspace()
    ta, _ = clock(lambda: ws.add(rr))
    ti, m1 = clock(lambda: ws.metrics("interval"))
    ws._mcache.clear()
    tc, m2 = clock(lambda: ws.metrics("cpu"))
    tl, _ = clock(lambda: ws.metrics("lpar", summary=True))
    tt, _ = clock(ws.tree)
    print(f"baseline  naive per-row Python deltas+CPI/L1MP/LPARCPU (10,000 rows -> {n:,}): {tn * n / 10_000:6.2f} s")
    print(f"baseline  pandas groupby-sum of all counters by LPAR x CPU:       {tgs:8.2f} s")
    print(f"engine    samples -> intervals (deltas, checks, generations):    {ta:8.2f} s")
    tp = _previous(df, ws)
    if tp is not None:
        print(f"before    the same by the previous frame-based deltas:            {tp:8.2f} s  ({tp / ta:.1f}x)")
    print(f"engine    intervals -> metrics by='interval' ({len(m1):,} rows):      {ti:8.2f} s")
    print(f"engine    intervals -> metrics by='cpu' ({len(m2):,} rows):         {tc:8.2f} s")
    print(f"engine    metrics by='lpar' + tree:                               {tl + tt:8.2f} s")
    print(f"total     samples -> metrics frame by='interval':                {ta + ti:8.2f} s")
    print(f"total     samples -> metrics frame by='cpu':                     {ta + tc:8.2f} s")
    _files_to_metrics()
    return 0


def _previous(df: pd.DataFrame, ws: Workspace) -> float | None:
    """Samples -> intervals by the previous implementation (kept for the tests in tests/engine/_deltas_reference.py),
    on the same frame in the same run: the 'before' figure."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))
    try:
        from _deltas_reference import compute_intervals as previous
    except ImportError:
        return None
    t, _ = clock(lambda: previous([df], ws.formula_sets, ws.counters_needed()))
    return t


def _files_to_metrics() -> None:
    """Time file -> metrics on the bundled sample set, when the sample builder and readers exist."""
    import tempfile

    try:
        from app.formats import read_file
        from app.sample.build import write_sample_set
    except Exception as exc:  # another engineer's module not there yet
        print(f"file -> metrics: skipped ({type(exc).__name__}: {exc})")
        return
    with tempfile.TemporaryDirectory() as d:
        tw, paths = clock(lambda: write_sample_set(d))
        size = sum(p.stat().st_size for p in paths)
        tr, results = clock(lambda: [read_file(p) for p in paths])
        ws = Workspace()
        ta, _ = clock(lambda: ws.add_all([r for r in results if r.readable]))
        tm, m = clock(lambda: ws.metrics("interval"))
        n = sum(len(r.samples) for r in results)
        print(f"sample set: {len(paths)} files, {size / 2**20:.1f} MiB, {n:,} samples (written in {tw:.2f} s)")
        print(f"file      read_file (all files):                                  {tr:8.2f} s")
        print(f"file      -> intervals + by='interval' metrics ({len(m):,} rows):     {ta + tm:8.2f} s")
        print(f"total     files -> metrics frame:                                 {tr + ta + tm:8.2f} s")


if __name__ == "__main__":
    raise SystemExit(main())
