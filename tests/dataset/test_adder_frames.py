"""The frame helpers of a streamed extract (app/dataset/adder.py) give what the pandas calls they replace give.

* ``_concat``: the carried samples and a chunk joined; where their categories differ the rows used to become an
  object column turned back into a categorical (``astype("category")``: the values' sorted categories); the
  recode to the union must give the same values, the same categories in the same order, the same dtypes.
* ``_distinct``: the distinct identity rows of a chunk, as ``drop_duplicates()`` (first rows, in order; a missing
  name equal to another missing name).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.dataset.adder import _concat, _distinct

NAMES = ["SYSA", "SYSB", "CF01", "ZOSD", "LP1"]


def _joined_before(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """What ``_concat`` did before the recode (pandas concat, then each categorical that became text again)."""
    out = pd.concat([a, b], ignore_index=True)
    for c in b.columns:
        if isinstance(b[c].dtype, pd.CategoricalDtype) and not isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("category")
    return out


@st.composite
def sample_frames(draw, max_rows: int = 12) -> pd.DataFrame:
    n = draw(st.integers(0, max_rows))
    cats = sorted(draw(st.sets(st.sampled_from(NAMES), min_size=1, max_size=4)))
    names = draw(st.lists(st.sampled_from(cats + [None]), min_size=n, max_size=n))
    unused = draw(st.booleans())        # a reader's categories may hold names no row uses
    col = pd.Categorical(names, categories=sorted(set(cats) | ({"ZZZ"} if unused else set())))
    if draw(st.booleans()):             # or the string dtype's categories, as astype("category") makes them
        col = pd.Series(names, dtype="str").astype("category").array
    cpu = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return pd.DataFrame({"lpar": col, "cpu": np.asarray(cpu, dtype=np.int32),
                         "time": np.arange(n, dtype=np.int64).view("datetime64[ns]")})


@settings(max_examples=150, deadline=None)
@given(sample_frames(), sample_frames())
def test_concat_as_before(a, b):
    got, want = _concat(a, b), _joined_before(a, b)
    pd.testing.assert_frame_equal(got, want)            # values and dtypes, categories included
    assert list(got["lpar"].cat.categories) == list(want["lpar"].cat.categories)


def test_concat_recodes_to_the_sorted_union():
    # hand case: carry {SYSB}, chunk {LP1, SYSA}: astype("category") of the joined text sorts to LP1 < SYSA < SYSB
    a = pd.DataFrame({"lpar": pd.Categorical(["SYSB"])})
    b = pd.DataFrame({"lpar": pd.Categorical(["SYSA", "LP1", None])})
    got = _concat(a, b)
    assert list(got["lpar"].cat.categories) == ["LP1", "SYSA", "SYSB"]
    assert got["lpar"].astype(object).tolist()[:3] == ["SYSB", "SYSA", "LP1"] and pd.isna(got["lpar"].iloc[3])


@settings(max_examples=150, deadline=None)
@given(sample_frames(max_rows=30))
def test_distinct_as_drop_duplicates(f):
    pd.testing.assert_frame_equal(_distinct(f[["lpar", "cpu"]]), f[["lpar", "cpu"]].drop_duplicates())


def test_distinct_hand_case():
    # rows (A,0) (B,1) (A,0) (None,1) (None,1) (B,0): the first of each distinct one, in order: rows 0, 1, 3, 5
    f = pd.DataFrame({"lpar": pd.Categorical(["A", "B", "A", None, None, "B"]), "cpu": [0, 1, 0, 1, 1, 0]})
    assert _distinct(f).index.tolist() == [0, 1, 3, 5]
