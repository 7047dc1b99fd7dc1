"""Fleet benchmark (issue 24): extract and query of a generated fleet, each beside a baseline taken in the same run.

Sections (``--section``, default all):

* ``manifest``: ``--entries`` (20,000) manifest entries of one part per table each; the time to read every entry
  file (what each query and each extracted file did before the index), the first load of a dataset without index
  (the migration), then loading the manifest index and listing one CEC's parts of one month from it (a new
  :class:`Dataset` each time, as a command does) beside its floor, pyarrow reading the same index columns and
  nothing else; interleaved, best and median of 7, wall and CPU time.
* ``narrow``: a generated fleet of ``--cecs`` (5) z16 CECs x ``--lpars`` (3) LPARs x ``--cpus`` (4) GCPs,
  15-minute intervals for ``--months`` (12) months, one "file" per LPAR and month (counter samples generated
  with numpy within the physical bounds, subtype-1 style deltas; extract timed from decoded samples onward:
  ``Dataset.add_result``).  Then a narrow query (one CEC, one month: ``--where cec=... --from --to``), one CEC's
  year (``--where cec=...``) and a whole-fleet query (by LPAR and month), each ``run_query`` (a new
  :class:`Dataset` each run, as a command does) beside its floor, DuckDB's own group-sum of the counters the
  metrics need over the same part files.  Both run in fresh processes, in interleaved pairs (floor, query, and
  ``--against CHECKOUT``'s query: the same load for each), each child first importing what it needs (untimed:
  duckdb and pandas; the query child also ``app.dataset.query``), then timing a first run and 2 warm runs:
  - the query's first run is what a command's query costs once per process: the index, the parts' checks, the
    formula sets, DuckDB's connect and first bind, the lazy imports, the statement, the frame;
  - the floor's first run is DuckDB's connect with the settings the query's engine makes (time zone UTC, the
    part footers cached, ``parquet_metadata_cache``) and the group-sum as the connection's first statement; its
    warm runs are the same statement on the same connection, as the query's warm runs use the process's
    database.  The part files are in the OS cache for both (read by the runs before; no cache is dropped).
  Before the pairs, one untimed query child per tree: the children import bytecode (compiled once into a folder
  of the temp dir, as an installed package's modules are) and the parts are stamped as checked (the state after
  any earlier query of the dataset: :func:`app.dataset.integrity.stamped_checks`; the first query after an
  extract reads each part's CRC-32 once).  Every run is set against the floor's same run of the same pair (wall and CPU of the whole process, DuckDB's
  threads included): the ratio of each, its median and the worst, for first runs and warm runs apart.  Floor 2,
  warm, is the same group-sum with the query's other columns as plain DuckDB SQL computes them (first start,
  last end, COUNT(DISTINCT) of CPUs and intervals, quality bits, counts, busy time).  Then the whole
  ``nestscope query`` command in this process, and the command in a process of its own beside the group-sum in
  a process of its own and beside ``python -c "import duckdb"`` alone (the fixed cost of a command: imports,
  the index, the parts' checks).  ``--keep DIR`` keeps the fleet; a later run with the same ``--keep`` reuses it
  (queries only).
* ``extract``: ``nestscope extract`` of a large SMF 113 file (``--file``: RDW, blocked, gzip, tersed or MONWRITE,
  all streamed; default one of ``--big-mb`` (200) MB of RDW records generated from the z16 ZOSA sample, a day
  after another; ``gzip -1`` it for the gzip figure) in a child process, streamed in chunks of ``--chunk-mb`` MB
  of input, beside its floor in another child: decoding the same file in the same chunks plus a plain Parquet
  write (``pa.Table.from_pandas``, zstd, pyarrow's defaults) of the same frames the extract writes: each
  decoded chunk's samples, and the intervals (and z/VM partition rows) the extract wrote, read back from its
  dataset outside the timed part.  Wall and CPU seconds and peak memory (``ru_maxrss`` of each child; the
  floor's taken before its untimed read-back), ``--repeats`` interleaved runs, medians.  The peak is set against
  the largest decoded chunk: the samples frame one chunk decodes to (the counters the extract keeps, as the
  reader returns it, ``memory_usage(deep=True)``), above a child that only imports and above a warm floor (a
  child that has extracted a small bundled sample: the code an extract runs, resident, with no chunk held).
  The reader's own peak is printed beside it: a child that extracts the small sample, then decodes the file in
  the same chunks and lets each go (nothing written), its peak above its resident size before decoding: the
  least an extract can reach with that reader, whatever the dataset code does.
  ``--against CHECKOUT`` extracts with that checkout's tree too, interleaved (main vs a branch in one run).
  Each extract run is also set against the floor of its own round (the same load): every ratio, the median
  and the worst, wall and CPU.

The load average is printed with every figure (the machine may be shared).

Run:  .venv/bin/python bench/bench_fleet.py [--section manifest|narrow|extract] [--cecs 5] [--lpars 3] [--cpus 4]
      [--months 12] [--entries 20000] [--file F] [--big-mb 200] [--chunk-mb 32] [--keep DIR] [--repeats 2]
      [--against CHECKOUT] [--cases month,year,fleet] [--narrow-runs N] [--no-command]
      (``--against``: narrow and extract)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
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
    # within the physical bounds (app.engine.plausibility): L1 directory writes (B2, B4) well above the sum of the
    # sourcing counters, miss cycles (B3, B5) above the problem-state shares of them, problem state below total
    share = {"B2": (0.2, 0.3), "B4": (0.2, 0.3), "B3": (0.05, 0.1), "B5": (0.05, 0.1), "P32": (0.3, 0.6)}
    for c in counters:
        if c == "B0":
            data[c] = b0
        elif c == "B1":
            data[c] = b1
        elif c == "P33":
            data[c] = (b1 * rng.uniform(0.3, 0.6, n)).astype(np.uint64)
        else:   # small fractions of the cycles (sourcing shares: their sum stays below B2 + B4)
            lo, hi = share.get(c, (0.0005, 0.004))
            data[c] = (b0 * rng.uniform(lo, hi, n)).astype(np.uint64)
    df = pd.DataFrame(data)
    return df[list(IDENTITY_COLUMNS) + counters]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


# ----------------------------------------------------------------------------- manifest
def bench_manifest(n: int, tmp: Path) -> None:
    from app.dataset import integrity
    from app.dataset.store import FORMAT, MARKER

    root = tmp / "manifest-ds"
    (root / "manifest").mkdir(parents=True)
    (root / MARKER).write_text(json.dumps(FORMAT))
    t0 = time.perf_counter()
    for i in range(n):
        sha = hashlib.sha256(str(i).encode()).hexdigest()
        cec, month = f"3931-{i % 5:05X}", f"2025-{i % 12 + 1:02d}"
        parts = {t: [f"{t}/cec={cec}/month={month}/part-{sha[:12]}-{i:012x}.parquet"] for t in ("samples", "intervals")}
        keys = {p[0]: {"cec": cec, "month": month, "rows": 2976, "bytes": 150_000 + i, "crc32": i}
                for p in parts.values()}
        e = {"sha256": sha, "name": f"SMF{i:05d}.bin", "path": f"/data/SMF{i:05d}.bin", "size": 1 << 20,
             "kind": "smf", "framing": "rdw", "records": {"113/1": 2976}, "readable": True, "samples": 2976,
             "intervals": 2976, "time_first": "2025-01-01T00:15:00Z", "time_last": "2025-02-01T00:00:00Z",
             "findings": 0, "findings_by_severity": {}, "findings_sample": [],
             "systems": [{"cec": cec, "machine_type": "3931", "lpar": "L1", "system": "L1", "os": "z/OS",
                          "classes": {"GCP": 4}}], "interval_counters": [f"B{k}" for k in range(6)],
             "parts": parts, "part_keys": keys, "extracted_at": "2025-02-01T00:00:00.000000000Z"}
        e["seal"] = integrity.seal_entry(e)
        (root / "manifest" / f"{sha}.json").write_text(json.dumps(e, indent=1))
    print(f"\n[manifest] {n:,} entries written in {time.perf_counter() - t0:.1f} s; {load()}")

    def every_entry():              # what each query and each extracted file did before the index
        out = []
        for p in (root / "manifest").glob("*.json"):
            e = json.loads(p.read_text(encoding="utf-8"))
            if not integrity.entry_problem(p.name, e):
                out.append(e)
        return out
    _, t_old = timed(every_entry)

    def migrate():
        ds = Dataset(root)
        rows = ds.index.part_rows("intervals", ["3931-00000"], ["2025-01"])
        ds.save_index()
        return rows
    rows, t_mig = timed(migrate)
    import pyarrow.parquet as pq

    from app.dataset.index import _LOAD_COLS, INDEX_NAME

    def raw():                      # the floor: pyarrow reading the columns a load reads, nothing else
        return pq.ParquetFile(root / "manifest" / INDEX_NAME).read(columns=list(_LOAD_COLS), use_threads=False)

    def indexed():
        ds = Dataset(root)
        return ds.index.part_rows("intervals", ["3931-00000"], ["2025-01"])
    runs: dict[str, list[tuple[float, float]]] = {"raw": [], "index": []}
    for _ in range(7):              # interleaved, so that both see the same load
        for key, fn in (("raw", raw), ("index", indexed)):
            c0 = time.process_time()
            got, dt = timed(fn)
            runs[key].append((dt, time.process_time() - c0))
            if key == "index":
                rows2 = got
    assert len(rows) == len(rows2) == len(range(0, n, 60))

    def fig(key):
        wall = sorted(w for w, _c in runs[key])
        return min(wall), wall[len(wall) // 2], min(c for _w, c in runs[key])
    (rw, rm, rc), (iw, im, ic) = fig("raw"), fig("index")
    print(f"  baseline: read and check every entry file       {t_old:7.3f} s")
    print(f"  first load without index (migration) + write    {t_mig:7.3f} s")
    print(f"  floor: raw read of the index's loaded columns   {rw:7.3f} s (best of 7; median {rm:.3f} s; CPU {rc:.3f} s)")
    print(f"  load the index + one CEC-month's parts          {iw:7.3f} s (best of 7; median {im:.3f} s; CPU {ic:.3f} s;"
          f" {iw / rw:.1f}x the floor; target < 0.2 s); {load()}")


# ----------------------------------------------------------------------------- narrow
def bench_narrow(a, root: Path, tmp: Path) -> None:
    import duckdb

    from app.dataset import tables
    from app.dataset.query import query_partitions
    from app.dataset.stats import refresh_stats
    from app.dataset.store import interval_counters
    from app.engine.metrics import hint_counters

    sets = load_formula_sets()
    counters = sorted({f"B{i}" for i in range(6)} | {"P32", "P33"} | sets["z16"].counters(),
                      key=lambda c: ("BPKEM".index(c[0]), int(c[1:])))
    reuse = a.keep is not None and (root / "manifest").is_dir() and any((root / "manifest").glob("*.json"))
    ds = Dataset(root, create=True)
    rng = np.random.default_rng(13)
    print(f"\n[narrow] fleet: {a.cecs} CECs x {a.lpars} LPARs x {a.cpus} CPUs, {a.months} months of 15-minute "
          f"intervals, {len(counters)} counters; one file per LPAR and month; {load()}")
    t_ext = t_base = 0.0
    n_samples = n_files = rows = 0
    if reuse:
        print(f"  the fleet kept in {root} from an earlier run: queries only")
    for m in range(0 if reuse else a.months):
        for c in range(a.cecs):
            for lp in range(a.lpars):
                s = month_samples(c, lp, m, a.cpus, counters, rng)
                file = str(s["source"].iloc[0])
                sha = hashlib.sha256(file.encode()).hexdigest()
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
    if reuse:       # a fleet copied without its files' times: the index brought up to date, as extract leaves it
        ds.index.verify()
    _, t_up = timed(lambda: (ds.save_index(), refresh_stats(ds)))
    if not reuse:
        print(f"  extract {n_files} files, {n_samples:,} samples: {t_ext:.1f} s = {n_samples / t_ext:,.0f} samples/s; "
              f"baseline plain Parquet write of the same frames {t_base:.1f} s; index + bucket cache {t_up:.1f} s")
    cec, month = "3931-00002", (T0 + pd.DateOffset(months=a.months // 2)).strftime("%Y-%m")
    start = pd.Timestamp(month + "-01")
    end = start + pd.DateOffset(months=1)
    need = sorted(interval_counters({"z16": sets["z16"]}) & set(Dataset(root).counters()))
    need = [c for c in need if c in set(sets["z16"].counters()) | set(hint_counters(sets, need))] or need

    # what the query returns beside the sums, written as DuckDB alone would compute it: the first start and last
    # end, the CPUs and intervals counted (COUNT(DISTINCT)), the quality bits, the rows and the counted counters,
    # the busy time; grouped by every identity column the query shows (system, os, generation, formula set)
    extras = ('MIN(t_start), MAX(t_end), COUNT(DISTINCT cpu), COUNT(DISTINCT t_end), BIT_OR(qbits), COUNT(*), '
              'COUNT("P32"), COUNT("E128"), SUM("B0" / cpu_speed)')

    def floor_sql(files, group: str, where: str = "", full: bool = False) -> str:
        sums = ", ".join(f'SUM("{c}")' for c in need)
        lst = "[" + ", ".join("'" + f + "'" for f in files) + "]"
        if full:
            group = group.replace("lpar", "lpar, system, os, generation, formula_set")
            sums = extras + ", " + sums
        return f"SELECT {group}, {sums} FROM {tables.duckdb_source(lst)} {where} GROUP BY {group}"

    from app.cli import main as cli

    cases = [
            ("month", f"one CEC ({cec}), one month ({month}), by LPAR",
             dict(by="lpar", where=f"cec = '{cec}'", start=start.isoformat(), end=end.isoformat()), "lpar",
             f"WHERE t_end > TIMESTAMPTZ '{start.isoformat()}+00' AND t_end <= TIMESTAMPTZ '{end.isoformat()}+00'",
             ["--where", f"cec = '{cec}'", "--from", start.isoformat(), "--to", end.isoformat()]),
            ("year", f"one CEC ({cec}), every month of the year, by LPAR",
             dict(by="lpar", where=f"cec = '{cec}'"), "lpar", "", ["--where", f"cec = '{cec}'"]),
            ("fleet", "whole fleet by LPAR and month", dict(by="lpar", every="month"), "cec, lpar, month", "",
             ["--every", "month"])]
    here = Path(__file__).resolve().parents[1]
    trees = [("this tree", here)] + ([(f"--against {a.against}", a.against)] if a.against else [])
    for name, label, spec_kw, group, where, argv in cases:
        if name not in a.cases.split(","):
            continue
        spec = QuerySpec(**{k: (pd.Timestamp(v) if k in ("start", "end") else v) for k, v in spec_kw.items()})
        fresh = Dataset(root)               # a new command: the index is read once
        files = fresh.parts("intervals", *query_partitions(fresh, spec))
        n_all = len(fresh.parts("intervals"))
        pairs = a.narrow_runs or (5 if len(files) < 50 else 2)
        warm = 2
        sql1, sql2 = floor_sql(files, group, where), floor_sql(files, group, where, full=True)
        got: dict[str, list[dict]] = {"floor": []} | {t: [] for t, _ in trees}
        for _t, tree in trees:      # untimed: bytecode compiled, parts stamped as checked (as after any query)
            _narrow_child(tree, "query", root, json.dumps(spec_kw), 0)
        for _ in range(pairs):      # interleaved pairs of fresh processes: every pair sees the same load
            got["floor"].append(_narrow_child(here, "floor", root, json.dumps([sql1, sql2, len(files)]), warm))
            for t, tree in trees:
                got[t].append(_narrow_child(tree, "query", root, json.dumps(spec_kw), warm))
        print(f"  query {label}: from {len(files)} of {n_all} part files; {pairs} interleaved pairs of fresh "
              f"processes, each a first run and {warm} warm runs; {load()}")
        fl = got["floor"]
        f_first = [r["wall"][0] for r in fl]
        print(f"    floor, the first run of a process (connect, settings, the group-sum of {len(need)} counters): "
              f"median {_med(f_first):.3f} s (CPU {_med([r['cpu'][0] for r in fl]):.3f} s); warm runs median "
              f"{_med([w for r in fl for w in r['wall'][1:]]):.3f} s (CPU "
              f"{_med([w for r in fl for w in r['cpu'][1:]]):.3f} s)")
        print(f"    floor 2 (the same with the query's other columns: times, CPU and interval counts, quality, busy),"
              f" warm: median {_med([w for r in fl for w in r['wall2']]):.3f} s")
        for t, _tree in trees:
            qs = got[t]
            for what, k in (("first run of a process", slice(0, 1)), ("warm runs", slice(1, None))):
                pw = [x / y for q, f in zip(qs, fl) for x, y in zip(q["wall"][k], f["wall"][k])]
                pc = [x / y for q, f in zip(qs, fl) for x, y in zip(q["cpu"][k], f["cpu"][k])]
                print(f"    {t}: run_query, {what}: median {_med([w for q in qs for w in q['wall'][k]]):.3f} s "
                      f"(CPU {_med([w for q in qs for w in q['cpu'][k]]):.3f}) | per run / the floor's same run: "
                      f"wall {', '.join(f'{r:.2f}' for r in pw)} (median {_med(pw):.2f}, worst {max(pw):.2f}); CPU "
                      f"{', '.join(f'{r:.2f}' for r in pc)} (median {_med(pc):.2f}, worst {max(pc):.2f}); "
                      f"target <= 1.5")
            w2 = [x / y for q, f in zip(qs, fl) for x, y in zip(q["wall"][1:], f["wall2"])]
            print(f"    {t}: warm run_query / floor 2's same run: median {_med(w2):.2f}, worst {max(w2):.2f}")
        print(f"    {len(got[trees[0][0]][0]['rows'])} rows; {load()}")
        if a.no_command:
            continue
        t_c = []
        # the whole command in this process (warm): the index, the query, report's extras, output
        for _ in range(2 if pairs > 2 else 1):
            _, dt = timed(lambda: cli(["query", str(root), "--by", "lpar", *argv, "--out", str(tmp / "q.txt")]))
            t_c.append(dt)
        # the command in a process of its own (imports, index, the parts' checks, coverage, output) beside
        # DuckDB's group-sum in a process of its own (importing duckdb and pandas, as .df() needs) and beside
        # `python -c "import duckdb"` alone
        floor_code = ("import duckdb, sys; con = duckdb.connect(); con.execute(sys.argv[1]).df()")
        env = _child_env(here)
        t_pc, t_pf, t_pi = [], [], []
        for _ in range(2 if pairs > 2 else 1):
            for out, cmd in ((t_pc, [sys.executable, "-m", "app", "query", str(root), "--by", "lpar", *argv, "--out",
                                     str(tmp / "q.txt")]),
                             (t_pf, [sys.executable, "-c", floor_code, sql1]),
                             (t_pi, [sys.executable, "-c", "import duckdb"])):
                _, dt = timed(lambda: subprocess.run(cmd, check=True, env=env, capture_output=True))
                out.append(dt)
        print(f"    nestscope query (the command, coverage and partition data, table), warm in this process "
              f"{min(t_c):6.3f} s")
        print(f"    in a process of its own (best of {len(t_pc)}): nestscope query {min(t_pc):6.3f} s | floor: python -c "
              f"'import duckdb' + the group-sum {min(t_pf):6.3f} s | ratio {min(t_pc) / min(t_pf):4.2f} | python -c "
              f"'import duckdb' alone {min(t_pi):6.3f} s; {load()}")
        leftovers_check(root, spec)


def _med(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if s else float("nan")


# a fresh process: the modules a command imports (untimed), then `warm + 1` timed runs: the first run of a
# process (what it does once per process: the connect, the first bind, the index, the parts' checks, the formula
# sets) and warm runs.  floor: one DuckDB connection with the settings the query's engine uses (time zone UTC, the
# parquet footers cached as the engine caches them), the group-sum as the first statement of the first run (the
# connect timed in it, as run_query's own connect is timed in its first run), the same connection for the warm runs
_NARROW_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
mode, root, arg, warm = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
import duckdb, pandas as pd
out = {"wall": [], "cpu": [], "wall2": []}
if mode == "query":
    from app.dataset import Dataset
    from app.dataset.query import QuerySpec, run_query
    spec = QuerySpec(**{k: (pd.Timestamp(v) if k in ("start", "end") else v) for k, v in arg.items()})
    for _ in range(warm + 1):
        t, c = time.perf_counter(), time.process_time()
        res = run_query(Dataset(root), spec)
        out["wall"].append(time.perf_counter() - t)
        out["cpu"].append(time.process_time() - c)
    out["rows"] = [list(map(str, r)) for r in res.iloc[:, :3].itertuples(index=False)]
else:
    sql1, sql2, n_files = arg
    con = None
    for _ in range(warm + 1):
        t, c = time.perf_counter(), time.process_time()
        if con is None:
            con = duckdb.connect()
            con.execute("SET TimeZone = 'UTC'")
            con.execute(f"SET parquet_metadata_cache = {'true' if n_files <= 1000 else 'false'}")
        con.execute(sql1).df()
        out["wall"].append(time.perf_counter() - t)
        out["cpu"].append(time.process_time() - c)
    for _ in range(warm):
        t = time.perf_counter()
        con.execute(sql2).df()
        out["wall2"].append(time.perf_counter() - t)
print(json.dumps(out))
"""


