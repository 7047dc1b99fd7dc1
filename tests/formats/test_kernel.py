"""The compiled SMF reader kernel (app/formats/_kernel.c) against the pure-numpy path.

Issue 11: where a compiled kernel is used, a test compares it with the pure-Python path column by column on the
sample set and a generated month.  Each kernel function is also checked on hand-made bytes whose expected values
are written next to the assertion.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.formats import kernel, read_bytes, smf113_writer
from app.sample.build import MIX_GCP, MIX_ZIIP
from app.sample.model import CecModel, ClassModel, LparModel, make_samples

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "resources" / "samples").glob("*smf113*")) + \
    sorted((ROOT / "resources" / "samples" / "broken").glob("*smf113*"))

compiled = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here "
                              "(no C compiler at install time): the numpy path is the only one")


def _both(fn, *a):
    """fn(*a) with the kernel, then on the numpy path."""
    fast = fn(*a)
    with kernel.pure():
        assert not kernel.available()
        slow = fn(*a)
    return fast, slow


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        assert a[c].dtype == b[c].dtype, c
        if isinstance(a[c].dtype, pd.CategoricalDtype):
            assert list(a[c].cat.categories) == list(b[c].cat.categories), c
        pd.testing.assert_series_equal(a[c], b[c], check_exact=True, obj=c)


def _month_slice(intervals: int, lpars: int = 8, gcps: int = 12, ziips: int = 4) -> bytes:
    """The benchmark month's machine (8 LPARs x 16 CPUs, z16) for some intervals, RDW-framed."""
    lpars = [LparModel(f"LP{i:02d}", f"SY{i:02d}", [ClassModel("GCP", gcps, 60 + i, 3.0 + 0.1 * i, 3.0, MIX_GCP),
                                                  ClassModel("zIIP", ziips, 35, 2.5, 2.2, MIX_ZIIP, 85)])
             for i in range(lpars)]
    samples, _ = make_samples(CecModel("z16", "00000000000BE7C4", lpars), dt.datetime(2026, 10, 1), intervals,
                              900.0, seed=1)
    return smf113_writer.frame_rdw(smf113_writer.encode_samples(samples, 1))


# --- each function on hand-made bytes ----------------------------------------------------------------------


@pytest.mark.parametrize("pure", [False, True])
def test_gather_be_widths_on_strided_rows(pure):
    # rows of 7 bytes inside a 10-byte stride: 01 02 | 03 04 05 06 | 07, then 3 filler bytes
    row = bytes([1, 2, 3, 4, 5, 6, 7, 0xEE, 0xEE, 0xEE])
    buf = np.frombuffer(row * 3, np.uint8)
    mat = np.lib.stride_tricks.as_strided(buf, shape=(3, 7), strides=(10, 1), writeable=False)
    ctx = kernel.pure() if pure else _null()
    with ctx:
        assert kernel.gather_be(mat, 0, 2, 1).ravel().tolist() == [0x0102] * 3
        assert kernel.gather_be(mat, 2, 4, 1).ravel().tolist() == [0x03040506] * 3
        assert kernel.gather_be(mat, 0, 1, 3).tolist() == [[1, 2, 3]] * 3
        eight = kernel.gather_be(np.frombuffer(bytes(range(1, 17)), np.uint8).reshape(1, 16), 0, 8, 2)
        assert eight.tolist() == [[0x0102030405060708, 0x090A0B0C0D0E0F10]]
        assert eight.dtype == np.uint64 and eight.flags.c_contiguous


@pytest.mark.parametrize("pure", [False, True])
def test_gather_fields_mixed_widths(pure):
    mat = np.array([[0x00, 0x2A, 0xFF, 0xFF, 0xFF, 0xFE, 9, 8], [0x01, 0x00, 0, 0, 0, 1, 7, 6]], np.uint8)
    with kernel.pure() if pure else _null():
        got = kernel.gather_fields(mat, [(0, 2), (2, 4), (6, 1), (7, 1)])
    # row 0: 0x002A = 42, 0xFFFFFFFE = 4294967294, 9, 8;  row 1: 0x0100 = 256, 1, 7, 6
    assert got.tolist() == [[42, 4294967294, 9, 8], [256, 1, 7, 6]]


@pytest.mark.parametrize("pure", [False, True])
def test_gather_fields_scattered_8_byte_fields(pure):
    """Counters picked out of a set (the workspace's selection): 8-byte fields that are not adjacent."""
    row = bytes(range(1, 33))                      # 01 02 ... 20 (32 bytes)
    mat = np.frombuffer(row * 2, np.uint8).reshape(2, 32)
    with kernel.pure() if pure else _null():
        got = kernel.gather_fields(mat, [(0, 8), (16, 8), (24, 8)])
    # bytes 1-8, 17-24 and 25-32 read big-endian
    assert got.tolist() == [[0x0102030405060708, 0x1112131415161718, 0x191A1B1C1D1E1F20]] * 2


