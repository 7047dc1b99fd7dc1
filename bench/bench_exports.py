"""The exports' speed (issue 23): the ``compare`` CLI, the comparison deck, the whole-sample deck and the month's
workbook, each a new ``nestscope`` process, beside baselines measured in the same run.

Every step runs as a child process; its wall seconds, CPU seconds (user + system) and peak memory (``ru_maxrss``
of that child, from ``os.wait4``) are printed with the 1-minute load average before and after it.  Baselines, also
child processes on the same files:

* imports: a process importing what the CLI imports (``app.cli``, the engine, the exports, pandas);
* engine: the same data through the engine alone (read with the counters the formulas need, ``Workspace`` add,
  the comparison or every level's metrics frame): what any export pays at least;
* plain XlsxWriter: the month's level frames written cell by cell with ``write_row`` in constant-memory mode (the
  same frames, numbers and texts, no formats): a plain spreadsheet writer's time.

Data (made once, kept in ``--data``): the month of one CEC (``bench_month.build``: 8 LPARs x 16 CPUs x 2,880
intervals, 564 MB) and a 30-day sample set (``nestscope sample --days 30``: z15 before, z16 after); the bundled
samples for the whole-sample deck.  ``cold`` runs use an empty workspace cache, ``warm`` ones the cache the cold
run left.  Run it against another checkout with ``PYTHONPATH=/that/checkout`` (from a folder outside both): the
children import ``app`` from where this process does.  ``--against /other/checkout`` runs every ``nestscope``
step with that checkout's app too, just before this one's (its own cache): the before/after of a change in one
run, under the same load.  Every step's line names issue 23's goal (quiet machine); ``charts``: what python-pptx
costs per XY chart, the embedded workbook written in memory cell by cell or streamed as whole columns.

    PYTHONPATH=$PWD python bench/bench_exports.py [--data DIR] [--only compare,deck,whole,xlsx,charts]
        [--against CHECKOUT] [--plain-cpu] [--keep-outputs] [--repeat N] [--quick] [--xlsx-cases cold,warm,samples]

``--only xlsx --quick --xlsx-cases cold --repeat N --against CHECKOUT``: the cold workbook alone, N interleaved
rounds from emptied caches, with the medians of wall, CPU and peak.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return float("nan")


def run(cmd: list[str], env: dict, cwd: Path) -> dict:
    """``cmd`` in a child process reaped with ``os.wait4`` (its own CPU seconds and peak RSS)."""
    load0, t0 = _load(), time.perf_counter()
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=fo, stderr=fe, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024, "rc": p.returncode,
            "out": out, "err": err, "load0": load0, "load1": _load()}


# issue 23's goals (on a quiet machine): wall seconds, peak MB
GOALS = {"compare": (1.5, None), "deck": (3.0, None), "whole": (5.0, None), "xlsx": (15.0, 600)}


def show(label: str, r: dict, extra: str = "", goal: str | None = None) -> None:
    ok = "" if r["rc"] == 0 else f"  EXIT {r['rc']}: {r['err'].strip().splitlines()[-1:] or ''}"
    g = ""
    if goal in GOALS:
        secs, mb = GOALS[goal]
        g = f"  [goal < {secs:g} s" + (f", < {mb} MB" if mb else "") + "]"
    print(f"  {label:<52} {r['wall']:7.2f} s wall {r['cpu']:7.2f} s CPU {r['rss']:7.0f} MB peak   "
          f"load {r['load0']:.1f} -> {r['load1']:.1f}{g}{extra}{ok}", flush=True)


CHARTS = r"""
import json, sys, time
import numpy as np
from pptx import Presentation
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches
from app.export import chart_data
prs = Presentation()
slide = prs.slides.add_slide(prs.slide_layouts[6])
out = {}
for points, series in ((40, 2), (600, 3), (4000, 1), (6000, 3)):
    for label, stream in (("in memory", 10**9), ("streamed", -1)):
        chart_data.STREAM_POINTS = stream
        best = {}
        for _ in range(3):
            cd = chart_data.TextXyChartData()
            for i in range(series):
                cd.add_array_series(f"s{i}", np.arange(points) / 96 + 46000.0, np.linspace(1, 9, points))
            t0 = time.process_time(); cd.xlsx_blob; t1 = time.process_time()
            cd._xml(XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS); t2 = time.process_time()
            slide.shapes.add_chart(XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS, 0, 0, Inches(4), Inches(3), cd)
            t3 = time.process_time()
            for k, v in (("workbook", t1 - t0), ("chart xml", t2 - t1), ("add_chart", t3 - t2)):
                best[k] = min(best.get(k, 1e9), v)
        out[f"{points} points x {series}, workbook {label}"] = best
