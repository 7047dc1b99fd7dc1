"""The distinct identity rows of a chunk (app/dataset/adder.py ``_distinct``, one int64 key a row) are what
``drop_duplicates()`` gives: the first row of each distinct one, in order; a missing name equal to another
missing name; negative and large integers; a column of another type left to pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.dataset.adder import _distinct

NAMES = ["SYSA", "SYSB", "CF01", "ZOSD", "LP1"]


@st.composite
def sample_frames(draw, max_rows: int = 12) -> pd.DataFrame:
    n = draw(st.integers(0, max_rows))
    cats = sorted(draw(st.sets(st.sampled_from(NAMES), min_size=1, max_size=4)))
    names = draw(st.lists(st.sampled_from(cats + [None]), min_size=n, max_size=n))
    unused = draw(st.booleans())        # a reader's categories may hold names no row uses
    col = pd.Categorical(names, categories=sorted(set(cats) | ({"ZZZ"} if unused else set())))
    if draw(st.booleans()):             # or the string dtype's categories, as astype("category") makes them
        col = pd.Series(names, dtype="str").astype("category").array
    cpu = draw(st.lists(st.integers(-3, 3) | st.sampled_from([2**31 - 1, -2**31]), min_size=n, max_size=n))
    return pd.DataFrame({"lpar": col, "cpu": np.asarray(cpu, dtype=np.int32),
                         "time": np.arange(n, dtype=np.int64).view("datetime64[ns]")})


@settings(max_examples=150, deadline=None)
@given(sample_frames(max_rows=30))
def test_distinct_as_drop_duplicates(f):
    pd.testing.assert_frame_equal(_distinct(f[["lpar", "cpu"]]), f[["lpar", "cpu"]].drop_duplicates())


def test_distinct_hand_case():
    # rows (A,0) (B,1) (A,0) (None,1) (None,1) (B,0): the first of each distinct one, in order: rows 0, 1, 3, 5
    f = pd.DataFrame({"lpar": pd.Categorical(["A", "B", "A", None, None, "B"]), "cpu": [0, 1, 0, 1, 1, 0]})
    assert _distinct(f).index.tolist() == [0, 1, 3, 5]


def test_distinct_other_types_left_to_pandas():
    f = pd.DataFrame({"name": ["a", "b", "a"], "cpu": [1, 1, 1]})      # object strings: pandas' own
    assert _distinct(f).index.tolist() == [0, 1]
