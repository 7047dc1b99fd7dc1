"""MONWRITE reader throughput: a day of 1-minute data for a 64-CPU z/VM LPAR on a z16.

Builds the file with :mod:`app.formats.monwrite_writer` (D5R13 z16 counter sets
split into P-bit series, D5R20, D0R2 MT fields, D0R16 for 4 partitions), then
times :func:`app.formats.monwrite.read_monwrite` against two baselines measured
in the same run: sha256 over the bytes and a plain walk of the MRRECHDR headers
(control records + record lengths, no decoding).

``read_monwrite`` takes the clean fast path on this file (offset-only record walk, numpy gathers); the
careful record-by-record walk it falls back to for irregular files is timed too (``--no-careful`` skips
it) and its result is checked to be identical.

Run: ``.venv/bin/python bench/bench_monwrite.py [--intervals 1440] [--cpus 64] [--no-careful]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import pandas as pd  # noqa: E402

from app.formats.monwrite import _result, read_monwrite, walk_monwrite  # noqa: E402
from app.formats.monwrite_writer import (CounterRecord, MonwriteWriter, MtCounterRecord, MtRecord,  # noqa: E402
                                         Partition, PartitionCpu)


def build(n_int: int, n_cpu: int) -> bytes:
    rng = np.random.default_rng(7)
    w = MonwriteWriter("VMBENCH", "LPVMB", 5, "3931", "A01", "00000000000B3E7C", max_counter_bytes=1000)
    w.config(processors=[(c, 3, c // 2) for c in range(n_cpu)], partitions_defined=4)
    tot = rng.integers(0, 2**40, size=(n_cpu, 188), dtype=np.uint64)
    mt = np.zeros((n_cpu, 48), dtype=np.uint64)
    busy = np.zeros(4)
    t0 = dt.datetime(2024, 3, 15)
    for i in range(n_int):
        tot += rng.integers(0, 2**30, size=tot.shape, dtype=np.uint64)
        mt += np.uint64(1000)
        busy += rng.uniform(0, 60e6, 4)
        raw = tot.astype(">u8")
        rawm = mt.astype(">u8")
        parts = [Partition(name, k + 1, [PartitionCpu(c, typ, 100, int(busy[k])) for c in range(n)])
                 for k, (name, typ, n) in enumerate([("LPVMB", "IFL", n_cpu), ("ZOS1", "CP", 8),
                                                     ("ZOS2", "ZIIP", 4), ("CF01", "ICF", 2)])]
        w.sample_interval(t0 + dt.timedelta(minutes=i),
                          counters=[CounterRecord(c, raw[c].tobytes(), 0x000F, 3, 7, 5200) for c in range(n_cpu)],
                          mt_counters=[MtCounterRecord(c, rawm[c].tobytes()) for c in range(n_cpu)],
                          mt=[MtRecord(c, c // 2, 3, 1.6, 1.5, 80.0, 0.9, 72.0, 1.2, 1.3) for c in range(n_cpu)],
                          partitions=parts, npar=4)
    return w.to_bytes()


def header_walk(data: bytes) -> int:
    """Baseline: control records + MRHDRLEN chain only."""
    hdr = struct.Struct(">HHBBH").unpack_from
    n, off, recs = len(data), 0, 0
    while off + 4096 <= n:
        m1, m2 = struct.unpack_from(">II", data, off + 12)
        pos = off + 4096
        for k in range((m2 - m1 + 1) // 12):
            s, t = struct.unpack_from(">II", data, off + 44 + 12 * k)
            base = pos - (s & ~0xFFF)
            a = s
            while a <= t:
                ln, _z, dom, _f, rc = hdr(data, base + a)
                recs += 1
                a = (a | 0xFFF) + 1 if dom == 1 and rc == 13 else a + ln
            pos += ((t >> 12) - (s >> 12) + 1) * 4096
        off = pos
    return recs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=1440)
    ap.add_argument("--cpus", type=int, default=64)
    ap.add_argument("--no-careful", action="store_true", help="do not time the careful (fallback) walk")
    a = ap.parse_args()
    t = time.perf_counter()
    data = build(a.intervals, a.cpus)
    t_build = time.perf_counter() - t
    mb = len(data) / 1e6
    print(f"built {mb:.1f} MB ({a.intervals} intervals x {a.cpus} CPUs, z16 sets) in {t_build:.2f} s "
          f"({mb / t_build:.0f} MB/s written)")
    t = time.perf_counter()
    hashlib.sha256(data).hexdigest()
    t_hash = time.perf_counter() - t
    t = time.perf_counter()
    n_hdr = header_walk(data)
    t_walk = time.perf_counter() - t
    c = time.process_time()
    hashlib.sha256(data).hexdigest()
    c_hash = time.process_time() - c
    t = time.perf_counter()
    c = time.process_time()
    r = read_monwrite(data, "bench")
    t_read = time.perf_counter() - t
    c_read = time.process_time() - c
    load = os.getloadavg()[0]
    n_rec = sum(r.records.values())
    assert n_rec == n_hdr, (n_rec, n_hdr)
    fast = getattr(walk_monwrite(data, "bench", fast=True), "fast", None) is not None
    rows = [("sha256 (baseline)", t_hash), ("MRRECHDR walk (baseline)", t_walk),
            (f"read_monwrite ({'fast path' if fast else 'careful walk'})", t_read)]
    if not a.no_careful:
        t = time.perf_counter()
        c = time.process_time()
        rc = _result(walk_monwrite(data, "bench"), data, "bench")
        rows.append(("careful walk (fallback)", time.perf_counter() - t))
        c_care = time.process_time() - c
        for frame in ("samples", "mt", "partitions"):
            pd.testing.assert_frame_equal(getattr(r, frame), getattr(rc, frame), check_exact=True)
        assert r.findings == rc.findings and r.records == rc.records and r.meta == rc.meta
    print(f"{'pass':<28}{'seconds':>9}{'MB/s':>9}{'records/s':>12}")
    for name, sec in rows:
        print(f"{name:<28}{sec:9.2f}{mb / sec:9.0f}{n_rec / sec:12,.0f}")
    print(f"read_monwrite on CPU seconds: {c_read:.2f} s = {mb / c_read:.0f} MB/s ({c_read / c_hash:.1f}x sha256's "
          f"{c_hash:.2f} s CPU); load average {load:.1f}")
    if not a.no_careful:
        print(f"careful walk on CPU seconds: {c_care:.2f} s = {mb / c_care:.0f} MB/s; result identical to the fast path")
    print(f"records {n_rec:,}  samples {len(r.samples):,} x {r.samples.shape[1]} cols  mt {len(r.mt):,}  "
          f"partitions {len(r.partitions):,}  findings {len(r.findings)}")


if __name__ == "__main__":
    main()
