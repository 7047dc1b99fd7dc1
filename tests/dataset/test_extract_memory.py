"""What the extract's memory work (issue 24, "Speed and memory") must keep: the same part contents.

* A chunk is decoded from a window of the memory-mapped file (no copy): the pages a window hands back or maps
  are the map's pages of that window's range, for any window and range, and its bytes read back the same.
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
from app.formats import pages

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_a_window_of_a_map_hands_back_its_own_pages(tmp_path):
    # 2.5 MiB of bytes, each byte its offset modulo 251 (a prime: no page repeats another)
    n = (5 << 20) // 2
    path = tmp_path / "data.bin"
    path.write_bytes((np.arange(n, dtype=np.int64) % 251).astype(np.uint8).tobytes())
    page = mmap.PAGESIZE
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:

        @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(st.integers(0, n - 1), st.integers(1, n), st.integers(0, n), st.integers(0, n))
        def check(a, b, s, e):
            a, b = min(a, b - 1), max(a + 1, b)
            with memoryview(mm) as mv:
                w = mv[a:b]
            span = pages._span(w, s, e)
            lo, hi = a + s, a + min(e, b - a)       # the window's range in the map
            if hi <= lo - lo % page:
                assert span is None
            else:                                   # that range, from the start of its first page
                got, off, length = span
                assert got is mm and off == lo - lo % page and off + length == hi
            pages.populate(w, s, e)
            pages.drop(w, s, e)                     # handed back: read again from the file
            assert bytes(w) == bytes(mm[a:b])
            w.release()
        check()
    assert pages._span(b"abcdef", 0, 6) is None         # not a map: nothing to hand back
    assert pages._span(memoryview(b"abcdef"), 0, 6) is None


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


_names_st = st.one_of(st.none(), st.sampled_from(["ZOSA", "ZOSB", "GCP", "zIIP", "a" * 12]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_names_st, st.sampled_from(["GCP", "zIIP"]), st.integers(0, 3), st.integers(0, 4)),
                max_size=12),
       st.lists(st.tuples(_names_st, st.sampled_from(["GCP", "zIIP"]), st.integers(0, 3), st.integers(0, 4)),
                max_size=12),
       st.booleans())
def test_isin_of_a_few_rows_is_the_multiindex_one(rows_a, rows_b, categorical):
    from app.dataset import dedup

    cols = ["lpar", "class", "cpu", "t"]

    def frame(rows):
        f = pd.DataFrame(rows, columns=cols).astype({"cpu": np.int64, "t": np.int64})
        return f.astype({"lpar": "category"}) if categorical else f
    a, b = frame(rows_a), frame(rows_b)
    got = dedup._isin(a, b, cols)
    old = dedup._SMALL
    try:
        dedup._SMALL = -1               # the MultiIndex way, as before the Python-set shortcut
        want = dedup._isin(a, b, cols)
    finally:
        dedup._SMALL = old
    assert got.dtype == bool and len(got) == len(a)
    assert (got == want).all()
