"""A damaged-file campaign (issue 20): thousands of damaged variants of sample files, each read once.

Clean files are made by the project's writers: the workload model of ``nestscope sample`` (app/sample) gives
SMF 113 subtype 1 and 2 records of a z16 and a z15, framed by app/formats/smf113_writer.py as RDW, double RDW,
BDW (RECFM=VB) and VBS (spanned), plain and gzip.  Each variant gets one kind of damage:

    cut            the file cut at a random byte (also 1-3 bytes into the next descriptor)
    cut+pad        cut inside a record, then zero padding
    flip           one random bit flipped
    rdw            one record's RDW (or a block's BDW) overwritten: X'0000', X'FFFF', X'0003' or random
    sdw            one segment descriptor overwritten (BDW/VBS files)
    csn            one counter-set entry's CSN set to 0 or a random count (subtype 2)
    subtype        one record's subtype field set to 0, 3 or a random value
    rtype          one record's type byte with one bit flipped
    gzip-flip      one byte of the compressed bytes changed (gzip files)
    gzip-cut       the gzip file cut at a random byte

Each variant is read in this process (``app.formats.read_bytes``, under tracemalloc for the peak of Python
allocations).  Counted per kind:

    tracebacks     exceptions that escaped the reader
    expected       records the damage did not touch (their bytes lie wholly outside the damaged span; for the
                   gzip kinds not counted: positions are in compressed bytes)
    lost           of those, the records that did not come back (matched by system, class, CPU, time, subtype)
    silent         variants that lost untouched records (gzip kinds: gave fewer samples than the clean file)
                   without a warning or error finding that names an offset
    quiet          variants with fewer samples than the clean file and no finding at all: a cut at a record
                   boundary, or inside a record's own trailing zeros, followed by zero padding, leaves bytes
                   no reader can tell from a shorter clean file

Then two gzip files of one valid record repeated (``--repeat-mb``, default 512 MB and 2048 MB of decompressed
data) are read each in a fresh process: peak RSS (ru_maxrss) and seconds, against a process that only imports
the reader (same run).

    python bench/damage_campaign.py [--cases-per-kind N] [--seed S] [--repeat-mb 512,2048]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import random
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.formats import read_bytes  # noqa: E402
from app.formats import smf113_layout as L  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

KEY = ["system", "class", "cpu", "time", "kind"]
RECORDS = 40                     # records per clean file (keeps each read short)
TRACE_EVERY = 10                 # cases read under tracemalloc


def clean_records() -> dict[str, list[bytes]]:
    """Records of the sample workload model: z16 subtype 1 + 2 (ZOSA), z16 subtype 2 (ZOSB), z15 subtype 1."""
    from app.sample.build import (AFTER_START, BEFORE_START, Z15_SEQ, Z16_SEQ, _order_by_time, _smf, zos_lpars)
    from app.sample.model import CecModel, make_samples

    z16, _ = make_samples(CecModel("z16", Z16_SEQ, zos_lpars()[:2]), AFTER_START, 3, 900.0, seed=11)
    z15, _ = make_samples(CecModel("z15", Z15_SEQ, zos_lpars()[2:]), BEFORE_START, 3, 900.0, seed=12)
    a = z16[z16["system"] == "ZOSA"]
    b = z16[z16["system"] == "ZOSB"]
    return {"z16-st1+2": _order_by_time(_smf(a, (1, 2), stated=True))[:RECORDS],
            "z16-st2": _order_by_time(_smf(b, (2,)))[:RECORDS],
            "z15-st1": _order_by_time(_smf(z15, (1,)))[:RECORDS]}


def frame(recs: list[bytes], framing: str) -> bytes:
    if framing == "rdw":
        return W.frame_rdw(recs)
    if framing == "double-rdw":
        return W.frame_double_rdw(recs)
    if framing == "bdw":
        return W.frame_bdw(recs, blksize=8000, spanned=False)
    return W.frame_bdw(recs, blksize=1200, spanned=True)


class Clean:
    """One clean file: its bytes, its samples' keys and each record's span in the file."""

    def __init__(self, name: str, recs: list[bytes], framing: str) -> None:
        self.name, self.recs, self.framing = name, recs, framing
        self.data = frame(recs, framing)
        r = read_bytes(self.data, name)
        assert not [f for f in r.findings if f.severity != "info"], [f.message for f in r.findings]
        s = r.samples.sort_values("offset", kind="stable")
        self.n = len(s)
        offs = s["offset"].to_numpy().tolist()
        keys = [tuple(map(str, k)) for k in s[KEY].itertuples(index=False)]
        ends = offs[1:] + [len(self.data)]
        # a record spans from its start to the next record's start (descriptors between them included)
        self.items = [(o, e, k) for o, e, k in zip(offs, ends, keys)]
        self.gz = gzip.compress(self.data, mtime=0)


def keys_of(r) -> set:
    return {tuple(map(str, k)) for k in r.samples[KEY].itertuples(index=False)} if len(r.samples) else set()


def record_starts(c: Clean) -> list[int]:
    return [o for o, _e, _k in c.items]


def mutations(c: Clean, rng: random.Random, kind: str) -> tuple[bytes, int, float] | None:
    """One damaged variant of ``c``: (bytes, lo, hi) with [lo, hi) the damaged span of the clean file
    (hi = inf: everything from lo on), or None when the kind does not apply to this file."""
    d = bytearray(c.data)
    n = len(d)
    inf = float("inf")
    if kind == "cut":
        starts = record_starts(c)
        at = rng.choice([rng.randrange(1, n), rng.choice(starts[1:]) + rng.randrange(1, 4)])
        return bytes(d[:at]), at, inf
    if kind == "cut+pad":
        at = rng.randrange(n // 4, n)
        return bytes(d[:at]) + bytes(rng.randrange(1, 5000)), at, inf
    if kind == "flip":
        at = rng.randrange(n)
        d[at] ^= 1 << rng.randrange(8)
        return bytes(d), at, at + 1
    if kind == "rdw":
        if c.framing not in ("rdw", "double-rdw", "bdw"):
            return None
        if c.framing == "bdw":           # a block descriptor: find one by walking the blocks
            blocks, b = [], 0
            while b + 4 <= n:
                blocks.append(b)
                b += struct.unpack_from(">H", d, b)[0]
            at = rng.choice(blocks)
            span_end = at + struct.unpack_from(">H", d, at)[0]
        else:
            at = rng.choice(record_starts(c)) - (4 if c.framing == "double-rdw" else 0)
            span_end = at + struct.unpack_from(">H", d, at)[0]
        d[at:at + 2] = rng.choice([b"\x00\x00", b"\xff\xff", b"\x00\x03", rng.randbytes(2)])
        return bytes(d), at, span_end
    if kind == "sdw":
        if c.framing not in ("bdw", "vbs"):
            return None
        at = rng.choice(record_starts(c))              # a record's (first) segment descriptor
        d[at:at + 4] = rng.choice([b"\x00\x00\x00\x00", b"\xff\xff\x00\x00", rng.randbytes(4)])
        nxt = [o for o in record_starts(c) if o > at]
        return bytes(d), at, nxt[0] if nxt else inf
    if kind in ("csn", "subtype", "rtype"):
        if c.framing != "rdw":
            return None
        i = rng.randrange(len(c.recs))
        at = record_starts(c)[i]
        rec = bytearray(c.recs[i])
        if kind == "csn":
            if struct.unpack_from(">H", rec, 22)[0] != 2:
                return None
            dof = struct.unpack_from(">I", rec, 44)[0]
            csof = struct.unpack_from(">I", rec, dof + L.S2_CSOF)[0]
            csln = struct.unpack_from(">H", rec, dof + L.S2_CSLN)[0]
            cson = struct.unpack_from(">H", rec, dof + L.S2_CSON)[0]
            e = csof + rng.randrange(cson) * csln
            struct.pack_into(">H", rec, e + L.S2_CSN, rng.choice([0, rng.randrange(65536)]))
        elif kind == "subtype":
            struct.pack_into(">H", rec, 22, rng.choice([0, 3, rng.randrange(4, 65536)]))
        else:
            rec[5] ^= 1 << rng.randrange(8)
        d[at:at + len(rec)] = rec
        return bytes(d), at, at + len(rec)
    raise ValueError(kind)


def gz_mutation(c: Clean, rng: random.Random, kind: str) -> bytes:
    g = bytearray(c.gz)
    if kind == "gzip-flip":
        at = rng.randrange(10, len(g))
        g[at] = (g[at] + rng.randrange(1, 256)) & 0xFF
        return bytes(g)
    return bytes(g[:rng.randrange(10, len(g))])


def run_case(c: Clean, data: bytes, lo: float, hi: float, gz: bool, tally: dict, peak: list) -> None:
    tally["cases"] += 1
    traced = tally["cases"] % TRACE_EVERY == 0          # tracemalloc slows allocation: one case in TRACE_EVERY
    if traced:
        tracemalloc.start()
    try:
        r = read_bytes(data, c.name)
    except Exception as exc:  # noqa: BLE001 - counted: the point of the campaign
        tally["tracebacks"] += 1
        tally.setdefault("examples", []).append(f"{type(exc).__name__}: {exc}")
        return
    finally:
        if traced:
            peak[0] = max(peak[0], tracemalloc.get_traced_memory()[1] - len(data))
            tracemalloc.stop()
    got = keys_of(r)
    named = any(f.offset is not None and f.severity in ("warning", "error") for f in r.findings)
    lost = 0
    if not gz:
        untouched = [k for o, e, k in c.items if e <= lo or o >= hi]
        tally["expected"] += len(untouched)
        lost = sum(1 for k in untouched if k not in got)
        tally["lost"] += lost
    if (lost or (gz and len(got) < c.n)) and not named:
        tally["silent"] += 1
        tally.setdefault("silent_examples", []).append(f"{c.name}: {len(got)}/{c.n}")
    if len(got) < c.n and not r.findings:
        tally["quiet"] += 1


REPEAT_CHILD = r"""
import gzip, json, resource, sys, time, zlib
sys.path.insert(0, sys.argv[1])
from app.formats import read_file
t = time.perf_counter()
if sys.argv[2] != "-":
    r = read_file(sys.argv[2])
    out = {"samples": len(r.samples), "dropped": r.meta.get("duplicates_dropped"),
           "findings": [f.code for f in r.findings]}
