"""Do two checkouts answer the same ``nestscope query``?  A behaviour check for query speed work (not a test).

    python bench/same_query_outputs.py /tmp/main-copy . [--fleet DIR] [--each] [NAME-PART]

Runs ``nestscope query`` (csv and json; every level, ``--every``, a window, a shift, ``--tz``) with each
checkout's ``app`` (PYTHONPATH) over (1) a dataset extracted from the bundled samples (``resources/samples``,
extracted once by the first checkout) and (2) with ``--fleet DIR`` the generated fleet that
``bench/bench_fleet.py --section narrow --keep DIR`` leaves (narrow cases on one CEC and month, two whole-fleet
cases), and prints one line per case: same / DIFFERENT.  Exit code 0 when every case gives the same exit code,
stderr (the checkout's path removed) and stdout, where two decimal numbers may differ by a relative 1e-9: DuckDB's
parallel sums of doubles (the busy time) are not summed in the same order from one run to the next, so one
checkout against itself already differs in the last digits of LPARCPU, MIPS... (the largest difference is
printed).  With ``--each`` every checkout extracts the samples itself and queries its own dataset (a check for
extract work: the two extracts must give the same answers).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples"


def sample_cases(ds: str) -> list[tuple[str, list[str]]]:
    out = []
    for by in ("cec", "lpar", "class", "cpu", "interval"):
        out.append((f"samples-{by}-csv", ["query", ds, "--by", by, "--format", "csv"]))
    out.append(("samples-lpar-json", ["query", ds, "--format", "json"]))
    out.append(("samples-lpar-table", ["query", ds]))
    out.append(("samples-class-hour-csv", ["query", ds, "--by", "class", "--every", "hour", "--format", "csv"]))
    out.append(("samples-cec-day-json", ["query", ds, "--by", "cec", "--every", "day", "--format", "json"]))
    out.append(("samples-cpu-day-csv", ["query", ds, "--by", "cpu", "--every", "day", "--format", "csv"]))
    out.append(("samples-shift-csv", ["query", ds, "--hours", "08-17", "--days", "mon-fri", "--format", "csv"]))
    out.append(("samples-local-csv", ["query", ds, "--tz", "local", "--every", "hour", "--format", "csv"]))
    out.append(("samples-berlin-json", ["query", ds, "--tz", "Europe/Berlin", "--every", "day", "--format", "json"]))
    out.append(("samples-keep-implausible", ["query", ds, "--by", "class", "--keep-implausible", "--format", "csv"]))
    out.append(("samples-where-zvm", ["query", ds, "--where", "os = 'z/VM'", "--by", "class", "--format", "csv"]))
    out.append(("samples-bad-where", ["query", ds, "--where", "lpar = "]))
    return out


def fleet_cases(ds: str) -> list[tuple[str, list[str]]]:
    cec = ["--where", "cec = '3931-00002'"]
    month = ["--from", "2025-07-01T00:00:00", "--to", "2025-08-01T00:00:00"]
    out = [("fleet-narrow-lpar-csv", ["query", ds, *cec, *month, "--format", "csv"]),
           ("fleet-narrow-lpar-json", ["query", ds, *cec, *month, "--format", "json"]),
           ("fleet-narrow-cec-json", ["query", ds, *cec, *month, "--by", "cec", "--format", "json"]),
           ("fleet-narrow-class-day", ["query", ds, *cec, *month, "--by", "class", "--every", "day", "--format",
                                       "csv"]),
           ("fleet-narrow-cpu-week", ["query", ds, *cec, *month, "--by", "cpu", "--every", "week", "--format",
                                      "csv"]),
           ("fleet-narrow-interval", ["query", ds, *cec, *month, "--by", "interval", "--format", "csv"]),
           ("fleet-narrow-cpu-day", ["query", ds, *cec, "--from", "2025-07-10", "--to", "2025-07-11", "--by", "cpu",
                                     "--format", "csv"]),
           ("fleet-narrow-shift", ["query", ds, *cec, "--hours", "08-17", "--days", "mon-fri", "--every", "month",
                                   "--format", "csv"]),
           ("fleet-narrow-berlin", ["query", ds, *cec, *month, "--tz", "Europe/Berlin", "--every", "day",
                                    "--format", "csv"]),
           ("fleet-narrow-local", ["query", ds, *cec, *month, "--tz", "local", "--format", "csv"]),
           ("fleet-lpar-month-csv", ["query", ds, "--every", "month", "--format", "csv"]),
           ("fleet-cec-json", ["query", ds, "--by", "cec", "--format", "json"])]
    return out


def run(root: str, argv: list[str], tmp: str) -> tuple[int, bytes, bytes]:
    env = dict(os.environ, PYTHONPATH=str(Path(root).resolve()), COLUMNS="200")
    p = subprocess.run([sys.executable, "-m", "app", *argv], capture_output=True, env=env, cwd=tmp, timeout=1800)
    return p.returncode, p.stdout, p.stderr.replace(str(Path(root).resolve()).encode(), b"<root>")


_FLOAT = re.compile(rb"(-?\d+\.\d+(?:[eE][-+]?\d+)?)")


def differ(x: bytes, y: bytes) -> float | None:
    """None when ``x`` and ``y`` differ beyond float noise, else the largest relative difference of their numbers."""
    if x == y:
        return 0.0
    xs, ys = _FLOAT.split(x), _FLOAT.split(y)
    if len(xs) != len(ys):
        return None
    worst = 0.0
    for k, (u, v) in enumerate(zip(xs, ys)):
        if u == v:
            continue
        if k % 2 == 0:
            return None
        a, b = float(u), float(v)
        rel = abs(a - b) / max(abs(a), abs(b))
        if rel > 1e-9:
            return None
        worst = max(worst, rel)
    return worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("only", nargs="?", default="")
    ap.add_argument("--fleet", help="the fleet dataset kept by bench_fleet.py --keep")
    ap.add_argument("--each", action="store_true", help="each checkout queries the samples as it extracted them")
    args = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="nestscope-same-q-") as tmp:
        ds = str(Path(tmp) / "samples-ds")
        files = sorted(str(p) for p in SAMPLES.glob("*.gz"))
        ds_b = str(Path(tmp) / "samples-ds-b") if args.each else ds
        for root, where in ((args.a, ds), (args.b, ds_b))[:2 if args.each else 1]:
            code, _o, err = run(root, ["extract", *files, "--to", where], tmp)
            if code != 0:
                print(f"extract of the samples failed ({code}): {err.decode()[-400:]}")
                return 2
        todo = sample_cases(ds) + (fleet_cases(args.fleet) if args.fleet else [])
        for name, argv in todo:
            if args.only not in name:
                continue
            ra = run(args.a, argv, tmp)
            rb = run(args.b, [ds_b if x == ds else x for x in argv], tmp)
            rb = (rb[0], rb[1].replace(ds_b.encode(), ds.encode()), rb[2].replace(ds_b.encode(), ds.encode()))
            rel = [differ(x, y) for x, y in zip(ra[1:], rb[1:])]
            same = ra[0] == rb[0] and None not in rel
            bad += not same
            noise = max(rel) if same else 0.0
            print(f"{'same     ' if same else 'DIFFERENT'} {name} (exit {ra[0]}, {len(ra[1]):,} bytes"
                  + (f"; numbers within a relative {noise:.1e}" if noise else "; byte-identical" if same else "")
                  + ")", flush=True)
            if not same:
                for k, (x, y) in enumerate(zip(ra, rb)):
                    if x != y and k:
                        xl, yl = x.decode(errors="replace").splitlines(), y.decode(errors="replace").splitlines()
                        diff = [(i, u, v) for i, (u, v) in enumerate(zip(xl, yl)) if u != v][:3]
                        print(f"    {'stdout' if k == 1 else 'stderr'}: {len(xl)} vs {len(yl)} lines; first "
                              f"differences: {diff}")
    print("all same" if not bad else f"{bad} case(s) differ")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