print("BENCH " + json.dumps(out))
"""


def charts(env: dict, cwd: Path) -> None:
    """What python-pptx costs per XY chart (CPU ms, best of 3): the embedded workbook written cell by cell in memory
    or streamed as whole columns, the chart XML, the whole add_chart (workbook + XML + parts)."""
    r = run([sys.executable, "-c", CHARTS], env, cwd)
    m = re.search(r"^BENCH (.*)$", r["out"], re.M)
    if not m:
        print(f"  charts: failed {r['err'].strip().splitlines()[-1:]}")
        return
    for k, v in json.loads(m.group(1)).items():
        print(f"  {k:<44} " + ", ".join(f"{n} {s * 1000:5.1f} ms" for n, s in v.items()), flush=True)


def _median(values: list[float]) -> float:
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else float("nan")


def made(r: dict) -> str:
    m = re.search(r"wrote \S+ \((.*)\)", r["err"])
    if not m:
        return ""
    slides = sum(int(x) for x in re.findall(r"(\d+) [a-z]", m.group(1)))
    return f"  [{m.group(1)}]" + (f" = {slides} slides" if ".pptx" in r["err"] else "")


ENGINE = r"""
import json, sys, time
t0 = time.perf_counter()
from app.engine import Workspace
from app.formats import read_file
mode, args = sys.argv[1], sys.argv[2:]
t1 = time.perf_counter()
out = {"imports": t1 - t0}
ws0 = Workspace(cache=False)
need = ws0.counters_needed()
if mode == "compare":
    from app.engine.compare import Selection, compare
    from app.engine.shift import make_shift
    shift = make_shift("08-17", "mon-fri")
    sides = []
    for path in args:
        ws = Workspace(cache=False)
        ws.add(read_file(path, counters=need))
        sides.append(ws)
    t2 = time.perf_counter()
    c = compare(Selection(sides[0], shift=shift, name="before"), Selection(sides[1], shift=shift, name="after"))
    out.update(read_add=t2 - t1, compare=time.perf_counter() - t2, rows=len(c.table))
else:
    ws = Workspace(cache=False)
    ws.add(read_file(args[0], counters=need))
    t2 = time.perf_counter()
    frames = {lv: ws.metrics(by=lv) for lv in ("cec", "lpar", "class", "lpar_interval", "interval", "cpu")}
    t3 = time.perf_counter()
    out.update(read_add=t2 - t1, metrics=t3 - t2, rows={k: len(v) for k, v in frames.items()})
    if mode.startswith("xlsx"):
        import math, tempfile, os
        import xlsxwriter
        fd, tmp = tempfile.mkstemp(suffix=".xlsx"); os.close(fd)
        plain = [("plain_xlsx", ("cec", "lpar", "class", "lpar_interval", "interval"))]
        if mode == "xlsx+cpu":
            plain.append(("plain_xlsx_cpu", ("cpu",)))
        for label, levels in plain:
            t4 = time.perf_counter()
            wb = xlsxwriter.Workbook(tmp, {"constant_memory": True, "strings_to_formulas": False,
                                           "strings_to_urls": False, "strings_to_numbers": False,
                                           "nan_inf_to_errors": True})
            for lv in levels:
                f = frames[lv]
                sh = wb.add_worksheet(lv)
                sh.write_row(0, 0, [str(c) for c in f.columns])
                cols = [f[c].tolist() if f[c].dtype == object or str(f[c].dtype) == "category"
                        else (f[c].astype("int64") / 86400e9 + 25569).tolist()
                        if str(f[c].dtype).startswith("datetime") else f[c].tolist() for c in f.columns]
                for i, row in enumerate(zip(*cols)):
                    sh.write_row(i + 1, 0, ["" if v is None or v != v else (v if isinstance(v, (int, float))
                                            else str(v)) for v in row])
            wb.close()
            out[label] = time.perf_counter() - t4
        out["plain_size_mb"] = os.path.getsize(tmp) / 1e6
        os.remove(tmp)