def _child_env(tree: Path) -> dict[str, str]:
    """A child's environment: modules imported from bytecode, as an installed package's are (compiled once into
    a folder of the temp dir, neither tree written; PYTHONDONTWRITEBYTECODE would compile every module of app
    at every import)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "nestscope-bench-pycache")
    return env


def _narrow_child(tree: Path, mode: str, root: Path, arg: str, warm: int) -> dict:
    r = subprocess.run([sys.executable, "-c", _NARROW_CHILD, str(tree), mode, str(root), arg, str(warm)],
                       capture_output=True, text=True, check=True, cwd=str(tree), env=_child_env(tree))
    return json.loads(r.stdout[r.stdout.rindex('{"wall"'):])      # (after DuckDB's progress bar, if it drew one)


def leftovers_check(root: Path, spec) -> None:
    """What the query command spends on leftovers of killed extracts: the query's partitions (plan.scope) beside
    the whole-dataset walk it did before (the same process, interleaved), and the directories each lists."""
    try:
        from app.dataset.plan import scope
    except ImportError:                 # a tree from before the narrow check: nothing to compare
        return
    import os as _os

    ds = Dataset(root)
    ds.leftovers()                      # the index and the compaction records loaded once
    listed: list[str] = []
    real = _os.scandir

    def counting(path="."):
        listed.append(_os.fspath(path))
        return real(path)

    t_own, t_all, n = [], [], {}
    cecs, month_ok = scope(spec)
    for _ in range(5):
        for key, call, out in (("own", lambda: ds.leftovers(cecs=cecs, month_ok=month_ok), t_own),
                               ("all", lambda: ds.leftovers(), t_all)):
            listed.clear()
            _os.scandir = counting
            try:
                _, dt = timed(call)
            finally:
                _os.scandir = real
            out.append(dt)
            n[key] = len(listed)
    print(f"    leftovers check: the query's partitions {min(t_own) * 1e3:7.2f} ms ({n['own']} directories listed) | "
          f"whole-dataset walk as before {min(t_all) * 1e3:7.2f} ms ({n['all']} directories) (best of 5)")


# ----------------------------------------------------------------------------- extract
_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
t = time.perf_counter()
info = {{}}
if mode == "extract":
    from app.dataset import Dataset
    ds = Dataset(out, create=True)
    r = ds.extract(path)
    ds.save_index()
    info["status"] = r.status
    info["samples"] = r.samples
    info["chunks"] = r.entry.get("chunks", 1)
elif mode == "plain":          # the floor: decoding in the same chunks + a plain Parquet write of the same frames
    import glob
    import pyarrow as pa, pyarrow.parquet as pq
    from app.dataset.store import interval_counters
    from app.engine.catalog import load_formula_sets
    from app.formats import open_data
    from app.formats.chunks import read_chunks
    file, data, failed = open_data(path)
    info["samples"] = info["chunks"] = info["interval_rows"] = 0
    info["frame_mb"] = 0.0
    os.makedirs(out, exist_ok=True)
    for k, r in enumerate(read_chunks(data, file, counters=interval_counters(load_formula_sets()))):
        info["frame_bytes"] = max(info.get("frame_bytes", 0), int(r.samples.memory_usage(deep=True).sum()))
        info["frame_mb"] = info["frame_bytes"] / 1e6
        info["samples"] += len(r.samples)
        info["chunks"] += 1
        pq.write_table(pa.Table.from_pandas(r.samples, preserve_index=False), os.path.join(out, f"{{k}}.parquet"),
                       compression="zstd")
        del r
    # the peak of decoding and writing the samples (the read-back below, untimed, would raise it)
    info["decode_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # the other frames the extract wrote (its intervals, z/VM partition rows), read back untimed, written plainly
    untimed = [0.0, 0.0]
    for table in ("intervals", "partitions"):
        for k, part in enumerate(sorted(glob.glob(os.path.join(sys.argv[4], table, "**", "*.parquet"),
                                              recursive=True))):
            t0, c0 = time.perf_counter(), time.process_time()
            frame = pq.read_table(part).to_pandas()
            untimed[0] += time.perf_counter() - t0
            untimed[1] += time.process_time() - c0
            info["interval_rows"] += len(frame) if table == "intervals" else 0
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False),
                           os.path.join(out, f"{{table}}-{{k}}.parquet"), compression="zstd")
            del frame
    info["untimed_s"], info["untimed_cpu"] = untimed
elif mode == "decode":         # the reader's own peak: the warm code, then the same chunks decoded, nothing kept
    from app.dataset import Dataset
    from app import memory
    from app.dataset.store import interval_counters
    from app.engine.catalog import load_formula_sets
    from app.formats import open_data
    from app.formats.chunks import read_chunks
    ds = Dataset(out, create=True)
    ds.extract(os.path.join({root!r}, "resources", "samples", "after_z16_ZOSA_smf113.rdw.gz"))
    memory.release()
    info["rss_mb"] = memory.rss_mb()
    memory.reset_peak()                     # the peak below is the reader's, not the warm-up extract's
    file, data, failed = open_data(path)
    memory.streaming_heap()                 # as extract
    for r in read_chunks(data, file, counters=interval_counters(load_formula_sets()), by_column=True):  # (its read)
        more = (r.meta or {{}}).get("more", False)
        r.samples = r.samples.iloc[:0].copy()   # let go as extract does (the reader's loop holds r until the next)
        del r
        if more:
            memory.release(collect=False)   # as extract between chunks
elif mode == "warm":           # the code an extract runs, loaded by extracting a small bundled sample
    from app.dataset import Dataset
    from app import memory
    ds = Dataset(out, create=True)
    ds.extract(os.path.join({root!r}, "resources", "samples", "after_z16_ZOSA_smf113.rdw.gz"))
    ds.save_index()
    memory.release()
    info["rss_mb"] = memory.rss_mb()     # MiB, as ru_maxrss / 1024
else:
    import pandas, pyarrow, duckdb
    from app.dataset import Dataset
    from app.formats import read_bytes
info["s"] = time.perf_counter() - t - info.get("untimed_s", 0.0)
ru = resource.getrusage(resource.RUSAGE_SELF)
info["cpu"] = ru.ru_utime + ru.ru_stime - info.get("untimed_cpu", 0.0)
info["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(info))
"""


