"""The order of a query's result rows (app/dataset/query.py ``_sorted``): a few rows are put in order by Python's
stable sort instead of pandas' ``sort_values`` (a narrow query's fixed cost, issue 24); the rows and their order
must be exactly what ``sort_values(by, kind="stable", ignore_index=True)`` gives, missing values last."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.dataset.query import _FEW, _sorted

_NAMES = st.sampled_from(["ZOSA", "ZOSB", "zosa", "CF01", "", None])
_T0 = pd.Timestamp("2026-11-01")
_TIMES = st.one_of(st.none(), st.integers(0, 4).map(lambda k: _T0 + pd.Timedelta(minutes=15 * k)))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_NAMES, _NAMES, st.integers(0, 3), _TIMES), min_size=0, max_size=_FEW + 8))
def test_few_rows_sorted_as_pandas_sorts_them(rows):
    # rows beyond _FEW go through pandas itself; up to _FEW through the Python sort: equal either way
    df = pd.DataFrame({"cec": pd.Series([r[0] for r in rows], dtype=object),
                       "lpar": pd.Series([r[1] for r in rows], dtype=object),
                       "cpu": np.array([r[2] for r in rows], dtype=np.int64),
                       "interval_end": pd.to_datetime(pd.Series([r[3] for r in rows], dtype=object))})
    df["tag"] = np.arange(len(df))          # which row went where (ties keep their order: a stable sort)
    by = ["cec", "lpar", "cpu", "interval_end"]
    want = df.sort_values(by, kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(_sorted(df, by), want)


def test_rows_in_order_are_not_moved():
    # already in order (None last): the same frame comes back, with its RangeIndex
    df = pd.DataFrame({"lpar": pd.Series(["A", "B", None], dtype=object), "x": [1.0, 2.0, 3.0]})
    assert _sorted(df, ["lpar"]) is df
    got = _sorted(df.iloc[::-1].reset_index(drop=True), ["lpar"])
    assert got["lpar"].tolist() == ["A", "B", None] and got["x"].tolist() == [1.0, 2.0, 3.0]
