"""Chunk boundaries anywhere (issue 24): a plain RDW file read in chunks of any size, from its memory map (each
chunk decoded in place, a window of the map) or from bytes, gives the samples of the whole-file reader, row for
row and value for value, with the whole file's offsets, and the same record counts.

The file: the z15 ZOSA sample's 2304 SMF 113 records (1622 bytes each), with records of other types between them
whose lengths are drawn, among them the lengths whose first bytes look like something else when a chunk starts
there: 0x1F8B (8075: a gzip member's magic ``1F 8B``), 512/513/1280/1281 (a TERSE header's first bytes).  A chunk
is read as the SMF records it is (the file's kind was found from its start), never recognised again.
"""

from __future__ import annotations

import functools
import gzip
import mmap
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.formats import read_bytes
from app.formats.chunks import chunked, read_chunks

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "before_z15_ZOSA_smf113.rdw.gz"
LOOKALIKES = (0x1F8B, 512, 513, 1280, 1281)


@functools.lru_cache(maxsize=1)
def records() -> list[bytes]:
    raw = gzip.decompress(SAMPLE.read_bytes())
    out, p = [], 0
    while p < len(raw):
        n = int.from_bytes(raw[p:p + 2], "big")
        out.append(raw[p:p + n])
        p += n
    assert len(out) == 2304 and {len(r) for r in out} == {1622}
    return out


def _other(like: bytes, length: int) -> bytes:
    """A record of type 30 of ``length`` bytes: the SMF header of ``like`` (flag, time, date, system id), no
    writer id, zeros after."""
    head = bytearray(like[:18])
    head[0:4] = length.to_bytes(2, "big") + b"\0\0"
    head[5] = 30
    return bytes(head) + bytes(length - 18)


def _frame_text(df: pd.DataFrame) -> dict[str, np.ndarray]:
    return {c: df[c].astype(str).to_numpy() for c in df.columns}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(chunk=st.integers(20_000, 700_000),
       others=st.lists(st.tuples(st.integers(1, 2303), st.one_of(st.sampled_from(LOOKALIKES),
                                                                   st.integers(18, 9000))), max_size=40),
       mapped=st.booleans())
# records 0-9 make the first chunk (the first record at or past 16,219 bytes is the tenth); the second starts with
# the gzip look-alike, the third with a 512-byte record
@example(chunk=16_219, others=[(10, 0x1F8B), (16, 512)], mapped=True)
def test_chunk_boundaries_anywhere_give_the_whole_files_samples(tmp_path_factory, chunk, others, mapped):
    recs = records()
    extra: dict[int, list[bytes]] = {}
    for at, length in others:          # other records before record ``at`` (never before the first one)
        extra.setdefault(at, []).append(_other(recs[at], length))
    data = b"".join(b"".join(extra.get(i, [])) + r for i, r in enumerate(recs))
    assert chunked(data)
    whole = read_bytes(data, "f.rdw")
    assert len(whole.samples) == 2304
    path = tmp_path_factory.mktemp("bounds") / "f.rdw"
    path.write_bytes(data)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        parts = list(read_chunks(mm if mapped else data, "f.rdw", chunk=chunk))
    # every chunk but the last says another follows; the last chunk ends the data
    assert [p.meta["more"] for p in parts] == [True] * (len(parts) - 1) + [False]
    assert len(parts) >= min(len(data) // chunk, 2) or len(data) <= chunk
    # a chunk of other records only has no samples (and no counter columns: left out, as the dataset does)
    got = pd.concat([p.samples for p in parts if len(p.samples)], ignore_index=True)
    assert list(got.columns) == list(whole.samples.columns)
    a, b = _frame_text(got), _frame_text(whole.samples)
    for c in b:
        assert (a[c] == b[c]).all(), c
    assert (got["offset"].to_numpy() == whole.samples["offset"].to_numpy()).all()     # the whole data's offsets
    for k in ("113/1", "113/2", "other"):
        assert sum(p.records.get(k, 0) for p in parts) == whole.records.get(k, 0), k
    assert whole.records["other"] == len(others)
