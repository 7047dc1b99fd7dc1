"""Fleet benchmark: ``extract`` throughput and ``query`` times on a generated fleet, at two dataset sizes.

The fleet: ``--cecs`` z16 CECs (default 10) x ``--lpars`` LPARs x ``--cpus`` GCPs, 15-minute intervals for
``--months`` months (default 12), one "file" per LPAR and month (a monthly SMF dump per system).  Counter
samples are generated directly with numpy as subtype-1 style deltas (basic, problem-state and the extended
counters the z16 formulas read) -- no binary SMF files, so extract is timed from decoded samples onward:
the engine's interval deltas, the Parquet parts and the manifest commit (``Dataset.add_result``; decoding
speed is ``bench_smf_decode.py``'s subject).

Two sizes: the first half of the months is extracted and queried, then the second half is appended and the
same queries run again, so the growth of query time with the dataset shows.

Baselines in the same run:
* extract: writing the same sample frames as plain Parquet (pyarrow, no deltas, no manifest);
* query: (a) pandas -- read the same interval parts and group-by-sum the counters per LPAR (no buckets, no
  formulas: a lower bound for any pandas route), (b) DuckDB -- a raw scan summing the counters per LPAR.

Run:  .venv/bin/python bench/bench_fleet.py [--cecs 10] [--lpars 2] [--cpus 4] [--months 12] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.dataset import Dataset  # noqa: E402
from app.dataset.query import QuerySpec, run_query  # noqa: E402
from app.engine.catalog import load_formula_sets  # noqa: E402
from app.formats.schema import IDENTITY_COLUMNS, SET_BASIC, SET_EXTENDED, SET_PROBLEM, ReadResult  # noqa: E402

T0 = pd.Timestamp("2025-01-01")
STEP = pd.Timedelta(minutes=15)
SPEED = 5200


def month_samples(cec: int, lpar: int, month: int, cpus: int, counters: list[str], rng) -> pd.DataFrame:
    start = T0 + pd.DateOffset(months=month)
    end = T0 + pd.DateOffset(months=month + 1)
    times = pd.date_range(start + STEP, end, freq=STEP).to_numpy(dtype="datetime64[ns]")
    n_t = len(times)
    n = n_t * cpus
    cyc = SPEED * 1e6 * 900
    busy = rng.uniform(0.2, 0.9, n)
    b0 = (busy * cyc).astype(np.uint64)
    cpi = rng.uniform(2.0, 4.0, n)
    data: dict[str, object] = {}
    name = f"C{cec:02d}L{lpar}"
    ident = {"source": f"fleet/{name}_{month:02d}.smf", "cec": f"3931-{cec:05X}", "machine_type": "3931",
             "model": "A01", "serial": f"{cec:05X}", "lpar": name, "system": name, "os": "z/OS", "class": "GCP"}
    for c, t in IDENTITY_COLUMNS.items():
        if c in ident:
            data[c] = pd.Categorical(np.full(n, ident[c], dtype=object))
    data["offset"] = np.arange(n, dtype=np.int64) * 1000
    data["cpu"] = np.tile(np.arange(cpus, dtype=np.int32), n_t)
    data["core"] = np.full(n, -1, np.int32)
    data["run_start"] = np.full(n, np.datetime64(start.to_datetime64(), "ns"))
    data["time"] = np.repeat(times, cpus)
    data["cpu_speed"] = np.full(n, SPEED, np.int64)
    data["cfvn"] = np.full(n, 3, np.int32)
    data["csvn"] = np.full(n, 7, np.int32)
    data["flags"] = np.zeros(n, np.int32)
    for c in ("lost", "mt_lost", "first"):
        data[c] = np.zeros(n, bool)
    data["kind"] = pd.Categorical(np.full(n, "delta", dtype=object))
    data["sets"] = np.full(n, SET_BASIC | SET_PROBLEM | SET_EXTENDED, np.int32)
    b1 = (b0 / cpi).astype(np.uint64)
    for c in counters:
        if c == "B0":
            data[c] = b0
        elif c == "B1":
            data[c] = b1
        else:   # plausible fractions of the instructions / cycles
            base = b1 if c in ("B2", "B4", "P33") else b0
            data[c] = (base * rng.uniform(0.001, 0.05, n)).astype(np.uint64)
    df = pd.DataFrame(data)
    return df[list(IDENTITY_COLUMNS) + counters]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def queries(ds: Dataset, label: str, n_rows: int) -> None:
    import duckdb

    cec0 = "3931-00000"
    specs = [("--by lpar (whole window)", QuerySpec(by="lpar")),
             ("--by lpar --every month", QuerySpec(by="lpar", every="month")),
             ("--by cec --every day", QuerySpec(by="cec", every="day")),
             ("--by interval, one CEC, one week", QuerySpec(by="interval", where=f"cec = '{cec0}'",
                                                            start="2025-01-06", end="2025-01-13"))]
    files = ds.parts("intervals")
    counters = ds.counters()
    print(f"\n[{label}] dataset: {n_rows:,} CPU-intervals in {len(files)} part files")
    for name, spec in specs:
        res, dt = timed(lambda: run_query(ds, spec))
        print(f"  query {name:36s} {dt:7.2f} s  ({len(res):,} rows)")

    def pandas_baseline():
        cols = ["cec", "lpar"] + counters
        df = pd.concat([pd.read_parquet(f, columns=cols) for f in files], ignore_index=True)
        return df.groupby(["cec", "lpar"], sort=True)[counters].sum()
    _, dt = timed(pandas_baseline)
    print(f"  baseline pandas read + groupby-sum per LPAR   {dt:7.2f} s")

    def duck_baseline():
        con = duckdb.connect()
        lst = "[" + ", ".join("'" + f + "'" for f in files) + "]"
        sums = ", ".join(f'SUM("{c}")' for c in counters)
        out = con.execute(f"SELECT cec, lpar, {sums} FROM read_parquet({lst}, union_by_name=true, "
                          "hive_partitioning=false) GROUP BY cec, lpar").df()
        con.close()
        return out
    _, dt = timed(duck_baseline)
    print(f"  baseline DuckDB raw scan, sums per LPAR       {dt:7.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cecs", type=int, default=10)
    ap.add_argument("--lpars", type=int, default=2)
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--months", type=int, default=12)
    ap.add_argument("--keep", type=Path, help="keep the dataset in this directory")
    a = ap.parse_args()
    sets = load_formula_sets()
    counters = sorted({f"B{i}" for i in range(6)} | {"P32", "P33"} | sets["z16"].counters(),
                      key=lambda c: ("BPKEM".index(c[0]), int(c[1:])))
    tmp = Path(tempfile.mkdtemp(prefix="nestscope-fleet-"))
    root = a.keep or tmp / "ds"
    ds = Dataset(root, create=True)
    rng = np.random.default_rng(13)
    print(f"fleet: {a.cecs} CECs x {a.lpars} LPARs x {a.cpus} CPUs, {a.months} months of 15-minute intervals, "
          f"{len(counters)} counters; one file per LPAR and month")
    halves = [range(0, a.months // 2), range(a.months // 2, a.months)]
    rows = 0
    for h, months in enumerate(halves):
        t_ext = t_base = 0.0
        n_samples = n_files = 0
        for m in months:
            for c in range(a.cecs):
                for lp in range(a.lpars):
                    s = month_samples(c, lp, m, a.cpus, counters, rng)
                    file = str(s["source"].iloc[0])
                    sha = hashlib.sha256(f"{file}".encode()).hexdigest()
                    r = ReadResult(file=file, kind="smf", framing="generated", records={"113/1": len(s)}, samples=s)
                    res, dt = timed(lambda: ds.add_result(r, sha, 0, sets))
                    assert res.status == "added", res.message
                    t_ext += dt
                    n_samples += len(s)
                    n_files += 1
                    rows += res.intervals

                    def plain():
                        import pyarrow as pa
                        import pyarrow.parquet as pq
                        pq.write_table(pa.Table.from_pandas(s, preserve_index=False), tmp / "plain.parquet",
                                       compression="zstd")
                    _, db = timed(plain)
                    t_base += db
        print(f"\nextract, part {h + 1}: {n_files} files, {n_samples:,} samples in {t_ext:.1f} s = "
              f"{n_samples / t_ext:,.0f} samples/s ({n_files / t_ext:.1f} files/s); "
              f"baseline plain Parquet write of the same frames {t_base:.1f} s = {n_samples / t_base:,.0f} samples/s")
        queries(ds, f"size {h + 1}: {months.stop} months", rows)
    size = sum(p.stat().st_size for p in root.rglob("*.parquet"))
    print(f"\ndataset on disk: {size / 1e6:,.1f} MB ({root})")
    if a.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
