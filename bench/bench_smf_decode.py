"""Benchmark the SMF 113 reader on an in-memory mixed dump (not a test).

Builds ~50,000 SMF 113 subtype 1 records (z16: basic, problem-state, crypto,
extended sets) interleaved with larger type 30 / 70 / 74 records so that most
of the ~200 MB are records the reader must skip, then prints:

* SMF 113 records decoded per second (full ``read_smf``: framing + decode + checks),
* MB/s of other records skipped (a dump holding no type 113 at all),
* baselines from the same run: ``bytes.count`` memory scan MB/s and a
  pure-Python struct-per-counter decode of a subset, so the figures compare
  across machines.

Run: ``.venv/bin/python bench/bench_smf_decode.py [n113] [total_mb]``  (< 60 s)
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.formats import common, smf113  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.smf_framing import frame_records  # noqa: E402


def build(n113: int, total_mb: int, rng: np.random.Generator) -> tuple[bytes, bytes, list[bytes]]:
    """(mixed dump, dump of other records only, the 113 records)."""
    t0 = common.datetime_to_tod(__import__("datetime").datetime(2024, 3, 15, 8))
    rec = dict(system="SYSA", cls_code=0, cpu_speed=5200, machine_type="3931", model="A01",
               seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=t0, flags=0)
    sets = {1: rng.integers(0, 2**40, 6, dtype=np.uint64), 2: rng.integers(0, 2**31, 2, dtype=np.uint64),
            3: rng.integers(0, 2**31, 20, dtype=np.uint64), 4: rng.integers(0, 2**40, 160, dtype=np.uint64)}
    ncpu = 64
    r113 = [W.encode_subtype1(dict(rec, cpu=i % ncpu, core=(i % ncpu) // 2, counters=sets,
                                   time_tod=t0 + (i // ncpu + 1) * 900 * 4096 * 10**6)) for i in range(n113)]
    size113 = sum(map(len, r113))
    other_bytes = max(total_mb * 2**20 - size113, 0)
    pool = rng.integers(0, 256, 32768, dtype=np.uint8).tobytes()
    lens = rng.integers(4000, 32000, max(other_bytes // 18000, 1))
    others = [W.other_record(int(t), int(n), body=pool) for t, n in zip(rng.choice([30, 70, 74], len(lens)), lens)]
    # interleave: spread the other records evenly between the 113 records
    mixed, k = [], 0
    step = max(len(r113) // max(len(others), 1), 1)
    for i, r in enumerate(r113):
        mixed.append(r)
        if i % step == 0 and k < len(others):
            mixed.append(others[k])
            k += 1
    mixed.extend(others[k:])
    return W.frame_rdw(mixed), W.frame_rdw(others), r113


def python_struct_decode(records: list[bytes]) -> int:
    """Baseline: per-record, per-counter struct.unpack_from of subtype 1 records."""
    total = 0
    for r in records:
        dof = struct.unpack_from(">I", r, 44)[0]
        csof, csln, cson = struct.unpack_from(">IHH", r, dof + 52)
        for i in range(cson):
            _t, _f, cdof, cdln, cdon = struct.unpack_from(">HHIHH", r, csof + i * csln)
            fmt = ">Q" if cdln == 8 else ">I"
            for k in range(cdon):
                total += struct.unpack_from(fmt, r, cdof + k * cdln)[0] & 1
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n113", type=int, nargs="?", default=50_000, help="SMF 113 records in the dump (default 50,000)")
    ap.add_argument("total_mb", type=int, nargs="?", default=200, help="size of the whole dump in MB (default 200)")
    a = ap.parse_args()
    n113, total_mb = a.n113, a.total_mb
    rng = np.random.default_rng(113)
    t = time.perf_counter()
    mixed, others, r113 = build(n113, total_mb, rng)
    t_build = time.perf_counter() - t
    mb, mb_other = len(mixed) / 2**20, len(others) / 2**20
    print(f"built {mb:.1f} MB mixed dump ({n113:,} SMF 113 records, {mb_other:.1f} MB other records) "
          f"in {t_build:.1f} s")

    t = time.perf_counter()
    res = smf113.read_smf(mixed, "bench")
    t_read = time.perf_counter() - t
    assert len(res.samples) == n113, (len(res.samples), [f.message for f in res.findings][:3])
    t = time.perf_counter()
    fr = frame_records(others, "bench")
    t_skip = time.perf_counter() - t
    assert not fr.records
    t = time.perf_counter()
    mixed.count(b"\x71")
    t_scan = time.perf_counter() - t
    sub = r113[:2000]
    t = time.perf_counter()
    python_struct_decode(sub)
    t_py = time.perf_counter() - t

    rps = n113 / t_read
    py_rps = len(sub) / t_py
    print(f"read_smf mixed dump: {t_read:.2f} s -> {rps:,.0f} SMF 113 records/s, {mb / t_read:,.0f} MB/s overall")
    print(f"skip other records: {mb_other / t_skip:,.0f} MB/s ({sum(fr.type_counts.values()):,} records in "
          f"{t_skip:.2f} s)")
    print(f"baseline bytes.count scan: {mb / t_scan:,.0f} MB/s")
    print(f"baseline pure-Python struct-per-counter decode: {py_rps:,.0f} records/s "
          f"(reader is {rps / py_rps:.1f}x faster while also framing, checking and building the frame)")


if __name__ == "__main__":
    main()
