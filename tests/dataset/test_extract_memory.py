"""What the extract's memory work (issue 24, "Speed and memory") must keep: the same part contents.

* A chunk is copied out of a memory-mapped file a piece at a time (its pages handed back as it goes): the copy
  holds exactly the bytes of that range, for any range.
* A part's string column made from a categorical's categories (each converted once, rows taken by their codes)
  is the column the general conversion gives: the same strings, NULL where the value is missing.
* The samples' ``source`` kept categorical reads as ``astype(str)`` reads.
* ``extract`` lets go of each chunk's decoded frame (the reader's result is left with no rows); a caller's own
  result handed to ``add_result`` is left as it was.
"""

from __future__ import annotations

import gzip
import mmap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.dataset import Dataset, tables
from app.dataset.adder import _names
from app.engine.catalog import load_formula_sets
from app.formats import read_bytes
from app.formats.chunks import _PIECE, copy_out

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_copy_out_of_a_map_is_the_range(tmp_path):
    # 2.5 pieces of bytes, each byte its offset modulo 251 (a prime: no piece repeats another)
    n = 2 * _PIECE + _PIECE // 2
    path = tmp_path / "data.bin"
    path.write_bytes((np.arange(n, dtype=np.int64) % 251).astype(np.uint8).tobytes())
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:

        @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(st.integers(0, n), st.integers(0, n))
        def check(a, b):
            a, b = min(a, b), max(a, b)
            got = copy_out(mm, a, b)
            assert bytes(got) == bytes(mm[a:b])         # pages handed back are read again from the file
            assert len(got) == b - a
        check()
        # the piece boundaries themselves, and a range over all three pieces
        for a, b in ((0, _PIECE), (_PIECE - 1, _PIECE + 1), (1, n - 1), (0, n)):
            assert bytes(copy_out(mm, a, b)) == bytes(mm[a:b])
    assert copy_out(b"abcdef", 1, 4) == b"bcd"        # not a map: a plain slice


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["ZOSA", "ZOSB", "", "Zürich", "a" * 40])), max_size=40))
def test_categorical_string_column_is_the_general_one(values):
    s = pd.Series(pd.Categorical(values))
    fast = tables._categorical_strings(s)
    want = pa.array([None if v is None else v for v in values], type=pa.string())
    if any(v is not None for v in values):  # string categories (with none, pandas gives the categories no type)
        assert fast is not None and fast.equals(want)
    assert tables._column(s, "string").equals(want)


def test_categorical_of_other_values_takes_the_general_way():
    s = pd.Series(pd.Categorical([1, 2, 1]))
    assert tables._categorical_strings(s) is None
    assert tables._column(s, "string").to_pylist() == ["1", "2", "1"]


def test_names_read_as_astype_str():
    s = pd.Series(pd.Categorical(["f1", "f2", "f1"]))
    got = _names(s)
    assert isinstance(got, pd.Categorical)
    assert list(pd.Series(got).astype(str)) == list(s.astype(str)) == ["f1", "f2", "f1"]
    ints = pd.Series(pd.Categorical([3, 4]))             # categories that are no strings become their text
    assert list(pd.Series(_names(ints)).astype(str)) == ["3", "4"]
    clash = pd.Series(pd.Categorical([1, "1"]))           # two categories, one text: the general way
    assert list(pd.Series(_names(clash))) == ["1", "1"]
    missing = pd.Series(pd.Categorical(["f1", None]))     # a missing name: astype(str), as before
    assert list(_names(missing).isna()) == list(missing.astype(str).isna())


def test_extract_lets_go_of_each_chunk_and_add_result_does_not(tmp_path, sample_result):
    r = sample_result("after_z16_ZOSA_smf113.rdw.gz")
    rows = len(r.samples)
    ds = Dataset(tmp_path / "a", create=True)
    res = ds.add_result(r, "a" * 64, 1, load_formula_sets())
    assert res.status == "added"
    assert len(r.samples) == rows > 0                     # the caller's result is untouched

    own = read_bytes(gzip.decompress((SAMPLES / "after_z16_ZOSA_smf113.rdw.gz").read_bytes()), "zosa.rdw")
    assert len(own.samples) == rows
    ds2 = Dataset(tmp_path / "b", create=True)
    res2 = ds2.add_chunks(iter([own]), own.file, "b" * 64, 1, load_formula_sets(), own=True)
    assert res2.status == "added" and res2.samples == res.samples == rows
    assert len(own.samples) == 0                          # handed over: its frame let go
    assert list(own.samples.columns) == list(r.samples.columns)
