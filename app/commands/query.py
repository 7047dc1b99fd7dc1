"""``nestscope query DATASET [--by LEVEL] [--every P] [--from T --to T] [--hours H] [--days D] [--where COND]
[--format table|csv|json|parquet] [--engine duckdb|spark]``

The metrics of ``report`` computed by SQL over a fleet dataset (``nestscope extract``): DuckDB in-process by
default, Spark with ``--engine spark`` (``pip install 'nestscope[spark]'`` and a Java runtime; ``local[2]``
unless ``SPARK_MASTER`` names a cluster).  ``--every hour|day|week|month`` gives one row per node and period
(an interval belongs to the period its end falls in).  ``--hours``/``--days`` are the shift of ``report``
(app/engine/shift.py, the same parser and rule): ``--hours 08-17`` keeps intervals whose midpoint lies in
[08:00, 17:00) UTC (``08:30-17:00``, ``22-06`` wrapping midnight, a list ``08-12,13-17``), ``--days mon-fri``
those whose midpoint falls on Monday..Friday.  ``--where`` takes column names of the dataset (cec, lpar, system, os,
class, cpu, generation, machine_type...), 'strings', numbers, IN (...), AND, OR, NOT and comparisons.
``--tz ZONE`` (an IANA name) reads ``--hours``/``--days`` and the ``--every`` periods in that zone's wall-clock time
(in SQL: DuckDB's ``timezone()``, Spark's ``from_utc_timestamp``) and shows every time with that zone's offset;
``--tz local`` does so in each system's own wall clock, from the UTC offsets its records state (the intervals'
``utc_offset_s``; a system without one stays in UTC).  A dataset of format version 2 keeps no offsets: ``--tz
local`` on it exits 2 saying to re-extract.

A damaged manifest entry or part file is left out of the answer and named on stderr (and under ``left_out`` in
JSON, after the table): which file, what is wrong, what the answer leaves out.  Leftover files of killed extracts
are listed there too (the next ``extract`` removes them).

Exit codes: 0 ok, 2 usage error (bad option, bad --where, not a dataset), 3 the dataset holds no intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import pandas as pd

from app.commands import report
from app.commands.report import _iso, _num, _time, csv_columns, shown_in_zone, to_table, tz_arg
from app.textsafe import json_text, terminal_text

EXIT_OK, EXIT_USAGE, EXIT_NOTHING = 0, 2, 3

# every result column (csv, json, parquet; the table shows the main ones); a test keeps it complete
EPILOG = """result columns (one row per node, and per period with --every; times UTC, or --tz ZONE's):
  period              --every only: start of the hour/day/week (Monday)/month the row sums up
  cec                 machine: type-serial (e.g. 3931-123F5)
  lpar                LPAR name (z/OS: the SMF system id)
  system              SMF system id / z/VM system name
  os                  z/OS or z/VM
  class               CPU class: GCP, zIIP, zAAP (z/OS); CP, IFL, zIIP, ICF (z/VM)
  cpu                 logical CPU number (--by cpu)
  interval_start      start of the first interval summed into the row
  interval_end        end of the last interval summed into the row
  n_cpus              logical CPUs summed into the row
  generation          machine generation whose formulas apply (z14, z15, z16, z17...)
  formula_set         version of that formula set (with --formulas: the file's)
  metrics (the formulas applied to the summed counter deltas; empty where a generation has no formula):
  CPI                 cycles per instruction
  PRBSTATE, SUPSTATE  % of instructions in problem / supervisor state
  L1MP                L1 misses per 100 instructions
  L15P L2LP L2RP L2P L3P L4LP L4RP MEMP
                      where L1 misses were sourced, % of L1 misses (per generation's cache names)
  RNI                 relative nest intensity (dimensionless)
  Est_Instr_Cmplx_CPI estimated instruction complexity CPI (cycles/instruction)
  Est_Finite_CPI      estimated finite CPI: cycles waiting for L1 misses per instruction
  Est_SCPL1M          estimated sourcing cycles per L1 miss
  LPARCPU             busy, % of one logical CPU summed over the row's CPUs
  Eff_GHz             effective clock (GHz)
  MIPS_per_CPU        million instructions per CPU-busy second
  TLB1_Miss_Pct_CPU   % of CPU cycles spent in TLB1 misses
  TLB1_Cycles_per_Miss cycles per TLB1 miss
  PTE_Pct_TLB1_Miss   % of TLB1 misses that wrote a PTE entry
  Raw_Penalty_CPI     L1-miss penalty cycles per instruction
  ST_IPC, MT_IPC_per_thread, MT_Throughput_Gain_est
                      instructions per cycle single-threaded / per thread with SMT, estimated SMT gain
  Thread_Density      average active threads per dispatched core
  Core_Active_Pct     % of the interval at least one thread of the core was active
  Workload_Hint       LOW / AVERAGE / HIGH from L1MP and RNI (IBM's table), n/a without RNI
  quality             codes of what weakens the row (lost-data, partial-sets, implausible...); empty = clean
  left_out            CPU-intervals left out as implausible (--keep-implausible keeps them)
  data                --by lpar: 'counters', or 'partition data only' (an LPAR known from z/VM D0R16 alone)
  partition_cpus      --by lpar: logical CPUs of the LPAR in the partition data (all types)
  processors, weights --by lpar: CPUs and LPAR weight by processor type, from the partition data
  capped              --by lpar: capping, from the partition data
  partition_busy_sum_pct, partition_busy_per_cpu_pct
                      --by lpar: busy from the partition data: % of one CPU summed over the CPUs, and per CPU
  coverage_pct        --by cec/lpar/class: share of the row's time span its LPARs or CPUs cover (with
                      --every: of the period's; partition data likewise from the period's)
  coverage_note       which LPAR or CPU covers less of the time, with its span
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from app.dataset.query import BY_CHOICES, EVERY_CHOICES

    p = sub.add_parser("query", help="CPU MF metrics of a fleet dataset by SQL (DuckDB, or Spark)",
                       description="Compute the metrics of `report` over a Parquet fleet dataset made by "
                                   "`nestscope extract`, with SQL group-bys (DuckDB in-process, or Spark). Times UTC "
                                   "unless --tz names a zone.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", metavar="DATASET", help="dataset directory")
    p.add_argument("--by", choices=BY_CHOICES, default="lpar",
                   help="level: cec, lpar, class, cpu (per CPU and interval; per CPU and period with --every), "
                        "interval (LPAR x class x interval) (default lpar)")
    p.add_argument("--every", choices=EVERY_CHOICES, help="one row per node and hour/day/week/month")
    p.add_argument("--from", dest="start", type=_time, metavar="T", help="only intervals ending after T (UTC)")
    p.add_argument("--to", dest="end", type=_time, metavar="T", help="only intervals ending at or before T (UTC)")
    p.add_argument("--hours", metavar="HH-HH", help="only intervals whose midpoint lies in these hours (UTC, or "
                                                    "--tz's zone), as report (e.g. 08-17, 08:30-17:00, 22-06 "
                                                    "wraps midnight, a list 08-12,13-17)")
    p.add_argument("--days", metavar="DAYS", help="only intervals whose midpoint falls on these days of the week "
                                                  "(e.g. mon-fri, sat,sun)")
    p.add_argument("--tz", type=tz_arg, default="utc", metavar="utc|local|ZONE",
                   help="the zone of --hours/--days, the --every periods and the shown times: utc (default), local "
                        "(each system's own wall clock, from the offsets its records state) or an IANA name such "
                        "as Europe/Berlin")
    p.add_argument("--where", metavar="COND", help="e.g. \"lpar IN ('ZOSA','ZOSB') AND class = 'GCP'\"")
    p.add_argument("--format", choices=("table", "csv", "json", "parquet"), default="table")
    p.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    p.add_argument("--formulas", metavar="FILE", help="JSON file overriding/adding formulas (as report)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (required for parquet)")
    from app.commands.report import add_keep_implausible

    add_keep_implausible(p)
    return p


class _Sets:
    """What report's table writer needs of a workspace."""

    def __init__(self, sets, frame: pd.DataFrame):
        self.formula_sets = sets
        present = set(frame["generation"].astype(str)) if len(frame) else set()
        self._vers = {g: fs.version for g, fs in sets.items() if g in present} or \
            {g: fs.version for g, fs in list(sets.items())[:1]}

    def formula_versions(self):
        return dict(self._vers)


def _columns(by: str, ids: list[str], every: str | None) -> list[str]:
    """The result columns, in order: one schema for csv, json and parquet (report's CSV columns, ``period``
    first with ``--every``)."""
    return (["period"] if every else []) + csv_columns(by, ids)


# the type of each column that is not a metric (metrics: float64); a value that does not apply is a typed null
_TYPES = {"period": "datetime64[ns]", "interval_start": "datetime64[ns]", "interval_end": "datetime64[ns]",
          "cpu": "Int64", "n_cpus": "Int64", "left_out": "Int64", "partition_cpus": "Int64", "n_lpars": "Int64",
          "capped": "boolean", "coverage_pct": "float64", "partition_busy_sum_pct": "float64",
          "partition_busy_per_cpu_pct": "float64"}
_TEXT = ("cec", "lpar", "system", "os", "class", "generation", "formula_set", "Workload_Hint", "quality", "data",
         "processors", "weights", "coverage_note")


def typed_frame(m: pd.DataFrame, by: str, ids: list[str], every: str | None) -> pd.DataFrame:
    """``m`` as the parquet file holds it: exactly :func:`_columns`, in that order, each of one type whatever
    the rows (a column no row fills: all nulls of its type)."""
    out = {}
    for c in _columns(by, ids, every):
        v = m[c] if c in m.columns else pd.Series([None] * len(m), index=m.index, dtype=object)
        if c in _TEXT:
            out[c] = v.astype(object).where(v.notna(), None).map(lambda x: x if x is None else str(x)).astype("string")
        elif c == "capped":
            out[c] = v.astype(object).where(v.notna(), None).map(
                lambda x: x if x is None else (str(x).lower() == "true" if isinstance(x, str) else bool(x))
            ).astype("boolean")
        elif _TYPES.get(c, "float64").startswith("datetime"):
            out[c] = pd.to_datetime(v).astype("datetime64[ns]")
        elif _TYPES.get(c) == "Int64":
            out[c] = pd.to_numeric(v, errors="coerce").round().astype("Int64")
        else:
            out[c] = pd.to_numeric(v, errors="coerce").astype("float64")
    return pd.DataFrame(out, index=m.index).reset_index(drop=True)


def parquet_frame(typed: pd.DataFrame) -> pd.DataFrame:
    """:func:`typed_frame` as the parquet file holds it: its times (UTC instants) as ``timestamp[us, tz=UTC]``,
    as the dataset's own tables hold theirs (naive nanoseconds are a type Spark refuses, and a reader could not
    tell them from the wall clock of a ``--tz`` zone)."""
    times = {c: typed[c].dt.tz_localize("UTC").astype("datetime64[us, UTC]")
             for c in typed.columns if str(typed[c].dtype) == "datetime64[ns]"}
    return typed.assign(**times) if times else typed


def to_csv(m: pd.DataFrame, by: str, ids: list[str], every: str | None, offsets: dict | None = None) -> str:
    """The columns and cells of ``report --format csv``, with ``period`` first when ``--every`` is given;
    ``offsets``: seconds east of UTC per row of a time column (:func:`zone_offsets`)."""
    return report.to_csv(m, by, ids, lead=("period",) if every else (), offsets=offsets)


_TIMES = ("interval_start", "interval_end", "period")


def zone_offsets(m: pd.DataFrame, tz: str) -> dict:
    """``--tz ZONE``: seconds east of UTC of each time of ``m`` (UTC instants) in the IANA zone ``tz``."""
    out = {}
    for c in _TIMES if tz != "utc" and len(m) else ():
        if c in m.columns:
            t = pd.DatetimeIndex(pd.to_datetime(m[c], utc=True))
            out[c] = (t.tz_convert(tz).tz_localize(None) - t.tz_convert(None)).total_seconds().to_numpy()
    return out


_LOCAL = ("_off_start", "_off_end")       # run_query's columns under --tz local: offsets of the shown times


def local_offsets(m: pd.DataFrame) -> tuple[pd.DataFrame, dict, str]:
    """``--tz local``: ``m`` without run_query's offset columns, with each ``period`` (the system's wall-clock
    start) as a UTC instant, the offsets of its time columns (a row added for partition data only: UTC) and the
    zone's name (``local, UTC+01:00/UTC+02:00``; ``UTC`` when every offset is 0)."""
    import numpy as np

    from app.engine.timezone import offset_text

    get = {c: (pd.to_numeric(m[c], errors="coerce").fillna(0.0).to_numpy(np.float64) if c in m.columns
               else np.zeros(len(m))) for c in _LOCAL}
    offs = {"interval_start": get["_off_start"], "interval_end": get["_off_end"]}
    m = m.drop(columns=[c for c in _LOCAL if c in m.columns])
    if "period" in m.columns and len(m):
        offs["period"] = get["_off_start"]
        m = m.assign(period=pd.to_datetime(m["period"]) - pd.to_timedelta(offs["period"], unit="s"))
    used = sorted(set(np.concatenate([offs["interval_start"], offs["interval_end"]]).tolist())) if len(m) else []
    zone = "UTC" if not used or used == [0.0] else "local, " + "/".join(offset_text(o) for o in used)
    return m, offs, zone


def periods_to_utc(m: pd.DataFrame, tz: str) -> pd.DataFrame:
    """The ``period`` column, wall-clock starts in ``tz`` as the SQL bucketed them, as UTC instants (the first of
    a repeated hour)."""
    if tz == "utc" or "period" not in m.columns or not len(m):
        return m
    import numpy as np

    p = pd.DatetimeIndex(pd.to_datetime(m["period"]))
    loc = p.tz_localize(tz, ambiguous=np.ones(len(p), dtype=bool), nonexistent="shift_forward")
    return m.assign(period=loc.tz_convert("UTC").tz_localize(None))


def to_json(m: pd.DataFrame, by: str, ids: list[str], args, sets, n_files: int, spec=None,
            left_out: list | None = None, offsets: dict | None = None) -> str:
    cols = _columns(by, ids, args.every)
    offsets = offsets or {}
    rows = []
    for i, rec in enumerate(m.to_dict("records")):
        rows.append({c: (_iso(rec.get(c), offsets[c][i] if c in offsets else None) or None) if c in _TIMES
                     else _num(rec.get(c)) for c in cols})
    gens = sorted({g for g in m["generation"] if isinstance(g, str)})   # partition-data-only rows: none
    doc = {"meta": {"dataset": str(args.dataset), "files": n_files, "engine": args.engine, "level": by,
                    "every": args.every, "window": {"from": _iso(args.start) or None, "to": _iso(args.end) or None},
                    "hours": args.hours, "days": args.days, "tz": getattr(args, "tz", "utc"),
                    "shift": spec.shift.to_dict() if spec is not None and spec.shift is not None else None,
                    "where": args.where,
                    "formula_sets": {g: sets[g].version for g in gens if g in sets},
                    "left_out": [f.to_dict() for f in left_out or []]},
           "rows": rows}
    return json_text(json.dumps(doc, indent=1, allow_nan=False, default=str)) + "\n"


def run(args: argparse.Namespace) -> int:
    from app.dataset import Dataset, DatasetError
    from app.dataset.query import QueryError, QuerySpec, run_query
    from app.dataset.sql import WhereError
    from app.engine.catalog import FormulaFileError, load_formula_sets
    from app.engine.metrics import metric_ids
    from app.engine.shift import ShiftError, make_shift

    def usage(msg: str) -> int:
        print(f"nestscope query: error: {msg}", file=sys.stderr)
        return EXIT_USAGE

    from app.analysis.selection import window_problem

    if window_problem(args.start, args.end):
        return usage(window_problem(args.start, args.end))
    if args.format == "parquet" and not args.out:
        return usage("--format parquet needs --out FILE")
    if args.out and _inside(args.out, args.dataset):
        return usage(f"--out {args.out} lies inside the dataset {args.dataset}; write it elsewhere (a dataset holds "
                     "only what extract writes)")
    tz = getattr(args, "tz", "utc") or "utc"
    try:
        shift = make_shift(args.hours, args.days, tz)   # report's parser: the same texts, the same messages
    except ShiftError as exc:
        return usage(f"--{exc}")
    if args.engine == "duckdb":       # the engine's, loaded first: it reads the manifest index too (app/dataset/index)
        import duckdb  # noqa: F401
    try:
        ds = Dataset(args.dataset)
        sets = load_formula_sets(args.formulas)
        spec = QuerySpec(by=args.by, every=args.every, start=args.start, end=args.end,
                         shift=shift, where=args.where, formula_sets=sets, tz=tz,
                         keep_implausible=getattr(args, "keep_implausible", False))
        if args.where:   # validate before anything runs
            from app.dataset.sql import DUCKDB, parse_where
            parse_where(args.where, DUCKDB)
        if not ds.has_parts("intervals"):
            _say(_left_out(ds, spec))
            print(f"nestscope query: {args.dataset}: the dataset holds no intervals yet "
                  "(nestscope extract FILE... --to DATASET)", file=sys.stderr)
            return EXIT_NOTHING
        m = run_query(ds, spec, engine=args.engine)
        from app.dataset.integrity import stamped_checks
        from app.dataset.partinfo import enrich

        with stamped_checks():          # (parts checked by an earlier process, unchanged since: not read again)
            m = enrich(ds, spec, m)     # report's coverage and partition data (LPARs without counters too)
    except (DatasetError, QueryError, WhereError, FormulaFileError) as exc:
        return usage(str(exc))
    ids = metric_ids(sets)
    if tz == "local":
        m, offs, zone = local_offsets(m.reset_index(drop=True))
    else:
        m = periods_to_utc(m, tz).reset_index(drop=True)
        offs, zone = zone_offsets(m, tz), ("UTC" if tz == "utc" else tz)
    left = _left_out(ds, spec)
    _say(left)
    n_files = ds.n_readable()
    typed = typed_frame(m, args.by, ids, args.every) if args.format != "table" else None
    if args.format == "parquet":
        from app.export import ExportError, atomic_output

        try:
            with atomic_output(args.out) as tmp:        # never half-written
                parquet_frame(typed).to_parquet(tmp, index=False)
        except ExportError as exc:
            return usage(str(exc))
        except OSError as exc:
            return usage(f"cannot write {args.out} ({exc.strerror or exc})")
        print(f"{args.out}: {len(m)} row(s)", file=sys.stderr)
        return EXIT_OK
    if args.format in ("csv", "json"):        # the parquet file's cells, a null empty
        cells = typed.astype(object).where(typed.notna(), None)
    if args.format == "csv":
        text = to_csv(cells, args.by, ids, args.every, offs)
    elif args.format == "json":
        text = to_json(cells, args.by, ids, args, sets, n_files, spec, left, offs)
    else:
        ws = _Sets(sets, m)
        shown = shown_in_zone(m, {c: o for c, o in offs.items() if c != "period"})
        if args.every and len(m):
            parts = []
            for per, g in shown.groupby(m["period"].to_numpy(), sort=True):
                off = offs["period"][g.index[0]] if "period" in offs else None
                parts.append(f"== {args.every} from {_iso(per, off)}\n"
                             + to_table(ws, g.reset_index(drop=True), args.by, zone=zone))
            text = "\n".join(parts)
        else:
            text = to_table(ws, shown, args.by, zone=zone)
        text += f"dataset {args.dataset}: {n_files} file(s), engine {args.engine}\n"
        text += "".join(f"left out: {f.message}\n" for f in left if f.severity != "info")
        n_out = int(m["left_out"].sum()) if "left_out" in m.columns and len(m) else 0
        if n_out:
            text += (f"left out: {n_out} CPU-interval(s) whose counter deltas break a physical bound (see the "
                     "'implausible' findings of nestscope extract / info); --keep-implausible keeps them\n")
        text = terminal_text(text)      # a guard over every line: nothing from the data acts on the terminal
    if args.out:
        from app.export import ExportError, write_text

        try:
            write_text(args.out, text)      # never half-written
        except ExportError as exc:
            return usage(str(exc))
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _inside(path: str, folder: str) -> bool:
    """``path`` names a file inside ``folder`` (links resolved)."""
    try:
        p, f = os.path.realpath(path), os.path.realpath(folder)
        return os.path.isdir(f) and os.path.commonpath([p, f]) == f
    except (OSError, ValueError):       # (other drives on Windows: not inside)
        return False


def _left_out(ds, spec=None) -> list:
    """What the answer leaves out (damaged manifest entries and part files met), then the leftovers of killed
    extracts in the partitions ``spec`` reads (info: nothing is left out for them; ``dataset check`` lists all)."""
    from app.dataset.integrity import leftover_finding
    from app.dataset.plan import scope

    out = list(ds.findings)
    cecs, month_ok = scope(spec) if spec is not None else (None, None)
    rest = ds.leftovers(cecs=cecs, month_ok=month_ok)
    if rest:
        out.append(leftover_finding(ds.root, rest))
    return out


def _say(findings: list) -> None:
    for f in findings:
        print(f"nestscope query: {f.severity}: {f.message}", file=sys.stderr)
