"""The whole test suite serial, then in parallel (pytest-xdist over every core), in the same run.

Both runs are the command the README's ``./packaging/dev.sh test`` runs (Qt offscreen), on the same checkout,
one after the other; each is timed on the wall clock, with the CPU seconds its processes used
(``RUSAGE_CHILDREN``) and the 1-minute load average before and after, so a figure taken on a shared machine can
be read against what else ran.  The serial run is the baseline; the target is parallel < half of it.

    python bench/bench_suite.py [--parallel-first] [--workers auto|N] [--log DIR] [-- PYTEST ARGS...]

The durations of each run's slowest tests go to ``--log`` (default: a temporary folder), with each run's output.
Exit status 1 when either run failed (the figures are still printed).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return float("nan")


def run(name: str, args: list[str], log: Path) -> dict:
    """One pytest run in a child process; its wall seconds, CPU seconds, outcome line and exit status."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=25", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0, t0 = _load(), time.perf_counter()
    with open(log / f"{name}.log", "w", encoding="utf-8") as out:
        rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = (log / f"{name}.log").read_text(encoding="utf-8", errors="replace")
    outcome = re.findall(r"^=*\s*(\d+ (?:passed|failed).*?) in [\d.]+s", text, re.M)
    return {"name": name, "cmd": " ".join(cmd[1:]), "rc": rc, "wall": wall, "cpu": cpu, "load0": load0,
            "load1": _load(), "outcome": outcome[-1] if outcome else "(no summary line: see the log)"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="auto", help="pytest-xdist -n for the parallel run (default auto)")
    p.add_argument("--parallel-first", action="store_true", help="run the parallel suite first")
    p.add_argument("--log", type=Path, help="folder for the two runs' output (default: a temporary folder)")
    p.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments for both runs")
    args = p.parse_args(argv)
    log = args.log or Path(tempfile.mkdtemp(prefix="bench-suite-"))
    log.mkdir(parents=True, exist_ok=True)
    runs = [("serial", ["-p", "no:xdist", *args.pytest_args]),
            ("parallel", ["-n", args.workers, "--dist", "loadgroup", *args.pytest_args])]
    if args.parallel_first:
        runs.reverse()
    print(f"bench_suite: {os.cpu_count()} CPUs; logs in {log}", flush=True)
    done = {}
    for name, extra in runs:
        r = done[name] = run(name, extra, log)
        print(f"{name:>8}: {r['wall']:7.1f} s wall, {r['cpu']:7.1f} s CPU, load {r['load0']:.1f} -> "
              f"{r['load1']:.1f}, exit {r['rc']}: {r['outcome']}\n          ({r['cmd']})", flush=True)
    s, q = done["serial"], done["parallel"]
    print(f"parallel / serial = {q['wall'] / s['wall']:.2f} (target < 0.50); "
          f"CPU seconds parallel / serial = {q['cpu'] / s['cpu']:.2f}")
    return 0 if s["rc"] == 0 and q["rc"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