@pytest.mark.parametrize("pure", [False, True])
def test_first_other_row_on_strided_rows(pure):
    # three 6-byte records inside an 8-byte stride; record 2 differs from record 0 in byte 4 only
    buf = np.frombuffer(bytes([1, 2, 3, 4, 5, 6, 0xEE, 0xEE] * 2 + [1, 2, 3, 4, 9, 6, 0xEE, 0xEE]), np.uint8)
    mat = np.lib.stride_tricks.as_strided(buf, shape=(3, 6), strides=(8, 1), writeable=False)
    with kernel.pure() if pure else _null():
        assert kernel.first_other_row(mat, [(0, 4)]) == -1            # bytes 0-3 equal in every record
        assert kernel.first_other_row(mat, [(0, 2), (3, 2)]) == 2     # bytes 3-4 of record 2: 04 09, not 04 05
        assert kernel.first_other_row(mat, [(5, 1)]) == -1
        assert kernel.first_other_row(mat[:1], [(0, 6)]) == -1        # one record: nothing differs
        assert kernel.first_other_row(mat, []) == -1


@pytest.mark.parametrize("pure", [False, True])
def test_rows_at_zero_fills_past_the_end(pure):
    buf = bytes([10, 11, 12, 13, 14])
    with kernel.pure() if pure else _null():
        got = kernel.rows_at(buf, np.array([0, 3, 5]), 3)
    assert got.tolist() == [[10, 11, 12], [13, 14, 0], [0, 0, 0]]


@pytest.mark.parametrize("pure", [False, True])
def test_rdw_offsets_statuses(pure):
    # three records of lengths 6, 8, 5 (RDW length = first 2 bytes), then 2 stray bytes
    recs = b"\x00\x06\x00\x00ab" + b"\x00\x08\x00\x00abcd" + b"\x00\x05\x00\x00x"
    with kernel.pure() if pure else _null():
        offs, pos, status = kernel.rdw_offsets(recs, 0, len(recs), 4)
        assert offs.tolist() == [0, 6, 14] and pos == 19 and status == 0        # whole chain, ends exactly
        offs, pos, status = kernel.rdw_offsets(recs, 0, 6, 4)
        assert offs.tolist() == [0] and pos == 6 and status == 1                 # stopped at 'stop'
        offs, pos, status = kernel.rdw_offsets(recs, 0, len(recs), 6)
        assert offs.tolist() == [0, 6] and pos == 14 and status == -1            # length 5 < least 6
        offs, pos, status = kernel.rdw_offsets(recs + b"\x00\x09", 0, 99, 4)
        assert offs.tolist() == [0, 6, 14] and pos == 19 and status == 0         # 2 bytes left: fewer than 4


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --- the whole reader: compiled and numpy paths give the same frames ------------------------------------------


@compiled
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_files_same_on_both_paths(path):
    data = path.read_bytes()
    fast, slow = _both(read_bytes, data, path.name)
    _frames_equal(fast.samples, slow.samples)
    assert [(f.code, f.offset, f.message) for f in fast.findings] == [(f.code, f.offset, f.message) for f in slow.findings]
    assert fast.records == slow.records and fast.framing == slow.framing


@compiled
def test_generated_month_slice_same_on_both_paths():
    data = _month_slice(24)                               # 24 intervals x 128 CPUs = 3,072 records
    fast, slow = _both(read_bytes, data, "month.smf")
    assert len(fast.samples) == 24 * 128
    _frames_equal(fast.samples, slow.samples)
    # and the counters are what the writer wrote: LP03's CPU 0 cycles (B0) differ between intervals
    b0 = fast.samples.loc[(fast.samples["system"] == "SY03") & (fast.samples["cpu"] == 0), "B0"]
    assert b0.nunique() > 1


@compiled
def test_generated_month_same_on_both_paths():
    data = _month_slice(2880, lpars=2, gcps=2, ziips=1)   # a month of 15-minute intervals: 2 LPARs x 3 CPUs
    fast, slow = _both(read_bytes, data, "month.smf")
    assert len(fast.samples) == 2880 * 2 * 3 == 17_280
    _frames_equal(fast.samples, slow.samples)
    t = fast.samples["time"]
    assert (t.max() - t.min()) == pd.Timedelta(minutes=15 * 2879)      # 30 days less one interval


@compiled
def test_gzip_and_damaged_month_same_on_both_paths():
    data = bytearray(_month_slice(4))
    data[len(data) // 2] ^= 0xFF                          # one flipped byte inside a record
    for blob in (bytes(data), gzip.compress(bytes(data))):
        fast, slow = _both(read_bytes, blob, "damaged.smf")
        _frames_equal(fast.samples, slow.samples)
        assert [(f.code, f.offset, f.message) for f in fast.findings] == [(f.code, f.offset, f.message) for f in slow.findings]


def test_version_names_the_reader_path(capsys):
    from app.cli import main

    with pytest.raises(SystemExit):
        main(["--version"])
    out = capsys.readouterr().out
    assert ("compiled" in out) == kernel.available() and "SMF reader" in out
