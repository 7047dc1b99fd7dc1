"""The SMF 113 reader's fixed cost per call: a small file read many times, and one streamed 32 MiB chunk.

Cases, each timed in a fresh process per checkout (this one, and every ``--against`` checkout, interleaved
A B A B ... ``--repeat`` times; medians printed):

* ``small``: ``read_smf`` of the first 3 records of the bundled ``after_z16_ZOSA_smf113.rdw.gz`` (5,124 bytes,
  what the framing tests read thousands of times), 200 calls; the same-run baseline is reading those bytes
  from disk and viewing them with ``np.frombuffer`` (the least any read costs);
* ``chunk``: ``read_chunks`` over the sample repeated to 38.9 MB in 32 MiB chunks (what a streamed ``extract``
  calls per chunk), ms per chunk; the baseline is copying the same bytes once (``bytearray``).

Figures are per call, wall and CPU, with the 1-minute load average.  ``--suite N`` also runs
``tests/formats/test_smf_framing.py`` serially (``-p no:xdist``) N times per checkout, interleaved, and prints
the CPU seconds of each run (``RUSAGE_CHILDREN``).

    python bench/bench_small_reads.py [--against CHECKOUT ...] [--repeat N] [--suite N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
SMALL_CALLS = 200
CHUNK = 32 << 20


def _inputs(tmp: Path) -> tuple[Path, Path]:
    """The small file (first 3 records) and the 38.9 MB file (the sample 5 times), written once."""
    data = gzip.decompress(SAMPLE.read_bytes())
    end = 0
    for _ in range(3):
        end += int.from_bytes(data[end:end + 2], "big")       # RDW length
    small, big = tmp / "small3.smf", tmp / "sample_x5.smf"
    if not small.exists():
        small.write_bytes(data[:end])
        big.write_bytes(data * 5)
    return small, big


def _worker(small: Path, big: Path) -> dict:
    """Runs inside the checkout under test (its ``app`` first on the path)."""
    import numpy as np

    from app.formats import chunks, smf113

    def clock(fn, n: int) -> tuple[float, float]:
        w, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            fn()
        return (time.perf_counter() - w) / n * 1e3, (time.process_time() - c) / n * 1e3

    out: dict = {"app": smf113.__file__}
    data = small.read_bytes()
    smf113.read_smf(data, small.name)                         # imports and first-call caches outside the clock
    out["small_base"] = clock(lambda: np.frombuffer(small.read_bytes(), np.uint8), SMALL_CALLS)
    out["small"] = clock(lambda: smf113.read_smf(data, small.name), SMALL_CALLS)
    blob = big.read_bytes()
    n_chunks = sum(1 for _ in chunks.read_chunks(blob, big.name, chunk=CHUNK))
    w, c = clock(lambda: [len(r.samples) for r in chunks.read_chunks(blob, big.name, chunk=CHUNK)], 3)
    out["chunk"] = (w / n_chunks, c / n_chunks)
    out["chunk_base"] = clock(lambda: bytearray(blob), 3)
    out["n_chunks"] = n_chunks
    return out


def _run_worker(checkout: Path, small: Path, big: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(small), str(big)]
    res = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _suite_cpu(checkout: Path) -> tuple[float, float, str]:
    """CPU seconds and wall seconds of the framing tests run serially in ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout), QT_QPA_PLATFORM="offscreen")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "tests/formats/test_smf_framing.py"], cwd=checkout, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.stderr[-200:]
    return cpu, wall, tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", action="append", default=[], help="another checkout to time the same way")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs per checkout (medians printed)")
    ap.add_argument("--suite", type=int, default=0, help="serial runs of test_smf_framing.py per checkout")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(_worker(Path(args.worker[0]), Path(args.worker[1]))))
        return
    checkouts = [ROOT] + [Path(p).resolve() for p in args.against]
    tmp = Path(tempfile.gettempdir()) / "nestscope-bench-small-reads"
    tmp.mkdir(exist_ok=True)
    small, big = _inputs(tmp)
    runs: dict[Path, list[dict]] = {c: [] for c in checkouts}
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeat):
        for c in checkouts:
            runs[c].append(_run_worker(c, small, big))
            loads.append(os.getloadavg()[0])
    print(f"small: {small.stat().st_size:,} bytes x {SMALL_CALLS} calls; chunk: {big.stat().st_size / 1e6:.1f} MB "
          f"in {runs[ROOT][0]['n_chunks']} chunks of 32 MiB; medians of {args.repeat} interleaved runs")
    print(f"{'checkout':<28} {'small ms (cpu)':>16} {'baseline':>10} {'chunk ms (cpu)':>16} {'baseline':>10}")
    for c, rs in runs.items():
        def med(key: str, k: int) -> float:
            return statistics.median(r[key][k] for r in rs)
        print(f"{str(c)[-28:]:<28} {med('small', 0):7.2f} ({med('small', 1):6.2f}) {med('small_base', 0):10.3f} "
              f"{med('chunk', 0):7.1f} ({med('chunk', 1):6.1f}) {med('chunk_base', 0):10.1f}")
    if args.suite:
        suite: dict[Path, list[tuple[float, float, str]]] = {c: [] for c in checkouts}
        for _ in range(args.suite):
            for c in checkouts:
                suite[c].append(_suite_cpu(c))
                loads.append(os.getloadavg()[0])
        print("tests/formats/test_smf_framing.py, serial (-p no:xdist), interleaved:")
        for c, rs in suite.items():
            cpus = ", ".join(f"{cpu:.1f}" for cpu, _w, _t in rs)
            print(f"  {str(c)[-28:]:<28} CPU s {cpus}; median {statistics.median(r[0] for r in rs):.1f} "
                  f"(wall median {statistics.median(r[1] for r in rs):.1f} s); last: {rs[-1][2]}")
    print(f"load average (1 min) during the run: {min(loads):.2f} .. {max(loads):.2f}")


if __name__ == "__main__":
    main()
