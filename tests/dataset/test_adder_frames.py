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


def _systems_by_groupby(ident: pd.DataFrame) -> dict:
    """The manifest's systems as the adder made them before (a groupby of the rows as strings)."""
    out: dict = {}
    ident = ident.astype({"cpu": "int64"}).astype({c: str for c in ("cec", "machine_type", "lpar", "system", "os",
                                                                     "class")})
    for key, g in ident.groupby(["cec", "machine_type", "lpar", "system", "os"], sort=True):
        cls = out.setdefault(key, {})
        for c, cpus in g.groupby("class")["cpu"]:
            cls.setdefault(c, set()).update(int(x) for x in cpus.unique())
    return out


@st.composite
def ident_frames(draw) -> pd.DataFrame:
    n = draw(st.integers(0, 14))
    cols = {}
    for c in ("cec", "machine_type", "lpar", "system", "os", "class"):
        vals = draw(st.lists(st.sampled_from(NAMES[:3] + [None]), min_size=n, max_size=n))
        cols[c] = pd.Categorical(vals) if draw(st.booleans()) else pd.Series(vals, dtype="str")
    cols["cpu"] = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.int32)
    return pd.DataFrame(cols)


@settings(max_examples=150, deadline=None)
@given(ident_frames())
def test_systems_as_the_groupby(ident):
    from app.dataset.adder import FileAdder

    adder = FileAdder.__new__(FileAdder)
    adder.systems = {}
    adder._systems(ident)
    assert adder.systems == _systems_by_groupby(ident)


def test_systems_hand_case():
    # rows (A,CP,0) (A,CP,1) (A,IIP,0) (A,None,2) (None...,CP,3) (B,None,5): A has CP {0, 1} and IIP {0}; the rows
    # with a missing name are left out (as a groupby leaves them out); B, whose one row names no class, is listed
    # with no class
    ident = pd.DataFrame({c: pd.Categorical(["A", "A", "A", "A", None, "B"]) for c in ("cec", "machine_type",
                                                                                         "lpar", "system", "os")})
    ident["class"] = pd.Categorical(["CP", "CP", "IIP", None, "CP", None])
    ident["cpu"] = np.array([0, 1, 0, 2, 3, 5], np.int32)
    from app.dataset.adder import FileAdder

    adder = FileAdder.__new__(FileAdder)
    adder.systems = {}
    adder._systems(ident)
    assert adder.systems == {("A", "A", "A", "A", "A"): {"CP": {0, 1}, "IIP": {0}}, ("B", "B", "B", "B", "B"): {}}
    assert adder.systems == _systems_by_groupby(ident)
