"""Writer-made SMF 113 files with one damaged counter (issue 20): the workload model's counters for one z16 LPAR,
encoded as subtype 1 records by the project's writer, then one byte of one counter flipped as a bad transfer
would."""

from __future__ import annotations

import datetime as dt
import struct

import pandas as pd

from app.formats.smf113_writer import encode_samples, frame_rdw
from app.sample.model import CecModel, ClassModel, LparModel, make_samples

MIX = {"L2P": 78.0, "L3P": 14.0, "L4LP": 4.5, "L4RP": 1.0, "MEMP": 2.5}
START = dt.datetime(2026, 11, 2)


def samples(gen: str = "z16", intervals: int = 8, seed: int = 3, **cls) -> pd.DataFrame:
    cm = ClassModel("GCP", cls.pop("cpus", 3), cls.pop("busy", 60), cls.pop("cpi", 3.1), cls.pop("l1mp", 3.2),
                    cls.pop("mix", MIX), **cls)
    cec = CecModel(gen, "00000000000123F5", [LparModel("ZOSC", "ZOSC", [cm])])
    return make_samples(cec, START, intervals, seed=seed)[0]


def write(tmp_path, samples: pd.DataFrame, flip: tuple[int, str] | None = None) -> tuple[str, int | None]:
    """Write the samples as subtype 1 records (RDW); ``flip=(sample row, counter)`` flips the fourth byte of that
    counter's 8-byte value in that row's record.  Returns (path, file position of the flipped byte)."""
    recs = encode_samples(samples, 1)
    assert len(recs) == len(samples)          # one record per CPU and interval
    pos = None
    if flip is not None:
        row, counter = flip
        value = struct.pack(">Q", int(samples[counter].iloc[row]))
        rec = bytearray(recs[row])
        at = bytes(rec).find(value)
        assert at > 0 and bytes(rec).find(value, at + 1) < 0       # the value is in the record once
        rec[at + 3] ^= 0xFF                    # a byte of weight 2**32: +/- billions of events
        pos = len(frame_rdw(recs[:row])) + 4 + at + 3
        recs[row] = bytes(rec)
    data = frame_rdw(recs)
    path = tmp_path / ("damaged.rdw" if flip else "clean.rdw")
    path.write_bytes(data)
    return str(path), pos