print("BENCH " + json.dumps(out))
"""


def engine(mode: str, files: list[str], env: dict, cwd: Path) -> tuple[dict, dict]:
    r = run([sys.executable, "-c", ENGINE, mode, *files], env, cwd)
    m = re.search(r"^BENCH (.*)$", r["out"], re.M)
    return r, (json.loads(m.group(1)) if m else {})


def ensure_data(data: Path) -> tuple[Path, Path]:
    """The month and the 30-day sample set, written when missing, each by a child process: written here, this
    process grew to about 1.4 GB, and every step's child, forked from it, then reported that as its peak
    (``ru_maxrss`` counts the parent's pages a child starts with)."""
    data.mkdir(parents=True, exist_ok=True)
    month = data / "month.smf"
    if not month.exists():
        print(f"writing {month} (the month of one CEC) ...", flush=True)
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "from bench_month import build; from pathlib import Path; build(Path(sys.argv[2]), 2880)",
                        str(HERE), str(month)], check=True, cwd=str(HERE.parent))
    sample = data / "sample30"
    if not (sample / "after_z16_ZOSA_smf113.rdw.gz").exists():
        print(f"writing {sample} (30 days of the sample set) ...", flush=True)
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                        "from app.sample.build import write_sample_set; "
                        "write_sample_set(Path(sys.argv[1]), days=30, zvm_intervals=60)", str(sample)],
                       check=True, cwd=str(HERE.parent))
    return month, sample


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "nestscope-bench-exports")
    ap.add_argument("--only", default="compare,deck,whole,xlsx",
                    help="steps, comma-separated; 'charts' (not by default): python-pptx's cost per chart")
    ap.add_argument("--plain-cpu", action="store_true",
                    help="the plain-XlsxWriter baseline writes the CPU frame too (16 million cells: minutes)")
    ap.add_argument("--keep-outputs", action="store_true", help="leave the written files in --data/out")
    ap.add_argument("--against", type=Path, metavar="CHECKOUT",
                    help="also run every nestscope step with the app of this checkout (e.g. /work/main), just "
                         "before this one's and with its own cache: the same-run baseline of a change")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="N warm runs of every step and N workbook runs with the samples cached but not the "
                         "intervals (with --against: each round the baseline checkout, then this one); medians "
                         "printed at the end")
    ap.add_argument("--quick", action="store_true",
                    help="workbook: leave out the engine and plain-XlsxWriter baselines and the --cpu-sheet run")
    ap.add_argument("--xlsx-cases", default="cold,warm,samples", metavar="CASES",
                    help="workbook runs, comma-separated: cold (empty cache: decode, intervals, cache writes), warm "
                         "(intervals cached), samples (samples cached, not the intervals); --repeat N runs warm and "
                         "samples N times and cold once (always: it fills the cache), or, when cold is the only "
                         "case, cold N times, each round from emptied caches")
    args = ap.parse_args()
    only = set(args.only.split(","))
    import app

    tree = Path(app.__file__).resolve().parents[1]
    month, sample = ensure_data(args.data)
    samples = sorted(str(p) for p in (tree / "resources" / "samples").glob("*.gz"))
    work = Path(tempfile.mkdtemp(prefix="bench-exports-", dir=args.data))
    out_dir = args.data / "out" if args.keep_outputs else work
    out_dir.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen",
               PYTHONPYCACHEPREFIX=str(args.data / "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)      # compiled once (the warm-up), never timed
    py = [sys.executable, "-m", "app"]
    base_env = dict(env, PYTHONPATH=str(args.against.resolve())) if args.against else None
    print(f"bench_exports: app from {tree}; {os.cpu_count()} CPUs; load average {_load():.1f}"
          + (f"; baseline app from {args.against.resolve()}" if base_env else ""), flush=True)
    run(py + ["export", "--help"], env, work)                                    # warm-up: bytecode, disk cache
    if base_env is not None:
        run(py + ["export", "--help"], base_env, work)
    helptext = run(py + ["export", "--help"], env, work)["out"]
    has_cpu_option = "--cpu-sheet" in helptext
    imports = run([sys.executable, "-c", "import app.cli, app.engine, app.export, app.export.xlsx, "
                   "app.export.pptx, app.commands.compare, app.commands.export, pandas, xlsxwriter, pptx"], env, work)
    show("baseline: imports only", imports)

    medians: dict[str, dict[str, list[dict]]] = {}    # warm step -> "baseline"/"this" -> its runs

    def cli(label: str, argv: list[str], cache: Path, extra=made, goal: str | None = None) -> dict:
        keep = medians.setdefault(label, {}) if "(warm" in label or "(cold" in label else {}
        if base_env is not None:          # the other checkout first, its own cache beside this one's
            r = run(py + argv, dict(base_env, NESTSCOPE_CACHE_DIR=str(cache) + "-baseline"), work)
            show("  baseline checkout: " + label.replace("nestscope ", ""), r, extra(r) if extra else "")
            keep.setdefault("baseline", []).append(r)
        r = run(py + argv, dict(env, NESTSCOPE_CACHE_DIR=str(cache)), work)
        show(label, r, extra(r) if extra else "", goal)
        keep.setdefault("this", []).append(r)
        return r

    def warm(label: str, argv: list[str], cache: Path, extra=made, goal: str | None = None) -> None:
        """The warm run, ``--repeat`` times (with --against: baseline checkout, this one, baseline, ...)."""
        for _ in range(max(1, args.repeat)):
            cli(label, argv, cache, extra, goal)

    b30, a30 = str(sample / "before_z15_ZOSA_smf113.rdw.gz"), str(sample / "after_z16_ZOSA_smf113.rdw.gz")
    shift = ["--hours", "08-17", "--days", "mon-fri"]
    if "compare" in only:
        print("compare CLI: z15 vs z16 ZOSA, 30 days, prime shift (08-17 UTC, Mon-Fri)")
        for _ in range(max(1, args.repeat)):
            r = run([sys.executable, "-c", "import pandas"], env, work)
            show("baseline: a process importing pandas (the floor)", r)
            medians.setdefault("baseline: import pandas", {}).setdefault("this", []).append(r)
        r, e = engine("compare", [b30, a30], env, work)
        show("baseline: engine (read + add + compare, no output)", r,
             f"  [read+add {e.get('read_add', float('nan')):.2f} s, compare {e.get('compare', float('nan')):.2f} s]")
        cache = work / "cache-compare"
        argv = ["compare", "--before", b30, "--after", a30, *shift]
        cli("nestscope compare (cold cache)", argv, cache, None, "compare")
        warm("nestscope compare (warm cache)", argv, cache, None, "compare")
    if "deck" in only:
        print("comparison deck: z15 vs z16 ZOSA, 30 days, prime shift")
        cache = work / "cache-deck"
        argv = ["export", "--before", b30, "--after", a30, *shift, "--out", str(out_dir / "compare.pptx")]
        cli("nestscope export --before --after .pptx (cold)", argv, cache, goal="deck")
        warm("nestscope export --before --after .pptx (warm)", argv, cache, goal="deck")
        bs = [s for s in samples if "/before_z15_ZOSA" in s]
        as_ = [s for s in samples if "/after_z16_ZOSA" in s]
        cache = work / "cache-deck2"
        for k in ("cold", "warm"):
            cli(f"same, bundled samples (2 days) ({k})", ["export", "--before", *bs, "--after", *as_,
                                                        "--out", str(out_dir / "compare2.pptx")], cache)
    if "whole" in only:
        print("whole-sample deck: every bundled sample file (z15, z16, z/VM)")
        cache = work / "cache-whole"
        argv = ["export", *samples, "--out", str(out_dir / "whole.pptx")]
        cli("nestscope export SAMPLES .pptx (cold)", argv, cache, goal="whole")
        warm("nestscope export SAMPLES .pptx (warm)", argv, cache, goal="whole")
    if "xlsx" in only:
        print(f"workbook of the month of one CEC ({month.stat().st_size / 1e6:.0f} MB)")
        if not args.quick:
            r, e = engine("xlsx+cpu" if args.plain_cpu else "xlsx", [str(month)], env, work)
            rows = e.get("rows", {})
            show("baseline: engine (read + add + every level's metrics)", r,
                 f"  [read+add {e.get('read_add', float('nan')):.2f} s, metrics {e.get('metrics', float('nan')):.2f} "
                 f"s; rows {rows}]")
            print(f"  baseline: plain XlsxWriter write_row of the same frames: {e.get('plain_xlsx', float('nan')):.2f}"
                  " s without the CPU frame" + (f", {e['plain_xlsx_cpu']:.2f} s more for the CPU frame"
                                                if "plain_xlsx_cpu" in e else "")
                  + f" ({e.get('plain_size_mb', float('nan')):.0f} MB)", flush=True)
        cache = work / "cache-xlsx"
        target = out_dir / "month.xlsx"

        def size(r: dict) -> str:
            return made(r) + (f"  {target.stat().st_size / 1e6:.0f} MB" if target.exists() else "")
        cases = set(args.xlsx_cases.split(","))
        colds = max(1, args.repeat) if cases == {"cold"} else 1     # the warm runs read the cache it writes
        if colds > 1:          # every round from empty caches: both checkouts decode, compute and write again
            for _ in range(colds):
                for c in (cache, Path(str(cache) + "-baseline")):
                    shutil.rmtree(c, ignore_errors=True)
                cli("nestscope export MONTH .xlsx (cold)", ["export", str(month), "--out", str(target)], cache, size,
                    "xlsx")
        elif colds:
            cli("nestscope export MONTH .xlsx (cold)", ["export", str(month), "--out", str(target)], cache, size,
                "xlsx")
        for _ in range(args.repeat if "warm" in cases else 0):   # each round: the baseline checkout, then this one
            cli("nestscope export MONTH .xlsx (warm)", ["export", str(month), "--out", str(target)], cache, size,
                "xlsx")
        # the decoded samples cached but not the intervals (another formula file, an evicted entry): the intervals
        # are computed from the samples read back from the cache (the entry is written again by each run)
        for _ in range(args.repeat if "samples" in cases else 0):
            for c in (cache, Path(str(cache) + "-baseline")):
                for d in c.glob("iv-*") if c.exists() else ():
                    shutil.rmtree(d, ignore_errors=True)
            cli("nestscope export MONTH .xlsx (samples cached, not intervals)", ["export", str(month), "--out",
                                                                                 str(target)], cache, size, "xlsx")
        if args.quick:
            pass
        elif has_cpu_option:
            cli("nestscope export MONTH .xlsx --cpu-sheet (warm)", ["export", str(month), "--out", str(target),
                                                                    "--cpu-sheet"], cache, size)
        else:
            print("  (this checkout has no --cpu-sheet: its workbook always holds the CPU sheet)")
    if "charts" in only:
        print("python-pptx per XY chart (CPU, best of 3)")
        charts(env, work)
    if args.repeat > 1:
        print(f"medians of {args.repeat} interleaved runs (wall / CPU s)")
        for label, sides in medians.items():
            text = ", ".join(f"{side} {_median([r['wall'] for r in rs]):.2f} / {_median([r['cpu'] for r in rs]):.2f}"
                             + f" (CPU {min(r['cpu'] for r in rs):.2f}-{max(r['cpu'] for r in rs):.2f}; peak "
                             + f"{_median([r['rss'] for r in rs]):.0f} MB, {min(r['rss'] for r in rs):.0f}-"
                             + f"{max(r['rss'] for r in rs):.0f})"
                             for side, rs in sorted(sides.items()))
            print(f"  {label:<52} {text}", flush=True)
    print(f"load average at the end {_load():.1f}")
    if not args.keep_outputs:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
