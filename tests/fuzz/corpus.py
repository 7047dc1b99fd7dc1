"""Small, distinct, valid files of each kind for the robustness tests and the fuzz suite.

SMF: N subtype-2 records built from the spec 11.1 record (tests/smf_builders.py), each with
its own record time (CTM + i x 15 minutes) and B0 = 1000 + i, so every record decodes to
its own counter sample.  MONWRITE: configuration block + N one-CPU sample intervals written
by app.formats.monwrite_writer (one block per interval), B0 = 1000 + i.
"""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np

import smf_builders as B
from app.formats import monwrite_records as R
from app.formats import smf113_writer as W
from app.formats.monwrite_writer import CounterRecord, MonwriteWriter, pack_counters

QUARTER = 900 * 1_000_000 * 4096            # 15 minutes in TOD units
ST2_CTM = 72 + 8                            # record offset of CTM (data section at 72, +8)
ST2_B0 = 180                                # record offset of B0


def smf_record(i: int) -> bytes:
    """The spec 11.1 subtype-2 record, record time CTM + i quarters, B0 = 1000 + i (244 bytes)."""
    r = bytearray(B.ST2_BYTES)
    r[ST2_CTM:ST2_CTM + 8] = struct.pack(">Q", B.CTM + i * QUARTER)
    r[ST2_B0:ST2_B0 + 8] = struct.pack(">Q", 1000 + i)
    return bytes(r)


def smf_records(n: int) -> list[bytes]:
    return [smf_record(i) for i in range(n)]


def smf_file(n: int = 20, framing: str = "rdw") -> bytes:
    """n records framed as 'rdw', 'bdw' (several records per block), 'vbs' (spanned) or 'double-rdw'."""
    recs = smf_records(n)
    if framing == "rdw":
        return W.frame_rdw(recs)
    if framing == "double-rdw":
        return W.frame_double_rdw(recs)
    if framing == "bdw":
        return W.frame_bdw(recs, blksize=1000, spanned=False)
    if framing == "vbs":
        return W.frame_bdw(recs, blksize=300, spanned=True)
    raise ValueError(framing)


def smf_b0(i: int) -> int:
    return 1000 + i


T0 = dt.datetime(2024, 3, 15, 12, 0, 0)


def mon_file(n: int = 6, *, cpus: int = 1) -> bytes:
    """MONWRITE stream: configuration + n intervals (1 minute apart), B0 = 1000 + i (+ cpu x 100000)."""
    w = MonwriteWriter("VMSYS1", "LPVM1", 3, "3931", "A01", "00000000000123F5")
    w.config([(c, 0, None) for c in range(cpus)])
    for i in range(n):
        recs = [CounterRecord(c, pack_counters(0x0002, 3, 7, {0: 1000 + i + c * 100000, 1: 2000 + i, 2: 30 + i, 3: 40 + i,
                                                  4: 50 + i, 5: 60 + i}), 0x0002, 3, 7,
                              5200) for c in range(cpus)]
        w.sample_interval(T0 + dt.timedelta(minutes=i), counters=recs)
    return w.to_bytes()


def with_rdw(data: bytes) -> bytes:
    return b"".join(R.RDW_4100 + data[i:i + R.PAGE] for i in range(0, len(data), R.PAGE))


def b0_values(result) -> list[int]:
    s = result.samples
    return [int(x) for x in s["B0"]] if len(s) and "B0" in s else []


def offsets(result) -> list[int]:
    s = result.samples
    return [int(x) for x in s["offset"]] if len(s) else []


def smf_offsets(data_records: list[bytes], framing: str = "rdw") -> list[int]:
    """File offsets of the records of an RDW file (record start = RDW)."""
    out, p = [], 0
    for r in data_records:
        out.append(p)
        p += len(r)
    return out


__all__ = ["smf_record", "smf_records", "smf_file", "mon_file", "with_rdw", "b0_values", "offsets", "np"]