else:
    out = {}
out["seconds"] = round(time.perf_counter() - t, 2)
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


def repeated_gzip(path: Path, rec: bytes, mb: int) -> int:
    """A gzip file of ``rec`` (RDW framed) repeated to ``mb`` MB, written in a streaming way; its size."""
    one = W.frame_rdw([rec])
    chunk = one * max(1, (4 << 20) // len(one))
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    total = 0
    with open(path, "wb") as fh:
        while total < mb * 1_000_000:
            fh.write(comp.compress(chunk))
            total += len(chunk)
        fh.write(comp.flush())
    return path.stat().st_size


def child(path: str) -> dict:
    p = subprocess.run([sys.executable, "-c", REPEAT_CHILD, str(ROOT), path], capture_output=True, text=True,
                       check=False)
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]}
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases-per-kind", type=int, default=25, help="variants per kind and clean file (default 25)")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--repeat-mb", default="512,2048", help="decompressed MB of the repeated-record gzip files "
                    "(comma-separated; empty: none)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    recs = clean_records()
    cleans = [Clean(f"{name}.{framing}", r, framing) for name, r in recs.items()
              for framing in ("rdw", "double-rdw", "bdw", "vbs")]
    print(f"{len(cleans)} clean files of {RECORDS} records (built in {time.perf_counter() - t0:.1f} s)")
    kinds = ["cut", "cut+pad", "flip", "rdw", "sdw", "csn", "subtype", "rtype", "gzip-flip", "gzip-cut"]
    tallies: dict[str, dict] = {k: defaultdict(int) for k in kinds}
    peak = [0]
    t0 = time.perf_counter()
    for c in cleans:
        for kind in kinds:
            for _ in range(args.cases_per_kind):
                if kind.startswith("gzip"):
                    run_case(c, gz_mutation(c, rng, kind), 0, 0, True, tallies[kind], peak)
                    continue
                m = mutations(c, rng, kind)
                if m is None:
                    break
                run_case(c, m[0], m[1], m[2], False, tallies[kind], peak)
    secs = time.perf_counter() - t0
    cols = ["cases", "tracebacks", "expected", "lost", "silent", "quiet"]
    print(f"\n{'kind':10s} " + " ".join(f"{c:>10s}" for c in cols))
    total = defaultdict(int)
    for k in kinds:
        t = tallies[k]
        print(f"{k:10s} " + " ".join(f"{t[c]:>10,}" for c in cols))
        for c in cols:
            total[c] += t[c]
    print(f"{'all':10s} " + " ".join(f"{total[c]:>10,}" for c in cols))
    print(f"\n{total['cases']:,} cases in {secs:.1f} s; peak of Python allocations in one read, beyond the "
          f"file's bytes: {peak[0] / 2**20:.1f} MiB (tracemalloc, one case in {TRACE_EVERY})")
    for k in kinds:
        for ex in tallies[k].get("examples", [])[:3] + tallies[k].get("silent_examples", [])[:3]:
            print(f"  {k}: {ex}")
    sizes = [int(x) for x in args.repeat_mb.split(",") if x.strip()]
    if sizes:
        base = child("-")
        print(f"\nrepeated-record gzip, each read in a fresh process (baseline: imports only, "
              f"peak RSS {base['peak_rss_mb']} MB)")
        with tempfile.TemporaryDirectory() as tmp:
            for mb in sizes:
                p = Path(tmp) / f"repeat{mb}.rdw.gz"
                size = repeated_gzip(p, recs["z16-st2"][0], mb)
                got = child(str(p))
                print(f"  {mb:,} MB of one record in {size / 1e6:.1f} MB of gzip: {got}")
                p.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
