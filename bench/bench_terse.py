"""Benchmark untersing (not a test): MB/s of output beside gzip decompression of the same output, same run.

Three inputs:

* the real AMATERSE data sets of tests/data/terse (19 data sets, PACK and SPACK, 4.8 MB of output a pass),
  untersed over and over;
* the bundled z16 ZOSA SMF 113 sample as a VBS dump tersed with PACK by the tests' encoder (it compresses
  like AMATERSE: a greedy longest match in the same dictionary), and with SPACK as literals (one code a byte:
  the slowest case per output byte);
* the pure-Python loop on a small part, for the record.

The baseline is ``zlib`` decompression (gzip level 6) of exactly the bytes the unterse gave, timed the same way in
the same run, so the figures can be read across machines.  Each figure is the best of a few rounds, in CPU
seconds of this (single-threaded) process: MB/s on one core, whatever else the machine is running.

Run: ``.venv/bin/python bench/bench_terse.py [rounds]``  (~40 s)
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.formats import kernel, terse  # noqa: E402
from tests.terse_builders import rdw_records, tersed  # noqa: E402


def best_rate(fn, out_bytes: int, rounds: int) -> float:
    """Best MB/s of output over ``rounds`` runs of ``fn``, by the CPU time of this process (one thread: one
    core), not the wall clock, which on a shared VM mostly measures the other tenants."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return out_bytes / max(best, 1e-9) / 1e6


def compare(label: str, inputs: list[bytes], rounds: int, passes: int = 1) -> None:
    outs = [bytes(terse.unterse(raw, "bench")[0]) for raw in inputs]
    total = sum(map(len, outs)) * passes
    gz = [zlib.compress(o, 6) for o in outs]

    def un():
        for _ in range(passes):
            for raw in inputs:
                terse.unterse(raw, "bench")

    def gunzip():
        for _ in range(passes):
            for z in gz:
                zlib.decompress(z)

    r_t = best_rate(un, total, rounds)
    r_g = best_rate(gunzip, total, rounds)
    ratio = sum(map(len, outs)) / sum(map(len, inputs))
    print(f"{label:44s} {total / 1e6:8.1f} MB out  unterse {r_t:7.1f} MB/s   gzip {r_g:7.1f} MB/s   "
          f"unterse/gzip {r_t / r_g:5.2f}   (tersed {ratio:4.1f}:1)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rounds", type=int, nargs="?", default=3, help="timed rounds (default 3)")
    rounds = ap.parse_args().rounds
    print(f"loop: {'compiled (app.formats._terse)' if terse.compiled() else 'pure Python'}")
    real = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "terse" / "TERSED").iterdir())]
    compare("real AMATERSE data sets (36, x10)", real, rounds, passes=10)
    recs = rdw_records(gzip.decompress((ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz")
                                       .read_bytes()))[:3000]
    t0 = time.perf_counter()
    pack = tersed(recs, "PACK", variable=True, lrecl=32756, spanned=True)
    print(f"(encoding {len(recs)} SMF 113 records with the tests' PACK encoder took {time.perf_counter() - t0:.1f} s)")
    spack = tersed(recs, "SPACK", variable=True, lrecl=32756, spanned=True)
    compare("SMF 113 dump, PACK (x20)", [pack], rounds, passes=20)
    compare("SMF 113 dump, SPACK literals (x5)", [spack], rounds, passes=5)
    with kernel.pure():
        small = tersed(recs[:100], "PACK", variable=True, lrecl=32756, spanned=True)
        compare("pure-Python loop: SMF 113, PACK, 100 records", [small], 1)


if __name__ == "__main__":
    main()
