"""The compiled walks of the SMF reader on damaged bytes (issue 23's rest walk, the reader's RDW chain): whatever
bytes a damaged download holds, the compiled kernel gives what the numpy walk gives and never reads outside the
buffer (a crash here would take the window down with the file).

``_kernel.rdw_walk`` (the record offsets of an RDW chain) and ``_kernel.rdw_low_times`` (the earliest sample
time per system of a big file's rest) are each set against their numpy path on a clean run of records of the
bundled z16 sample with any bytes changed, any end cut off and the walk started at any record or any byte."""

from __future__ import annotations

import gzip
import mmap
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.formats import kernel

pytestmark = pytest.mark.skipif(not kernel.has_low_times(),
                                reason="the compiled kernel is not built (or built before rdw_low_times)")

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
RECORDS = 60        # records of the sample kept: 60 records of 1,530 bytes, about 92 KB


def _clean() -> tuple[bytes, list[int]]:
    from app.formats.smf_resync import MIN_LEN

    data = gzip.decompress(SAMPLE.read_bytes())
    offs, _end, status = kernel.rdw_offsets(data, 0, len(data), MIN_LEN)
    assert status == 0 and len(offs) > RECORDS
    end = int(offs[RECORDS])
    return data[:end], [int(o) for o in offs[:RECORDS]]


CLEAN, STARTS = _clean()


@st.composite
def damage(draw) -> tuple[tuple[tuple[int, int], ...], int | None, int]:
    """Up to 6 bytes changed (in a record's first 64 bytes most of the time: its length, type, subtype, system
    id, data-section offset), the end cut anywhere or not, and a start at a record or at any byte: ``(edits,
    cut, start)``, applied to the clean records by :func:`_damaged` (drawn as numbers, so a failing case prints
    short)."""
    edits = []
    for _ in range(draw(st.integers(0, 6))):
        rec = draw(st.sampled_from(STARTS))
        edits.append((rec + draw(st.one_of(st.integers(0, 63), st.integers(0, 1529))), draw(st.integers(0, 255))))
    cut = draw(st.one_of(st.none(), st.integers(0, len(CLEAN))))
    start = draw(st.one_of(st.sampled_from(STARTS), st.integers(0, len(CLEAN))))
    return tuple(edits), cut, start


def _damaged(edits, cut) -> bytes:
    data = bytearray(CLEAN)
    for at, value in edits:
        if at < len(data):
            data[at] = value
    return bytes(data[:cut] if cut is not None else data)


def _plain(walk):
    """A walk's result with NaT made comparable (NaT != NaT)."""
    return None if walk is None else {k: str(v) for k, v in walk.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=damage(), chunk=st.sampled_from([65536, 70001, 1 << 20]))
def test_the_rest_walk_on_damaged_bytes_is_the_numpy_walk(case, chunk):
    from app.ui import progressive as P

    edits, cut, start = case
    data = _damaged(edits, cut)
    old = P.WALK_CHUNK
    fd, name = tempfile.mkstemp(prefix="walk-fuzz-", suffix=".smf")
    try:
        P.WALK_CHUNK = chunk       # at least the longest record (64 KiB); the records straddle the smaller chunks' ends
        os.write(fd, data)
        os.close(fd)
        if not data:               # an empty rest: nothing to map
            return
        with open(name, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            by_file, by_map, by_numpy = (P.rest_min_time(m, start, None, fh), P.rest_min_time(m, start),
                                         P._rest_min_numpy(m, start))
        assert _plain(by_file) == _plain(by_map) == _plain(by_numpy)
    finally:
        P.WALK_CHUNK = old
        os.unlink(name)


@settings(max_examples=150, deadline=None)
@given(case=damage(), least=st.sampled_from([4, 64]), stop_cut=st.integers(0, 20_000))
def test_the_record_chain_on_damaged_bytes_is_the_numpy_chain(case, least, stop_cut):
    edits, cut, start = case
    data = _damaged(edits, cut)
    stop = max(0, len(data) - stop_cut)
    got = kernel.rdw_offsets(data, start, stop, least)
    with kernel.pure():
        want = kernel.rdw_offsets(data, start, stop, least)
    assert got[1:] == want[1:]
    assert np.array_equal(got[0], want[0])


def test_a_damaged_length_is_found_by_both_walks():
    """By hand: record 10's length set to 3 (below any record's least length) stops both chains there with
    status -1, and the rest walk from record 0 gives no guess (None) on both paths."""
    from app.formats.smf_resync import MIN_LEN
    from app.ui import progressive as P

    data = bytearray(CLEAN)
    data[STARTS[10]:STARTS[10] + 2] = (3).to_bytes(2, "big")
    for path in (kernel.rdw_offsets, None):
        if path is None:
            with kernel.pure():
                offs, pos, status = kernel.rdw_offsets(bytes(data), 0, len(data), MIN_LEN)
        else:
            offs, pos, status = path(bytes(data), 0, len(data), MIN_LEN)
        assert (list(offs), pos, status) == (STARTS[:10], STARTS[10], -1)
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert P.rest_min_time(m, 0, None, fh) is None and P._rest_min_numpy(m, 0) is None