def make_big_smf(path: Path, mb: float) -> int:
    """An RDW-framed SMF 113 subtype 1 file of about ``mb`` MB: the z16 ZOSA sample's delta records repeated
    day after day (times shifted), written a day at a time.  Returns the number of records."""
    from app.formats import read_file
    from app.formats.smf113_writer import encode_samples, frame_rdw

    root = Path(__file__).resolve().parents[1] / "resources" / "samples"
    s = read_file(root / "after_z16_ZOSA_smf113.rdw.gz").samples
    s = s[s["kind"].astype(str) == "delta"].reset_index(drop=True)
    span = (s["time"].max() - s["time"].min()).ceil("D") or pd.Timedelta(days=1)
    n = k = 0
    with open(path, "wb") as fh:
        while fh.tell() < mb * 1e6:
            shifted = s.assign(time=s["time"] + k * span)
            for c in ("run_start", "rec_start", "rec_end", "local_time"):
                if c in shifted.columns:
                    shifted[c] = shifted[c] + k * span
            fh.write(frame_rdw(encode_samples(shifted, 1)))
            n += len(s)
            k += 1
    return n


def bench_extract(path: Path, tmp: Path, chunk_mb: float | None, repeats: int = 2,
                  against: Path | None = None) -> None:
    from app.formats.chunks import chunk_bytes

    here = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    if chunk_mb:
        env["NESTSCOPE_EXTRACT_CHUNK_MB"] = str(chunk_mb)
        os.environ["NESTSCOPE_EXTRACT_CHUNK_MB"] = str(chunk_mb)

    def child(mode: str, out: Path, *more: Path, root: Path = here) -> dict:
        code = _CHILD.format(root=str(root))
        r = subprocess.run([sys.executable, "-c", code, mode, str(path), str(out), *map(str, more)],
                           capture_output=True, text=True, check=True, env=env, cwd=str(root))
        return json.loads(r.stdout.strip().splitlines()[-1])
    size = path.stat().st_size
    print(f"\n[extract] {path.name} ({size / 1e6:.1f} MB as stored); chunks of {chunk_bytes() / 2**20:.0f} MiB of "
          f"input; {repeats} interleaved repeats, medians; {load()}")
    floor = child("imports", tmp / "none")
    warm = child("warm", tmp / "warm")
    dec = child("decode", tmp / "decode")
    trees = [("this tree", here)] + ([(f"--against {against}", against)] if against else [])
    runs: dict[str, list[dict]] = {"plain": []} | {label: [] for label, _ in trees}
    for k in range(repeats):    # interleaved, so every run sees the same load; the floor writes what the extract wrote
        for i, (label, root) in enumerate(trees):
            runs[label].append(child("extract", tmp / f"ds-{k}-{i}", root=root))
        runs["plain"].append(child("plain", tmp / f"plain-{k}", tmp / f"ds-{k}-0"))

    def med(label: str, key: str) -> float:
        return float(np.median([r[key] for r in runs[label]]))
    p = runs["plain"][0]
    chunk_mb_dec = max(r["frame_mb"] for r in runs["plain"])    # the decoded samples of one chunk, in MB
    p_s, p_cpu, p_peak = med("plain", "s"), med("plain", "cpu"), med("plain", "decode_maxrss_mb")
    print(f"  floor (a child that imports only)               peak {floor['maxrss_mb']:7.1f} MB, CPU {floor['cpu']:.2f} s")
    print(f"  warm floor (the code an extract runs, loaded by extracting a small sample; resident after) "
          f"{warm['rss_mb']:7.1f} MB")
    print(f"  baseline decode + plain Parquet write           {p_s:6.2f} s, CPU {p_cpu:6.2f} s, peak "
          f"{p_peak:7.1f} MB ({p['samples']:,} samples in {p['chunks']} chunk(s); and the extract's "
          f"{p['interval_rows']:,} interval rows)")
    print(f"  the largest decoded chunk: the samples frame one chunk decodes to (the counters the extract keeps, "
          f"memory_usage(deep=True)), {max(r['frame_bytes'] for r in runs['plain']):,} bytes = {chunk_mb_dec:.1f} MB;"
          f" its input {chunk_bytes() / 1e6:.1f} MB")
    reader = dec["maxrss_mb"] - dec["rss_mb"]
    print(f"  the reader alone (the warm code, then the same chunks decoded and let go, nothing written): peak above "
          f"its warm start {reader:.1f} MB = {reader / max(1e-9, chunk_mb_dec):.2f} x the largest decoded chunk: "
          f"the least an extract's peak can be above the warm floor with this reader (app/formats)")
    for label, _root in trees:
        e = runs[label][0]
        e_s, e_cpu, e_peak = med(label, "s"), med(label, "cpu"), med(label, "maxrss_mb")
        cpus = ", ".join(f"{r['cpu']:.2f}" for r in runs[label])
        above, above_warm = e_peak - floor["maxrss_mb"], e_peak - warm["rss_mb"]
        print(f"  nestscope extract ({label})  {e_s:6.2f} s, CPU {e_cpu:6.2f} s (runs {cpus}), "
              f"peak {e_peak:7.1f} MB ({e['samples']:,} samples in {e['chunks']} chunk(s), {e['status']}; "
              f"{e['samples'] / e_s:,.0f} records/s, {size / 1e6 / e_s:.1f} MB/s)")
        per = [(r["s"] / f["s"], r["cpu"] / f["cpu"]) for r, f in zip(runs[label], runs["plain"])]
        print("    each run against the floor of its round (wall, CPU): "
              + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in per)
              + f"; median {np.median([w for w, _ in per]):.2f}/{np.median([c for _, c in per]):.2f}, worst "
              f"{max(w for w, _ in per):.2f}/{max(c for _, c in per):.2f}")
        print(f"    ratio to the floor: time {e_s / p_s:.2f}, CPU {e_cpu / p_cpu:.2f} (target <= 1.5); peak above the "
              f"imports {above:.1f} MB = {above / max(1e-9, chunk_mb_dec):.2f} x the largest decoded chunk (target "
              f"<= 1.5); above the warm floor {above_warm:.1f} MB = {above_warm / max(1e-9, chunk_mb_dec):.2f} x; "
              f"the floor's own peak above the imports {p_peak - floor['maxrss_mb']:.1f} MB; {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--section", choices=("all", "manifest", "narrow", "extract"), default="all")
    ap.add_argument("--cecs", type=int, default=5)
    ap.add_argument("--lpars", type=int, default=3)
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--months", type=int, default=12)
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--file", type=Path, help="extract this SMF file (default: a generated one of --big-mb MB)")
    ap.add_argument("--big-mb", type=float, default=200.0, help="size of the generated SMF file (default 200)")
    ap.add_argument("--chunk-mb", type=float, help="input MB per extract chunk (default: NESTSCOPE_EXTRACT_CHUNK_MB "
                    "or 32)")
    ap.add_argument("--keep", type=Path, help="keep the generated fleet dataset in this directory")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved extract repeats (default 2; medians)")
    ap.add_argument("--cases", default="month,year,fleet", help="narrow: the queries to time (comma list of "
                    "month, year, fleet; default all)")
    ap.add_argument("--narrow-runs", type=int, help="narrow: interleaved pairs of fresh processes, query and "
                    "floor (default 5, 2 for the year and the fleet)")
    ap.add_argument("--no-command", action="store_true", help="narrow: leave out the command timings (in this "
                    "process and in a process of its own) and the leftovers check")
    ap.add_argument("--against", type=Path, help="also extract and query with the tree of this checkout (e.g. a main "
                    "worktree), interleaved with this tree's runs")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="nestscope-fleet-"))
    try:
        if a.section in ("all", "manifest"):
            bench_manifest(a.entries, tmp)
        if a.section in ("all", "narrow"):
            bench_narrow(a, a.keep or tmp / "ds", tmp)
        if a.section in ("all", "extract"):
            f = a.file
            if f is None:
                f = tmp / "big.smf"
                _, dt = timed(lambda: make_big_smf(f, a.big_mb))
                print(f"\n[extract] generated {f.stat().st_size / 1e6:.1f} MB of SMF 113 subtype 1 in {dt:.1f} s")
            bench_extract(f, tmp, a.chunk_mb, a.repeats, a.against)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
